"""The zero-preserving unary ops on sparse COO tensors (functional/sparse_unary.py): values against a dense
NumPy float64 reference, the result's pattern (coalesced), gradients by finite differences and sparse on the
input's cells, PyTorch's refusal of the ops with f(0) != 0, and PyTorch itself where installed."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import minitensor as mt
from minitensor.testing import gradcheck

INDICES = np.array([[1, 0, 1, 1, 2], [2, 0, 0, 2, 1]], dtype=np.int64)  # (1, 2) twice: uncoalesced
VALUES = np.array([-0.5, 0.3, 0.2, 0.7, -0.45])
SHAPE = (3, 3)

# name -> the NumPy float64 reference (f(0) = 0 for each)
FLOAT_OPS = {
    "abs": np.abs, "sqrt": np.sqrt, "square": np.square, "sin": np.sin, "tan": np.tan, "tanh": np.tanh,
    "asin": np.arcsin, "atan": np.arctan, "sinh": np.sinh, "asinh": np.arcsinh, "atanh": np.arctanh,
    "expm1": np.expm1, "log1p": np.log1p, "erf": special.erf, "erfinv": special.erfinv,
    "frac": lambda x: x - np.trunc(x), "relu": lambda x: np.maximum(x, 0), "nan_to_num": np.nan_to_num,
    "sign": np.sign, "sgn": np.sign, "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "deg2rad": np.deg2rad, "rad2deg": np.rad2deg,
}
BOOL_OPS = {"isnan": np.isnan, "isinf": np.isinf, "signbit": np.signbit, "isposinf": np.isposinf,
            "isneginf": np.isneginf}
SMOOTH = ["abs", "sqrt", "square", "sin", "tan", "tanh", "asin", "atan", "sinh", "asinh", "atanh", "expm1",
          "log1p", "erf", "erfinv", "frac", "relu", "nan_to_num", "deg2rad", "rad2deg"]


def dense_reference(f, values=VALUES):
    out = np.zeros(SHAPE)
    np.add.at(out, tuple(INDICES), values)
    cells = np.zeros(SHAPE, dtype=bool)
    cells[tuple(INDICES)] = True
    return np.where(cells, f(out), f(np.zeros(SHAPE))), cells


def sparse(values=VALUES, dtype=mt.float64, requires_grad=False):
    return mt.sparse_coo_tensor(INDICES, mt.tensor(values, dtype=dtype), SHAPE, requires_grad=requires_grad)


@pytest.mark.parametrize("name", sorted(FLOAT_OPS) + sorted(BOOL_OPS))
def test_values_match_dense_numpy_on_the_coalesced_pattern(name):
    ref, cells = dense_reference({**FLOAT_OPS, **BOOL_OPS}[name])
    y = getattr(mt, name)(sparse())
    assert y.is_sparse and y.is_coalesced()
    assert y.dtype == (mt.bool if name in BOOL_OPS else mt.float64)
    np.testing.assert_array_equal(y._indices().numpy(), np.stack(np.nonzero(cells)))
    np.testing.assert_allclose(y.to_dense().numpy(), ref, rtol=1e-12, atol=1e-15)


def test_integer_inputs_keep_or_promote_their_dtype():
    x = sparse(np.array([-2, 3, 1, 0, 4]), dtype=mt.int64)
    assert mt.abs(x).dtype == mt.int64 and mt.sign(x).dtype == mt.int64 and mt.floor(x).dtype == mt.int64
    assert mt.sin(x).dtype == mt.get_default_dtype() and mt.isnan(x).dtype == mt.bool
    np.testing.assert_array_equal(mt.abs(x).to_dense().numpy(), np.abs(x.to_dense().numpy()))


@pytest.mark.parametrize("name", SMOOTH)
def test_gradients_by_finite_differences_and_sparse_on_the_input_cells(name):
    f = getattr(mt, name)
    v = mt.tensor(VALUES, requires_grad=True)
    gradcheck(lambda v: f(mt.sparse_coo_tensor(INDICES, v, SHAPE)).to_dense(), (v,))
    s = sparse(requires_grad=True)
    f(s).to_dense().sum().backward()
    assert s.grad.is_sparse
    _, cells = dense_reference(np.abs)
    np.testing.assert_array_equal(s.grad.coalesce()._indices().numpy(), np.stack(np.nonzero(cells)))


def test_piecewise_constant_gradient_is_zero():
    s = sparse(requires_grad=True)
    mt.floor(s).to_dense().sum().backward()
    assert s.grad.is_sparse and not s.grad.to_dense().numpy().any()


@pytest.mark.parametrize("op", [mt.exp, mt.cos, mt.sigmoid, mt.log, mt.isfinite, mt.logical_not,
                                lambda s: s == 0.5, lambda s: s > 0])
def test_ops_that_fill_every_cell_refuse(op):
    with pytest.raises(NotImplementedError, match="SparseCPU"):
        op(sparse())


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(FLOAT_OPS) + sorted(BOOL_OPS))
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_matches_pytorch(name, dtype):
    torch = pytest.importorskip("torch")
    if name == "frac" and dtype == "int64":
        pytest.skip("frac refuses integers, dense or sparse")
    values = VALUES * 4 if dtype == "int64" else VALUES
    ours = getattr(mt, name)(mt.sparse_coo_tensor(INDICES, mt.tensor(values).to(getattr(mt, dtype)), SHAPE))
    theirs = getattr(torch, name)(torch.sparse_coo_tensor(torch.tensor(INDICES),
                                                          torch.tensor(values).to(getattr(torch, dtype)), SHAPE))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.is_coalesced() == theirs.is_coalesced()
    np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
    np.testing.assert_allclose(ours._values().numpy().astype(np.float64),
                               theirs._values().numpy().astype(np.float64), rtol=1e-6, equal_nan=True)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["abs", "log1p", "frac", "relu", "square", "deg2rad", "floor"])
def test_gradient_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (mt, torch):
        s = lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES), SHAPE).requires_grad_()
        getattr(lib, name)(s).to_dense().sum().backward()
        assert s.grad.is_sparse
        grads.append(s.grad.to_dense().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["exp", "cos", "isfinite", "logical_not"])
def test_refusals_match_pytorch(name):
    torch = pytest.importorskip("torch")
    with pytest.raises(NotImplementedError):
        getattr(torch, name)(torch.sparse_coo_tensor(torch.tensor(INDICES), torch.tensor(VALUES), SHAPE))
    with pytest.raises(NotImplementedError):
        getattr(mt, name)(sparse())

