"""PyTorch's complex-conjugation calls on real tensors. minitensor has no complex dtypes (docs/differences.md),
so, as PyTorch does for a real tensor, ``conj``, ``conj_physical``, ``resolve_conj``, ``resolve_neg`` and
``real`` return ``input`` itself, ``is_conj`` / ``is_neg`` are False and ``imag`` raises PyTorch's error:
code written for both kinds (``x.conj().T`` in an adjoint, ``torch.real(z)``) runs on real data."""
from __future__ import annotations

from ..tensor import Tensor
from .inplace import check_writable

__all__ = ["conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg", "real", "imag", "is_conj",
           "is_neg"]


def conj(input: Tensor) -> Tensor:
    """The complex conjugate: ``input`` itself for a real tensor."""
    return input


conj_physical = resolve_conj = resolve_neg = real = conj


def conj_physical_(input: Tensor) -> Tensor:
    """In place, a no-op on real data, but refused where any in-place write is (a leaf that requires grad)."""
    check_writable(input)
    return input


def imag(input: Tensor) -> Tensor:
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def is_conj(input: Tensor) -> bool:
    return False


def is_neg(input: Tensor) -> bool:
    return False
