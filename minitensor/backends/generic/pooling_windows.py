"""Max pooling over windows listed by their taps: adaptive max pooling (2-D and 3-D) and fractional max
pooling (2-D and 3-D).

Each output's window is a list of K flat positions in its input plane / volume (its taps, in scan order,
the last spatial dim fastest). One gather makes every window (N, C, O, K); the max and its position are a
reduction over K. Adaptive windows are the same for every plane, so their taps are (O, K); fractional
windows start at random offsets drawn per plane, so theirs are (N, C, O, K).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .conv import Pair

Array = Any


def adaptive_taps(size: int, out: int) -> np.ndarray:
    """(out, longest window) int64: the positions of adaptive window i = [floor(i*size/out),
    ceil((i+1)*size/out)), a shorter window repeating its last position."""
    i = np.arange(out)
    start, end = (i * size) // out, -((-(i + 1) * size) // out)
    steps = np.arange(int((end - start).max(initial=1)))
    return start[:, None] + np.minimum(steps[None, :], (end - start - 1)[:, None])


def volume_taps(axes: Sequence[Any], sizes: Sequence[int]) -> Any:
    """Flat taps (..., O, K) from per-axis positions: ``axes[a]`` is (..., O_a, K_a) (leading dims shared),
    ``sizes`` the input's spatial sizes. O = prod O_a in C order, K = prod K_a in scan order; the position
    of (p_0, p_1, ...) is (p_0 * size_1 + p_1) * size_2 + ..."""
    dims = len(axes)
    lead = axes[0].ndim - 2
    flat: Any = None
    for a, taps in enumerate(axes):
        # axis a's (O_a, K_a) go to places a and dims + a of 2 * dims trailing dims
        shape = [1] * (2 * dims)
        shape[a], shape[dims + a] = taps.shape[-2], taps.shape[-1]
        placed = taps.reshape(taps.shape[:lead] + tuple(shape))
        flat = placed if flat is None else flat * sizes[a] + placed
    out, cells = (math.prod(t.shape[-2] for t in axes), math.prod(t.shape[-1] for t in axes))
    return flat.reshape(tuple(axes[0].shape[:lead]) + (out, cells))


def fractional_starts(xp: Any, sample: Array, in_size: int, out: int, pool: int) -> Array:
    """(N, C, out) int64 window starts of PyTorch's fractional pooling along one axis, from the (N, C) samples
    u: alpha = (in - pool) / (out - 1), start_i = int((i + u) * alpha) - int(u * alpha), the last window at
    in - pool. Computed in the samples' dtype, one rounding per operation, as PyTorch's CPU kernel."""
    dt = sample.dtype
    last = xp.full(sample.shape + (1,), in_size - pool, dtype=np.int64)
    if out <= 1:
        return last[..., :out]
    alpha = xp.full((1,), in_size - pool, dtype=dt) / xp.full((1,), out - 1, dtype=dt)
    i = xp.arange(out - 1).astype(dt)  # PyTorch converts i to the samples' type before the add
    starts = ((i + sample[..., None]) * alpha).astype(np.int64) - (sample * alpha).astype(np.int64)[..., None]
    return xp.concatenate([starts, last], axis=-1)


class WindowPoolOps:
    xp: Any

    def adaptive_max_pool2d(self, x: Array, output_size: Pair) -> tuple[Array, Array]:
        """(y, indices), both (N, C, oH, oW): the max of x over PyTorch's adaptive window (rows
        [floor(i*H/oH), ceil((i+1)*H/oH)), likewise columns) and its int64 flat position h*W + w in the plane:
        the first max in scan order, or the last NaN (PyTorch takes every NaN it meets).

        A window shorter than the longest repeats its last row / column, which changes neither its max
        nor where that max first occurs."""
        return self._adaptive_max_pool(x, output_size)

    def adaptive_max_pool3d(self, x: Array, output_size: Sequence[int]) -> tuple[Array, Array]:
        """(y, indices), both (N, C, oD, oH, oW): ``adaptive_max_pool2d`` over (D, H, W) volumes; indices are
        flat positions (d*H + h)*W + w, the first max in (d, h, w) scan order or the last NaN."""
        return self._adaptive_max_pool(x, output_size)

    def fractional_max_pool2d(self, x: Array, kernel_size: Sequence[int], output_size: Sequence[int],
                              samples: Array) -> tuple[Array, Array]:
        """(y, indices), both (N, C, oH, oW): the max over the kH x kW window at rows from
        ``fractional_starts`` with samples[n, c, 1], columns with samples[n, c, 0] (PyTorch's order), and
        its int64 flat position in the plane (first max in scan order; the last NaN)."""
        return self._fractional_max_pool(x, kernel_size, output_size, samples[..., ::-1])

    def fractional_max_pool3d(self, x: Array, kernel_size: Sequence[int], output_size: Sequence[int],
                              samples: Array) -> tuple[Array, Array]:
        """(y, indices), both (N, C, oD, oH, oW): as ``fractional_max_pool2d`` over (D, H, W) volumes,
        samples[n, c, 0], [1], [2] for depth, rows and columns."""
        return self._fractional_max_pool(x, kernel_size, output_size, samples)

    # ------------------------------------------------------------------------------ helpers
    def _adaptive_max_pool(self, x: Array, output_size: Sequence[int]) -> tuple[Array, Array]:
        spatial = x.shape[2:]
        taps = volume_taps([adaptive_taps(s, o) for s, o in zip(spatial, output_size)], spatial)
        return self._window_max(x, self.xp.asarray(taps), tuple(output_size))

    def _fractional_max_pool(self, x: Array, kernel_size: Sequence[int], output_size: Sequence[int],
                             samples: Array) -> tuple[Array, Array]:
        """``samples`` (>= N, C, dims), one column per spatial axis in order."""
        xp = self.xp
        n, spatial = x.shape[0], x.shape[2:]
        axes = []
        for a, (size, out, k) in enumerate(zip(spatial, output_size, kernel_size)):
            # no bounds check: alpha >= 1 (out + k - 1 <= size) keeps every start in [0, size - k] for
            # samples in [0, 1), as int(a + b) - int(b) <= floor(a) + 1
            starts = fractional_starts(xp, samples[:n, :, a], size, out, k)
            axes.append(starts[..., None] + xp.arange(k, dtype=np.int64))  # (N, C, out, k)
        return self._window_max(x, volume_taps(axes, spatial), tuple(output_size))

    def _window_max(self, x: Array, taps: Array, output_size: tuple[int, ...]) -> tuple[Array, Array]:
        """(y, indices) shaped (N, C, *output_size): each window's max and the tap it came from; ``taps`` is
        (O, K), shared by every plane, or (N, C, O, K)."""
        xp = self.xp
        n, c = x.shape[:2]
        flat_x = x.reshape(n, c, math.prod(x.shape[2:]))
        o, k = taps.shape[-2:]
        if taps.ndim == 2:
            windows = flat_x[:, :, taps]  # (N, C, O, K)
        else:
            windows = xp.take_along_axis(flat_x, taps.reshape(n, c, o * k), axis=2).reshape(n, c, o, k)
        nan = xp.isnan(windows)
        # argmax takes the first max in scan order; a window holding NaN takes its last NaN, as PyTorch
        arg = xp.where(nan.any(-1), k - 1 - xp.argmax(nan[..., ::-1], -1), xp.argmax(windows, -1))
        y = xp.take_along_axis(windows, arg[..., None], -1)[..., 0]
        if taps.ndim == 2:
            indices = xp.take(taps.reshape(-1), arg + xp.arange(o, dtype=np.int64) * k)
        else:
            indices = xp.take_along_axis(taps, arg[..., None], -1)[..., 0]
        return y.reshape((n, c) + output_size), indices.astype(np.int64).reshape((n, c) + output_size)
