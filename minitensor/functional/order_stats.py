"""Order statistics along one dim, picked from the stable sort order (the reduce family's ``argsort``):
``median``, ``nanmedian``, ``kthvalue`` and ``mode`` return (values, indices); ``quantile`` and
``nanquantile`` interpolate between two sorted neighbours. Every value is a gather of the input, so its
gradient goes to the element picked (split by weight between the two neighbours of a linear quantile);
``median()`` / ``nanmedian()`` of a whole tensor share it evenly between tied elements, as PyTorch.

Ties: median, nanmedian and kthvalue index the element at the picked position of the stable sort (equal
values in input order), mode the last occurrence of its value (PyTorch leaves these open;
docs/differences.md). A slice holding a nan has median nan,
with the index of its first nan; nanmedian and nanquantile skip nans (all-nan slices give nan)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import return_types as rt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor
from ._util import named, nondiff, norm_dim
from .cumulative import take_along
from .math import lerp
from .reduce import _check_reducible, _tensor_input, evenly_distributed
from ..amp.autocast_mode import cast_early
from ..amp.policy import Quantile

__all__ = ["median", "nanmedian", "kthvalue", "mode", "quantile", "nanquantile"]

# (B, x, its stable ascending sort order, axis) -> the int64 sorted positions to pick, with axis kept as 1
Position = Callable[[Backend, Any, Any, int], Any]


def _nan_count(B: Backend, x: Any, axis: int) -> Any:
    return B.sum(B.isnan(x), (axis,), True).astype(np.int64)


def _median_at(B: Backend, x: Any, order: Any, axis: int) -> Any:
    """The lower median (n - 1) // 2, or the first nan (sorted last, at n - nans) where the slice has one."""
    n, nans = x.shape[axis], _nan_count(B, x, axis)
    return B.where(nans > 0, n - nans, (n - 1) // 2)


def _nanmedian_at(B: Backend, x: Any, order: Any, axis: int) -> Any:
    """The lower median of the k non-nan values, (k - 1) // 2; the first nan when k = 0."""
    k = x.shape[axis] - _nan_count(B, x, axis)
    return B.where(k > 0, (k - 1) // 2, 0)


def _mode_at(B: Backend, x: Any, order: Any, axis: int) -> Any:
    """The last sorted position of the first (smallest) run of equal values with the largest count: each
    position's count within its run is i - start + 1, the run's start a running maximum of where runs begin
    (nan != nan: every nan is a run of its own), and argmax finds the first position reaching the most."""
    s = B.moveaxis(B.take_along_axis(x, order, axis), axis, -1)
    n = s.shape[-1]
    starts = B.concatenate([B.ones(s.shape[:-1] + (1,), np.dtype(np.bool_)), s[..., 1:] != s[..., :-1]], -1)
    positions = B.arange(0, n, 1, np.dtype(np.int64))
    run_start, _ = B.cummax(B.where(starts, positions, 0), s.ndim - 1)
    at = B.argmax(positions - run_start, s.ndim - 1, True)
    return B.moveaxis(at, -1, axis)


def _pick(name: str, input: Any, dim: int, keepdim: bool, position: Position, k: int | None = None) -> Any:
    """(values, int64 indices) at the sorted ``position`` along ``dim``; values differentiable."""
    _tensor_input(name, input)
    if input.dtype.name == "bool" and name != "mode":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')
    axis = norm_dim(dim, input.ndim)
    x = input.reshape(1) if input.ndim == 0 else input
    _check_reducible("median" if name == "nanmedian" else name, x, (axis,))  # PyTorch's nanmedian says median
    if k is not None and not 1 <= k <= x.shape[axis]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")

    def indices_of(B: Backend, a: Any) -> Any:
        order = B.argsort(a, axis, False)
        return B.take_along_axis(order, position(B, a, order, axis).astype(np.int64), axis)
    indices = nondiff(indices_of, x)
    values = take_along(x, indices, axis)
    result = getattr(rt, name)  # median, nanmedian, kthvalue or mode: each its own type
    if input.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    elif not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    # PyTorch's node: median.dim's MedianBackward1 (median()'s is ...0), KthvalueBackward0, ModeBackward0
    overload = 1 if name in ("median", "nanmedian") else 0
    return result((named(values, f"{name.capitalize()}Backward{overload}"), indices))


class ShareAmongTies(ArrayFunction):
    """The value y of a whole-tensor order statistic of x (found without a graph): the gradient goes in
    equal shares to the elements equal to y (to the nans when y is nan), PyTorch's rule for median()."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, y: Any) -> Any:
        ctx.save_for_backward(x, y)
        return B.copy(y)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, y = ctx.saved_arrays
        return evenly_distributed(B, gy, x, y, None), None


def _whole(name: str, input: Any, position: Position) -> Tensor:
    """The statistic of all elements as a 0-d tensor: nan for an empty float tensor (the dtype's minimum, the
    nan's integer cast, for an integer one, as PyTorch)."""
    _tensor_input(name, input)
    if input.numel() == 0 and input.dtype.name != "bool":
        from ..creation import full
        empty = math.nan if input.is_floating_point() else int(np.iinfo(input.array.dtype).min)
        value = full((), empty, dtype=input.dtype, device=input.device)  # in the graph, as PyTorch's: its
        return ShareAmongTies.apply(input, value) if input.is_floating_point() else value  # gradient is empty
    value = _pick(name, input.detach().reshape(-1), 0, False, position).values
    return named(ShareAmongTies.apply(input, value), name.capitalize() + "Backward0") \
        if input.is_floating_point() else value


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median: ``median(input)`` a 0-d tensor, ``median(input, dim)`` (values, indices) along dim.
    nan propagates: a slice with a nan has median nan (the index of its first nan)."""
    if dim is None:
        return _whole("median", input, _median_at)
    return _pick("median", input, dim, keepdim, _median_at)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """``median`` of the non-nan values (nan where a slice is all nan)."""
    if dim is None:
        return _whole("nanmedian", input, _nanmedian_at)
    return _pick("nanmedian", input, dim, keepdim, _nanmedian_at)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """(values, indices) of the k-th smallest element along ``dim`` (k from 1; nans sort last)."""
    def kth(B: Backend, x: Any, order: Any, axis: int) -> Any:
        return B.full(x.shape[:axis] + (1,) + x.shape[axis + 1:], k - 1, np.dtype(np.int64))
    return _pick("kthvalue", input, -1 if dim is None else dim, keepdim, kth, k=int(k))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """(values, indices): the most frequent value along ``dim`` (the smallest of equally frequent ones) and
    the index of its last occurrence."""
    return _pick("mode", input, dim, keepdim, _mode_at)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_q(name: str, input: Tensor, q: Any) -> Tensor:
    """``q`` checked as PyTorch does (a number or a 0-d/1-d tensor of input's dtype, in [0, 1]), as a tensor
    on input's device."""
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.numel() and not bool(((q >= 0) & (q <= 1)).all()):  # one host sync, as PyTorch's check
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        return q.to(input.device)
    if not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    from ..creation import tensor
    return tensor(q, dtype=input.dtype, device=input.device)


def _quantile(name: str, input: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    """Sorted values s (n along dim) at rank r = q (n - 1) (q (k - 1) over the k non-nans for nanquantile; a
    slice with a nan: rank n - 1, its nan, for quantile): s[floor r] + (r - floor r) (s[ceil r] - s[floor r])
    (linear), or one neighbour (lower, higher, nearest: rounded half to even), or their mean (midpoint).
    Output (Q, *reduced shape) for a 1-d q of Q values, the reduced shape for a number or a 0-d q."""
    _tensor_input(name, input)
    input, q = cast_early(Quantile, input, q)  # CPU autocast: float32, as PyTorch's
    if input.dtype.name not in ("float32", "float64"):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    qs = _quantile_q(name, input, q)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    axis = None if dim is None else norm_dim(dim, input.ndim)
    x = input.reshape(-1) if axis is None or input.ndim == 0 else input.moveaxis(axis, -1)
    s = x.sort(-1).values  # (..., n), differentiable: a gather of the input

    def ranks(B: Backend, s: Any, q: Any) -> Any:
        n = s.shape[-1]
        if ignore_nan:
            r = q * (n - _nan_count(B, s, s.ndim - 1) - 1).astype(s.dtype)
            r = B.where(r > 0, r, 0)
        else:
            r = B.where(_nan_count(B, s, s.ndim - 1) > 0, n - 1, q * s.dtype.type(n - 1))
        if interpolation in ("lower", "higher", "nearest"):
            r = B.floor(r) if interpolation == "lower" else B.ceil(r) if interpolation == "higher" else B.round(r, 0)
        return r.astype(s.dtype)
    r = nondiff(ranks, s.detach(), qs.reshape(-1))  # (..., Q)
    below = r.long()
    out = take_along(s, below, -1)
    if interpolation in ("linear", "midpoint"):
        weight = r - below if interpolation == "linear" else 0.5
        out = lerp(out, take_along(s, r.ceil().long(), -1), weight)
    out = out.moveaxis(-1, 0)  # (Q, ...)
    if keepdim:
        kept = [1] * input.ndim if axis is None else list(input.shape)
        if axis is not None and input.ndim:
            kept[axis] = 1
        out = out.reshape(out.shape[0], *kept)
    return out.squeeze(0) if qs.ndim == 0 else out


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles of ``input`` along ``dim`` (all elements when None); nan where a slice has a nan."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``quantile`` of the non-nan values (nan where a slice is all nan)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
