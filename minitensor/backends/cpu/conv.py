"""The CPU's convolution: channels-last im2col GEMMs (``CpuConvOps``).

conv2d (groups == 1) and its backward run on channels-last rows, so that every product is one plain 2-D
GEMM and no result needs a transposing copy (P = oH*oW, K = kH*kW*C_in):

    forward       y2 (N*P, C_out) = cols (N*P, K) @ w2^T            y = y2 seen as (N, C_out, oH, oW)
    weight grad   gw2 (K, C_out) = sum over chunks of cols^T @ gy2
    input grad    gcols = gy2 @ w2 (N*P, K), then col2im adds each row's kH*kW pieces into the
                  channels-last input gradient

so the output is channels-last in memory (an (N, C, H, W) view of an (N, H, W, C) array). Elementwise ops
keep that layout, max pooling keeps it, and the next convolution reads it as rows directly; a reshape
(Flatten) copies it back to NCHW order. The columns are made a few images at a time (``parallel.CHUNK_BYTES``),
so that each chunk is still in cache when its GEMM reads it, and the full (N*P, K) matrix never exists.

cols come from one of two copies of a strided view: channels-last rows (N, oH, oW, kH, kW, C) of a padded
channels-last copy of x, runs of C; or, for an NCHW-contiguous x (the network's input, often one channel,
where a run of C would be a single element), K-major columns (C, kH, kW, N, oH, oW), runs of oW, whose
transpose is the rows matrix as BLAS reads it. col2im and max pooling use the Numba kernels of
``numba_kernels`` when Numba is installed, and NumPy loops over the kernel offsets otherwise.

Winograd F(2x2, 3x3). With Numba, a 3x3 stride-1 convolution with at least WINOGRAD_MIN_CHANNELS on each side
and enough output tiles for its channels (``_enough_tiles``) takes it in all three directions: the transforms
are Numba kernels (``numba_kernels/conv.py``), the 16 products per tile one batched matmul (16 GEMMs of
(tiles, C_in) @ (C_in, C_out)), 2.25x fewer multiplies than im2col. The input gradient is the same convolution
of gy with the flipped, transposed filter; the weight gradient runs the forward's transforms backwards. The
work goes a chunk of images at a time (``parallel.CHUNK_BYTES`` of V and M, still in cache when the GEMMs read
them).

Threads: the batch is cut into one part per BLAS thread, and each part runs its chunks' transforms and
single-threaded GEMMs on its own thread (``parallel.over_parts``). The transforms, serial between two-thread
GEMMs before, now run on every core, and a direction synchronises its threads once instead of at each of its
GEMMs (80 of them for the CNN's conv2, where a thread that lost its core held the other one waiting).

F(4x4, 3x3) was slower here (its transforms cost more than its GEMMs save on 14x14 images, padded to 16x16)
and 20x less accurate (relative error 1e-5 against 3e-7, which F(2x2) matches with the direct sum's).
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from ..compiled import KERNEL_DTYPES, run_kernel
from ..generic.conv import ConvOps, Pad4, Pair, conv_out_len, pad_hw
from .linalg import in_float32
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)
from .parallel import images_per_chunk, over_parts, split_batch

Array = Any
WINOGRAD_MIN_CHANNELS = 16  # below this on either side the GEMMs are too thin to outweigh the transforms
# G of F(2x2, 3x3): U = G w G^T turns a 3x3 filter into its 4x4 Winograd form (numba_kernels/conv.py)
WINOGRAD_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
# kron(G, G) (16, 9): U[4 i + j] = sum over (a, b) of G[i, a] G[j, b] w[a, b], every filter in one GEMM (the
# 2048 stacked 4x3 @ 3x3 @ 3x4 products of G w G^T took 0.25 ms for the CNN's conv2, this 0.05)
WINOGRAD_GG = np.kron(WINOGRAD_G, WINOGRAD_G)


def is_channels_last(a: Array) -> bool:
    """Whether a (N, C, H, W) array runs along C in memory: a.transpose(0, 2, 3, 1) is C-contiguous."""
    return a.transpose(0, 2, 3, 1).flags.c_contiguous


class Im2col:
    """The columns of x for a convolution's GEMMs, a chunk of images at a time.

    ``chunks()`` yields (images, cols): cols (len(images)*P, K) holds the rows of those images in the
    K order of ``weight_matrix``: (kH, kW, C) for channels-last rows, (C, kH, kW) for K-major columns.
    With ``ones``, cols has one more column of ones (index K), so that the GEMM adds the bias (the last
    column of ``weight_matrix(w, bias)``) and the weight gradient's GEMM sums gy's rows (gb, the last row
    of gw2) at no cost: a separate ``y2 += bias`` pass over the conv1 output cost more than its GEMM.
    The buffer behind cols is reused by the next chunk."""

    def __init__(self, x: Array, kernel: Sequence[int], stride: Pair, padding: Pad4, dilation: Pair,
                 out_hw: Sequence[int], ones: bool = False) -> None:
        self.n, self.c = x.shape[:2]
        self.kernel, self.stride, self.dilation, self.out_hw = tuple(kernel), stride, dilation, out_hw
        self.k_major = bool(x.flags.c_contiguous)
        self.k = self.c * kernel[0] * kernel[1]
        self.width = self.k + ones  # columns of cols
        p = out_hw[0] * out_hw[1]
        self.per_chunk = images_per_chunk(self.n, p * self.width * x.dtype.itemsize)
        self.buffer = np.empty(self.per_chunk * p * self.width, dtype=x.dtype)
        if self.k_major:
            self.xpad = pad_hw(np, x, padding, 0)  # (N, C, Hp, Wp)
        else:
            self.xpad = _pad_channels_last(x, padding)  # (N, Hp, Wp, C)

    def weight_matrix(self, weight: Array, bias: Array | None = None) -> Array:
        """weight (C_out, C, kH, kW) as w2 (C_out, K) in the columns' K order; with ``bias`` (for ``ones``
        columns), (C_out, K + 1) whose last column is the bias."""
        if self.k_major:
            w2 = weight.reshape(weight.shape[0], -1)
        else:
            w2 = np.ascontiguousarray(weight.transpose(0, 2, 3, 1)).reshape(weight.shape[0], -1)
        return w2 if bias is None else np.concatenate([w2, bias[:, None].astype(w2.dtype)], axis=1)

    def weight_grad(self, gw2: Array, weight_shape: Sequence[int]) -> Array:
        """gw2 (K, C_out) in the columns' K order (its first K rows, with ``ones``) as the gradient
        (C_out, C, kH, kW)."""
        c_out, c, k_h, k_w = weight_shape
        gw2 = gw2[:self.k]
        if self.k_major:
            return np.ascontiguousarray(gw2.T).reshape(weight_shape)
        return np.ascontiguousarray(gw2.T.reshape(c_out, k_h, k_w, c).transpose(0, 3, 1, 2))

    def chunks(self) -> Iterator[tuple[slice, Array]]:
        s, d = self.stride, self.dilation
        (k_h, k_w), (out_h, out_w) = self.kernel, self.out_hw
        for start in range(0, self.n, self.per_chunk):
            images = slice(start, min(start + self.per_chunk, self.n))
            count = images.stop - start
            xpad = self.xpad[images]
            if self.k_major:
                s_n, s_c, s_h, s_w = xpad.strides
                shape = (self.c, k_h, k_w, count, out_h, out_w)
                strides = (s_c, d[0] * s_h, d[1] * s_w, s_n, s[0] * s_h, s[1] * s_w)
            else:
                s_n, s_h, s_w, s_c = xpad.strides
                shape = (count, out_h, out_w, k_h, k_w, self.c)
                strides = (s_n, s[0] * s_h, s[1] * s_w, d[0] * s_h, d[1] * s_w, s_c)
            rows = count * out_h * out_w
            if self.k_major:  # (K [+ 1], rows): the ones are a last row
                cols = self.buffer[:rows * self.width].reshape(self.width, rows)
                target = cols[:self.k].reshape(shape)
                ones = cols[self.k:]
            else:  # (rows, K [+ 1]): the ones are a last column; splitting a slice's last axis is a view
                cols = self.buffer[:rows * self.width].reshape(rows, self.width)
                target = cols[:, :self.k].reshape(shape)
                ones = cols[:, self.k:]
            np.copyto(target, np.lib.stride_tricks.as_strided(xpad, shape, strides))
            ones[...] = 1
            yield images, (cols.T if self.k_major else cols)


class CpuConvOps(ConvOps):
    """conv2d (groups == 1) and its backward on channels-last rows (see the module notes)."""

    @in_float32
    def conv2d(self, x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pad4,
               dilation: Pair, groups: int) -> Array:
        """As ``ConvOps.conv2d``; for groups == 1 the result is channels-last in memory."""
        if groups != 1:
            return super().conv2d(x, weight, bias, stride, padding, dilation, groups)
        n, c_out = x.shape[0], weight.shape[0]
        kernel = weight.shape[2:]
        out_hw = tuple(conv_out_len(x.shape[2 + a], kernel[a], stride[a], padding[2 * a] + padding[2 * a + 1],
                                    dilation[a]) for a in range(2))
        kernels = _winograd_kernels(x, weight, stride, dilation)
        if kernels is not None:
            bias = np.zeros(c_out, x.dtype) if bias is None else bias
            y = _winograd(kernels, _channels_last(x), _winograd_weight(weight), bias, padding[0], padding[2],
                         out_hw)
            return y.transpose(0, 3, 1, 2)
        p = out_hw[0] * out_hw[1]
        im2col = Im2col(x, kernel, stride, padding, dilation, out_hw, ones=bias is not None)
        w2t = im2col.weight_matrix(weight, bias).T
        y2 = np.empty((n * p, c_out), dtype=x.dtype)
        for images, cols in im2col.chunks():
            np.matmul(cols, w2t, out=y2[images.start * p:images.stop * p])
        return y2.reshape(n, out_hw[0], out_hw[1], c_out).transpose(0, 3, 1, 2)

    @in_float32
    def conv2d_backward(self, gy: Array, x: Array, weight: Array, stride: Pair, padding: Pad4,
                        dilation: Pair, groups: int, needs: tuple[bool, bool, bool]
                        ) -> tuple[Array | None, Array | None, Array | None]:
        """As ``ConvOps.conv2d_backward``; for groups == 1 gx is channels-last in memory."""
        if groups != 1:
            return super().conv2d_backward(gy, x, weight, stride, padding, dilation, groups, needs)
        gy_cl = _channels_last(gy)
        gy2 = gy_cl.reshape(-1, gy.shape[1])  # (N*P, C_out)
        p = gy.shape[2] * gy.shape[3]
        gx = gw = gb = None
        kernels = _winograd_kernels(x, weight, stride, dilation)
        if kernels is not None and (needs[0] or needs[1]):
            if needs[0]:  # the convolution of gy with the flipped, transposed filter, padded 2 - padding
                flipped = _winograd_weight(weight.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1])
                gx = _winograd(kernels, gy_cl, flipped, np.zeros(x.shape[1], x.dtype), 2 - padding[0],
                              2 - padding[2], x.shape[2:]).transpose(0, 3, 1, 2)
            if needs[1]:
                gw = _winograd_weight_grad(kernels, _channels_last(x), gy_cl, padding[0], padding[2])
            needs = (False, False, needs[2])
        if needs[0]:
            gx = self._conv_input_grad(gy2, gy.shape[2:], weight, x.shape, stride, padding, dilation)
        if needs[1]:  # with gb wanted too, the ones column makes it gw2's last row
            im2col = Im2col(x, weight.shape[2:], stride, padding, dilation, gy.shape[2:], ones=needs[2])
            gw2 = np.zeros((im2col.width, weight.shape[0]), dtype=gy.dtype)
            for images, cols in im2col.chunks():
                gw2 += cols.T @ gy2[images.start * p:images.stop * p]
            gw = im2col.weight_grad(gw2, weight.shape)
            if needs[2]:
                gb, needs = gw2[im2col.k].copy(), (needs[0], needs[1], False)
        if needs[2]:  # a GEMV: several times faster than sum(axis=0) over short (C_out) rows
            gb = np.ones(gy2.shape[0], dtype=gy2.dtype) @ gy2
        return gx, gw, gb

    def _conv_input_grad(self, gy2: Array, gy_hw: Sequence[int], weight: Array, x_shape: Sequence[int],
                         stride: Pair, padding: Pad4, dilation: Pair) -> Array:
        """gx (N, C, H, W), channels-last: per chunk of images, gcols = gy2 @ w2 (rows, kH*kW*C), then
        col2im (the Numba kernel, or one NumPy add per kernel offset of the taps inside the input)."""
        n, c, h, w = x_shape
        c_out, _, k_h, k_w = weight.shape
        top, left = padding[0], padding[2]
        out_h, out_w = gy_hw
        p = out_h * out_w
        w2 = np.ascontiguousarray(weight.transpose(0, 2, 3, 1)).reshape(c_out, -1)
        per_chunk = images_per_chunk(n, p * w2.shape[1] * gy2.dtype.itemsize)
        gcols = np.empty((per_chunk * p, w2.shape[1]), dtype=gy2.dtype)
        kernels = numba_kernels.load("conv") if gy2.dtype in KERNEL_DTYPES else None
        gx = np.empty((n, h, w, c), dtype=gy2.dtype) if kernels else np.zeros((n, h, w, c), dtype=gy2.dtype)
        for start in range(0, n, per_chunk):
            stop = min(start + per_chunk, n)
            g = np.matmul(gy2[start * p:stop * p], w2, out=gcols[:(stop - start) * p])
            g6 = g.reshape(stop - start, out_h, out_w, k_h, k_w, c)
            if kernels is not None:
                run_kernel("col2im", False, kernels.col2im, g6, gx[start:stop], *stride, top, left, *dilation)
                continue
            for i in range(k_h):
                rows = _taps_inside(i, h, top, stride[0], dilation[0], out_h)
                for j in range(k_w):
                    cols = _taps_inside(j, w, left, stride[1], dilation[1], out_w)
                    if rows and cols:
                        gx[start:stop, rows[1], cols[1]] += g6[:, rows[0], cols[0], i, j]
        return gx.transpose(0, 3, 1, 2)


def _channels_last(a: Array) -> Array:
    """a (N, C, H, W) as a C-contiguous (N, H, W, C) array: a view when channels-last, else one copy."""
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def _winograd_kernels(x: Array, weight: Array, stride: Pair, dilation: Pair) -> Any:
    """The Numba kernels' module when Winograd F(2x2, 3x3) serves this convolution (3x3, stride 1, no
    dilation, groups 1 checked by the caller, at least WINOGRAD_MIN_CHANNELS on each side, and enough tiles:
    ``_enough_tiles``), else None."""
    if (weight.shape[2:] != (3, 3) or stride != (1, 1) or dilation != (1, 1) or x.dtype not in KERNEL_DTYPES
            or min(weight.shape[:2]) < WINOGRAD_MIN_CHANNELS or not _enough_tiles(x, weight)):
        return None
    return numba_kernels.load("conv")


def _enough_tiles(x: Array, weight: Array) -> bool:
    """Whether the batch's 2x2 output tiles (about N * ceil(H/2) * ceil(W/2)) reach C_out * C_in / 32: the
    filter's transforms and the 16 products' thin GEMMs cost per channel pair, what Winograd saves per tile.
    Forward + backward, 2 threads, this project's VM (``benchmarks/winograd_rule.py``): 512 channels on 1x1 to
    14x14 images took 2.2-5x im2col's time, 16 x 256 x 2 x 2 2.8x (the rule picks im2col); 64 x 32 x 28 x 28
    0.71x, 128 x 16 x 4 x 4 0.37x (it keeps Winograd). Shapes near the line (128-256 channels at 4-14 pixels)
    measured 0.8-1.4x from run to run."""
    tiles = x.shape[0] * -(-x.shape[2] // 2) * -(-x.shape[3] // 2)
    return 32 * tiles >= weight.shape[0] * weight.shape[1]


def _winograd_weight(weight: Array) -> Array:
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


def _winograd(kernels: Any, x: Array, u: Array, bias: Array, top: int, left: int, out_hw: Sequence[int]
              ) -> Array:
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


def _winograd_weight_grad(kernels: Any, x: Array, gy: Array, top: int, left: int) -> Array:
    """gw (C_out, C_in, 3, 3) of ``_winograd``'s convolution, through the same transforms: the gradient of the
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


def _taps_inside(offset: int, size: int, pad: int, stride: int, dilation: int, out_len: int
                 ) -> tuple[slice, slice] | None:
    """Along one axis, for kernel offset ``offset``: (outputs, inputs), the output positions o whose tap
    o*stride - pad + offset*dilation lies inside [0, size), and those input positions; None if none does."""
    first = offset * dilation - pad  # the tap of output 0
    lo, hi = max(0, -(first // stride)), min(out_len, (size - 1 - first) // stride + 1)
    if lo >= hi:
        return None
    return slice(lo, hi), slice(first + lo * stride, first + (hi - 1) * stride + 1, stride)


def _pad_channels_last(x: Array, padding: Pad4) -> Array:
    """x (N, C, H, W) as a channels-last (N, H + top + bottom, W + left + right, C) array, zero-padded."""
    top, bottom, left, right = padding
    n, c, h, w = x.shape
    xh = x.transpose(0, 2, 3, 1)
    if not (top or bottom or left or right) and xh.flags.c_contiguous:
        return xh
    out = np.zeros((n, h + top + bottom, w + left + right, c), dtype=x.dtype)
    out[:, top:top + h, left:left + w] = xh
    return out
