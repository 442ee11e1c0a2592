"""Parity cases for the Backend methods that lay out, move, scan, sort and search arrays: strided memory,
rolls, diagonals, repeats, windows and scatters, the running scans (cumsum, cummax, cummin, logcumsumexp),
argsort, unique, searchsorted, bincount, histc and isin. Ties, nans and repeated indices are in the data on
purpose: they are where an order or a tie-break shows."""
from __future__ import annotations

import math

import numpy as np

from backend_cases import CPU, ONCE, WITH_HALF, Data, On, case, host

NAN = math.nan

# ----------------------------------------------------------------------------------------- memory
# (shape, strides in elements): C order, Fortran order, a broadcast (stride 0) axis, an empty array
for _label, (_shape, _strides) in {"c": ((2, 3), (3, 1)), "fortran": ((2, 3), (1, 2)),
                                   "stride-0": ((3, 2), (0, 1)), "empty": ((2, 0), (1, 1))}.items():
    case("empty_strided", _label, lambda d, s=_shape, st=_strides: (s, st, d.dt), WITH_HALF)
case("storage_offset", "whole", lambda d: (d.n(3, 4),))
case("storage_offset", "slice", lambda d: (On(lambda B, x=d.n(3, 5): B.asarray(x)[1:, 2:]),))
case("storage_offset", "view-of-view", lambda d: (On(lambda B, x=d.n(4, 6): B.asarray(x)[:, ::2].T[1:, 1:]),))

# ------------------------------------------------------------------------------------------ shape
case("roll", "", lambda d: (d.n(3, 4, 5), (1, -7), (0, 2)))
case("roll", "one", lambda d: (d.n(3, 4), (2,), (1,)), WITH_HALF)
case("diagonal", "offset", lambda d: (d.n(3, 4, 5), 1, 0, 2))
case("diagonal", "below", lambda d: (d.n(2, 5, 3), -2, 1, 2))
case("diagonal", "view", lambda d: (On(lambda B, x=d.n(4, 3): B.asarray(x).T), 0, 0, 1))
for _label, (_shape, _offset, _a1, _a2) in {"offset": ((3, 4, 5), 1, 0, 2), "below": ((2, 5, 3), -2, 1, 2),
                                            "reversed-axes": ((4, 3), 1, 1, 0)}.items():
    case("diagonal_scatter", _label, lambda d, s=_shape, o=_offset, a=_a1, b=_a2: (
        d.n(*CPU.diagonal(np.zeros(s), o, a, b).shape), s, o, a, b), WITH_HALF)
case("argwhere", "", lambda d: (np.where(d.bools(2, 3, 4), d.n(2, 3, 4), 0).astype(d.dt),))
case("argwhere", "bool", lambda d: (d.bools(3, 4),), ONCE)
case("argwhere", "none", lambda d: (np.zeros((2, 3), d.dt),))
case("repeat", "int", lambda d: (d.n(3, 4), 2, 1))
case("repeat", "counts", lambda d: (d.n(3, 4), np.array([2, 0, 3]), 0), WITH_HALF)
case("repeat", "int64-counts", lambda d: (np.arange(4), d.ints(0, 4, 4), 0), ONCE)  # repeat_interleave's index
for _args in ((4, 5, 1, True), (5, 3, -1, False), (3, 3, 0, False), (2, 4, -3, True)):
    case("triangle_indices", "-".join(map(str, _args)), lambda d, a=_args: a, ONCE)
# (x shape, size, step, axis)
for _label, (_shape, _size, _step, _axis) in {"last": ((3, 8), 3, 2, 1), "first": ((7, 2, 3), 2, 1, 0),
                                              "overlapping": ((2, 9, 2), 4, 3, 1)}.items():
    case("sliding_window", _label, lambda d, s=_shape, k=_size, t=_step, a=_axis: (d.n(*s), k, t, a), WITH_HALF)
    case("sliding_window_add", _label, lambda d, s=_shape, k=_size, t=_step, a=_axis: (
        d.n(*CPU.sliding_window(np.zeros(s), k, t, a).shape), s[a], t, a), WITH_HALF)


def _scatter(d: Data, reduce: str | None, src_scalar: bool = False) -> tuple:
    """Into a (4, 5) array along axis 0 from a (3, 5) index: without ``reduce`` each column's index is
    distinct (a write order must not matter); with it the indices repeat, and all of them count."""
    if reduce is None:
        index = np.argsort(d.r.random((4, 5)), axis=0)[:3]
    else:
        index = d.ints(0, 4, 3, 5)
        index[:, 0] = 1  # one place gets all three
    src = 0.0 if src_scalar else d.n(3, 5)
    return d.n(4, 5), index, src, 0, reduce


for _reduce in (None, "sum", "prod", "amax", "amin"):
    case("scatter_along_axis", str(_reduce), lambda d, r=_reduce: _scatter(d, r), WITH_HALF)
case("scatter_along_axis", "scalar", lambda d: _scatter(d, None, src_scalar=True))
case("scatter_along_axis", "scalar-repeats", lambda d: (d.n(3, 4), d.ints(0, 4, 3, 6), 0.0, 1, None))
case("scatter_along_axis", "int64-sum", lambda d: (d.ints(-9, 9, 4, 5), d.ints(0, 4, 3, 5),
                                                   d.ints(-2**40, 2**40, 3, 5), 0, "sum"), ONCE)
case("scatter_along_axis", "amax-nan", lambda d: (d.with_edges(d.n(4, 5), [NAN]), d.ints(0, 4, 3, 5),
                                                  d.with_edges(d.n(3, 5), [0.0, NAN]), 0, "amax"))

# ------------------------------------------------------------------------------------------ scans
case("cumsum", "", lambda d: (d.n(3, 5, 4), 1), WITH_HALF)
case("cumsum", "int64", lambda d: (d.ints(-2**40, 2**40, 3, 5), 0), ONCE)
case("cumsum", "bool-as-int", lambda d: (d.bools(3, 5).astype(np.int64), 1), ONCE)
for _name in ("cummax", "cummin"):
    case(_name, "ties", lambda d: (np.round(d.n(3, 9)).astype(d.dt), 1), WITH_HALF)
    case(_name, "nan", lambda d: (d.with_edges(d.n(2, 7), [1.0, NAN, 2.0, -1.0, NAN, 0.0, 3.0]), 1), WITH_HALF)
    case(_name, "axis0", lambda d: (d.n(6, 2, 3), 0))
    case(_name, "int64", lambda d: (d.ints(-3, 3, 4, 8), 1), ONCE)
case("logcumsumexp", "", lambda d: (d.n(3, 9) * 30, 1), WITH_HALF)
case("logcumsumexp", "-inf", lambda d: (d.with_edges(d.n(2, 6), [-math.inf, -math.inf, 0.0, -math.inf]), 1),
     WITH_HALF)

# ------------------------------------------------------------------------------- sort and search
for _descending in (False, True):
    _label = "descending" if _descending else "ascending"
    case("argsort", _label + "-ties-nan", lambda d, s=_descending: (
        d.with_edges(np.round(d.n(3, 9)).astype(d.dt), [NAN, 1.0, NAN, 0.0, -0.0]), 1, s), WITH_HALF)  # equal zeros
    case("argsort", _label + "-axis0", lambda d, s=_descending: (d.n(7, 3), 0, s))
    case("argsort", _label + "-int64", lambda d, s=_descending: (d.ints(-3, 3, 2, 20), 1, s), ONCE)
case("unique", "sorted", lambda d: (np.round(d.n(3, 8) * 2).astype(d.dt), None, False), WITH_HALF)
case("unique", "nan-zeros", lambda d: (np.array([2.0, NAN, -0.0, 0.0, NAN, 2.0, 1.0], d.dt), None, False))
case("unique", "consecutive", lambda d: (np.array([1.0, 1.0, 2.0, 1.0, NAN, NAN, 3.0, 3.0], d.dt), None, True))
case("unique", "int64", lambda d: (d.ints(-4, 4, 5, 6), None, False), ONCE)
case("unique", "bool", lambda d: (d.bools(4, 5), None, False), ONCE)
case("unique", "rows", lambda d: (d.ints(0, 2, 6, 3).astype(d.dt), 0, False))
case("unique", "columns-consecutive", lambda d: (np.repeat(d.ints(0, 2, 2, 3, 4), 2, axis=2).astype(d.dt), 2, True))
case("unique", "empty", lambda d: (np.zeros((0,), d.dt), None, False))


def _sorted_rows(d: Data, *shape: int) -> np.ndarray:
    return np.sort(np.round(d.n(*shape) * 2), axis=-1).astype(d.dt)


def _unsorted_with_sorter(d: Data, right: bool) -> tuple:
    seq = np.round(d.n(8) * 2).astype(d.dt)
    return seq, np.round(d.n(6) * 2).astype(d.dt), right, np.argsort(seq, kind="stable")


for _right in (False, True):
    _side = "right" if _right else "left"
    case("searchsorted", _side + "-1d", lambda d, r=_right: (_sorted_rows(d, 9), np.round(d.n(3, 4) * 2).astype(
        d.dt), r, None), WITH_HALF)
    case("searchsorted", _side + "-rows", lambda d, r=_right: (_sorted_rows(d, 2, 3, 7), np.round(
        d.n(2, 3, 5) * 2).astype(d.dt), r, None))
    case("searchsorted", _side + "-sorter", lambda d, r=_right: _unsorted_with_sorter(d, r))
    case("searchsorted", _side + "-nan", lambda d, r=_right: (
        np.array([0.0, 1.0, 2.0, NAN, NAN], d.dt), np.array([NAN, 1.0, 5.0, -1.0], d.dt), r, None))
    case("searchsorted", _side + "-int64", lambda d, r=_right: (np.sort(d.ints(-5, 5, 10)), d.ints(-6, 6, 7), r,
                                                                None), ONCE)
case("bincount", "", lambda d: (d.ints(0, 6, 20), None, 0), ONCE)
case("bincount", "minlength", lambda d: (d.ints(0, 4, 20), None, 9), ONCE)
case("bincount", "weights", lambda d: (d.ints(0, 6, 20), d.n(20), 3))
case("histc", "", lambda d: (d.n(50), 7, -1.5, 2.0), WITH_HALF)
case("histc", "edges", lambda d: (np.array([0.0, 1.0, 0.5, 1.5, -0.1, NAN, math.inf, 0.25, 0.75], d.dt), 4, 0.0,
                                  1.0), WITH_HALF)
case("isin", "", lambda d: (d.ints(0, 10, 3, 4), d.ints(0, 10, 5), False), ONCE)
case("isin", "invert", lambda d: (d.ints(0, 10, 3, 4), d.ints(0, 10, 2, 3), True), ONCE)
case("isin", "floats-nan", lambda d: (np.array([1.0, NAN, 2.5, -0.0, 3.0], d.dt), np.array([NAN, 0.0, 2.5], d.dt),
                                      False), WITH_HALF)


def _stencil(d: Data, backward: bool) -> tuple:
    """Two taps per output along axis 2 (linear interpolation 5 -> 8), one tap masked, a NaN in the input; the
    tables are host arrays, as the front ends pass them."""
    index = np.stack([np.arange(8) * 4 // 7, np.minimum(np.arange(8) * 4 // 7 + 1, 4)], 1)
    weight = np.stack([np.linspace(1, 0.2, 8), np.linspace(0, 0.8, 8)], 1)
    valid = np.ones_like(index, dtype=bool)
    valid[3, 1] = False
    if backward:
        return d.with_edges(d.n(2, 3, 8, 4), [NAN]), 2, host(index), host(weight), host(valid), 5
    return d.with_edges(d.n(2, 3, 5, 4), [NAN]), 2, host(index), host(weight), host(valid)


case("axis_stencil", "", lambda d: _stencil(d, False), WITH_HALF)
case("axis_stencil", "sum", lambda d: (d.n(3, 6), 1, host(np.array([[0, 1, 2], [3, 4, 5]])), None, None))
case("axis_stencil_backward", "", lambda d: _stencil(d, True), WITH_HALF)
