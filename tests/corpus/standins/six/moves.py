"""``six.moves``: on Python 3, the standard library's modules under their Python 3 names."""
import urllib
import urllib.request  # noqa: F401  (makes urllib.request an attribute of urllib)

__all__ = ["urllib"]
