"""PyTorch's errors for products given operands of two dtypes: unlike elementwise ops, which promote, the
matrix products (mm, matmul, bmm, dot, mv, addmm, linear, conv) refuse, each with its kernel's own words.
A program that mixed float32 and float64 by mistake fails here as it does under PyTorch."""
from __future__ import annotations

from typing import Any

from ._util import torch_dtype_name
from .random import _CTYPES

__all__ = ["check_matmul", "check_same", "check_addmm", "check_addmv", "check_conv"]

# the C++ names PyTorch's "m1 and m2" error prints
_C_NAMES = {**_CTYPES, "int16": "short int", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def _c(t: Any) -> str:
    return _C_NAMES.get(t.array.dtype.name, t.array.dtype.name)


def _s(t: Any) -> str:
    return torch_dtype_name(t.dtype)


def check_matmul(a: Any, b: Any) -> None:
    """matmul's dtype check, worded as the kernel matmul folds a and b into (dot, addmv, mm or bmm)."""
    if a.array.dtype == b.array.dtype:
        return
    if a.ndim == 1 and b.ndim == 1:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_s(a)} and {_s(b)}")
    if b.ndim == 1:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_s(b)}, {_s(a)}, and {_s(b)}")
    if b.ndim == 2:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_c(a)} != {_c(b)}")
    check_same(a, b)


def check_same(a: Any, b: Any) -> None:
    """The kernels' plain check (bmm, einsum, cross): b's dtype is a's."""
    if a.array.dtype != b.array.dtype:
        raise RuntimeError(f"expected scalar type {_s(a)} but found {_s(b)}")


def check_addmm(input: Any, mat1: Any, mat2: Any) -> None:
    """addmm's check (also linear's with a bias): input against mat2, then mat1 against mat2."""
    if input.array.dtype != mat2.array.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_s(input)} and {_s(mat2)}")
    if mat1.array.dtype != mat2.array.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_s(mat1)} and {_s(mat2)}")


def check_addmv(input: Any, mat: Any, vec: Any) -> None:
    """addmv's check: input, mat and vec of one dtype (elementwise promotion does not apply)."""
    if not input.array.dtype == mat.array.dtype == vec.array.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_s(input)}, {_s(mat)}, and "
                           f"{_s(vec)}")


def check_conv(input: Any, weight: Any, bias: Any) -> None:
    """conv's check: the bias against the input first, then the weight."""
    if bias is not None and bias.array.dtype != input.array.dtype:
        raise RuntimeError(f"Input type ({_c(input)}) and bias type ({_c(bias)}) should be the same")
    check_same(input, weight)
