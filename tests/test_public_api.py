"""The public namespace: every name in a public ``__all__`` resolves, and no internal module leaks as an
attribute of ``minitensor`` (code written for PyTorch must not find names PyTorch does not have)."""
from __future__ import annotations

import importlib
import types

import pytest

import minitensor as mt

PUBLIC_MODULES = ["minitensor", "minitensor.linalg", "minitensor.random", "minitensor.functional", "minitensor.nn",
                  "minitensor.nn.functional", "minitensor.nn.init", "minitensor.optim", "minitensor.optim.lr_scheduler",
                  "minitensor.autograd", "minitensor.cuda", "minitensor.accelerator", "minitensor.testing",
                  "minitensor.utils", "minitensor.utils.data", "minitensor.utils.dlpack"]
PUBLIC_MODULES += ["minitensor.amp"]
PUBLIC_MODULES += ["minitensor.distributed"]
PUBLIC_MODULES += ["minitensor.autograd.functional"]
PUBLIC_MODULES += ["minitensor.autograd.graph", "minitensor.autograd.forward_ad"]
PUBLIC_MODULES += ["minitensor.special"]
PUBLIC_MODULES += ["minitensor.optim.swa_utils"]
PUBLIC_MODULES += ["minitensor.distributions"]
PUBLIC_MODULES += ["minitensor.return_types"]
PUBLIC_MODULES += ["minitensor.hub", "minitensor.jit", "minitensor.nn.attention", "minitensor.utils.hooks",
                   "minitensor.types", "minitensor.overrides"]
PUBLIC_MODULES += ["minitensor.utils.benchmark"]
PUBLIC_MODULES += ["minitensor.xpu"]
PUBLIC_MODULES += ["minitensor.nn.utils.prune"]
PUBLIC_MODULES += ["minitensor.distributed.optim"]
PUBLIC_MODULES += ["minitensor.version"]
# The submodules of ``torch`` that minitensor mirrors under the same name.
TORCH_MODULES = {"accelerator", "autograd", "backends", "cuda", "functional", "linalg", "multiprocessing", "nn", "onnx",
                 "optim", "random", "serialization", "sparse", "testing", "utils"}
TORCH_MODULES |= {"amp"}
TORCH_MODULES |= {"profiler"}
TORCH_MODULES |= {"distributed"}
TORCH_MODULES |= {"compiler"}
TORCH_MODULES |= {"special"}
TORCH_MODULES |= {"func"}
TORCH_MODULES |= {"distributions"}
TORCH_MODULES |= {"return_types"}
TORCH_MODULES |= {"hub", "jit", "overrides", "types"}
TORCH_MODULES |= {"storage"}
TORCH_MODULES |= {"xpu"}
TORCH_MODULES |= {"version"}
# minitensor's own public modules, named in its __all__ (torchvision-style datasets; the dtype objects).
OWN_MODULES = {"datasets", "dtypes"}
# Functions minitensor exports that torch's top level lacks (the functional front ends' helpers, older than
# this test): listed so that a new one fails test_public_names_exist_in_pytorch.
OWN_FUNCTIONS = {"copy_", "expand", "getitem", "inplace", "linear", "pad", "repeat", "setitem", "to_device",
                 "to_dtype", "view_dtype"}


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_name_in_all_resolves(name):
    module = importlib.import_module(name)
    assert isinstance(module.__all__, list) and module.__all__
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names {missing}, which {name} does not define"
    assert len(set(module.__all__)) == len(module.__all__), f"{name}.__all__ repeats names"


def test_no_internal_module_is_a_public_attribute():
    modules = {n for n, v in vars(mt).items() if isinstance(v, types.ModuleType) and not n.startswith("_")}
    assert modules - TORCH_MODULES - OWN_MODULES == set()
    assert OWN_MODULES <= set(mt.__all__)
    for internal in ("creation", "deterministic", "generator", "legacy", "tensor_math", "tensor_methods",
                     "tensor_shape", "math", "factorization", "norms",
                     "creation_sequences", "creation_interop", "global_modes", "tensor_extras"):
        assert not hasattr(mt, internal), internal
    # torch.solve is PyTorch's removed function (it raises), not the solve family's module
    assert callable(mt.solve) and not isinstance(mt.solve, types.ModuleType)


def test_linalg_is_the_public_module_not_the_family():
    assert isinstance(mt.linalg, types.ModuleType) and mt.linalg.__name__ == "minitensor.linalg"
    assert mt.linalg is not mt.functional.linalg
    assert issubclass(mt.linalg.LinAlgError, RuntimeError)
    for name in ("norm", "vector_norm", "matrix_norm", "inv", "solve", "det", "slogdet", "svd", "svdvals", "qr",
                 "eigh", "eigvalsh", "cholesky", "pinv", "matrix_power", "matmul"):
        assert callable(getattr(mt.linalg, name)), name


def test_star_import_gives_the_public_names():
    namespace: dict = {}
    exec("from minitensor import *", namespace)
    assert {"linalg", "det", "inverse", "Tensor"} <= set(namespace)
    assert "creation" not in namespace


@pytest.mark.torch
@pytest.mark.parametrize("name", ["minitensor", "minitensor.linalg"])
def test_public_names_exist_in_pytorch(name):
    """Every public name of minitensor and minitensor.linalg (except minitensor's own modules) is a PyTorch
    name; and every module attribute of minitensor is one of torch's modules."""
    torch = pytest.importorskip("torch")
    module, twin = importlib.import_module(name), torch if name == "minitensor" else torch.linalg
    extra = {n for n in module.__all__ if not hasattr(twin, n)} - OWN_MODULES - OWN_FUNCTIONS
    assert not extra, f"{name} exports names PyTorch does not have: {sorted(extra)}"
    assert {n for n in TORCH_MODULES if not isinstance(getattr(torch, n), types.ModuleType)} == set()


def test_nn_functional_star_import_gives_every_public_function():
    """``from minitensor.nn.functional import *`` brings what ``import minitensor.nn.functional as F`` has
    (the losses split over several families included)."""
    namespace: dict = {}
    exec("from minitensor.nn.functional import *", namespace)
    public = {n for n, v in vars(mt.nn.functional).items() if callable(v) and not n.startswith("_")
              and getattr(v, "__module__", "").startswith("minitensor.functional")}
    assert {"cross_entropy", "nll_loss", "mse_loss", "kl_div"} <= public
    assert public - set(namespace) == set()
