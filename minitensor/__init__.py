"""minitensor: a small, readable autograd tensor library with PyTorch's names.

NumPy runs it on the CPU; on NVIDIA GPUs, CuPy and our kernels (``device("cuda")``, loaded on first use:
importing minitensor imports neither cupy nor numba).
"""
from __future__ import annotations

import builtins as _builtins
import sys as _sys

from . import backends  # first: it chooses OpenBLAS's kernels before NumPy loads (backends/blas.py)
from . import accelerator, autograd, cuda, dtypes, return_types, testing, xpu
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .device import device
from .dtypes import (bool, double, dtype, float, float16, float32, float64, get_default_dtype, half, int,
                     int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short,
                     uint8)
from .functional import *  # noqa: F401,F403  (add, exp, sum, cat, where, ... as minitensor.<op>)
from .functional import abs, all, any, max, min, round, sum  # noqa: F401
from .functional import ADDED_OPS as _ADDED_OPS
from .functional.amp import _amp_foreach_non_finite_check_and_unscale_  # noqa: F401  (PyTorch's name)
from .backends.blas import get_num_threads, set_num_threads
from .random import initial_seed, manual_seed, seed
from .size import Size
from .printing import set_printoptions
from . import compiler
from .compiler import compile
from .tensor import Tensor
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones,
                       ones_like, rand, rand_like, randint, randint_like, randn, randn_like, randperm, tensor, zeros,
                       zeros_like)
from .legacy import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,  # noqa: E402
                     IntTensor, LongTensor, ShortTensor)
from . import datasets, multiprocessing, nn, optim, utils  # noqa: E402  (after Tensor: these build on it)
from .serialization import load, save  # noqa: E402
from .utils.dlpack import from_dlpack  # noqa: E402
from .generator import Generator  # noqa: E402
from .creation import bernoulli, multinomial  # noqa: E402
from .deterministic import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,  # noqa: E402
                            is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
                            use_deterministic_algorithms)
from . import onnx  # noqa: E402  (export; the onnx package itself is imported only when export runs)
from . import linalg  # noqa: E402  (torch.linalg)
from .creation import tril_indices, triu_indices  # noqa: E402
from .functional import __all__ as _functional_all  # noqa: E402

from . import sparse  # noqa: E402  (torch.sparse: mm, sum)
from .dtypes import bfloat16  # noqa: E402
from .legacy import BFloat16Tensor  # noqa: E402
from . import amp  # noqa: E402
from .storage import TypedStorage, UntypedStorage  # noqa: E402
from .amp import cuda_amp as _cuda_amp  # noqa: E402

# ``from torch.cuda.amp import GradScaler`` (PyTorch's deprecated path, in many training scripts): cuda is a
# module here, not a package, so its ``amp`` (cuda.__getattr__) is registered as an importable name too
_sys.modules["minitensor.cuda.amp"] = _cuda_amp
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402

from . import profiler  # noqa: E402  (torch.profiler)
from . import distributed  # noqa: E402  (torch.distributed; MPI and NCCL are imported only by init_process_group)

from .type_info import finfo, iinfo  # noqa: E402
from . import special  # noqa: E402  (torch.special)
from .random import default_generator  # noqa: E402
from .deterministic import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402
from . import distributions  # noqa: E402  (torch.distributions)
from . import func  # noqa: E402,F401  (torch.func: grad, vmap, functional_call...)

from . import version  # noqa: E402,F401  (torch.version)
from .version import __version__  # noqa: E402,F401

__all__ = ["Tensor", "abs", "accelerator", "add", "all", "amax", "amin", "any", "arange", "argmax", "argmin",
           "as_tensor", "autograd", "backends", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "bmm",
           "bool", "broadcast_to", "cat", "ceil", "chunk", "clamp", "clip", "clone", "concat", "concatenate", "copy_",
           "cos", "cuda", "datasets", "device", "div", "dot", "double", "dtype", "dtypes", "empty", "empty_like",
           "enable_grad", "eq", "exp", "expand", "expm1", "eye", "flatten", "flip", "float", "float16", "float32",
           "float64", "floor", "floor_divide", "from_dlpack", "from_numpy", "full", "full_like", "functional",
           "gather", "ge", "get_default_dtype", "get_num_threads", "getitem", "gt", "half", "index_select",
           "inference_mode", "initial_seed", "inplace", "int", "int16", "int32", "int64", "int8", "is_grad_enabled",
           "is_tensor", "isfinite", "isinf", "isnan", "le", "linear", "linspace", "load", "log", "log10", "log1p",
           "log2", "log_softmax", "logical_and", "logical_not", "logical_or", "logical_xor", "logsumexp", "long", "lt",
           "manual_seed", "masked_fill", "matmul", "max", "maximum", "mean", "min", "minimum", "mm", "movedim", "mul",
           "mv", "narrow", "ne", "neg", "nn", "no_grad", "norm", "numel", "ones", "ones_like", "optim", "pad",
           "permute", "pow", "prod", "promote_types", "rand", "rand_like", "randint", "randint_like", "randn",
           "randn_like", "randperm", "reciprocal", "relu", "remainder", "repeat", "reshape", "result_type", "round",
           "rsqrt", "save", "seed", "set_default_dtype", "set_grad_enabled", "set_num_threads", "setitem", "short",
           "sigmoid", "sign", "sin", "softmax", "split", "sqrt", "square", "squeeze", "stack", "std", "sub", "sum",
           "swapaxes", "tanh", "tensor", "testing", "to_device", "to_dtype", "transpose", "tril", "triu",
           "true_divide", "uint8", "unbind", "unflatten", "unsqueeze", "utils", "var", "view_dtype", "where", "zeros",
           "zeros_like"]
__all__ += ["Generator", "bernoulli", "multinomial", "multiprocessing"]
__all__ += _ADDED_OPS
__all__ += ["BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor", "IntTensor",
            "LongTensor", "ShortTensor"]
__all__ += ["layout", "sparse", "sparse_coo", "sparse_coo_tensor", "spmm", "strided"]
__all__ += ["are_deterministic_algorithms_enabled", "get_deterministic_debug_mode",
            "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
            "use_deterministic_algorithms"]
__all__ += ["linalg", "return_types", "tril_indices", "triu_indices"]
__all__ += [_op for _op in _functional_all if _op not in __all__]  # every op of the families as minitensor.<op>

# Importing a submodule binds it on the package: these internal ones are no PyTorch names (tests/test_public_api.py).
for _internal in ("creation", "deterministic", "generator", "legacy", "printing", "size", "tensor_math",
                  "tensor_methods", "tensor_shape", "tensor_sparse"):
    globals().pop(_internal, None)
globals().pop("type_info", None)
globals().pop("tensor_storage", None)
globals().pop("tensor_layout", None)
globals().pop("tensor_extras", None)


__all__ += ["onnx"]
__all__ += ["bfloat16", "BFloat16Tensor"]
__all__ += ["amp", "autocast", "get_autocast_dtype", "is_autocast_enabled"]
__all__ += ["profiler"]
__all__ += ["xpu"]
__all__ += ["distributed"]
__all__ += ["Size"]
__all__ += ["set_printoptions"]
__all__ += ["compile", "compiler"]
__all__ += ["finfo", "iinfo"]
__all__ += ["special"]
__all__ += ["default_generator", "get_float32_matmul_precision", "set_float32_matmul_precision"]

__all__ += ["distributions"]


def is_tensor(obj: object) -> "_builtins.bool":
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> _builtins.int:
    return input.numel()


def _tensor_argument(name: str, input: object) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def is_floating_point(input: Tensor) -> "_builtins.bool":
    """True for the float dtypes (float16, bfloat16, float32, float64)."""
    return _tensor_argument("is_floating_point", input).is_floating_point()


def is_complex(input: Tensor) -> "_builtins.bool":
    """False: minitensor has no complex dtypes."""
    return _tensor_argument("is_complex", input).is_complex()


def detach(input: Tensor) -> Tensor:
    """``input.detach()``: the same memory, outside the graph."""
    return _tensor_argument("detach", input).detach()


__all__ += ["detach", "is_complex", "is_floating_point"]

from .random import get_rng_state, set_rng_state  # noqa: E402  (the CPU generator's state)
__all__ += ["get_rng_state", "set_rng_state"]
from ._nn_aliases import *  # noqa: F401,F403,E402  (torch.conv2d, torch.dropout...: ATen's signatures)
from ._nn_aliases import __all__ as _nn_aliases_all  # noqa: E402
from ._nn_aliases import _weight_norm  # noqa: E402,F401  (ATen's name, used by nn.utils' weight norms)
__all__ += [_n for _n in _nn_aliases_all if _n not in __all__]
from .creation_sequences import *  # noqa: F401,F403,E402  (logspace, range, the windows)
from .creation_sequences import __all__ as _creation_sequences_all  # noqa: E402
from .creation_interop import *  # noqa: F401,F403,E402  (asarray, frombuffer, empty_strided, scalar_tensor)
from .creation_interop import __all__ as _creation_interop_all  # noqa: E402
__all__ += _creation_sequences_all + _creation_interop_all
from .memory_formats import (channels_last, channels_last_3d, contiguous_format, memory_format,  # noqa: E402
                             preserve_format)
__all__ += ["channels_last", "channels_last_3d", "contiguous_format", "memory_format", "preserve_format"]
globals().pop("memory_formats", None)
globals().pop("creation_sequences", None)
globals().pop("creation_interop", None)
from .device import get_default_device, set_default_device  # noqa: E402
from .legacy import set_default_tensor_type  # noqa: E402
from .dtypes import can_cast  # noqa: E402
from .func import vmap  # noqa: E402  (torch.vmap is torch.func.vmap)
from .global_modes import *  # noqa: F401,F403,E402  (anomaly, interop threads, typename, is_inference...)
from .global_modes import __all__ as _global_modes_all  # noqa: E402
__all__ += ["can_cast", "get_default_device", "set_default_device", "set_default_tensor_type", "vmap"]
__all__ += _global_modes_all
globals().pop("global_modes", None)
from ._aten_ops import *  # noqa: F401,F403,E402  (convolution, native_layer_norm, constant_pad_nd, the dropouts...)
from ._aten_ops import __all__ as _aten_ops_all  # noqa: E402
__all__ += _aten_ops_all
from ._rnn_cells import gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell  # noqa: E402
__all__ += ["gru_cell", "lstm_cell", "rnn_relu_cell", "rnn_tanh_cell"]
from ._linalg_removed import eig, lstsq, matrix_rank, solve, symeig, triangular_solve  # noqa: E402
from .functional.lowrank import pca_lowrank, svd_lowrank  # noqa: E402
__all__ += ["eig", "lstsq", "matrix_rank", "solve", "symeig", "triangular_solve", "pca_lowrank", "svd_lowrank"]
from . import hub, jit, overrides, types  # noqa: E402,F401  (TorchScript's names run eagerly; no __torch_function__)
__all__ += ["hub", "jit"]  # not types: ``from minitensor import *`` must not shadow the standard library's
from .utils import hooks as _utils_hooks  # noqa: E402  (binds utils.hooks, now that nn is complete)
del _utils_hooks
__all__ += ["TypedStorage", "UntypedStorage"]
from math import e, inf, nan, pi  # noqa: E402  (torch.e, torch.inf, torch.nan, torch.pi: Python's floats, as PyTorch's)
newaxis: None = None  # torch.newaxis: None, as NumPy's (an index adding a dimension of size 1)
__all__ += ["e", "pi", "nan", "inf", "newaxis"]
