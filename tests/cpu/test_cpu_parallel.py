"""How the CPU cuts a batch over threads (``backends/cpu/parallel.py``): parts that cover every image once, run
at once with the BLAS single-threaded meanwhile (and restored after, also on errors and across overlapping
callers), a working pool in a forked child, and the Winograd convolution split over threads against float64
direct sums in all three directions."""
from __future__ import annotations

import os
import threading
from unittest import mock

import numpy as np
import pytest

from minitensor.backends.cpu import numba_kernels, parallel
from minitensor.backends.cpu.backend import NumpyBackend

needs_blas = pytest.mark.skipif(parallel._blas_controller() is None, reason="no BLAS reports its threads")


def _threads(n: int):
    """A BLAS pool of ``n`` threads as the split sees it, and parts of any size worth a thread."""
    return mock.patch.multiple(parallel, blas_threads=lambda: n, MIN_PART_BYTES=1)


@pytest.mark.parametrize("n, threads", [(10, 1), (10, 2), (10, 3), (2, 4), (1, 2)])
def test_parts_cover_every_image_once(n, threads):
    with _threads(threads):
        parts = parallel.split_batch(n, 1000)
    assert len(parts) == min(n, threads)
    assert [i for images, _ in parts for i in images] == list(range(n))
    assert all(per_chunk >= 1 for _, per_chunk in parts)


def test_small_batches_stay_in_one_part():
    with mock.patch.object(parallel, "blas_threads", lambda: 2):
        assert len(parallel.split_batch(4, parallel.MIN_PART_BYTES // 4 - 1)) == 1
        assert len(parallel.split_batch(4, parallel.MIN_PART_BYTES)) == 2


@needs_blas
@pytest.mark.parametrize("parts", [2, 3])
def test_parts_run_at_once_with_a_single_threaded_blas(parts):
    controller = parallel._blas_controller()
    before = controller.num_threads
    barrier, seen = threading.Barrier(parts), []

    def fn(k):
        seen.append((threading.get_ident(), parallel.blas_threads()))
        barrier.wait(timeout=30)  # passes only when every part runs at the same time
        return k * k

    assert parallel.over_parts(fn, [(k,) for k in range(parts)]) == [k * k for k in range(parts)]
    assert len({ident for ident, _ in seen}) == parts and threading.get_ident() in {i for i, _ in seen}
    assert {threads for _, threads in seen} == {1}
    assert controller.num_threads == before


@needs_blas
def test_an_error_in_a_part_reaches_the_caller_and_the_blas_is_restored():
    before = parallel._blas_controller().num_threads

    def fn(k):
        if k == 1:
            raise ValueError("part 1")
        return k

    with pytest.raises(ValueError, match="part 1"):
        parallel.over_parts(fn, [(0,), (1,)])
    assert parallel._blas_controller().num_threads == before


@needs_blas
def test_overlapping_sections_restore_the_pool_once_the_last_ends():
    controller = parallel._blas_controller()
    before = controller.num_threads
    outer = parallel.single_threaded_blas()
    outer.__enter__()
    with parallel.single_threaded_blas():
        assert controller.num_threads == 1
    assert controller.num_threads == 1  # the outer section still runs
    outer.__exit__(None, None, None)
    assert controller.num_threads == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_pool():
    parallel.over_parts(lambda k: k, [(0,), (1,)])  # the parent's pool exists before the fork
    pid = os.fork()
    if pid == 0:  # the child: the parent's pool has no threads here; a hang would time the test out
        ok = parallel.over_parts(lambda k: k + 1, [(0,), (1,)]) == [1, 2]
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _direct(x, w, pad):
    """The 3x3 cross-correlation in float64 and its adjoints, one einsum per kernel offset."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pad[:2], pad[2:]))
    oh, ow = xp.shape[2] - 2, xp.shape[3] - 2
    return sum(np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.float64))
               for i in range(3) for j in range(3))


@pytest.mark.skipif(numba_kernels.load("conv") is None, reason="Winograd needs the Numba kernels")
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype, bound", [(np.float32, 2e-6), (np.float64, 1e-13)])
def test_winograd_split_over_threads_matches_float64(threads, dtype, bound):
    """Forward, input and weight gradients (each thread sums its own part of gw) with 1-3 parts of 1-2
    images, chunks of one image: the float64 direct sums within float32's (float64's) rounding."""
    b, rng = NumpyBackend(), np.random.default_rng(0)
    x = rng.standard_normal((5, 16, 7, 6)).astype(dtype)
    w = (rng.standard_normal((17, 16, 3, 3)) / 12).astype(dtype)
    gy = rng.standard_normal((5, 17, 7, 6)).astype(dtype)
    pad, ones = (1, 1, 1, 1), (1, 1)
    y_exact = _direct(x, w, pad)
    with _threads(threads), mock.patch.object(parallel, "CHUNK_BYTES", 1):
        y = b.conv2d(x, w, None, ones, pad, ones, 1)
        gx, gw, _ = b.conv2d_backward(gy, x, w, ones, pad, ones, 1, (True, True, False))
    gy64, x64 = gy.astype(np.float64), np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    gx_exact = _direct(gy64, w.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1], pad)
    gw_exact = np.stack([np.einsum("nohw,nchw->oc", gy64, x64[:, :, i:i + 7, j:j + 6]) for i in range(3)
                         for j in range(3)], axis=-1).reshape(w.shape)
    for got, exact in [(y, y_exact), (gx, gx_exact), (gw, gw_exact)]:
        assert got.dtype == dtype
        assert np.abs(got - exact).max() / np.abs(exact).max() < bound


@pytest.mark.skipif(numba_kernels.load("activation") is None, reason="needs the Numba kernels")
@pytest.mark.parametrize("threads", [2, 3])
def test_gelu_and_attention_softmax_cut_into_parts_give_the_serial_bits(threads):
    """The compute-bound passes cut over threads (``over_leading_parts``, thresholds lowered so that small
    arrays are cut) write every row once: the same bits as one pass, forward and backward."""
    from minitensor.backends.cpu import activation, attention
    b, rng = NumpyBackend(), np.random.default_rng(1)
    x = rng.standard_normal((7, 33)).astype(np.float32)
    gy = rng.standard_normal((7, 33)).astype(np.float32)
    s = rng.standard_normal((5, 9, 9)).astype(np.float32)
    serial = (b.gelu(x, "none"), b.gelu_backward(gy, x, "none"), b.attention_softmax(s.copy(), True))
    with _threads(threads), mock.patch.object(activation, "PARALLEL_MIN_ELEMENTS", 1), \
            mock.patch.object(attention, "PARALLEL_MIN_ELEMENTS", 1), \
            mock.patch.object(parallel, "over_parts", wraps=parallel.over_parts) as cut:
        parted = (b.gelu(x, "none"), b.gelu_backward(gy, x, "none"), b.attention_softmax(s.copy(), True))
    assert cut.call_count == 3
    for one, many in zip(serial, parted):
        np.testing.assert_array_equal(one, many)
