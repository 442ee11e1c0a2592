"""The Numba tier on a real GPU (marked ``gpu``; skipped without one): the ``NumbaOps`` methods of the CUDA
backend on CuPy arrays against the NumPy backend, one launch per parameter per optimizer step, float32
kernels free of float64 arithmetic, launches on CuPy's current stream that never make the host wait.

The same cases run without a GPU under the CUDA simulator (tests/cudasim, its own pytest run).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.gpu
if not mt.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cupy  # noqa: E402
from numba import types  # noqa: E402

from cudasim.numba_cases import (NumbaOps, REPRESENTATIVE, STEPS, assert_same_trajectory, call_every_override,  # noqa: E402
                                 optimizer_cases, record_launches, trajectory)
from minitensor.backends.cuda.numba_kernels import launch  # noqa: E402
from minitensor.backends.cuda.numba_kernels.dropout import (dropout_backward_kernel,  # noqa: E402
                                                            dropout_forward_kernel)
from minitensor.backends.cuda.numba_kernels.optim import (adagrad_kernel, adam_kernel,  # noqa: E402
                                                          rmsprop_kernel, sgd_kernel)
from minitensor.backends.cpu.backend import NumpyBackend  # noqa: E402
from minitensor.backends.cuda.optim import CudaOptimOps  # noqa: E402
from minitensor.backends.generic.dropout import DropoutOps  # noqa: E402

DTYPES = [np.float32, np.float64]
# The GPU contracts a * b + c into one FMA where NumPy rounds twice: agreement to a few ulps per step.
TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-14)}
KERNELS = [sgd_kernel, adam_kernel, rmsprop_kernel, adagrad_kernel, dropout_forward_kernel,
           dropout_backward_kernel]


@pytest.fixture
def gpu():
    return mt.device("cuda").backend


@pytest.fixture
def launches(monkeypatch) -> list[str]:
    return record_launches(monkeypatch)


def on_gpu(B, update, states, shape, dtype, grad_layout=lambda g: g):
    return trajectory(B, update, states, shape, dtype, grad_layout, device=cupy.asarray, host=cupy.asnumpy)


def on_host(update, states, shape, dtype):
    """The NumPy backend's trajectory; a 0-d one through shape (1,) (the NumPy weight decay fails on 0-d)."""
    history = trajectory(NumpyBackend(), update, states, shape or (1,), dtype)
    return [{name: a.reshape(shape) for name, a in step.items()} for step in history]


def test_the_cuda_backend_takes_these_methods_from_numba_ops(gpu):
    for name in ("sgd_update", "adam_update", "rmsprop_update", "adagrad_update", "dropout",
                 "dropout_backward"):
        assert inspect.unwrap(getattr(type(gpu), name)) is getattr(NumbaOps, name), name
    assert inspect.unwrap(type(gpu)._fused_kernel) is CudaOptimOps._fused_kernel


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("update, states, kernel", list(optimizer_cases()))
def test_update_matches_the_numpy_backend(gpu, launches, update, states, kernel, dtype):
    got = on_gpu(gpu, update, states, (257,), dtype)  # 257: one element past a 256-thread block
    assert launches == [kernel] * STEPS
    assert_same_trajectory(got, on_host(update, states, (257,), dtype), **TOL[dtype])


@pytest.mark.parametrize("shape", [(), (1,), (1000,), (3, 4, 5), (2_000_003,)], ids=str)
def test_updates_cover_every_size_and_shape(gpu, launches, shape):
    # 2_000_003 elements exceed the largest grid (4096 x 256 threads): the grid-stride loop turns twice.
    for update, states, _ in REPRESENTATIVE:
        assert_same_trajectory(on_gpu(gpu, update, states, shape, np.float32),
                               on_host(update, states, shape, np.float32), **TOL[np.float32])
    assert len(launches) == len(REPRESENTATIVE) * STEPS


def test_a_transposed_gradient_takes_the_cupy_bodies(gpu, launches):
    for update, states, _ in REPRESENTATIVE:
        got = on_gpu(gpu, update, states, (4, 6), np.float32, lambda g: cupy.ascontiguousarray(g.T).T)
        assert_same_trajectory(got, on_host(update, states, (4, 6), np.float32), **TOL[np.float32])
    assert launches == []


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_dropout_forward_and_backward(gpu, launches, dtype, p):
    rng = np.random.default_rng(0)
    x_host = rng.uniform(0.5, 2.0, (20, 1000)).astype(dtype)
    gy_host = rng.standard_normal(x_host.shape).astype(dtype)
    x, n = cupy.asarray(x_host), x_host.size
    gpu.seed(11)
    y, mask = gpu.dropout(x, p)
    gpu.seed(11)
    y_generic, mask_generic = DropoutOps.dropout(gpu, x, p)  # the CuPy body: the same float32 draw
    gx = cupy.asnumpy(gpu.dropout_backward(cupy.asarray(gy_host), mask, p))
    assert launches == ["dropout_forward_kernel", "dropout_backward_kernel"]
    y, mask = cupy.asnumpy(y), cupy.asnumpy(mask)
    assert y.dtype == dtype and mask.dtype == np.bool_ and y.shape == mask.shape == x.shape
    np.testing.assert_array_equal(mask, cupy.asnumpy(mask_generic))
    # CuPy may scale by a double 1 / (1 - p) where the kernel (and NumPy) use its float rounding
    np.testing.assert_allclose(y, cupy.asnumpy(y_generic), rtol=2 * np.finfo(dtype).eps, atol=0)
    assert abs(int(mask.sum()) - n * (1 - p)) <= 5 * np.sqrt(n * p * (1 - p))  # binomial, five sigma
    keep_scale = 1 / (1 - p) if p < 1 else 0.0
    np.testing.assert_array_equal(y[mask], x_host[mask] * dtype(keep_scale))
    np.testing.assert_array_equal(y[~mask], 0)
    expected = np.where(mask, gy_host.astype(np.float64) * keep_scale, 0.0)
    np.testing.assert_allclose(gx, expected, rtol=4 * np.finfo(dtype).eps, atol=0)


def test_float32_kernels_carry_no_float64_arithmetic(gpu):
    """A scalar passed as a Python float would compile a float64 instance: every scalar of a float32 call
    must be float32, and its PTX free of f64 instructions."""
    call_every_override(gpu, cupy, np.float32)
    for kernel in KERNELS:
        float32_instances = {sig: ptx for sig, ptx in kernel.inspect_asm().items()
                             if next(t for t in sig if isinstance(t, types.Array)).dtype == types.float32}
        assert float32_instances, kernel.py_func.__name__
        for sig, ptx in float32_instances.items():
            assert types.float64 not in sig, sig
            assert ".f64" not in ptx, (kernel.py_func.__name__, sig)


def test_the_numba_stream_is_cupys_current_stream_cached_per_pointer():
    first, second = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream()
    with first:
        stream = launch.current_stream()
        assert stream is launch.current_stream() and int(stream.handle) == first.ptr
    with second:
        assert int(launch.current_stream().handle) == second.ptr
    with cupy.cuda.Stream.null:
        assert int(launch.current_stream().handle) == 1  # CU_STREAM_LEGACY, CuPy's null stream


SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""
SPIN_CYCLES = np.int64(4_000_000_000)  # about two seconds of one GPU thread


@pytest.mark.parametrize("non_blocking", [False, True], ids=["null-stream", "non-blocking-stream"])
def test_updates_queue_behind_cupy_work_without_waiting_for_it(gpu, non_blocking):
    """500 updates queued behind a two-second kernel and a CuPy fill: the host gets past them all before the
    GPU does (a sync per launch would wait for the spin), and each update sees the fill (one stream). 500
    stays under the driver's queue of pending launches, past which any launch blocks."""
    stream = cupy.cuda.Stream(non_blocking=True) if non_blocking else cupy.cuda.Stream.null
    spin = cupy.RawKernel(SPIN, "spin")
    lr, momentum, steps = 1e-3, 0.9, 500
    with stream:
        param, grad, buf = (cupy.zeros(4096, cupy.float32) for _ in range(3))
        gpu.sgd_update(param, grad, buf, lr, momentum, 0.0, False, 0.0, False, True)  # compiles; a zero step
        stream.synchronize()
        spin((1,), (1,), (SPIN_CYCLES,))
        grad.fill(1.0)  # an update run before the spin ended would still see zeros
        for _ in range(steps):
            gpu.sgd_update(param, grad, buf, lr, momentum, 0.0, False, 0.0, False, False)
        done = cupy.cuda.Event()
        done.record(stream)
        assert not done.query()
        done.synchronize()
    b, expected = 0.0, 0.0
    for _ in range(steps):
        b = momentum * b + 1.0
        expected -= lr * b
    np.testing.assert_allclose(cupy.asnumpy(param), expected, rtol=1e-4)


@pytest.mark.parametrize("make_optimizer, kernel", [
    (lambda ps: mt.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4), "sgd_kernel"),
    (lambda ps: mt.optim.Adam(ps, lr=1e-3, amsgrad=True), "adam_kernel"),
    (lambda ps: mt.optim.AdamW(ps, lr=1e-3), "adam_kernel"),
    (lambda ps: mt.optim.RMSprop(ps, lr=1e-3, momentum=0.9, centered=True), "rmsprop_kernel"),
    (lambda ps: mt.optim.Adagrad(ps, lr=1e-2), "adagrad_kernel"),
], ids=["sgd", "adam", "adamw", "rmsprop", "adagrad"])
def test_an_optimizer_step_is_one_launch_per_parameter_and_no_host_sync(launches, make_optimizer, kernel):
    model = mt.nn.Sequential(mt.nn.Conv2d(3, 4, 3), mt.nn.ReLU(), mt.nn.Flatten(),
                             mt.nn.Linear(4 * 6 * 6, 5)).to("cuda")
    x = mt.randn(2, 3, 8, 8).to("cuda")
    params = list(model.parameters())
    optimizer = make_optimizer(params)
    spin = cupy.RawKernel(SPIN, "spin")
    for step in range(2):  # the first step also makes the state buffers
        optimizer.zero_grad()
        (model(x) ** 2).mean().backward()
        cupy.cuda.get_current_stream().synchronize()
        spin((1,), (1,), (SPIN_CYCLES,))
        del launches[:]
        optimizer.step()
        done = cupy.cuda.Event()
        done.record()
        assert launches == [kernel] * len(params)
        assert step == 0 or not done.query()  # the second step queued everything without waiting
        done.synchronize()
