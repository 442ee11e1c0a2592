"""Pooling over (N, C, H, W): max (with argmax), average, adaptive average (adaptive and fractional max:
``pooling_windows.py``).

Max and average pooling loop over the kH*kW kernel offsets only: each offset is one strided view of the
padded input covering every output position at once (``kernel_offsets``), so the work per offset is a
few whole-array operations. Adaptive average pooling (and ``interpolate``'s modes) read each output's own taps
along one axis at a time (``axis_stencil``): a NaN or inf spoils only the outputs whose window holds it, as
PyTorch's kernels (a dense averaging matrix would spread 0 * nan over every output).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .conv import Pair, kernel_offsets, pad_hw
from .pooling_windows import WindowPoolOps, adaptive_taps

Array = Any


def pool_out_len(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size: floor (or ceil) of (size + 2p - d*(k-1) - 1) / s, plus 1; in ceil
    mode the last window must start inside the input or the left padding."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def adaptive_stencil(size: int, out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, weight, valid), each (out, longest window): adaptive window i's taps (``adaptive_taps``),
    1 / its length, and which taps are its own (a shorter window's repeats are not)."""
    index = adaptive_taps(size, out)
    i = np.arange(out)
    length = -((-(i + 1) * size) // out) - (i * size) // out
    valid = np.arange(index.shape[1])[None, :] < length[:, None]
    return index, np.broadcast_to(1.0 / length[:, None], index.shape), valid


def transpose_taps(index: np.ndarray, valid: np.ndarray | None, in_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(flat, valid), each (in_size, most readers): for input j the flat tap numbers o * K + k that read it,
    so the backward of a stencil is a gather too (no scatter-add over the whole output)."""
    taps = np.arange(index.size)
    target = index.reshape(-1)
    if valid is not None:
        taps, target = taps[valid.reshape(-1)], target[valid.reshape(-1)]
    order = np.argsort(target, kind="stable")
    taps, target = taps[order], target[order]
    counts = np.bincount(target, minlength=in_size)
    rank = np.arange(target.size) - np.repeat(np.cumsum(counts) - counts, counts)
    flat = np.zeros((in_size, max(int(counts.max(initial=0)), 1)), dtype=np.int64)
    flat[target, rank] = taps
    return flat, np.arange(flat.shape[1])[None, :] < counts[:, None]


def pool_geometry(x_shape: tuple[int, ...], kernel_size: Pair, stride: Pair, padding: Pair,
                  dilation: Pair, ceil_mode: bool) -> dict[str, Any]:
    """Output size and the (top, bottom, left, right) padding that every window needs: the given
    padding before, and after only as much as the last (ceil-mode) window reaches past the input."""
    out_hw, after = [], []
    for a in range(2):
        size = x_shape[2 + a]
        out = pool_out_len(size, kernel_size[a], stride[a], padding[a], dilation[a], ceil_mode)
        reach = (out - 1) * stride[a] + dilation[a] * (kernel_size[a] - 1) + 1
        out_hw.append(out)
        after.append(max(reach - padding[a] - size, 0))
    return {"out_hw": tuple(out_hw), "padding": (padding[0], after[0], padding[1], after[1])}


def offset_dtype(cells: int) -> np.dtype:
    """The narrowest dtype for a window's offsets 0..cells-1: uint8 up to 256 cells, else int32 (int64
    past 2**31 cells)."""
    return np.dtype(np.uint8 if cells <= 256 else np.int32 if cells <= 2**31 else np.int64)


class PoolOps(WindowPoolOps):
    """Max (with argmax), average and adaptive average pooling; the windowed max poolings (adaptive, fractional)
    come from ``WindowPoolOps``."""

    xp: Any
    index_add: Callable[..., Array]  # from ShapeOps: out[index] += src with repeats accumulating

    def max_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair,
                   ceil_mode: bool) -> tuple[Array, Array]:
        """-> (y, offsets): each window's max and the scan-order offset i*kW + j of its argmax inside the
        window, in ``offset_dtype`` (uint8 for windows up to 256 cells): the narrow state that backward
        saves; ``max_pool2d_indices`` turns it into PyTorch's int64 indices when they are asked for.

        Ties go to the first element in scan order (row by row) and a NaN wins, the last NaN if several,
        as in PyTorch; padding is -inf (an integer dtype's lowest value) and never chosen. A dilated window
        wholly in the padding gets -inf and offset 0 (its position is outside the input: no index)."""
        xp = self.xp
        geometry = pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)
        lowest = -float("inf") if x.dtype.kind in "fV" else xp.iinfo(x.dtype).min  # integers pool too
        xpad = pad_hw(xp, x, geometry["padding"], lowest)
        arg_dtype = offset_dtype(kernel_size[0] * kernel_size[1])
        best = arg = None
        for k, index in kernel_offsets(kernel_size, stride, dilation, geometry["out_hw"]):
            v = xpad[index]
            if best is None:  # work in the input's memory layout (channels-last stays channels-last)
                best, arg = v.copy(order="K"), xp.zeros_like(v, dtype=arg_dtype)
                continue
            # branch-free update (a masked copy is several times slower on random data): offsets come in
            # increasing order, so the newest offset where the max grew is the largest k taken; comparing
            # the new and old maxima reads two contiguous arrays instead of the strided window v
            grown = xp.maximum(best, v)
            xp.maximum(arg, xp.multiply(grown > best, k, dtype=arg_dtype), out=arg)
            best = grown
        if padding[0] or padding[1]:
            # a window whose valid values are all -inf keeps its first valid element, not the padding
            first, _ = self._first_valid_offsets(x.shape[2:], kernel_size, stride, padding, dilation,
                                                 geometry["out_hw"], arg_dtype)
            xp.maximum(arg, first, out=arg)
        if x.dtype.kind in "fV" and xp.isnan(best).any():
            arg = self._last_nan_offsets(xpad, best, arg, kernel_size, stride, dilation, geometry["out_hw"])
        return best, arg

    def max_pool2d_indices(self, offsets: Array, x_shape: tuple[int, ...], kernel_size: Pair, stride: Pair,
                           padding: Pair, dilation: Pair) -> Array:
        """PyTorch's indices from ``max_pool2d``'s offsets: int64 flat positions in each input H*W plane,
        -1 for a window wholly in the padding."""
        out_hw = offsets.shape[2:]
        indices = self._flat_indices(offsets, x_shape[3], kernel_size, stride, padding, dilation, out_hw)
        if padding[0] or padding[1]:
            _, empty = self._first_valid_offsets(x_shape[2:], kernel_size, stride, padding, dilation, out_hw,
                                                 offsets.dtype)
            if empty.any():
                indices[:, :, empty] = -1
        return indices

    def max_pool2d_backward(self, gy: Array, offsets: Array, x_shape: tuple[int, ...], kernel_size: Pair,
                            stride: Pair, padding: Pair, dilation: Pair) -> Array:
        """gx[n, c].flat[index[n, c, p]] += gy[n, c, p], the indices rebuilt from the saved offsets; windows
        that overlap repeat an index, and the scatter-add accumulates the repeats. Index -1 (a window wholly
        in the padding) sends its gradient to a spare slot past the end, dropped."""
        xp = self.xp
        indices = self.max_pool2d_indices(offsets, x_shape, kernel_size, stride, padding, dilation)
        n, c, h, w = x_shape
        size = n * c * h * w
        plane_starts = xp.arange(n * c, dtype=xp.int64).reshape(n, c, 1, 1) * (h * w)
        flat = (indices + plane_starts).reshape(-1)
        if indices.size and int(indices.min()) < 0:
            flat = xp.where(indices.reshape(-1) < 0, size, flat)
        gx = xp.zeros(size + 1, dtype=gy.dtype)
        self.index_add(gx, flat, gy.reshape(-1))
        return gx[:size].reshape(x_shape)

    def avg_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, ceil_mode: bool,
                   count_include_pad: bool, divisor_override: int | None) -> Array:
        """y = (sum of the window over the zero-padded input) / divisor; see ``_avg_divisor``."""
        geometry = pool_geometry(x.shape, kernel_size, stride, padding, (1, 1), ceil_mode)
        xpad = pad_hw(self.xp, x, geometry["padding"], 0)
        total = None
        for _, index in kernel_offsets(kernel_size, stride, (1, 1), geometry["out_hw"]):
            if total is None:
                total = xpad[index].copy(order="K")
            else:
                total += xpad[index]
        divisor = self._avg_divisor(x.shape, kernel_size, stride, padding, geometry["out_hw"],
                                    count_include_pad, divisor_override, x.dtype)
        if total.dtype.kind not in "fV":  # type: ignore[union-attr] # int64, as PyTorch: the integer quotient, truncated toward zero
            return self.xp.sign(total) * (self.xp.abs(total) // self.xp.abs(divisor)) * self.xp.sign(divisor)
        total /= divisor
        return total

    def avg_pool2d_backward(self, gy: Array, x_shape: tuple[int, ...], kernel_size: Pair,
                            stride: Pair, padding: Pair, ceil_mode: bool,
                            count_include_pad: bool, divisor_override: int | None) -> Array:
        """Each window's gy / divisor added to every position of the window (padding cut off after)."""
        geometry = pool_geometry(x_shape, kernel_size, stride, padding, (1, 1), ceil_mode)
        top, bottom, left, right = geometry["padding"]
        n, c, h, w = x_shape
        share = gy / self._avg_divisor(x_shape, kernel_size, stride, padding, gy.shape[2:],
                                       count_include_pad, divisor_override, gy.dtype)
        gxp = self.xp.zeros((n, c, h + top + bottom, w + left + right), dtype=gy.dtype)
        for _, index in kernel_offsets(kernel_size, stride, (1, 1), geometry["out_hw"]):
            gxp[index] += share
        return gxp[:, :, top:top + h, left:left + w]

    def axis_stencil(self, x: Array, axis: int, index: np.ndarray, weight: np.ndarray | None,
                     valid: np.ndarray | None) -> Array:
        """y[..., o, ...] = sum_k weight[o, k] x[..., index[o, k], ...] along ``axis`` over the taps where
        ``valid`` (all if None; a masked tap adds 0, not 0 * x); weight None means 1. One gather, so each output
        reads only its own taps: a NaN or inf reaches only the outputs whose stencil holds it."""
        xp = self.xp
        tail = (1,) * (x.ndim - axis - 1)
        y = None
        for k in range(index.shape[1]):  # over the few taps of a stencil, each a gather of every output
            tap = xp.take(x, xp.asarray(index[:, k]), axis=axis)
            if weight is not None:
                tap *= xp.asarray(weight[:, k].reshape((-1,) + tail), dtype=x.dtype)
            if valid is not None and not valid[:, k].all():
                tap = xp.where(xp.asarray(valid[:, k].reshape((-1,) + tail)), tap, xp.zeros((), dtype=x.dtype))
            y = tap if y is None else xp.add(y, tap, out=y)
        return y

    def axis_stencil_backward(self, gy: Array, axis: int, index: np.ndarray, weight: np.ndarray | None,
                              valid: np.ndarray | None, in_size: int) -> Array:
        """gx[..., j, ...] = sum of weight[o, k] gy[..., o, ...] over the taps (o, k) reading j: the stencil of
        the transposed taps (``transpose_taps``), so a NaN in gy reaches the same inputs as PyTorch's scatter."""
        flat, readers = transpose_taps(index, valid, in_size)
        return self.axis_stencil(gy, axis, flat // index.shape[1], None if weight is None else
                                 np.asarray(weight).reshape(-1)[flat], readers)

    def adaptive_avg_pool2d(self, x: Array, output_size: Pair) -> Array:
        """The mean of PyTorch's window [floor(i*size/out), ceil((i+1)*size/out)) along W, then along H."""
        for axis in (3, 2):
            x = self.axis_stencil(x, axis, *adaptive_stencil(x.shape[axis], output_size[axis - 2]))
        return x

    def adaptive_avg_pool2d_backward(self, gy: Array, x_shape: tuple[int, ...]) -> Array:
        """Each window's gy / length added to the window's positions (the forward's stencils, transposed)."""
        for axis in (2, 3):
            gy = self.axis_stencil_backward(gy, axis, *adaptive_stencil(x_shape[axis], gy.shape[axis]), x_shape[axis])
        return gy

    # ------------------------------------------------------------------------------ helpers
    def _first_valid_offsets(self, in_hw: tuple[int, ...], kernel_size: Pair, stride: Pair, padding: Pair,
                             dilation: Pair, out_hw: Pair, dtype: Any) -> tuple[Array, Array]:
        """(first, empty), both (oH, oW): the scan-order offset i0*kW + j0 of each window's first element
        inside the input, and whether the window has no element inside the input at all (a dilated window
        can fall wholly in the padding; its offset is 0)."""
        xp = self.xp
        first, empty = [], []
        for a in range(2):
            start = xp.arange(out_hw[a]) * stride[a] - padding[a]
            i0 = -(-xp.maximum(-start, 0) // dilation[a])  # ceil division: padding taps before the input
            first.append(i0)
            empty.append((i0 >= kernel_size[a]) | (start + i0 * dilation[a] >= in_hw[a]))
        empty_window = empty[0][:, None] | empty[1][None, :]
        first_offset = first[0][:, None] * kernel_size[1] + first[1][None, :]
        return xp.where(empty_window, 0, first_offset).astype(dtype), empty_window

    def _last_nan_offsets(self, xpad: Array, best: Array, arg: Array, kernel_size: Pair, stride: Pair,
                          dilation: Pair, out_hw: Pair) -> Array:
        """arg with windows whose max is NaN pointing at their last NaN (PyTorch takes every NaN it meets)."""
        xp = self.xp
        last = xp.zeros(arg.shape, dtype=arg.dtype)
        for k, index in kernel_offsets(kernel_size, stride, dilation, out_hw):
            xp.maximum(last, xp.multiply(xp.isnan(xpad[index]), k, dtype=arg.dtype), out=last)
        return xp.where(xp.isnan(best), last, arg)

    def _flat_indices(self, arg: Array, width: int, kernel_size: Pair, stride: Pair, padding: Pair,
                      dilation: Pair, out_hw: Pair) -> Array:
        """int64 positions in the input plane: window start (oh*s - p) * W + (ow*s - p), plus offset k's
        (i*d) * W + j*d."""
        xp = self.xp
        rows = xp.arange(out_hw[0], dtype=xp.int64) * stride[0] - padding[0]
        cols = xp.arange(out_hw[1], dtype=xp.int64) * stride[1] - padding[1]
        i = xp.arange(kernel_size[0], dtype=xp.int64) * dilation[0]
        j = xp.arange(kernel_size[1], dtype=xp.int64) * dilation[1]
        offset_table = (i[:, None] * width + j[None, :]).reshape(-1)
        indices = xp.take(offset_table, arg)
        indices += rows[:, None] * width + cols[None, :]
        return indices

    def _avg_divisor(self, x_shape: tuple[int, ...], kernel_size: Pair, stride: Pair, padding: Pair,
                     out_hw: Pair, count_include_pad: bool, divisor_override: int | None,
                     dtype: Any) -> Array:
        """(oH, oW) divisors as PyTorch: divisor_override, else the window's cells inside the padded input
        (count_include_pad) or inside the input; separable, so an outer product of per-axis counts."""
        xp = self.xp
        if divisor_override is not None:
            return xp.asarray(divisor_override, dtype=dtype)
        counts = []
        for a in range(2):
            size, pad = x_shape[2 + a], padding[a]
            start = xp.arange(out_hw[a]) * stride[a] - pad
            end = xp.minimum(start + kernel_size[a], size + pad)
            if not count_include_pad:
                start, end = xp.maximum(start, 0), xp.minimum(end, size)
            counts.append(end - start)
        return (counts[0][:, None] * counts[1][None, :]).astype(dtype)
