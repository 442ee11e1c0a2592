"""Convolutions: ``conv2d`` and ``conv_transpose2d`` with their backward passes, as GEMMs on im2col.

Shapes: x (N, C_in, H, W); conv2d weight (C_out, C_in/groups, kH, kW); conv_transpose2d weight
(C_in, C_out/groups, kH, kW); bias (C_out,) or None. ``padding`` is (top, bottom, left, right) for
conv2d (asymmetric "same" padding is resolved by the caller) and (pH, pW) for conv_transpose2d.

Layout. ``im2col`` copies a strided view of the padded input once, into cols (G, Cg*kH*kW, N, oH*oW);
the copy runs along output rows, which is fast even for one input channel. With P = oH*oW:

    forward       y[n, group] (Og, P) = w[group] (Og, Cg*kH*kW) @ cols[group, :, n]   one batched matmul
                  whose output is already the contiguous (N, C_out, oH, oW) array
    input grad    gy as channels-last rows gy2 (N*P, C_out) (one transposing copy); for each kernel
                  offset k: gcols = gy2 @ w[:, :, k] (N*P, Cg), added into the channels-last padded
                  gradient at the positions offset k read (col2im: a loop over kH*kW offsets only,
                  each add covering whole oW*C runs)
    weight grad   gy2^T @ cols^T, one GEMM on the same rows when the input grad made them; otherwise
                  sum_n gy[n] @ cols[:, n]^T straight from gy's own layout (no copy of gy)

A transposed convolution is the input gradient of a convolution, and its backward is a convolution
(input gradient) plus the weight-gradient GEMM with the roles of gy and x swapped, so both share these
helpers.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

Array = Any
Pair = tuple[int, int]
Pad4 = tuple[int, int, int, int]


def conv_out_len(size: int, kernel: int, stride: int, pad_total: int, dilation: int) -> int:
    """floor((size + pad_total - dilation*(kernel-1) - 1) / stride) + 1."""
    return (size + pad_total - dilation * (kernel - 1) - 1) // stride + 1


def window_slice(offset: int, dilation: int, stride: int, out_len: int) -> slice:
    """The positions offset*dilation + stride*o (o < out_len) that kernel offset ``offset`` visits."""
    start = offset * dilation
    return slice(start, start + stride * (out_len - 1) + 1, stride)


def kernel_offsets(kernel: Pair, stride: Pair, dilation: Pair, out_hw: Pair) -> Iterator[tuple[int, Any]]:
    """(k, index) for each kernel offset k = i*kW + j in scan order; ``a[index]`` selects, from a padded
    (..., H, W) array, the element that offset (i, j) contributes to every output position."""
    rows = [window_slice(i, dilation[0], stride[0], out_hw[0]) for i in range(kernel[0])]
    cols = [window_slice(j, dilation[1], stride[1], out_hw[1]) for j in range(kernel[1])]
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            yield i * kernel[1] + j, (Ellipsis, r, c)


def channels_last_rows(a: Array) -> Array:
    """a (N, C, H, W) as rows (N*H*W, C): a view when channels-last in memory, else one transposing copy."""
    return a.transpose(0, 2, 3, 1).reshape(-1, a.shape[1])


def col2im_kernel(weight: Array | None, kernel: Sequence[int] | None) -> tuple[int, int]:
    """col2im's (kH, kW): the weight's, or ``kernel`` when there is no weight."""
    if weight is not None:
        return weight.shape[2], weight.shape[3]
    if kernel is None:
        raise ValueError("col2im: without a weight the kernel size must be given")
    return kernel[0], kernel[1]


def pad_hw(xp: Any, x: Array, padding: Pad4, value: float) -> Array:
    """x (..., H, W) padded by (top, bottom, left, right) with ``value``; x itself when nothing is padded."""
    top, bottom, left, right = padding
    if not (top or bottom or left or right):
        return x
    h, w = x.shape[-2:]
    out = xp.full(x.shape[:-2] + (h + top + bottom, w + left + right), value, dtype=x.dtype)
    out[..., top:top + h, left:left + w] = x
    return out


class ConvOps:
    xp: Any

    # ------------------------------------------------------------------------------ public methods
    def conv2d(self, x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pad4,
               dilation: Pair, groups: int) -> Array:
        """y[n, o] = bias[o] + sum over o's group of channels c and offsets (i, j) of
        w[o, c, i, j] x_pad[n, c, oh*s + i*d, ow*s + j*d]."""
        kernel = weight.shape[2:]
        out_hw = tuple(conv_out_len(x.shape[2 + a], kernel[a], stride[a], padding[2 * a] + padding[2 * a + 1],
                                    dilation[a]) for a in range(2))
        cols = self.im2col(x, kernel, stride, padding, dilation, out_hw, groups)
        return self._conv_from_cols(cols, weight, bias, out_hw)

    def conv2d_backward(self, gy: Array, x: Array, weight: Array, stride: Pair, padding: Pad4,
                        dilation: Pair, groups: int, needs: tuple[bool, bool, bool]
                        ) -> tuple[Array | None, Array | None, Array | None]:
        """-> (gx, gweight, gbias), None where ``needs`` is False."""
        gx = gw = gb = gy2 = None
        if needs[0]:
            gy2 = channels_last_rows(gy)
            gx = self.col2im(gy2, gy.shape[2:], weight, x.shape, stride, padding, dilation,
                                         groups)
        if needs[1]:
            cols = self.im2col(x, weight.shape[2:], stride, padding, dilation, gy.shape[2:], groups)
            gw = self._weight_grad(gy, gy2, cols, weight.shape)
        if needs[2]:
            gb = gy.sum(axis=(0, 2, 3))
        return gx, gw, gb

    def conv_transpose2d(self, x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pair,
                         output_padding: Pair, dilation: Pair, groups: int) -> Array:
        """The input gradient of conv2d(y, weight) taken at gy = x, where y has the transposed
        convolution's output size (H-1)*s - 2p + d*(k-1) + output_padding + 1; plus bias."""
        n, _, h, w = x.shape
        kernel = weight.shape[2:]
        out_hw = tuple((size - 1) * stride[a] - 2 * padding[a] + dilation[a] * (kernel[a] - 1)
                       + output_padding[a] + 1 for a, size in enumerate((h, w)))
        y_shape = (n, weight.shape[1] * groups) + out_hw
        y = self.col2im(channels_last_rows(x), (h, w), weight, y_shape, stride,
                                    _symmetric(padding), dilation, groups)
        if bias is not None:
            y += bias[:, None, None]
        return y

    def conv_transpose2d_backward(self, gy: Array, x: Array, weight: Array, stride: Pair, padding: Pair,
                                  output_padding: Pair, dilation: Pair, groups: int,
                                  needs: tuple[bool, bool, bool]
                                  ) -> tuple[Array | None, Array | None, Array | None]:
        """-> (gx, gweight, gbias): gx = conv2d(gy, weight) cut to x's size, gweight = conv2d's weight
        gradient with the roles of gy and x swapped (both from one im2col of gy)."""
        gx = gw = gb = None
        if needs[0] or needs[1]:
            hw = x.shape[2:]
            cols = self.im2col(gy, weight.shape[2:], stride, _symmetric(padding), dilation, hw, groups)
            if needs[0]:
                gx = self._conv_from_cols(cols, weight, None, hw)
            if needs[1]:
                gw = self._weight_grad(x, None, cols, weight.shape)
        if needs[2]:
            gb = gy.sum(axis=(0, 2, 3))
        return gx, gw, gb

    # ------------------------------------- the index hooks a device overrides with its kernels
    def im2col(self, x: Array, kernel: Sequence[int], stride: Pair, padding: Pad4, dilation: Pair,
                out_hw: Sequence[int], groups: int) -> Array:
        """cols (G, Cg*kH*kW, N, oH*oW): cols[g, (c, i, j), n, (oh, ow)] = x_pad[n, g*Cg + c,
        oh*s + i*d, ow*s + j*d], made by one copy of a strided view of the padded input."""
        xpad = pad_hw(self.xp, x, padding, 0)
        n, c = x.shape[:2]
        s_n, s_c, s_h, s_w = xpad.strides
        windows = self.xp.lib.stride_tricks.as_strided(
            xpad, (c, kernel[0], kernel[1], n, out_hw[0], out_hw[1]),
            (s_c, dilation[0] * s_h, dilation[1] * s_w, s_n, stride[0] * s_h, stride[1] * s_w))
        return windows.reshape(groups, c // groups * kernel[0] * kernel[1], n, out_hw[0] * out_hw[1])  # one copy

    # ------------------------------------------------------------------------------ shared helpers
    def _conv_from_cols(self, cols: Array, weight: Array, bias: Array | None, out_hw: Sequence[int]
                        ) -> Array:
        """y (N, C_out, oH, oW) = w[group] @ cols[group, :, n] for every (n, group), in one matmul call."""
        groups, k, n, _ = cols.shape
        w = weight.reshape(groups, -1, k)
        y = self.xp.matmul(w, cols.transpose(2, 0, 1, 3)).reshape((n, weight.shape[0]) + tuple(out_hw))
        if bias is not None:
            y += bias[:, None, None]
        return y

    def _weight_grad(self, gy: Array, gy2: Array | None, cols: Array, weight_shape: Sequence[int]) -> Array:
        """gw[o, (c, i, j)] = sum_{n, p} gy[n, o, p] cols[group(o), (c, i, j), n, p], (C_out, Cg, kH, kW):
        one GEMM on the channels-last rows gy2 when they exist, else a batched matmul over n on gy as it
        is (cheaper than making the rows just for this)."""
        groups, k, n, p = cols.shape
        if gy2 is not None:
            g = gy2.reshape(n * p, groups, gy2.shape[1] // groups).transpose(1, 2, 0)  # (G, Og, N*P)
            gw = self.xp.matmul(g, cols.reshape(groups, k, n * p).transpose(0, 2, 1))
        else:
            per_item = self.xp.matmul(gy.reshape(n, groups, gy.shape[1] // groups, p),
                                      cols.transpose(2, 0, 3, 1))
            gw = per_item.sum(axis=0)
        return gw.reshape(weight_shape)

    def col2im(self, gy2: Array, gy_hw: Sequence[int], weight: Array | None, x_shape: Sequence[int],
               stride: Pair, padding: Pad4, dilation: Pair, groups: int, kernel: Sequence[int] | None = None
               ) -> Array:
        """gx (N, C, H, W) of conv2d: for each kernel offset k, the GEMM gy2 @ w[:, :, k] is added into
        the channels-last padded gradient at the positions that offset read; one copy to NCHW at the end.

        With ``weight`` None, gy2 (N*oH*oW, C*kH*kW) already holds the columns, in im2col's (c, i, j) order
        for a ``kernel`` (kH, kW), and each is added into place as it is: im2col's adjoint (F.fold)."""
        xp = self.xp
        n, c, h, w = x_shape
        top, bottom, left, right = padding
        cg = c // groups
        k_h, k_w = col2im_kernel(weight, kernel)
        gxp = xp.zeros((n, h + top + bottom, w + left + right, groups, cg), dtype=gy2.dtype)
        planes = gxp.transpose(3, 4, 0, 1, 2)  # (G, Cg, N, Hp, Wp): offsets index its last two axes
        if weight is None:  # (G, Cg, N, oH, oW, kH*kW): offset k's columns are [..., k]
            cols = gy2.reshape(n, gy_hw[0], gy_hw[1], groups, cg, k_h * k_w).transpose(3, 4, 0, 1, 2, 5)
            for k, index in kernel_offsets((k_h, k_w), stride, dilation, gy_hw):  # type: ignore[arg-type]
                planes[index] += cols[..., k]
        else:
            c_out = weight.shape[0]
            g = gy2.reshape(gy2.shape[0], groups, c_out // groups).transpose(1, 0, 2)  # (G, rows, Og)
            # (kH*kW, G, Og, Cg), contiguous so that every matrix in the batch is BLAS-ready (it is small)
            w_k = xp.ascontiguousarray(
                weight.reshape(groups, c_out // groups, cg, k_h * k_w).transpose(3, 0, 1, 2))
            # one offset at a time through one small buffer: a (kH*kW)-times larger gcols would not stay in cache
            gcols = xp.empty((groups, gy2.shape[0], cg), dtype=gy2.dtype)
            gcols_planes = gcols.reshape(groups, n, gy_hw[0], gy_hw[1], cg).transpose(0, 4, 1, 2, 3)
            for k, index in kernel_offsets((k_h, k_w), stride, dilation, gy_hw):  # type: ignore[arg-type]
                xp.matmul(g, w_k[k], out=gcols)
                planes[index] += gcols_planes
        gx = gxp[:, top:top + h, left:left + w].reshape(n, h, w, c).transpose(0, 3, 1, 2)
        return xp.ascontiguousarray(gx)  # callers and later ops get the usual NCHW layout


def _symmetric(padding: Pair) -> Pad4:
    return (padding[0], padding[0], padding[1], padding[1])
