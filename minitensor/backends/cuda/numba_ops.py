"""``NumbaOps``: the optimizer updates and dropout of the CUDA backend, each one Numba kernel launch.

A mixin for ``class CudaBackend(RawKernelOps, NumbaOps, CupyBackend)``: it overrides ``sgd_update``,
``adam_update``, ``rmsprop_update``, ``adagrad_update``, ``dropout`` and ``dropout_backward`` with the
signatures and semantics of ``OptimOps`` / ``DropoutOps`` (their docstrings are the contract). The kernels
(``numba_kernels/``) cover C-contiguous float32 and float64 arrays of one dtype and shape; anything else
(a transposed or broadcast gradient, float16) goes to the generic method through ``super()``. The few
arrays made here (dropout's output, mask and uniform draw) come from ``self.xp``, so only CuPy allocates,
and composed with ``NumpyBackend`` under ``NUMBA_ENABLE_CUDASIM=1`` the same code runs on NumPy arrays.

No host synchronisation per launch. Every launch goes to CuPy's current stream (``launch.current_stream``).
numba-cuda >= 0.30 takes a CuPy array through DLPack before ``__cuda_array_interface__``: it types it with
``__dlpack__(stream=-1)`` (no ordering) and binds it with ``__dlpack__(stream=<the launch stream>)``, and
CuPy, finding that stream to be its current one, adds nothing; on another stream it would enqueue an event
wait, still without blocking the host. The older CAI path synchronised the host on the array's stream at
every launch (``NUMBA_CUDA_ARRAY_INTERFACE_SYNC=1``, the default), which is why ``numba-cuda>=0.30`` is
pinned. To verify on a GPU: ``tests/cuda/test_cuda_numba_ops.py`` queues a two-second kernel, then 500 updates
(and a whole optimizer step), and checks that the host gets past them while the kernel still runs
(``cupy.cuda.Event().query()`` is False); or profile a training step with ``nsys profile --trace=cuda python train.py`` and check that
``cudaStreamSynchronize`` / ``cuStreamSynchronize`` calls do not grow with the number of steps.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..generic.dropout import DropoutOps
from ..generic.optim import OptimOps
from .numba_kernels import launch
from .numba_kernels.dropout import dropout_backward_kernel, dropout_forward_kernel
from .numba_kernels.optim import adagrad_kernel, adam_kernel, rmsprop_kernel, sgd_kernel

Array = Any

KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _kernel_fits(first: Array, *others: Array) -> bool:
    """Whether the kernels cover these arrays: C-contiguous (they walk flat views), one shape, one dtype
    among ``KERNEL_DTYPES``."""
    return (first.dtype in KERNEL_DTYPES and first.flags.c_contiguous
            and all(a.dtype == first.dtype and a.shape == first.shape and a.flags.c_contiguous
                    for a in others))


def _flat(a: Array) -> Array:
    """The 1-D view of a C-contiguous array (no copy, so the kernel's writes land in ``a``)."""
    return a.reshape(-1)


def _kept_scale(p: float) -> float:
    """1 / (1 - p), the factor of a kept element (none is kept at p = 1)."""
    return 1 / (1 - p) if p < 1 else 1.0


# DropoutOps before OptimOps, as in Backend's bases, so that the composed classes' method order resolves.
class NumbaOps(DropoutOps, OptimOps):
    """One kernel launch per call for the in-place optimizer updates and dropout (see the module notes).

    Scalars reach the kernels as the array's dtype (``param.dtype.type(lr)``), booleans as ``bool``; an
    absent state array is replaced by ``grad``, which the kernel then leaves alone."""

    xp: Any

    def sgd_update(self, param: Array, grad: Array, momentum_buf: Array | None, lr: float, momentum: float,
                   dampening: float, nesterov: bool, weight_decay: float, maximize: bool,
                   first_step: bool) -> None:
        buf = momentum_buf if momentum != 0 else grad
        if not _kernel_fits(param, grad, buf):
            return super().sgd_update(param, grad, momentum_buf, lr, momentum, dampening, nesterov,
                                      weight_decay, maximize, first_step)
        t = param.dtype.type
        launch.launch_1d(sgd_kernel, param.size, _flat(param), _flat(grad), _flat(buf), t(lr), t(momentum),
                         t(1 - dampening), t(weight_decay), bool(nesterov), bool(maximize), bool(first_step))

    def adam_update(self, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array,
                    max_exp_avg_sq: Array | None, step: int, lr: float, beta1: float, beta2: float,
                    eps: float, weight_decay: float, amsgrad: bool, decoupled_weight_decay: bool,
                    maximize: bool) -> None:
        v_max = max_exp_avg_sq if amsgrad else grad
        if not _kernel_fits(param, grad, exp_avg, exp_avg_sq, v_max):
            return super().adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1,
                                       beta2, eps, weight_decay, amsgrad, decoupled_weight_decay, maximize)
        t = param.dtype.type
        param_decay = 1 - lr * weight_decay if decoupled_weight_decay else 1.0
        coupled_weight_decay = 0.0 if decoupled_weight_decay else weight_decay
        launch.launch_1d(adam_kernel, param.size, _flat(param), _flat(grad), _flat(exp_avg), _flat(exp_avg_sq),
                         _flat(v_max), t(lr / (1 - beta1 ** step)), t(beta1), t(1 - beta1), t(beta2),
                         t(1 - beta2), t(math.sqrt(1 - beta2 ** step)), t(eps), t(coupled_weight_decay),
                         t(param_decay), bool(amsgrad), bool(maximize))

    def rmsprop_update(self, param: Array, grad: Array, square_avg: Array, momentum_buf: Array | None,
                       grad_avg: Array | None, lr: float, alpha: float, eps: float, weight_decay: float,
                       momentum: float, centered: bool, maximize: bool) -> None:
        buf = momentum_buf if momentum > 0 else grad
        gbar = grad_avg if centered else grad
        if not _kernel_fits(param, grad, square_avg, buf, gbar):
            return super().rmsprop_update(param, grad, square_avg, momentum_buf, grad_avg, lr, alpha, eps,
                                          weight_decay, momentum, centered, maximize)
        t = param.dtype.type
        launch.launch_1d(rmsprop_kernel, param.size, _flat(param), _flat(grad), _flat(square_avg), _flat(buf),
                         _flat(gbar), t(lr), t(alpha), t(1 - alpha), t(eps), t(weight_decay), t(momentum),
                         bool(centered), bool(maximize))

    def adagrad_update(self, param: Array, grad: Array, state_sum: Array, step: int, lr: float,
                       lr_decay: float, weight_decay: float, eps: float, maximize: bool) -> None:
        if not _kernel_fits(param, grad, state_sum):
            return super().adagrad_update(param, grad, state_sum, step, lr, lr_decay, weight_decay, eps,
                                          maximize)
        t = param.dtype.type
        launch.launch_1d(adagrad_kernel, param.size, _flat(param), _flat(grad), _flat(state_sum),
                         t(lr / (1 + (step - 1) * lr_decay)), t(eps), t(weight_decay), bool(maximize))

    def dropout(self, x: Array, p: float) -> tuple[Array, Array]:
        if not _kernel_fits(x):
            return super().dropout(x, p)
        # The same float32 draw as ``bernoulli``, so one seed gives the generic method's mask.
        uniform = self.uniform(x.shape, 0.0, 1.0, np.float32)
        y = self.xp.empty_like(x)
        mask = self.xp.empty(x.shape, dtype=bool)
        t = x.dtype.type
        launch.launch_1d(dropout_forward_kernel, x.size, _flat(x), _flat(uniform), np.float32(1 - p),
                         t(_kept_scale(p)), t(0), _flat(y), _flat(mask).view(np.uint8))
        return y, mask

    def dropout_backward(self, gy: Array, mask: Array, p: float) -> Array:
        if not (_kernel_fits(gy) and mask.dtype == np.bool_ and mask.shape == gy.shape
                and mask.flags.c_contiguous):
            return super().dropout_backward(gy, mask, p)
        gx = self.xp.empty_like(gy)
        t = gy.dtype.type
        launch.launch_1d(dropout_backward_kernel, gy.size, _flat(gy), _flat(mask).view(np.uint8),
                         t(_kept_scale(p)), t(0), _flat(gx))
        return gx
