"""The activations and softmax family on CUDA: the kernels of ``kernels/activation.cu``."""
from __future__ import annotations

from typing import Any

from ..generic.activation import ActivationOps
from .rawmodule import RawKernelOps, longs

Array = Any


class CudaActivationOps(RawKernelOps, ActivationOps):
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
        return self._elementwise("gelu_forward", (x,), longs(approximate == "tanh"))

    def gelu_backward(self, gy: Array, x: Array, approximate: str) -> Array:
        if not self._fits_same_shape("gelu_backward", gy, x):
            return super().gelu_backward(gy, x, approximate)
        return self._elementwise("gelu_backward", (gy, x), longs(approximate == "tanh"))

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
