"""PyTorch's ``out=`` keyword for an elementwise op (``torch.add(x, y, out=result)``): the result, computed as
without ``out``, is cast to ``out``'s dtype and written into its memory (``out`` is resized where its shape
differs), and ``out`` itself is returned."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..autograd.grad_mode import state
from ..tensor import Tensor, _bump_version
from ._util import torch_dtype_name

__all__ = ["call_with_out", "write_out"]


def _can_cast(src: np.dtype, dst: np.dtype) -> bool:
    """PyTorch's canCast: no complex to non-complex, no floating to integral, no non-bool to bool."""
    if src == dst:
        return True
    kinds = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # "V": bfloat16 is a floating type
    if dst.kind == "b":
        return False
    return kinds[src.kind] <= kinds[dst.kind]


def write_out(name: str, result: Tensor, out: Any, same_dtype: bool = False) -> Tensor:
    """``result`` written into ``out`` as PyTorch's out= variant writes it, ``out`` returned; ``same_dtype``:
    ``out`` must have the result's dtype (PyTorch's matrix products), else it need only hold it."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if result._device is not out._device:
        raise RuntimeError(f"Expected out tensor to have device {result.device}, but got {out.device} instead")
    if same_dtype and result.dtype is not out.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {result.dtype}, but got {out.dtype} instead")
    if not _can_cast(result.array.dtype, out.array.dtype):
        raise RuntimeError(f"result type {torch_dtype_name(result.dtype)} can't be cast to the desired output "
                           f"type {torch_dtype_name(out.dtype)}")
    B = out._device.backend
    if tuple(result.shape) == tuple(out.shape):
        B.copy_into(out.array, result.array)
    else:
        if out.numel() != 0:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out.shape)}, which does not match the required output shape "
                          f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch release "
                          "outputs will not be resized unless they have zero elements. You can explicitly reuse "
                          "an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                          UserWarning, stacklevel=4)
        out.array = result.array.astype(out.array.dtype, copy=True)
    _bump_version(out)
    return out


def call_with_out(name: str, fn: Callable[..., Tensor], out: Any, *args: Any, same_dtype: bool = False,
                  **kwargs: Any) -> Tensor:
    """``fn(*args, **kwargs)`` written into ``out``. As PyTorch, an ``out=`` call in grad mode refuses inputs
    (or an ``out``) that require grad: the write into ``out`` has no gradient."""
    if state.grad_enabled and any(isinstance(a, Tensor) and a.requires_grad for a in (*args, out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    return write_out(name, fn(*args, **kwargs), out, same_dtype)
