"""The CPU's convolution: channels-last im2col GEMMs (``CpuConvOps``).

conv2d (groups == 1) and its backward run on channels-last rows, so that every product is one plain 2-D
GEMM and no result needs a transposing copy (P = oH*oW, K = kH*kW*C_in):

    forward       y2 (N*P, C_out) = cols (N*P, K) @ w2^T            y = y2 seen as (N, C_out, oH, oW)
    weight grad   gw2 (K, C_out) = sum over chunks of cols^T @ gy2
    input grad    gcols = gy2 @ w2 (N*P, K), then col2im adds each row's kH*kW pieces into the
                  channels-last input gradient

so the output is channels-last in memory (an (N, C, H, W) view of an (N, H, W, C) array). Elementwise ops
keep that layout, max pooling keeps it, and the next convolution reads it as rows directly; a reshape
(Flatten) copies it back to NCHW order. The columns are made a few images at a time (parallel.CHUNK_BYTES), so that
each chunk is still in cache when its GEMM reads it, and the full (N*P, K) matrix never exists.

cols come from one of two copies of a strided view: channels-last rows (N, oH, oW, kH, kW, C) of a padded
channels-last copy of x, runs of C; or, for an NCHW-contiguous x (the network's input, often one channel,
where a run of C would be a single element), K-major columns (C, kH, kW, N, oH, oW), runs of oW, whose
transpose is the rows matrix as BLAS reads it. col2im and max pooling use the Numba kernels of
``numba_kernels`` when Numba is installed, and NumPy loops over the kernel offsets otherwise.

Winograd. With Numba, a 3x3 stride-1 convolution with at least 16 channels on each side takes Winograd's
F(2x2, 3x3) in all three directions (``winograd.py``). Batches are cut as ``parallel.py`` says: chunks of
CHUNK_BYTES of work buffers, and (Winograd) one part per BLAS thread.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from ..compiled import KERNEL_DTYPES, run_kernel
from ..generic.conv import ConvOps, Pad4, Pair, conv_out_len, pad_hw
from .linalg import in_float32
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)
from .parallel import images_per_chunk
from .winograd import winograd, winograd_kernels, winograd_weight, winograd_weight_grad

Array = Any


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
        kernels = winograd_kernels(x, weight, stride, dilation)
        if kernels is not None:
            bias = np.zeros(c_out, x.dtype) if bias is None else bias
            y = winograd(kernels, _channels_last(x), winograd_weight(weight), bias, padding[0], padding[2],
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
        kernels = winograd_kernels(x, weight, stride, dilation)
        if kernels is not None and (needs[0] or needs[1]):
            if needs[0]:  # the convolution of gy with the flipped, transposed filter, padded 2 - padding
                flipped = winograd_weight(weight.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1])
                gx = winograd(kernels, gy_cl, flipped, np.zeros(x.shape[1], x.dtype), 2 - padding[0],
                              2 - padding[2], x.shape[2:]).transpose(0, 3, 1, 2)
            if needs[1]:
                gw = winograd_weight_grad(kernels, _channels_last(x), gy_cl, padding[0], padding[2])
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
