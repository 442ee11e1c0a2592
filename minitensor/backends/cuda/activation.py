"""The activations and softmax family on CUDA: the kernels of ``kernels/activation.cu``."""
from __future__ import annotations

from typing import Any, Callable

from ..generic.activation import ActivationOps
from .rawmodule import RawKernelOps, acc_dtype, longs

Array = Any


class CudaActivationOps(RawKernelOps, ActivationOps):
    """Each override names its kernel and the generic method that serves what the kernel does not cover."""

    def _elementwise_or(self, template: str, fallback: Callable[..., Array], inputs: tuple[Array, ...],
                        args: tuple[Any, ...] = (), scalars: tuple[Any, ...] = ()) -> Array:
        """``template`` element by element over same-shape ``inputs`` (its extra kernel arguments
        ``scalars``), else ``fallback(*inputs, *args)``."""
        if not self._fits_same_shape(template, *inputs):
            return fallback(*inputs, *args)
        return self._elementwise(template, inputs, scalars)

    def _rowwise_or(self, template: str, fallback: Callable[..., Array], axis: int, *inputs: Array) -> Array:
        """``template`` row by row when ``axis`` is the last one, else ``fallback(*inputs, axis)``."""
        if not (self._on_last_axis(inputs[-1], axis) and self._fits_same_shape(template, *inputs)):
            return fallback(*inputs, axis)
        return self._rowwise(template, *inputs)

    def relu_backward(self, gy: Array, y: Array) -> Array:
        return self._elementwise_or("relu_backward", super().relu_backward, (gy, y))

    def leaky_relu(self, x: Array, negative_slope: float) -> Array:
        return self._elementwise_or("leaky_relu_forward", super().leaky_relu, (x,), (negative_slope,),
                                    (acc_dtype(x.dtype).type(negative_slope),))

    def leaky_relu_backward(self, gy: Array, y_or_x: Array, negative_slope: float) -> Array:
        return self._elementwise_or("leaky_relu_backward", super().leaky_relu_backward, (gy, y_or_x),
                                    (negative_slope,), (acc_dtype(gy.dtype).type(negative_slope),))

    def sigmoid(self, x: Array) -> Array:
        return self._elementwise_or("sigmoid_forward", super().sigmoid, (x,))

    def sigmoid_backward(self, gy: Array, y: Array) -> Array:
        return self._elementwise_or("sigmoid_backward", super().sigmoid_backward, (gy, y))

    def tanh_backward(self, gy: Array, y: Array) -> Array:
        return self._elementwise_or("tanh_backward", super().tanh_backward, (gy, y))

    def gelu(self, x: Array, approximate: str) -> Array:
        return self._elementwise_or("gelu_forward", super().gelu, (x,), (approximate,),
                                    longs(approximate == "tanh"))

    def gelu_backward(self, gy: Array, x: Array, approximate: str) -> Array:
        return self._elementwise_or("gelu_backward", super().gelu_backward, (gy, x), (approximate,),
                                    longs(approximate == "tanh"))

    # ------------------------------------------------------------------------------ softmax, log-softmax
    def softmax(self, x: Array, axis: int) -> Array:
        return self._rowwise_or("softmax_forward", super().softmax, axis, x)

    def softmax_backward(self, gy: Array, y: Array, axis: int) -> Array:
        return self._rowwise_or("softmax_backward", super().softmax_backward, axis, gy, y)

    def log_softmax(self, x: Array, axis: int) -> Array:
        return self._rowwise_or("log_softmax_forward", super().log_softmax, axis, x)

    def log_softmax_backward(self, gy: Array, y: Array, axis: int) -> Array:
        return self._rowwise_or("log_softmax_backward", super().log_softmax_backward, axis, gy, y)
