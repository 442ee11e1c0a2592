"""Matrix products refuse operands of two dtypes, as PyTorch's kernels do, each with that kernel's words
(elementwise ops still promote). A float32 model fed float64 data fails at its first layer, as in PyTorch."""
from __future__ import annotations

import pytest

import minitensor as mt


def mixed_errors(lib):
    """The error message (or the result dtype) of each product given float32 and float64 operands."""
    F = lib.nn.functional
    f, d = lib.ones(4, 3), lib.ones(3, 2, dtype=lib.float64)
    cases = {
        "mm": lambda: lib.mm(f, d), "matmul": lambda: f @ d, "matmul_rev": lambda: d.T @ f.T,
        "bmm": lambda: lib.bmm(f[None], d[None]), "matmul3d": lambda: f[None] @ d[None],
        "dot": lambda: lib.dot(f[0], d[:, 0]), "vdot": lambda: lib.vdot(f[0], d[:, 0]),
        "mv": lambda: lib.mv(f, d[:, 0]), "vecmat": lambda: f[0] @ d, "matvec": lambda: f @ d[:, 0],
        "int": lambda: lib.ones(2, 2, dtype=lib.long) @ lib.ones(2, 2),
        "half": lambda: f @ d.to(lib.bfloat16),
        "linear": lambda: F.linear(f, d.T), "linear3d": lambda: F.linear(f[None], d.T),
        "linear_bias": lambda: F.linear(f, d.T.float(), lib.zeros(2, dtype=lib.float64)),
        "nn_linear": lambda: lib.nn.Linear(3, 2)(f.double()),
        "addmm": lambda: lib.addmm(lib.zeros(4, 2), f, d),
        "addmm_self": lambda: lib.addmm(lib.zeros(4, 2, dtype=lib.float64), f, d.float()),
        "addbmm": lambda: lib.addbmm(lib.zeros(4, 2), f[None], d[None]),
        "addmv": lambda: lib.addmv(lib.zeros(4), f, d[:, 0]),
        "addmv_self": lambda: lib.addmv(lib.zeros(4, dtype=lib.float64), f, f[0]),
        "addmv_mat": lambda: lib.addmv(lib.zeros(3, dtype=lib.float64), d, d[0].to(lib.bfloat16)),
        "baddbmm": lambda: lib.baddbmm(lib.zeros(1, 4, 2), f[None], d[None]),
        "conv2d": lambda: F.conv2d(lib.ones(1, 1, 4, 4), lib.ones(1, 1, 2, 2, dtype=lib.float64)),
        "conv1d": lambda: F.conv1d(lib.ones(1, 1, 4), lib.ones(1, 1, 2, dtype=lib.float64)),
        "conv_bias": lambda: F.conv2d(lib.ones(1, 1, 4, 4), lib.ones(1, 1, 2, 2), lib.zeros(1, dtype=lib.float64)),
        "nn_conv": lambda: lib.nn.Conv2d(1, 1, 2)(lib.ones(1, 1, 3, 3, dtype=lib.float64)),
        "conv_t": lambda: F.conv_transpose2d(lib.ones(1, 1, 4, 4), lib.ones(1, 1, 2, 2, dtype=lib.float64)),
        "einsum": lambda: lib.einsum("ij,jk->ik", f, d), "tensordot": lambda: lib.tensordot(f, d, 1),
        "inner": lambda: lib.inner(f, d.T),
        "add": lambda: str((f + lib.ones(4, 3, dtype=lib.float64)).dtype).split(".")[-1],
        "outer": lambda: str(lib.outer(f[0], d[0]).dtype).split(".")[-1],
    }
    out = {}
    for name, fn in cases.items():
        try:
            out[name] = fn()
        except RuntimeError as e:
            out[name] = str(e).splitlines()[0]
    return out


def test_products_refuse_mixed_dtypes():
    got = mixed_errors(mt)
    assert got["mm"] == got["matmul"] == got["vecmat"] == got["linear"] == got["linear3d"] == \
        "expected m1 and m2 to have the same dtype, but got: float != double"
    assert got["matmul_rev"] == "expected m1 and m2 to have the same dtype, but got: double != float"
    assert got["int"] == "expected m1 and m2 to have the same dtype, but got: long int != float"
    assert got["half"] == "expected m1 and m2 to have the same dtype, but got: float != c10::BFloat16"
    assert got["bmm"] == got["matmul3d"] == got["baddbmm"] == got["conv2d"] == got["conv1d"] == got["conv_t"] \
        == got["einsum"] == "expected scalar type Float but found Double"
    assert got["dot"] == got["vdot"] == "dot : expected both vectors to have same dtype, but found Float and Double"
    assert got["mv"] == got["matvec"] == \
        "addmv input tensors must have the same dtype, but got Double, Float, and Double"
    assert got["addmv"] == "addmv input tensors must have the same dtype, but got Float, Float, and Double"
    assert got["addmv_self"] == "addmv input tensors must have the same dtype, but got Double, Float, and Float"
    assert got["addmv_mat"] == "addmv input tensors must have the same dtype, but got Double, Double, and BFloat16"
    assert got["linear_bias"] == got["addmm_self"] == "self and mat2 must have the same dtype, but got Double and Float"
    assert got["addmm"] == got["addbmm"] == "self and mat2 must have the same dtype, but got Float and Double"
    assert got["nn_linear"] == "mat1 and mat2 must have the same dtype, but got Double and Float"
    assert got["conv_bias"] == "Input type (float) and bias type (double) should be the same"
    assert got["nn_conv"] == "Input type (double) and bias type (float) should be the same"
    assert got["tensordot"] == got["inner"] == "both inputs should have same dtype"
    assert got["add"] == got["outer"] == "float64"


def test_same_dtype_products_and_autocast_still_run():
    f = mt.ones(4, 3)
    assert (f @ mt.ones(3, 2)).tolist() == [[3.0, 3.0]] * 4
    with mt.autocast("cpu", dtype=mt.bfloat16):  # the float32 operands are cast before the check
        assert (f @ mt.ones(3, 2)).dtype is mt.bfloat16
        assert mt.nn.functional.linear(f, mt.ones(2, 3), mt.zeros(2)).dtype is mt.bfloat16


@pytest.mark.torch
def test_products_refuse_mixed_dtypes_as_torch():
    torch = pytest.importorskip("torch")
    assert mixed_errors(mt) == mixed_errors(torch)
