"""Winograd F(2x2, 3x3) convolutions on the CPU, in all three directions (``conv.py`` picks them).

A 3x3 stride-1 convolution with at least WINOGRAD_MIN_CHANNELS on each side: the transforms are Numba kernels
(``numba_kernels/conv.py``), the 16 products per tile one batched matmul (16 GEMMs of (tiles, C_in) @
(C_in, C_out)), 2.25x fewer multiplies than im2col. The input gradient is the same convolution of gy with
the flipped, transposed filter; the weight gradient runs the forward's transforms backwards. The work goes
a chunk of images at a time (``conv.CHUNK_BYTES`` of V and M, still in cache when the GEMMs read them).

Threads: the batch is cut into one part per BLAS thread, and each part runs its chunks' transforms and
single-threaded GEMMs on its own thread (``parallel.over_parts``). The transforms, serial between two-thread
GEMMs before, now run on every core, and a direction synchronises its threads once instead of at each of its
GEMMs (80 of them for the CNN's conv2, where a thread that lost its core held the other one waiting).

F(4x4, 3x3) was slower here (its transforms cost more than its GEMMs save on 14x14 images, padded to 16x16)
and 20x less accurate (relative error 1e-5 against 3e-7, which F(2x2) matches with the direct sum's).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..compiled import KERNEL_DTYPES, run_kernel
from ..generic.conv import Pair
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)
from .parallel import over_parts, split_batch

Array = Any
WINOGRAD_MIN_CHANNELS = 16  # below this on either side the GEMMs are too thin to outweigh the transforms
# G of F(2x2, 3x3): U = G w G^T turns a 3x3 filter into its 4x4 Winograd form (numba_kernels/conv.py)
WINOGRAD_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
# kron(G, G) (16, 9): U[4 i + j] = sum over (a, b) of G[i, a] G[j, b] w[a, b], every filter in one GEMM (the
# 2048 stacked 4x3 @ 3x3 @ 3x4 products of G w G^T took 0.25 ms for the CNN's conv2, this 0.05)
WINOGRAD_GG = np.kron(WINOGRAD_G, WINOGRAD_G)


def winograd_kernels(x: Array, weight: Array, stride: Pair, dilation: Pair) -> Any:
    """The Numba kernels' module when Winograd F(2x2, 3x3) serves this convolution (3x3, stride 1, no
    dilation, groups 1 checked by the caller, at least WINOGRAD_MIN_CHANNELS on each side), else None."""
    if (weight.shape[2:] != (3, 3) or stride != (1, 1) or dilation != (1, 1) or x.dtype not in KERNEL_DTYPES
            or min(weight.shape[:2]) < WINOGRAD_MIN_CHANNELS):
        return None
    return numba_kernels.load("conv")


def winograd_weight(weight: Array) -> Array:
    """weight (C_out, C_in, 3, 3) -> U (16, C_in, C_out), U[4 i + j] = (G w G^T)[i, j], made in float64
    and rounded once."""
    c_out, c_in = weight.shape[:2]
    u = WINOGRAD_GG @ weight.reshape(c_out * c_in, 9).T.astype(np.float64)  # (16, C_out * C_in)
    return np.ascontiguousarray(u.reshape(16, c_out, c_in).transpose(0, 2, 1), dtype=weight.dtype)


class _Chunks:
    """A part's V and M buffers (16, chunk's tiles, C_in / C_out) and its chunks of images."""

    def __init__(self, images: range, tiles: int, c_in: int, c_out: int, per_chunk: int, dtype: Any) -> None:
        self.images, self.tiles, self.c_in, self.c_out, self.per_chunk = images, tiles, c_in, c_out, per_chunk
        self.v_buffer = np.empty(16 * per_chunk * tiles * c_in, dtype)
        self.m_buffer = np.empty(16 * per_chunk * tiles * c_out, dtype)

    def __iter__(self) -> Any:
        """(start, stop, v, m) per chunk, v and m views of the buffers for its tiles."""
        for start in range(self.images.start, self.images.stop, self.per_chunk):
            stop = min(start + self.per_chunk, self.images.stop)
            t = (stop - start) * self.tiles
            yield (start, stop, self.v_buffer[:16 * t * self.c_in].reshape(16, t, self.c_in),
                   self.m_buffer[:16 * t * self.c_out].reshape(16, t, self.c_out))


def winograd(kernels: Any, x: Array, u: Array, bias: Array, top: int, left: int, out_hw: Sequence[int]) -> Array:
    """The 3x3 stride-1 convolution of channels-last x (N, H, W, C_in), with the input padded by ``top`` rows
    and ``left`` columns (beyond that, zero wherever a tile reads outside x), as y (N, oH, oW, C_out): per
    chunk of images, the input transform, 16 GEMMs (one batched matmul), the output transform plus bias."""
    n, c_in, c_out = x.shape[0], u.shape[1], u.shape[2]
    tiles_h, tiles_w = -(-out_hw[0] // 2), -(-out_hw[1] // 2)
    y = np.empty((n, out_hw[0], out_hw[1], c_out), x.dtype)

    def part(images: range, per_chunk: int) -> None:
        for start, stop, v, m in _Chunks(images, tiles_h * tiles_w, c_in, c_out, per_chunk, x.dtype):
            run_kernel("winograd_input", False, kernels.winograd_input, x[start:stop], v, top, left, tiles_h,
                       tiles_w)
            np.matmul(v, u, out=m)
            run_kernel("winograd_output", False, kernels.winograd_output, m, y[start:stop], bias, tiles_h, tiles_w)

    over_parts(part, split_batch(n, 16 * tiles_h * tiles_w * (c_in + c_out) * x.dtype.itemsize))
    return y


def winograd_weight_grad(kernels: Any, x: Array, gy: Array, top: int, left: int) -> Array:
    """gw (C_out, C_in, 3, 3) of ``winograd``'s convolution, through the same transforms: the gradient of the
    16 GEMMs' U is sum over tiles of V^T (A g A^T), and gw = G^T gU G. x (N, H, W, C_in), gy (N, oH, oW,
    C_out), both channels-last and C-contiguous. Each thread sums its own gU; they add up at the end."""
    n, c_in, c_out = x.shape[0], x.shape[3], gy.shape[3]
    tiles_h, tiles_w = -(-gy.shape[1] // 2), -(-gy.shape[2] // 2)

    def part(images: range, per_chunk: int) -> Array:
        gu = np.zeros((16, c_in, c_out), x.dtype)
        for start, stop, v, gm in _Chunks(images, tiles_h * tiles_w, c_in, c_out, per_chunk, x.dtype):
            run_kernel("winograd_input", False, kernels.winograd_input, x[start:stop], v, top, left, tiles_h,
                       tiles_w)
            run_kernel("winograd_output_adjoint", False, kernels.winograd_output_adjoint, gy[start:stop], gm,
                       tiles_h, tiles_w)
            gu += np.matmul(v.transpose(0, 2, 1), gm)
        return gu

    gu = sum(over_parts(part, split_batch(n, 16 * tiles_h * tiles_w * (c_in + c_out) * x.dtype.itemsize)))
    gw = WINOGRAD_GG.T @ gu.reshape(16, c_in * c_out).astype(np.float64)  # (9, C_in * C_out): G^T gU G
    return np.ascontiguousarray(gw.reshape(3, 3, c_in, c_out).transpose(3, 2, 0, 1), dtype=x.dtype)
