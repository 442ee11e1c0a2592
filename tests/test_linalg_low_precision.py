"""linalg refuses float16 and bfloat16 matrices outside autocast, as PyTorch (no 16-bit LAPACK kernels): inv,
slogdet and the rest raise instead of answering in float64; matrix_power of n >= 0 (only matmuls) runs in
the input's dtype. Under CPU autocast the ops on PyTorch's float32 list (inverse, solve, cholesky, eigh,
svd, qr, lstsq, pinverse...) first come up to float32 and run there throughout; det, slogdet,
solve_triangular and linalg.pinv, not on it, still refuse."""
from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import minitensor as mt


def low_precision_results(lib, dtype):
    """Each linalg op on a 16-bit matrix: its error's first line, or its result's dtype."""
    A = (lib.eye(3) * 2 + 0.1).to(dtype)
    b = lib.ones(3, 1).to(dtype)
    L = lib.linalg
    cases = {
        "inv": lambda: L.inv(A), "inverse": lambda: lib.inverse(A), "method": lambda: A.inverse(),
        "slogdet": lambda: L.slogdet(A)[1], "matrix_power_neg": lambda: L.matrix_power(A, -2),
        "matrix_power_0": lambda: L.matrix_power(A, 0), "matrix_power_3": lambda: L.matrix_power(A, 3),
        "solve": lambda: L.solve(A, b), "det": lambda: L.det(A), "cholesky": lambda: L.cholesky(A),
        "solve_triangular": lambda: L.solve_triangular(A, b, upper=True), "svd": lambda: L.svd(A)[0],
        "qr": lambda: L.qr(A)[0], "eigh": lambda: L.eigh(A)[0], "pinv": lambda: L.pinv(A),
    }
    out = {}
    for name, fn in cases.items():
        try:
            out[name] = str(fn().dtype).split(".")[-1]
        except RuntimeError as e:  # PyTorch's NotImplementedError is a RuntimeError too
            out[name] = "raises: " + str(e).splitlines()[0]
    return out


@pytest.mark.parametrize("dtype, name", [("bfloat16", "BFloat16"), ("float16", "Half")])
def test_linalg_refuses_16_bit_matrices(dtype, name):
    got = low_precision_results(mt, getattr(mt, dtype))
    msg = f"raises: linalg.inv: Low precision dtypes not supported. Got {name}"
    assert got["inv"] == got["inverse"] == got["method"] == got["matrix_power_neg"] == msg
    assert got["slogdet"] == f"raises: linalg.slogdet: Low precision dtypes not supported. Got {name}"
    for op in ("solve", "det", "cholesky", "solve_triangular", "svd", "qr", "eigh", "pinv"):
        assert got[op].startswith("raises: "), op
    assert got["matrix_power_0"] == got["matrix_power_3"] == dtype


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_linalg_refuses_16_bit_matrices_as_torch(dtype):
    torch = pytest.importorskip("torch")
    ours, theirs = low_precision_results(mt, getattr(mt, dtype)), low_precision_results(torch, getattr(torch, dtype))
    refused = [{k for k, v in got.items() if v.startswith("raises")} for got in (ours, theirs)]
    assert refused[0] == refused[1]
    for op in ("inv", "inverse", "method", "slogdet", "matrix_power_neg", "matrix_power_0", "matrix_power_3"):
        assert ours[op] == theirs[op], op


def autocast_results(lib):
    """The linalg ops on a bfloat16 matrix under CPU autocast: result dtype, or "raises"."""
    A, b, L = (lib.eye(4) * 3 + 0.1).to(lib.bfloat16), lib.ones(4, 2).to(lib.bfloat16), lib.linalg
    cases = {
        "inv": lambda: L.inv(A), "solve": lambda: L.solve(A, b), "cholesky": lambda: L.cholesky(A),
        "cholesky_solve": lambda: lib.cholesky_solve(b, A), "cholesky_inverse": lambda: lib.cholesky_inverse(A),
        "eigh": lambda: L.eigh(A)[1], "eigvalsh": lambda: L.eigvalsh(A), "svd": lambda: L.svd(A)[0],
        "svdvals": lambda: L.svdvals(A), "qr": lambda: L.qr(A)[1], "matrix_rank": lambda: L.matrix_rank(A),
        "lstsq": lambda: L.lstsq(A, b)[0], "cond": lambda: L.cond(A), "pinverse": lambda: lib.pinverse(A),
        "torch_svd": lambda: lib.svd(A)[2], "det": lambda: L.det(A), "slogdet": lambda: L.slogdet(A)[1],
        "solve_triangular": lambda: L.solve_triangular(A, b, upper=True), "pinv": lambda: L.pinv(A),
    }
    out = {}
    with lib.autocast("cpu", dtype=lib.bfloat16):
        for name, fn in cases.items():
            try:
                out[name] = str(fn().dtype).split(".")[-1]
            except RuntimeError:
                out[name] = "raises"
    return out


def test_linalg_under_cpu_autocast_runs_in_float32():
    got = autocast_results(mt)
    for name in ("det", "slogdet", "solve_triangular", "pinv"):
        assert got.pop(name) == "raises", name
    assert got.pop("matrix_rank") == "int64"
    assert set(got.values()) == {"float32"}, got
    x = (mt.eye(3) * 2 + 0.1).to(mt.bfloat16)
    with mt.autocast("cpu", dtype=mt.bfloat16):
        solved = mt.linalg.lstsq(x, mt.ones(3, 1).to(mt.bfloat16)).solution
    assert_allclose(solved.numpy(), np.linalg.lstsq(x.double().numpy(), np.ones((3, 1)), rcond=None)[0], rtol=1e-5)


@pytest.mark.torch
def test_linalg_under_cpu_autocast_as_torch():
    torch = pytest.importorskip("torch")
    assert autocast_results(mt) == autocast_results(torch)
