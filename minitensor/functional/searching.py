"""Searching and counting, as PyTorch's: unique, unique_consecutive, searchsorted, bucketize, bincount, histc,
isin and count_nonzero. Indices and counts are int64 (searchsorted's int32 on request) and record no graph.
PyTorch defines no derivative for unique's values or bincount's weighted sums but still records them: their
outputs require grad when the input does, and backward through them raises PyTorch's error (``NoDerivative``).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..creation import as_tensor, zeros
from ..tensor import Tensor
from ._util import SCALARS, cast, check_floating, nondiff, norm_dim, norm_dims, torch_dtype_name
from .arithmetic import ne
from .reduce import sum as _sum

__all__ = ["unique", "unique_consecutive", "searchsorted", "bucketize", "bincount", "histc", "isin",
           "count_nonzero"]


class NoDerivative(ArrayFunction):
    """``op(B, *args)`` recorded in the graph without a derivative, as PyTorch records unique and bincount:
    the output requires grad when an input does, and a backward through it raises ``error``."""

    @staticmethod
    def forward(ctx: Any, B: Backend, *args: Any, op: Callable[..., Any], error: Exception) -> Any:
        ctx.error = error
        return op(B, *args)

    @staticmethod
    def backward(ctx: Any, B: Backend, grad: Any) -> Any:
        raise ctx.error


def _tensor(name: str, x: Any, arg: str = "input") -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _unique(name: str, input: Tensor, return_inverse: bool, return_counts: bool, dim: int | None,
            consecutive: bool) -> Any:
    """The values (and inverse indices, counts, as asked) of unique / unique_consecutive."""
    _tensor(name, input)
    axis = None
    if dim is not None:
        if input.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        axis = norm_dim(dim, input.ndim)
        if input.numel() == 0:  # PyTorch's rules: the one empty dim must be the one chosen
            if list(input.shape).count(0) > 1:
                raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
            if input.shape[axis] != 0:
                raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                                   "applied")
    op = "unique_consecutive" if consecutive else "_unique2" if dim is None else "unique_dim"
    values, inverse, counts = NoDerivative.apply(
        input, axis, consecutive, op=lambda B, x, a, c: B.unique(x, a, c),
        error=NotImplementedError(f"the derivative for '{op}' is not implemented."))
    extras = (inverse,) * return_inverse + (counts,) * return_counts
    return (values, *extras) if extras else values


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Any:
    """The distinct elements of ``input`` (flattened), or with ``dim`` its distinct slices along dim, in
    ascending (lexicographic) order; ``return_inverse`` adds the int64 index of each element's (slice's)
    value, of input's shape (or (input.shape[dim],)), and ``return_counts`` how often each value occurs.
    Elements compare with ``==``, so each nan is its own value. ``sorted=False`` also sorts (as PyTorch's
    CPU does; the order is then unspecified)."""
    return _unique("unique", input, return_inverse, return_counts, dim, consecutive=False)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """``unique`` of each run of equal neighbours (elements, or slices along ``dim``), in their order."""
    return _unique("unique_consecutive", input, return_inverse, return_counts, dim, consecutive=True)


def _tensor_or_number(name: str, a: Any, b: Any, expected: str) -> tuple[Any, Any]:
    """(a, b) with NumPy numbers as Python ones; PyTorch's TypeError for arguments that are neither the
    tensors nor the numbers an op takes, or no tensor at all."""
    a, b = (x.item() if isinstance(x, np.generic) else x for x in (a, b))
    ok = (Tensor,) + SCALARS
    if not (isinstance(a, ok) and isinstance(b, ok) and (isinstance(a, Tensor) or isinstance(b, Tensor))):
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(a).__name__}, "
                        f"{type(b).__name__}), but expected {expected}")
    return a, b


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where each of ``input`` would go in ``sorted_sequence`` to keep it sorted, along its last dim:
    out[..., j] = the first i with seq[..., i] >= input[..., j] (``right`` or ``side="right"``: >), or its
    length. A 1-D sequence serves any input (a number too, giving a 0-d result); an N-D one needs input of
    the same leading dims. ``sorter`` (int64, the sequence's shape) sorts an unsorted sequence's rows. int64
    indices, int32 with ``out_int32``; shape of ``input``. Both are compared in their promoted dtype."""
    sorted_sequence, input = _tensor_or_number("searchsorted", sorted_sequence, input,
                                               "(Tensor sorted_sequence, Tensor input or Number)")
    _tensor("searchsorted", sorted_sequence, "sorted_sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        _check_sorter(seq, sorter)
    ndim = input.ndim if isinstance(input, Tensor) else 0
    if ndim == 0 and seq.ndim != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) and input value's "
                           f"dim(0) numel(1)")
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if seq.ndim > 1 and (ndim != seq.ndim or input.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(seq.shape)} and input value tensor {list(input.shape)}")
    dt = _dt.result_type(seq, input)
    if dt is _dt.bool:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    values = cast(input, dt) if isinstance(input, Tensor) else as_tensor(input, dtype=dt, device=seq.device)
    out = np.int32 if out_int32 else np.int64
    return nondiff(lambda B, s, v, o: B.astype(B.searchsorted(s, v, right, o), out), cast(seq, dt), values, sorter)


def _check_sorter(seq: Tensor, sorter: Any) -> None:
    if not isinstance(sorter, Tensor) or sorter.shape != seq.shape:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(seq.shape)}and got sorter tensor {list(getattr(sorter, 'shape', []))}")
    if sorter.dtype is not _dt.int64:
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{torch_dtype_name(sorter.dtype)}")
    if sorter.numel() and not (0 <= sorter.min().item() and sorter.max().item() < seq.shape[-1]):
        raise RuntimeError("torch.searchsorted(): sorter index out of range")


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each of ``input`` among the ascending 1-D ``boundaries``: i with
    boundaries[i-1] < x <= boundaries[i] (``right``: boundaries[i-1] <= x < boundaries[i]), which is
    ``searchsorted(boundaries, input, right=right)``."""
    input, boundaries = _tensor_or_number("bucketize", input, boundaries, "(Tensor input or Number, Tensor boundaries)")
    _tensor("bucketize", boundaries, "boundaries")
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """out[i] = how many of the non-negative 1-D integer ``input`` equal i (with ``weights``, of input's
    length: the sum of their weights), for i < max(max(input) + 1, minlength). int64 counts; weighted sums
    are float32 for float32 weights and float64 for any other dtype (an empty input gives int64 zeros)."""
    _tensor("bincount", input)
    if input.dtype.is_floating_point or input.dtype is _dt.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{torch_dtype_name(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim == 1 and input.numel() == 0:
        return zeros(minlength, dtype=_dt.int64, device=input.device)
    if input.ndim != 1 or input.min().item() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None:
        if not isinstance(weights, Tensor) or weights.shape != input.shape:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        if weights.dtype is not _dt.float32:
            weights = weights.to(_dt.float64)
    return NoDerivative.apply(input, weights, minlength, op=lambda B, x, w, n: B.bincount(x, w, n),
                              error=RuntimeError("derivative for aten::bincount is not implemented"))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts of ``input``'s elements in ``bins`` equal-width bins over [min, max], in input's (floating)
    dtype. min == max takes the data's min and max (and a range of width 0 widens to [v - 1, v + 1]);
    elements outside the range and nans are not counted; max itself falls in the last bin."""
    _tensor("histc", input)
    if not isinstance(bins, int) or isinstance(bins, bool):
        raise TypeError(f"histc(): argument 'bins' must be int, not {type(bins).__name__}")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low == high and input.numel():
        low, high = float(input.min().item()), float(input.max().item())
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] is not finite")
    if not low < high:
        raise RuntimeError("torch.histc: max must be larger than min")
    check_floating("linspace" if input.dtype is _dt.bool else "histogram", input)  # where PyTorch fails
    if input.numel() == 0:
        return zeros(bins, dtype=input.dtype, device=input.device)
    return nondiff(lambda B, x: B.histc(x, bins, low, high), input)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of ``elements`` equals some element of ``test_elements`` (either may be a number), or
    with ``invert`` the opposite; bool, of elements' shape. Both compare in their promoted dtype; nans
    never match. ``assume_unique`` is a hint only: the answer is exact either way."""
    elements, test_elements = _tensor_or_number("isin", elements, test_elements,
                                                "(Tensor elements, Tensor test_elements) or one of them a Number")
    tensors = [x for x in (elements, test_elements) if isinstance(x, Tensor)]
    for t in tensors:
        if t.dtype is _dt.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    dt = _dt.result_type(elements, test_elements)
    a, b = (cast(x, dt) if isinstance(x, Tensor) else as_tensor(x, dtype=dt, device=tensors[0].device)
            for x in (elements, test_elements))
    return nondiff(lambda B, e, t: B.isin(e, t, invert), a, b)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The int64 number of non-zero elements (nan counts) over ``dim`` (an int or a tuple; None: all)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"count_nonzero(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return _sum(ne(input, 0), norm_dims(dim, input.ndim))


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero(input)`` with exactly ``size`` rows: the first ``size`` indices, padded with rows of
    ``fill_value`` when there are fewer; shape (size, ndim), int64."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    from .scatter import nonzero
    found = nonzero(input)
    if found.shape[0] >= size:
        return found[:size]
    from .shape import cat
    pad = as_tensor(np.full((size - found.shape[0], found.shape[1]), fill_value, np.int64), device=input.device)
    return cat([found, pad])
