"""asv benchmarks of layers and training steps on the CPU (the CUDA issue adds the device parameter)."""
from __future__ import annotations

import minitensor as mt
import minitensor.nn.functional as F

from .workloads import training_step


class Conv2dForwardBackward:
    """The CNN's two convolutions at batch 64, float32: forward and the backward of input and weight."""

    params = [[(1, 32, 28), (32, 64, 14)]]
    param_names = ["in_out_size"]

    def setup(self, shape: tuple[int, int, int]) -> None:
        c_in, c_out, size = shape
        mt.manual_seed(0)
        self.x = mt.randn(64, c_in, size, size, requires_grad=True)
        self.w = mt.randn(c_out, c_in, 3, 3, requires_grad=True)
        self.b = mt.randn(c_out, requires_grad=True)

    def time_conv2d_forward(self, shape: tuple[int, int, int]) -> None:
        with mt.no_grad():
            F.conv2d(self.x, self.w, self.b, padding=1)

    def time_conv2d_forward_backward(self, shape: tuple[int, int, int]) -> None:
        F.conv2d(self.x, self.w, self.b, padding=1).sum().backward()


class MaxPool2d:
    params = [[(32, 28), (64, 14)]]
    param_names = ["channels_size"]

    def setup(self, shape: tuple[int, int]) -> None:
        c, size = shape
        self.x = mt.randn(64, c, size, size, requires_grad=True)

    def time_max_pool2d_forward_backward(self, shape: tuple[int, int]) -> None:
        F.max_pool2d(self.x, 2).sum().backward()


class TrainingStep:
    """One Adam step of the examples' MLP (batch 100) and CNN (batch 64) on MNIST-shaped data."""

    params = [["mlp", "cnn"]]
    param_names = ["model"]

    def setup(self, model: str) -> None:
        self.step = training_step(model)
        self.step()  # warm up: optimizer state, allocator

    def time_training_step(self, model: str) -> None:
        self.step()
