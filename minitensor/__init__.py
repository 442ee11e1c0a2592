"""minitensor: a small, readable autograd tensor library with PyTorch's names.

NumPy runs it on the CPU; on NVIDIA GPUs, CuPy and our kernels (``device("cuda")``, loaded on first use:
importing minitensor imports neither cupy nor numba).
"""
from __future__ import annotations

from . import backends  # first: it chooses OpenBLAS's kernels before NumPy loads (backends/blas.py)
from . import accelerator, autograd, cuda, dtypes, testing
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .device import device
from .dtypes import (bool, double, dtype, float, float16, float32, float64, get_default_dtype, half, int,
                     int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short,
                     uint8)
from .functional import *  # noqa: F401,F403  (add, exp, sum, cat, where, ... as minitensor.<op>)
from .functional import abs, all, any, max, min, round, sum  # noqa: F401
from .backends.blas import get_num_threads, set_num_threads
from .random import initial_seed, manual_seed, seed
from .tensor import Tensor
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones,
                       ones_like, rand, rand_like, randint, randint_like, randn, randn_like, randperm, tensor, zeros,
                       zeros_like)
from . import datasets, nn, optim, utils  # noqa: E402  (after Tensor: these build on it)
from .serialization import load, save  # noqa: E402
from .utils.dlpack import from_dlpack  # noqa: E402

__version__ = "0.1.0"


def is_tensor(obj: object) -> "builtins.bool":
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()
