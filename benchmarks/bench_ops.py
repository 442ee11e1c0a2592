"""asv benchmarks of single ops on each device: matmul, conv2d forward and backward, max-pool,
softmax-cross-entropy, scaled dot-product attention and each optimizer's update, at the sizes the workloads
use.

Inputs are drawn on the host from a fixed seed and moved, so both devices see the same numbers. A CUDA
benchmark skips itself (NotImplementedError in setup) where no GPU is usable, and every timed call on a GPU
ends with a device synchronisation, so the time is the kernels' and not only their launch.
"""
from __future__ import annotations

from typing import Any

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import optim

from .workloads import CLASSIFIERS, DEVICES, IMAGE_SIZE, require_device, synchronize


def _randn(*shape: int, device: str, requires_grad: bool = False) -> mt.Tensor:
    t = mt.randn(*shape).to(device)
    return t.requires_grad_() if requires_grad else t


class _OnDevice:
    """Seeds and skips (no GPU) in setup; ``sync`` closes each timed call on the device."""

    def setup(self, device: str, *_: Any) -> None:
        require_device(device)
        mt.manual_seed(0)
        self.device = mt.device(device)

    def sync(self) -> None:
        synchronize(self.device)


class MatMul(_OnDevice):
    """(m, k) @ (k, n) in float32: MLP-S's first layer, MLP-L's middle one, and a large square product."""

    params = [list(DEVICES), [(100, 784, 128), (512, 1024, 1024), (2048, 2048, 2048)]]
    param_names = ["device", "m_k_n"]

    def setup(self, device: str, mkn: tuple[int, int, int]) -> None:
        super().setup(device)
        m, k, n = mkn
        self.a, self.b = _randn(m, k, device=device), _randn(k, n, device=device)

    def time_matmul(self, device: str, mkn: tuple[int, int, int]) -> None:
        self.a @ self.b
        self.sync()


class Conv2d(_OnDevice):
    """The CNN's two convolutions (3x3, padding 1) at batch 64: forward alone, and forward plus the
    backward of input, weight and bias."""

    params = [list(DEVICES), [(1, 32, 28), (32, 64, 14)]]
    param_names = ["device", "in_out_size"]

    def setup(self, device: str, shape: tuple[int, int, int]) -> None:
        super().setup(device)
        c_in, c_out, size = shape
        self.x = _randn(64, c_in, size, size, device=device, requires_grad=True)
        self.w = _randn(c_out, c_in, 3, 3, device=device, requires_grad=True)
        self.b = _randn(c_out, device=device, requires_grad=True)

    def time_forward(self, device: str, shape: tuple[int, int, int]) -> None:
        with mt.no_grad():
            F.conv2d(self.x, self.w, self.b, padding=1)
        self.sync()

    def time_forward_backward(self, device: str, shape: tuple[int, int, int]) -> None:
        F.conv2d(self.x, self.w, self.b, padding=1).sum().backward()
        self.sync()


class MaxPool2d(_OnDevice):
    """2x2 max-pool forward and backward on the CNN's two activations at batch 64."""

    params = [list(DEVICES), [(32, 28), (64, 14)]]
    param_names = ["device", "channels_size"]

    def setup(self, device: str, shape: tuple[int, int]) -> None:
        super().setup(device)
        channels, size = shape
        self.x = _randn(64, channels, size, size, device=device, requires_grad=True)

    def time_forward_backward(self, device: str, shape: tuple[int, int]) -> None:
        F.max_pool2d(self.x, 2).sum().backward()
        self.sync()


class SoftmaxCrossEntropy(_OnDevice):
    """F.cross_entropy forward and backward on (batch, classes) logits: the MLPs' and CNN's heads, and a
    1,000-class one."""

    params = [list(DEVICES), [(100, 10), (512, 10), (4096, 1000)]]
    param_names = ["device", "batch_classes"]

    def setup(self, device: str, shape: tuple[int, int]) -> None:
        super().setup(device)
        batch, classes = shape
        self.logits = _randn(batch, classes, device=device, requires_grad=True)
        self.target = mt.randint(0, classes, (batch,)).to(device)

    def time_forward_backward(self, device: str, shape: tuple[int, int]) -> None:
        F.cross_entropy(self.logits, self.target).backward()
        self.sync()


class ScaledDotProductAttention(_OnDevice):
    """The Transformer workload's causal self-attention, (batch 32, 8 heads, 128 tokens, 64 per head):
    forward and the backward of q, k and v, with and without dropout on the weights."""

    params = [list(DEVICES), [0.0, 0.1]]
    param_names = ["device", "dropout_p"]

    def setup(self, device: str, dropout_p: float) -> None:
        super().setup(device)
        self.q, self.k, self.v = (_randn(32, 8, 128, 64, device=device, requires_grad=True) for _ in range(3))

    def time_forward_backward(self, device: str, dropout_p: float) -> None:
        F.scaled_dot_product_attention(self.q, self.k, self.v, dropout_p=dropout_p, is_causal=True).sum().backward()
        self.sync()


OPTIMIZERS = {
    "sgd-momentum": lambda params: optim.SGD(params, lr=0.01, momentum=0.9),
    "adam": lambda params: optim.Adam(params),
    "adamw": lambda params: optim.AdamW(params),
    "rmsprop": lambda params: optim.RMSprop(params),
    "adagrad": lambda params: optim.Adagrad(params),
}


class OptimizerStep(_OnDevice):
    """One ``optimizer.step()`` over a classifier workload's parameters (MLP-S 0.1 M in 4 tensors, the CNN
    0.42 M in 8, MLP-L 1.9 M in 6), with fixed gradients; the state is allocated in setup."""

    params = [list(DEVICES), list(OPTIMIZERS), ["mlp-s", "cnn", "mlp-l"]]
    param_names = ["device", "optimizer", "parameters_of"]

    def setup(self, device: str, optimizer: str, model: str) -> None:
        super().setup(device)
        parameters = list(CLASSIFIERS[model](IMAGE_SIZE).to(device).parameters())
        for p in parameters:
            p.grad = _randn(*p.shape, device=device)
        self.optimizer = OPTIMIZERS[optimizer](parameters)
        self.optimizer.step()  # allocates the state: the timed steps are the steady state
        self.sync()

    def time_step(self, device: str, optimizer: str, model: str) -> None:
        self.optimizer.step()
        self.sync()
