"""linalg refuses float16 and bfloat16 matrices outside autocast, as PyTorch (no 16-bit LAPACK kernels): inv,
slogdet and the rest raise instead of answering in float64; matrix_power of n >= 0 (only matmuls) runs in
the input's dtype. Under CPU autocast inverse first comes up to float32 (test_amp_cpu_policy)."""
from __future__ import annotations

import pytest

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
