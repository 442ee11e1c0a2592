"""SVD-based ops on matrices holding inf or NaN: checked before LAPACK sees them (its gesdd can loop for ever
on an inf), with PyTorch's results: an inf gives NaN singular values (matrix_rank 0; the 2-norm, nuclear
norm, cond and pinv NaN), a NaN raises LinAlgError; finite matrices of the batch are unaffected. (PyTorch's
lstsq, which does not use the SVD on the CPU, gives zeros or NaN; minitensor's, which does, NaN.)"""
from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minitensor as mt


def ops(lib):
    """The SVD-based ops of ``lib`` (minitensor or torch), each giving one tensor."""
    L = lib.linalg
    return {
        "svdvals": L.svdvals, "svd S": lambda A: L.svd(A).S,
        "svd reduced S": lambda A: L.svd(A, full_matrices=False).S, "torch.svd S": lambda A: lib.svd(A).S,
        "pinv": L.pinv, "pinverse": lib.pinverse,
        "lstsq": lambda A: L.lstsq(A, lib.ones(*A.shape[:-1], 1, dtype=A.dtype)).solution,
        "matrix_norm 2": lambda A: L.matrix_norm(A, ord=2), "matrix_norm -2": lambda A: L.matrix_norm(A, ord=-2),
        "nuclear norm": lambda A: L.matrix_norm(A, ord="nuc"), "cond": L.cond, "matrix_rank": L.matrix_rank,
    }


OPS = ops(mt)


def with_inf(lib, dtype):
    a = np.arange(1.0, 19.0).reshape(2, 3, 3)
    a[1, 1, 2] = math.inf
    return lib.tensor(a, dtype=getattr(lib, dtype))


def test_ops_on_inf_return_at_once_in_a_subprocess():
    script = textwrap.dedent("""
        import math, numpy as np, minitensor as mt
        for n in (2, 5, 64):
            a = np.random.default_rng(n).standard_normal((n, n)); a[0, n - 1] = math.inf
            for A in (mt.tensor(a), mt.tensor(a, dtype=mt.float32), mt.tensor(a[:, : n // 2 + 1])):
                mt.linalg.svd(A); mt.linalg.svdvals(A); mt.linalg.pinv(A); mt.linalg.matrix_rank(A)
                mt.linalg.matrix_norm(A, ord=2); mt.linalg.lstsq(A, mt.ones(n, 1, dtype=A.dtype))
        print("done")""")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert out.stdout.strip() == "done", out.stderr


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(OPS))
def test_an_inf_gives_nan_singular_values_and_leaves_other_matrices(name, dtype):
    A = with_inf(mt, dtype)
    got = OPS[name](A).numpy()
    alone = OPS[name](A[0]).numpy()
    assert np.array_equal(got[0], alone)  # the finite matrix of the batch
    s = got[1]
    if name == "matrix_rank":
        assert s == 0
    else:
        assert np.all(np.isnan(s))


def test_svd_of_an_inf_has_nan_factors():
    U, S, Vh = mt.linalg.svd(with_inf(mt, "float64"))
    assert np.isnan(U[1].numpy()).all() and np.isnan(Vh[1].numpy()).all() and np.isfinite(U[0].numpy()).all()


@pytest.mark.parametrize("name", list(OPS))
def test_a_nan_raises_linalg_error(name):
    A = with_inf(mt, "float64")
    A[0, 0, 0] = math.nan
    with pytest.raises(mt.linalg.LinAlgError, match="non-finite values"):
        OPS[name](A)


@pytest.mark.torch
@pytest.mark.parametrize("name", [n for n in OPS if n != "lstsq"])  # PyTorch's lstsq needs a driver here
def test_same_results_as_pytorch(name):
    torch = pytest.importorskip("torch")
    expected = ops(torch)[name](with_inf(torch, "float64")).numpy()
    A = with_inf(torch, "float64")
    A[0, 0, 0] = math.nan
    with pytest.raises(torch.linalg.LinAlgError, match="non-finite values"):
        ops(torch)[name](A)
    np.testing.assert_allclose(OPS[name](with_inf(mt, "float64")).numpy(), expected, rtol=1e-8, atol=1e-12)
