"""The batch split of the CPU's Numba kernels over the BLAS pool's threads (``backends/cpu/parallel.py``): every
image done once, on as many threads as the BLAS uses, the Winograd convolution bit-identical to its serial run
in all three directions, errors raised in the caller, and a working pool in a forked child."""
from __future__ import annotations

import os
import threading
from unittest import mock

import numpy as np
import pytest

from minitensor.backends.cpu import numba_kernels, parallel
from minitensor.backends.cpu.backend import NumpyBackend


def _threads(n: int):
    """The BLAS pool seen as ``n`` threads, and parts of any size worth a thread."""
    return mock.patch.multiple(parallel, blas_threads=lambda: n, MIN_PART_ELEMENTS=1)


def test_every_image_once_on_as_many_threads_as_the_blas():
    seen = np.zeros(10, int)
    threads = set()

    def kernel(out, barrier, first, stop):
        threads.add(threading.get_ident())
        out[first:stop] += 1
        barrier.wait(timeout=30)  # passes only when all n parts run at once

    for n in (1, 2, 3):
        seen[:] = 0
        threads.clear()
        with _threads(n):
            parallel.over_images(kernel, 10, 10 ** 6, seen, threading.Barrier(n))
        np.testing.assert_array_equal(seen, 1)
        assert len(threads) == n and threading.get_ident() in threads  # the caller does a part


def test_small_work_stays_on_the_callers_thread():
    threads = set()
    with mock.patch.object(parallel, "blas_threads", lambda: 2):
        parallel.over_images(lambda first, stop: threads.add(threading.get_ident()), 64,
                             parallel.MIN_PART_ELEMENTS - 1)
    assert threads == {threading.get_ident()}


def test_an_error_in_a_part_reaches_the_caller():
    def kernel(first, stop):
        if first > 0:
            raise ValueError("part")

    with _threads(2), pytest.raises(ValueError, match="part"):
        parallel.over_images(kernel, 4, 10 ** 6)


def test_blas_threads_follows_the_blas_limit():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if parallel._blas_controller() is None:
        pytest.skip("no BLAS reports its threads")
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        assert parallel.blas_threads() == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_pool():
    seen = np.zeros(4, int)

    def kernel(out, first, stop):
        out[first:stop] += 1

    with _threads(2):
        parallel.over_images(kernel, 4, 10 ** 6, seen)  # the parent's pool exists before the fork
        pid = os.fork()
        if pid == 0:  # the child: the parent's pool has no threads here; a hang would time the test out
            child = np.zeros(4, int)
            parallel.over_images(kernel, 4, 10 ** 6, child)
            os._exit(0 if (child == 1).all() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(numba_kernels.load("conv") is None, reason="Winograd needs the Numba kernels")
@pytest.mark.parametrize("threads", [2, 3])
def test_winograd_split_over_threads_is_bit_identical(threads):
    """Each output element is made by one thread with the serial run's arithmetic: the same bits."""
    b, rng = NumpyBackend(), np.random.default_rng(0)
    x = rng.standard_normal((5, 16, 7, 6)).astype(np.float32)
    w = rng.standard_normal((17, 16, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(17).astype(np.float32)
    gy = rng.standard_normal((5, 17, 7, 6)).astype(np.float32)
    pad, ones = (1, 1, 1, 1), (1, 1)

    def run():
        return [b.conv2d(x, w, bias, ones, pad, ones, 1),
                *b.conv2d_backward(gy, x, w, ones, pad, ones, 1, (True, True, True))]

    with mock.patch.object(parallel, "blas_threads", lambda: 1):
        serial = run()
    with _threads(threads):
        split = run()
    for a, s in zip(split, serial):
        np.testing.assert_array_equal(a, s)
