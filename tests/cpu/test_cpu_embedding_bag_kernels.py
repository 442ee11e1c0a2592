"""The CPU's embedding_bag loops (backends/cpu/embedding.py, numba_kernels/embedding.py) against the generic
NumPy body they replace (backends/generic/embedding.py), method by method, on bags of every size (empty ones
too), with padding, per_sample_weights and ties at the maximum; and the cases that go to the generic body."""
from __future__ import annotations

import re

import numpy as np
import pytest

from helpers import kernel_launches
from minitensor.backends import get_backend
from minitensor.backends.cpu.numba_kernels import load
from minitensor.backends.generic.embedding import EmbeddingOps

CPU = get_backend("cpu")
pytestmark = pytest.mark.skipif(load("embedding") is None, reason="no Numba: the generic body runs")


def case(seed: int, dtype: type, ties: bool) -> tuple:
    r = np.random.default_rng(seed)
    weight = (r.integers(-2, 3, (40, 16)) if ties else r.standard_normal((40, 16))).astype(dtype)
    indices = r.integers(0, 40, 500)
    offsets = np.concatenate([[0], np.sort(r.integers(0, 501, 60)), [500]])  # repeats: empty bags
    return r, weight, indices, offsets


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("padding_idx", [None, 7])
@pytest.mark.parametrize("ties", [False, True])
def test_loops_match_the_generic_body(dtype, tol, padding_idx, ties):
    r, weight, indices, offsets = case(0, dtype, ties)
    psw = r.standard_normal(indices.size).astype(dtype)
    gy = r.standard_normal((offsets.size - 1, 16)).astype(dtype)
    for mode, w in (("sum", None), ("sum", psw), ("mean", None), ("max", None)):
        got, got_rows = CPU.embedding_bag_forward(weight, indices, offsets, mode, w, padding_idx)
        want, want_rows = EmbeddingOps.embedding_bag_forward(CPU, weight, indices, offsets, mode, w, padding_idx)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        if mode == "max":
            np.testing.assert_array_equal(got_rows, want_rows)  # the same row per (bag, d): ties to the first
        for freq in (False, True) if mode != "max" else (False,):
            args = (gy, indices, offsets, 40, mode, w, padding_idx, freq, got_rows)
            np.testing.assert_allclose(CPU.embedding_bag_backward(*args),
                                       EmbeddingOps.embedding_bag_backward(CPU, *args), rtol=tol, atol=tol)
    args = (gy, weight, indices, offsets, padding_idx)
    np.testing.assert_allclose(CPU.embedding_bag_per_sample_weights_backward(*args),
                               EmbeddingOps.embedding_bag_per_sample_weights_backward(CPU, *args), rtol=tol, atol=tol)


def test_the_loops_run_for_float_weights_only():
    r, weight, indices, offsets = case(1, np.float32, False)
    names = kernel_launches(lambda: CPU.embedding_bag_forward(weight, indices, offsets, "mean", None, None))
    assert names == ["embedding_bag_forward"]
    half = weight.astype(np.float16)
    assert kernel_launches(lambda: CPU.embedding_bag_forward(half, indices, offsets, "sum", None, None)) == []
    gy = np.broadcast_to(np.float32(1), (offsets.size - 1, 16))  # a sum's gradient: stride 0
    assert kernel_launches(lambda: CPU.embedding_bag_backward(gy, indices, offsets, 40, "sum", None, None, False,
                                                              None)) == ["embedding_bag_backward"]


def test_bad_bounds_or_indices_go_to_the_generic_body():
    """The loops have no bounds checks: indices out of range or offsets past N run the generic body (which
    raises IndexError), never a kernel reading out of bounds."""
    r, weight, indices, offsets = case(2, np.float64, False)
    bad = indices.copy()
    bad[3] = 40
    with pytest.raises(IndexError):
        CPU.embedding_bag_forward(weight, bad, offsets, "sum", None, None)
    past = offsets.copy()
    past[-1] = 501
    with pytest.raises(IndexError):  # the generic body's read past N (the loop would read memory past it)
        CPU.embedding_bag_per_sample_weights_backward(np.ones((offsets.size - 1, 16)), weight, indices, past, None)


def test_the_loops_over_d_vectorise():
    """The bag loops' inner loops over D compile to vector adds and compares (max's arg-max row by vector
    selects, not branches): a scalar loop keeps its results but costs several times its time."""
    from test_cpu_kernels_vectorise import llvm_ir
    kernels = load("embedding")
    r = np.random.default_rng(0)
    w, idx, bounds = r.standard_normal((50, 32)).astype(np.float32), r.integers(0, 50, 100), np.arange(0, 101, 10)
    out, rows, counts, none = np.zeros((10, 32), np.float32), np.full((10, 32), -1), np.zeros(10, np.int64), \
        np.zeros(0, np.float32)
    ir = llvm_ir(kernels.bag_max, out, rows, w, idx, bounds, -1)
    assert re.search(r"fcmp ogt <\d+ x float>", ir) and re.search(r"select <\d+ x i1> %[\w.]+, <\d+ x i64>", ir)
    assert re.search(r"fadd <\d+ x float>", llvm_ir(kernels.bag_sum, out, counts, w, idx, bounds, none, -1))
    ir = llvm_ir(kernels.bag_add_backward, np.zeros((50, 32), np.float32), out, idx, bounds, none, -1)
    assert re.search(r"fadd <\d+ x float>", ir)
