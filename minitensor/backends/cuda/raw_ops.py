"""``RawKernelOps``: the Backend methods that our RawKernels (``kernels/*.cu``, launched through
``rawmodule.launch``) serve on CUDA.

A mixin for ``class CudaBackend(RawKernelOps, NumbaOps, Backend)``: every override has the base method's
signature and semantics (the base docstring is the contract) and hands to ``super()`` what its kernel does
not cover: dtypes without an instance (float16 and integers: only float32 and float64 are compiled), mixed
dtypes, softmax along an axis other than the last, cross-entropy on (N, C, d1, ...) logits, embedding
gradients with ``scale_grad_by_freq``.

Convolutions keep the base class's GEMMs on im2col (cuBLAS through CuPy): only its two index helpers,
``_im2col`` and ``_col2im_input_grad``, are kernels here, so conv2d, conv2d_backward, conv_transpose2d and
conv_transpose2d_backward all run on them. Inputs are made C-contiguous (a copy only when they are not);
outputs are allocated by ``self.xp`` (CuPy's memory pool), and every launch checks its arguments' dtypes
(see ``rawmodule.check_arguments``).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from .rawmodule import WARP_SIZE, has_instance, launch

Array = Any
Pair = tuple[int, int]
Pad4 = tuple[int, int, int, int]


def _longs(*values: int) -> tuple[np.int64, ...]:
    """Integer kernel arguments: every integer parameter of our kernels is a ``long long``."""
    return tuple(np.int64(v) for v in values)


class RawKernelOps:
    xp: Any
    _geometry: Callable[..., dict[str, Any]]  # from PoolOps: pooling output size and padding

    # ------------------------------------------------------------------------------------ shared helpers
    @staticmethod
    def _fits(template: str, *arrays: Array) -> bool:
        """All arrays share one dtype and ``template`` is compiled for it."""
        dtype = arrays[0].dtype
        return all(a.dtype == dtype for a in arrays) and has_instance(template, dtype)

    def _fits_same_shape(self, template: str, *arrays: Array) -> bool:
        return self._fits(template, *arrays) and all(a.shape == arrays[0].shape for a in arrays)

    def _elementwise(self, template: str, inputs: Sequence[Array], scalars: tuple[Any, ...] = ()) -> Array:
        """out = template(inputs...) element by element, for kernels (inputs..., out, n, scalars...)."""
        xp = self.xp
        shape, dtype = inputs[0].shape, inputs[0].dtype
        out = xp.empty(shape, dtype=dtype)
        launch(template, dtype, out.size,
               (*(xp.ascontiguousarray(a) for a in inputs), out, np.int64(out.size), *scalars))
        return out

    def _rowwise(self, template: str, *inputs: Array) -> Array:
        """out = template(inputs...) row by row over the last axis, for kernels
        (inputs..., out, rows, cols)."""
        xp = self.xp
        shape, dtype = inputs[0].shape, inputs[0].dtype
        out = xp.empty(shape, dtype=dtype)
        rows, cols = math.prod(shape[:-1]), shape[-1]
        launch(template, dtype, rows, (*(xp.ascontiguousarray(a) for a in inputs), out, *_longs(rows, cols)),
               threads_per_item=WARP_SIZE)
        return out

    @staticmethod
    def _on_last_axis(x: Array, axis: int) -> bool:
        return x.ndim >= 1 and axis in (-1, x.ndim - 1)

    # -------------------------------------------------------------------------------------- activations
    def relu_backward(self, gy: Array, y: Array) -> Array:
        if not self._fits_same_shape("relu_backward", gy, y):
            return super().relu_backward(gy, y)
        return self._elementwise("relu_backward", (gy, y))

    def leaky_relu(self, x: Array, negative_slope: float) -> Array:
        if not self._fits("leaky_relu_forward", x):
            return super().leaky_relu(x, negative_slope)
        return self._elementwise("leaky_relu_forward", (x,), (x.dtype.type(negative_slope),))

    def leaky_relu_backward(self, gy: Array, y_or_x: Array, negative_slope: float) -> Array:
        if not self._fits_same_shape("leaky_relu_backward", gy, y_or_x):
            return super().leaky_relu_backward(gy, y_or_x, negative_slope)
        return self._elementwise("leaky_relu_backward", (gy, y_or_x), (gy.dtype.type(negative_slope),))

    def sigmoid(self, x: Array) -> Array:
        if not self._fits("sigmoid_forward", x):
            return super().sigmoid(x)
        return self._elementwise("sigmoid_forward", (x,))

    def sigmoid_backward(self, gy: Array, y: Array) -> Array:
        if not self._fits_same_shape("sigmoid_backward", gy, y):
            return super().sigmoid_backward(gy, y)
        return self._elementwise("sigmoid_backward", (gy, y))

    def tanh_backward(self, gy: Array, y: Array) -> Array:
        if not self._fits_same_shape("tanh_backward", gy, y):
            return super().tanh_backward(gy, y)
        return self._elementwise("tanh_backward", (gy, y))

    def gelu(self, x: Array, approximate: str) -> Array:
        if not self._fits("gelu_forward", x):
            return super().gelu(x, approximate)
        return self._elementwise("gelu_forward", (x,), _longs(approximate == "tanh"))

    def gelu_backward(self, gy: Array, x: Array, approximate: str) -> Array:
        if not self._fits_same_shape("gelu_backward", gy, x):
            return super().gelu_backward(gy, x, approximate)
        return self._elementwise("gelu_backward", (gy, x), _longs(approximate == "tanh"))

    # ------------------------------------------------------------------------------ softmax, log-softmax
    def softmax(self, x: Array, axis: int) -> Array:
        if not (self._on_last_axis(x, axis) and self._fits("softmax_forward", x)):
            return super().softmax(x, axis)
        return self._rowwise("softmax_forward", x)

    def softmax_backward(self, gy: Array, y: Array, axis: int) -> Array:
        if not (self._on_last_axis(y, axis) and self._fits_same_shape("softmax_backward", gy, y)):
            return super().softmax_backward(gy, y, axis)
        return self._rowwise("softmax_backward", gy, y)

    def log_softmax(self, x: Array, axis: int) -> Array:
        if not (self._on_last_axis(x, axis) and self._fits("log_softmax_forward", x)):
            return super().log_softmax(x, axis)
        return self._rowwise("log_softmax_forward", x)

    def log_softmax_backward(self, gy: Array, y: Array, axis: int) -> Array:
        if not (self._on_last_axis(y, axis) and self._fits_same_shape("log_softmax_backward", gy, y)):
            return super().log_softmax_backward(gy, y, axis)
        return self._rowwise("log_softmax_backward", gy, y)

    # ------------------------------------------------------------------------------------ cross-entropy
    def _class_rows_fit(self, template: str, scores: Array, target: Array, *arrays: Array) -> bool:
        """(N, C) scores, (N,) integer targets and float arrays of the scores' dtype."""
        return (scores.ndim == 2 and target.shape == scores.shape[:1] and target.dtype.kind in "iu"
                and self._fits(template, scores, *arrays))

    def _class_weight_args(self, weight: Array | None, like: Array) -> tuple[Array, np.int64]:
        """(weight as a contiguous array of like's dtype, has_weight); without weights ``like`` stands in
        as the pointer, which the kernel never reads."""
        if weight is None:
            return like, np.int64(0)
        return self.xp.ascontiguousarray(weight, dtype=like.dtype), np.int64(1)

    def softmax_cross_entropy(self, logits: Array, target: Array, weight: Array | None,
                              ignore_index: int, label_smoothing: float) -> tuple[Array, Array]:
        if not self._class_rows_fit("softmax_cross_entropy_forward", logits, target):
            return super().softmax_cross_entropy(logits, target, weight, ignore_index, label_smoothing)
        xp = self.xp
        logits = xp.ascontiguousarray(logits)
        rows, cols = logits.shape
        w, has_weight = self._class_weight_args(weight, logits)
        losses = xp.empty(rows, dtype=logits.dtype)
        log_probs = xp.empty((rows, cols), dtype=logits.dtype)
        launch("softmax_cross_entropy_forward", logits.dtype, rows,
               (logits, xp.ascontiguousarray(target, dtype=xp.int64), w, losses, log_probs,
                *_longs(rows, cols), has_weight, np.int64(ignore_index), logits.dtype.type(label_smoothing)),
               threads_per_item=WARP_SIZE)
        return losses, log_probs

    def softmax_cross_entropy_backward(self, g: Array, log_probs: Array, target: Array,
                                       weight: Array | None, ignore_index: int,
                                       label_smoothing: float) -> Array:
        if not (self._class_rows_fit("softmax_cross_entropy_backward", log_probs, target, g)
                and g.shape == target.shape):
            return super().softmax_cross_entropy_backward(g, log_probs, target, weight, ignore_index,
                                                          label_smoothing)
        xp = self.xp
        log_probs = xp.ascontiguousarray(log_probs)
        rows, cols = log_probs.shape
        w, has_weight = self._class_weight_args(weight, log_probs)
        # sum(weight) as a one-element device array (no host sync); read only with weights and smoothing
        weight_sum = w.sum(keepdims=True) if has_weight and label_smoothing else log_probs
        gx = xp.empty((rows, cols), dtype=log_probs.dtype)
        launch("softmax_cross_entropy_backward", log_probs.dtype, gx.size,
               (xp.ascontiguousarray(g), log_probs, xp.ascontiguousarray(target, dtype=xp.int64), w,
                weight_sum, gx, *_longs(rows, cols), has_weight, np.int64(ignore_index),
                log_probs.dtype.type(label_smoothing)))
        return gx

    # ---------------------------------------------------------------------------------------- convolution
    def _im2col(self, x: Array, kernel: Sequence[int], stride: Pair, padding: Pad4, dilation: Pair,
                out_hw: Sequence[int], groups: int) -> Array:
        if not self._fits("im2col", x):
            return super()._im2col(x, kernel, stride, padding, dilation, out_hw, groups)
        xp = self.xp
        x = xp.ascontiguousarray(x)
        n, c, h, w = x.shape
        cols = xp.empty((groups, c // groups * kernel[0] * kernel[1], n, out_hw[0] * out_hw[1]),
                        dtype=x.dtype)
        launch("im2col", x.dtype, cols.size,
               (x, cols, *_longs(n, c, h, w, *kernel, *out_hw, *stride, padding[0], padding[2], *dilation)))
        return cols

    def _col2im_input_grad(self, gy2: Array, gy_hw: Sequence[int], weight: Array, x_shape: Sequence[int],
                           stride: Pair, padding: Pad4, dilation: Pair, groups: int) -> Array:
        if not self._fits("col2im", gy2, weight):
            return super()._col2im_input_grad(gy2, gy_hw, weight, x_shape, stride, padding, dilation, groups)
        xp = self.xp
        n, c, h, w = x_shape
        c_out, cg, k_h, k_w = weight.shape
        # cols (G, N*oH*oW, Cg*kH*kW): each group's gy rows times that group's weights, one batched GEMM
        cols = xp.ascontiguousarray(xp.matmul(gy2.reshape(-1, groups, c_out // groups).transpose(1, 0, 2),
                                              weight.reshape(groups, c_out // groups, cg * k_h * k_w)))
        gx = xp.empty((n, c, h, w), dtype=gy2.dtype)
        launch("col2im", gx.dtype, gx.size,
               (cols, gx, *_longs(n, c, h, w, groups, k_h, k_w, *gy_hw, *stride, padding[0], padding[2],
                                  *dilation)))
        return gx

    # -------------------------------------------------------------------------------------------- pooling
    def max_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair,
                   ceil_mode: bool) -> tuple[Array, Array]:
        if not self._fits("max_pool2d_forward", x):
            return super().max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
        xp = self.xp
        x = xp.ascontiguousarray(x)
        n, c, h, w = x.shape
        out_hw = self._geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)["out_hw"]
        y = xp.empty((n, c, *out_hw), dtype=x.dtype)
        indices = xp.empty((n, c, *out_hw), dtype=xp.int64)
        launch("max_pool2d_forward", x.dtype, y.size,
               (x, y, indices, *_longs(n * c, h, w, *out_hw, *kernel_size, *stride, *padding, *dilation)))
        return y, indices

    def max_pool2d_backward(self, gy: Array, indices: Array, x_shape: tuple[int, ...]) -> Array:
        if not (self._fits("max_pool2d_backward", gy) and indices.dtype == self.xp.int64):
            return super().max_pool2d_backward(gy, indices, x_shape)
        xp = self.xp
        n, c, h, w = x_shape
        gx = xp.zeros((n, c, h, w), dtype=gy.dtype)
        launch("max_pool2d_backward", gy.dtype, gy.size,
               (xp.ascontiguousarray(gy), xp.ascontiguousarray(indices), gx,
                *_longs(n * c, gy.shape[2] * gy.shape[3], h * w)))
        return gx

    def avg_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, ceil_mode: bool,
                   count_include_pad: bool, divisor_override: int | None) -> Array:
        if not self._fits("avg_pool2d_forward", x):
            return super().avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                      divisor_override)
        xp = self.xp
        n, c = x.shape[:2]
        out_hw = self._geometry(x.shape, kernel_size, stride, padding, (1, 1), ceil_mode)["out_hw"]
        y = xp.empty((n, c, *out_hw), dtype=x.dtype)
        launch("avg_pool2d_forward", x.dtype, y.size,
               (xp.ascontiguousarray(x), y, *_avg_pool_args(x.shape, out_hw, kernel_size, stride, padding,
                                                            count_include_pad, divisor_override)))
        return y

    def avg_pool2d_backward(self, gy: Array, x_shape: tuple[int, ...], kernel_size: Pair,
                            stride: Pair, padding: Pair, ceil_mode: bool,
                            count_include_pad: bool, divisor_override: int | None) -> Array:
        if not self._fits("avg_pool2d_backward", gy):
            return super().avg_pool2d_backward(gy, x_shape, kernel_size, stride, padding, ceil_mode,
                                               count_include_pad, divisor_override)
        xp = self.xp
        gx = xp.empty(tuple(x_shape), dtype=gy.dtype)
        launch("avg_pool2d_backward", gy.dtype, gx.size,
               (xp.ascontiguousarray(gy), gx, *_avg_pool_args(x_shape, gy.shape[2:], kernel_size, stride,
                                                              padding, count_include_pad, divisor_override)))
        return gx

    # ------------------------------------------------------------------------------------------ embedding
    def embedding_backward(self, gy: Array, indices: Array, num_embeddings: int, padding_idx: int | None,
                           scale_grad_by_freq: bool) -> Array:
        if (scale_grad_by_freq or indices.dtype.kind not in "iu" or gy.shape[:-1] != indices.shape
                or not self._fits("embedding_backward", gy)):
            return super().embedding_backward(gy, indices, num_embeddings, padding_idx, scale_grad_by_freq)
        xp = self.xp
        dim = gy.shape[-1]
        gw = xp.zeros((num_embeddings, dim), dtype=gy.dtype)
        # the row that gets no gradient (-1: none), a negative padding_idx counting from the end as in NumPy
        no_row = -1 if padding_idx is None else padding_idx % num_embeddings
        launch("embedding_backward", gy.dtype, gy.size,
               (xp.ascontiguousarray(gy), xp.ascontiguousarray(indices, dtype=xp.int64), gw,
                *_longs(indices.size, dim, num_embeddings, no_row)))
        return gw


def _avg_pool_args(x_shape: Sequence[int], out_hw: Sequence[int], kernel_size: Pair, stride: Pair,
                   padding: Pair, count_include_pad: bool, divisor_override: int | None
                   ) -> tuple[np.int64, ...]:
    """The geometry arguments shared by avg_pool2d_forward and avg_pool2d_backward (0: no override)."""
    n, c, h, w = x_shape
    return _longs(n * c, h, w, *out_hw, *kernel_size, *stride, *padding, count_include_pad,
                  divisor_override or 0)
