"""``minitensor.version`` (``torch.version``): the version strings, imported with the package, as PyTorch's
CPU build has them."""
from __future__ import annotations

import pytest

import minitensor as mt


def test_version_module_is_loaded_with_the_package():
    assert mt.version.__version__ == mt.__version__ and isinstance(mt.__version__, str)
    assert mt.version.cuda is None and mt.version.hip is None and mt.version.debug is False


@pytest.mark.torch
def test_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    missing = [n for n in mt.version.__all__ if not hasattr(torch.version, n)]
    assert not missing, missing
    if torch.version.cuda is None:  # PyTorch's CPU build: the same answers
        assert (torch.version.hip, torch.version.debug) == (mt.version.hip, mt.version.debug)
