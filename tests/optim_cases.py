"""The optimizer-update cases shared by the tests of the compiled updates: the CPU loops
(tests/cpu/test_cpu_optim_kernels.py), the Numba CUDA kernels under the simulator (tests/cudasim) and on a GPU
(tests/cuda/test_cuda_numba_ops.py).

A case is ``(update(B, arrays, step), state array names, kernel name)``; ``trajectory`` runs one on any
backend, from host data that is the same for every backend, and returns host copies after each step.
"""
from __future__ import annotations

import itertools
from functools import partial
from typing import Any, Callable

import ml_dtypes
import numpy as np
import pytest

STEPS = 3


def _sgd(B, a, t, momentum, dampening, nesterov, weight_decay, maximize):
    B.sgd_update(a["param"], a["grad"], a.get("momentum_buf"), 0.1, momentum, dampening, nesterov, weight_decay,
                 maximize, t == 1)


def _adam(B, a, t, amsgrad, decoupled, weight_decay, maximize):
    B.adam_update(a["param"], a["grad"], a["exp_avg"], a["exp_avg_sq"], a.get("max_exp_avg_sq"), t, 1e-2, 0.9,
                  0.999, 1e-8, weight_decay, amsgrad, decoupled, maximize)


def _rmsprop(B, a, t, centered, momentum, weight_decay, maximize):
    B.rmsprop_update(a["param"], a["grad"], a["square_avg"], a.get("momentum_buf"), a.get("grad_avg"), 1e-2,
                     0.99, 1e-8, weight_decay, momentum, centered, maximize)


def _adagrad(B, a, t, lr_decay, weight_decay, maximize):
    B.adagrad_update(a["param"], a["grad"], a["state_sum"], t, 0.1, lr_decay, weight_decay, 1e-10, maximize)


def _case(update, kernel, states, **hyper):
    name = update.__name__.strip("_") + "-" + "-".join(f"{k}={v}" for k, v in hyper.items())
    return pytest.param(partial(update, **hyper), states, kernel, id=name)


def optimizer_cases():
    """Every combination of the switches of each update (momentum 0 / 0.9, dampening, Nesterov, weight
    decay, maximize, AMSGrad, decoupled decay, centered, lr decay)."""
    for momentum, dampening, nesterov, wd, maximize in itertools.product((0.0, 0.9), (0.0, 0.5), (False, True),
                                                                         (0.0, 0.1), (False, True)):
        if nesterov and (momentum == 0 or dampening != 0):
            continue  # SGD refuses Nesterov without momentum or with dampening, as PyTorch does
        yield _case(_sgd, "sgd_kernel", ("momentum_buf",) if momentum else (), momentum=momentum,
                    dampening=dampening, nesterov=nesterov, weight_decay=wd, maximize=maximize)
    for amsgrad, decoupled, wd, maximize in itertools.product((False, True), (False, True), (0.0, 0.1),
                                                              (False, True)):
        yield _case(_adam, "adam_kernel", ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ()),
                    amsgrad=amsgrad, decoupled=decoupled, weight_decay=wd, maximize=maximize)
    for centered, momentum, wd, maximize in itertools.product((False, True), (0.0, 0.9), (0.0, 0.1),
                                                              (False, True)):
        states = ("square_avg",) + (("momentum_buf",) if momentum else ()) + (("grad_avg",) if centered else ())
        yield _case(_rmsprop, "rmsprop_kernel", states, centered=centered, momentum=momentum, weight_decay=wd,
                    maximize=maximize)
    for lr_decay, wd, maximize in itertools.product((0.0, 0.1), (0.0, 0.1), (False, True)):
        yield _case(_adagrad, "adagrad_kernel", ("state_sum",), lr_decay=lr_decay, weight_decay=wd,
                    maximize=maximize)


# One case per update with most switches on, for the size, layout and dtype tests.
REPRESENTATIVE = [
    (partial(_sgd, momentum=0.9, dampening=0.0, nesterov=True, weight_decay=0.1, maximize=False),
     ("momentum_buf",), "sgd_kernel"),
    (partial(_adam, amsgrad=True, decoupled=True, weight_decay=0.1, maximize=False),
     ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"), "adam_kernel"),
    (partial(_rmsprop, centered=True, momentum=0.9, weight_decay=0.1, maximize=True),
     ("square_avg", "momentum_buf", "grad_avg"), "rmsprop_kernel"),
    (partial(_adagrad, lr_decay=0.1, weight_decay=0.1, maximize=False), ("state_sum",), "adagrad_kernel"),
]

Identity: Callable[[Any], Any] = lambda a: a  # noqa: E731


def trajectory(backend, update, states, shape, dtype, grad_layout=Identity, device=Identity, host=Identity,
               compute=None):
    """STEPS updates from one seed (param random, states zero as the optimizers make them, a fresh gradient
    per step, laid out on the device by ``grad_layout``): host copies of the arrays after each step. Also
    checks that the gradient is never written. With ``compute``, the data drawn in ``dtype`` is widened to
    that dtype and updated in it (the wide reference of a 16-bit trajectory)."""
    rng = np.random.default_rng(0)
    compute = compute or dtype

    def draw():
        return device(rng.standard_normal(shape).astype(dtype).astype(compute))

    arrays = {"param": draw()}
    arrays.update({name: device(np.zeros(shape, compute)) for name in states})
    history = []
    for t in range(1, STEPS + 1):
        grad = grad_layout(draw())
        arrays["grad"], grad_before = grad, np.array(host(grad))
        update(backend, arrays, t)
        np.testing.assert_array_equal(host(grad), grad_before)
        history.append({name: np.array(host(a)) for name, a in arrays.items()})
    return history


def assert_same_trajectory(got, want, rtol, atol):
    for step, (g, w) in enumerate(zip(got, want), start=1):
        assert g.keys() == w.keys()
        for name in w:
            assert g[name].dtype == w[name].dtype and g[name].shape == w[name].shape
            np.testing.assert_allclose(g[name], w[name], rtol=rtol, atol=atol, err_msg=f"{name} after step {step}")
    assert not np.allclose(want[0]["param"], want[-1]["param"])  # the updates did move the parameter


def reference_on_shape(ref, update, states, shape):
    """The reference trajectory for a parameter of ``shape``; a 0-d one is run on shape (1,), which draws the
    same numbers (the NumPy bodies' ufuncs return scalars for 0-d operands), and reshaped back."""
    want = trajectory(ref, update, states, shape or (1,), np.float32)
    return [{name: a.reshape(shape) for name, a in step.items()} for step in want]


HALF_DTYPES = [np.float16, ml_dtypes.bfloat16]


def check_16_bit_against_float64(backend, dtype):
    """Each representative update on 16-bit parameters, gradients and states (``model.half()`` or
    ``.bfloat16()`` training) stays within a few roundings of ``dtype`` of the float64 trajectory from the same
    16-bit data: each element relative to itself, near zero relative to the largest move of the parameter (or
    the state's largest value); the arrays keep ``dtype`` and the parameter moves."""
    eps = float(ml_dtypes.finfo(dtype).eps)
    for update, states, _ in REPRESENTATIVE:
        got = trajectory(backend, update, states, (4, 6), dtype)
        want = trajectory(backend, update, states, (4, 6), dtype, compute=np.float64)
        moved = np.abs(want[-1]["param"] - want[0]["param"]).max()
        for step, (g, w) in enumerate(zip(got, want), start=1):
            for name in w:
                assert g[name].dtype == dtype
                scale = moved if name == "param" else np.abs(w[name]).max()
                np.testing.assert_allclose(g[name].astype(np.float64), w[name], rtol=4 * eps, atol=4 * eps * scale,
                                           err_msg=f"{name} after step {step}")
        assert not np.array_equal(got[0]["param"], got[-1]["param"])


def check_every_size_and_shape(backend, ref, calls, shape, tol):
    """Each representative update on a parameter of ``shape`` matches the reference within ``tol``, and
    ``calls`` (the compiled loops or launches recorded) holds one per parameter per step."""
    for update, states, _ in REPRESENTATIVE:
        assert_same_trajectory(trajectory(backend, update, states, shape, np.float32),
                               reference_on_shape(ref, update, states, shape), **tol)
    assert len(calls) == len(REPRESENTATIVE) * STEPS
