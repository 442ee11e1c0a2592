"""Sorting along one dim (the reduce family's ``argsort`` backend method): sort, argsort, msort, topk. The
values are a gather by the sort order (``cumulative.take_along``), so their gradient goes back to where each
value came from."""
from __future__ import annotations

from typing import Any

from .. import return_types as rt
from ..tensor import Tensor
from ._util import named, nondiff, norm_dim
from .cumulative import take_along

__all__ = ["sort", "argsort", "msort", "topk"]

def _order(name: str, input: Any, dim: int, descending: bool) -> tuple[Tensor, Tensor, int]:
    """(input as at least 1-d, its stable sort order along dim, the axis)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    axis = norm_dim(dim, input.ndim)
    x = input.reshape(1) if input.ndim == 0 else input
    return x, nondiff(lambda B, a: B.argsort(a, axis, descending), x), axis


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> rt.sort:
    """(values, indices) sorted along ``dim``. Always stable (equal elements keep their order, which also
    satisfies ``stable=False``); nans sort as the largest values, as PyTorch."""
    x, order, axis = _order("sort", input, dim, descending)
    values = take_along(x, order, axis)
    if input.ndim == 0:
        values, order = values.reshape(()), order.reshape(())
    return rt.sort((named(values, "SortBackward0"), order))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The int64 indices that sort ``input`` along ``dim`` (stable, as ``sort``)."""
    x, order, _ = _order("argsort", input, dim, descending)
    return order.reshape(()) if input.ndim == 0 else order


def msort(input: Tensor) -> Tensor:
    """``sort(input, dim=0).values``."""
    return sort(input, 0).values


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> rt.topk:
    """(values, indices) of the ``k`` largest (``largest=False``: smallest) elements along ``dim``, in sorted
    order (also for ``sorted=False``, which leaves the order open)."""
    x, order, axis = _order("topk", input, dim, largest)
    if not 0 <= k <= x.shape[axis]:
        raise RuntimeError("selected index k out of range")
    order = order.narrow(axis, 0, 1 if input.ndim == 0 else k)  # a 0-d input is its own top-0 in PyTorch too
    values = take_along(x, order, axis)
    if input.ndim == 0:
        values, order = values.reshape(()), order.reshape(())
    return rt.topk((named(values, "TopkBackward0"), order))
