"""``import torch`` (and every ``torch.X``) resolved to minitensor, for the corpus programs: this folder goes
first on PYTHONPATH, so the programs run with not one line changed."""
import importlib
import importlib.abc
import importlib.util
import sys

import minitensor


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch.X`` as ``minitensor.X``: the same module object under both names."""

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("torch."):
            return None
        try:
            module = importlib.import_module("minitensor." + name[len("torch."):])
        except ModuleNotFoundError:
            return None
        return importlib.util.spec_from_loader(name, self, origin=module.__name__)

    def create_module(self, spec):
        return importlib.import_module(spec.origin)

    def exec_module(self, module):
        return None


sys.meta_path.insert(0, _Alias())
sys.modules[__name__] = minitensor
