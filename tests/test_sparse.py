"""Sparse COO tensors: construction, coalescing, conversions and the sparse @ dense product against dense
NumPy float64 references, gradients by finite differences, PyTorch's errors, and PyTorch itself where
installed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
from minitensor.testing import gradcheck


@st.composite
def coo(draw, max_side=6):
    """(indices (2, nnz) int64 with repeats, values (nnz,) float64, shape) of a random sparse matrix."""
    n, m = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
    nnz = draw(st.integers(0, 2 * n * m))  # more entries than cells: repeats
    seed = draw(st.integers(0, 2 ** 31))
    rng = np.random.default_rng(seed)
    indices = np.stack([rng.integers(0, n, nnz), rng.integers(0, m, nnz)]).astype(np.int64)
    return indices, rng.standard_normal(nnz), (n, m)


def dense_reference(indices, values, shape):
    out = np.zeros(shape + values.shape[1:])
    np.add.at(out, tuple(indices), values)
    return out


@settings(max_examples=40, deadline=None)
@given(coo(), st.integers(1, 5))
def test_to_dense_coalesce_and_mm_match_dense_numpy(case, k):
    indices, values, shape = case
    a = mt.sparse_coo_tensor(indices, values, shape)
    ref = dense_reference(indices, values, shape)
    assert a.is_sparse and a.layout is mt.sparse_coo and a.shape == shape and a.dtype == mt.float64
    assert a._nnz() == values.shape[0] and not a.is_coalesced()
    np.testing.assert_allclose(a.to_dense().numpy(), ref, rtol=1e-12, atol=1e-12)
    c = a.coalesce()
    assert c.is_coalesced()
    lin = c.indices().numpy()[0] * shape[1] + c.indices().numpy()[1]
    assert np.all(np.diff(lin) > 0)  # sorted, unique
    np.testing.assert_allclose(c.to_dense().numpy(), ref, rtol=1e-12, atol=1e-12)
    assert c.values().shape == (c._nnz(),)
    x = np.random.default_rng(k).standard_normal((shape[1], k))
    for product in (mt.sparse.mm(a, mt.tensor(x)), mt.mm(a, mt.tensor(x)), a @ mt.tensor(x),
                    mt.spmm(c, mt.tensor(x))):
        assert not product.is_sparse
        np.testing.assert_allclose(product.numpy(), ref @ x, rtol=1e-10, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.floats(0, 1), st.integers(0, 2 ** 31))
def test_to_sparse_keeps_the_nonzeros_in_order(shape, density, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * (rng.random(shape) < density)
    for sparse_dim in range(1, len(shape) + 1):
        s = mt.tensor(x).to_sparse(sparse_dim)
        assert s.is_coalesced() and s.sparse_dim() == sparse_dim and s.dense_dim() == len(shape) - sparse_dim
        rows = np.any(x != 0, axis=tuple(range(sparse_dim, len(shape))))
        np.testing.assert_array_equal(s.indices().numpy(), np.stack(np.nonzero(rows)))
        np.testing.assert_array_equal(s.to_dense().numpy(), x)


def test_hybrid_values_and_inferred_size():
    values = np.arange(6.0).reshape(3, 2)
    a = mt.sparse_coo_tensor([[0, 2, 0]], values)
    assert a.shape == (3, 2) and a.sparse_dim() == 1 and a.dense_dim() == 1
    np.testing.assert_array_equal(a.to_dense().numpy(), [[4, 6], [0, 0], [2, 3]])
    np.testing.assert_array_equal(a.coalesce().values().numpy(), [[4, 6], [2, 3]])


def test_gradcheck_dense_operand_and_values():
    rng = np.random.default_rng(0)
    indices = mt.tensor([[0, 1, 2, 0, 2], [1, 0, 3, 1, 3]])
    values = mt.tensor(rng.standard_normal(5), requires_grad=True)
    x = mt.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    gradcheck(lambda v, x: mt.sparse.mm(mt.sparse_coo_tensor(indices, v, (3, 4)), x).tanh(), (values, x))
    gradcheck(lambda v: mt.sparse_coo_tensor(indices, v, (3, 4)).coalesce().to_dense().sin(), (values,))
    gradcheck(lambda v: mt.sparse.sum(mt.sparse_coo_tensor(indices, v, (3, 4)), 1).to_dense() ** 2, (values,))
    gradcheck(lambda v: mt.sparse.sum(mt.sparse_coo_tensor(indices, v, (3, 4))) ** 2, (values,))
    gradcheck(lambda v: mt.sparse_coo_tensor(indices, v, (3, 4)).coalesce().values() ** 2, (values,))
    gradcheck(lambda x: (x.to_sparse() @ mt.ones(3, 2, dtype=mt.float64)) * x.sum(), (x,))


def test_a_sparse_leaf_gets_a_sparse_gradient_on_its_entries_and_accumulates():
    indices = np.array([[0, 1, 1, 0], [2, 0, 2, 2]])
    a = mt.sparse_coo_tensor(indices, [1.0, 2.0, 3.0, 4.0], (2, 3), dtype=mt.float64, requires_grad=True)
    x = mt.tensor(np.random.default_rng(1).standard_normal((3, 2)))
    gy = np.random.default_rng(2).standard_normal((2, 2))
    ((a @ x) * mt.tensor(gy)).sum().backward()
    assert a.is_leaf and a.grad.is_sparse and a.grad.shape == (2, 3)
    mask = dense_reference(indices, np.ones(4), (2, 3)) > 0
    expected = mask * (gy @ x.numpy().T)  # the gradient of each cell, on the cells a has
    np.testing.assert_allclose(a.grad.to_dense().numpy(), expected, rtol=1e-12)
    (a @ x).sum().backward()  # a second backward adds
    np.testing.assert_allclose(a.grad.to_dense().numpy(), expected + mask * (np.ones((2, 2)) @ x.numpy().T),
                               rtol=1e-12)


def test_fan_in_of_one_sparse_tensor_adds_its_gradients():
    v = mt.tensor([1.0, -2.0, 0.5], dtype=mt.float64, requires_grad=True)
    a = mt.sparse_coo_tensor([[0, 1, 1], [1, 0, 1]], v, (2, 2))
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=mt.float64)
    (mt.sparse.mm(a, x).sum() + a.to_dense().sum() * 3).backward()
    np.testing.assert_allclose(v.grad.numpy(), [3 + 7, 3 + 3, 3 + 7])


def test_layout_queries_and_conversions_of_dense_tensors():
    x = mt.ones(2, 3)
    assert not x.is_sparse and x.layout is mt.strided and repr(mt.strided) == "minitensor.strided"
    assert x.to_dense() is x and x.sparse_dim() == 0 and x.dense_dim() == 2
    s = x.to_sparse()
    assert s.to_sparse() is s and s.to_sparse_coo() is s and s.coalesce() is s
    assert s.to("cpu") is s and s.detach().is_sparse and s.numel() == 6 and s.dim() == 2 and s.size(1) == 3
    assert "layout=minitensor.sparse_coo" in repr(s) and "nnz=6" in repr(s)


@pytest.mark.parametrize("op", [lambda s: s.exp(), lambda s: s + 1, lambda s: s * s, lambda s: s.sum(),
                                lambda s: s.reshape(-1), lambda s: mt.ones(3, 3, dtype=mt.float64) @ s, lambda s: s[0],
                                lambda s: s.zero_(),
                                lambda s: s.__setitem__(0, 1.0), lambda s: s > 0, lambda s: mt.cat([s, s])])
def test_dense_ops_refuse_sparse_tensors_naming_the_layout(op):
    s = mt.eye(3, dtype=mt.float64).to_sparse()
    with pytest.raises(NotImplementedError, match="Could not run '.+' with arguments from the 'SparseCPU' backend"):
        op(s)


def test_the_error_names_the_op():
    s = mt.eye(3).to_sparse()
    with pytest.raises(NotImplementedError, match="'Exp'"):
        s.exp()
    with pytest.raises(NotImplementedError, match="'greater'"):  # the ops without a gradient share a Function
        s > 0


def test_dtype_casts_and_vectors():
    v = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = mt.sparse_coo_tensor([[0, 1, 1], [1, 0, 1]], v, (2, 2))
    d = a.double()
    assert d.is_sparse and d.dtype == mt.float64 and a.to(mt.float16).dtype == mt.float16
    y = d @ mt.tensor([1.0, 10.0], dtype=mt.float64)  # sparse @ vector: a vector
    assert y.shape == (2,) and y.tolist() == [10.0, 32.0]
    y.sum().backward()
    assert v.grad.dtype == mt.float32 and v.grad.tolist() == [10.0, 1.0, 10.0]
    assert a.to_dense(mt.float64).dtype == mt.float64
    assert mt.sparse_coo_tensor(mt.tensor([[0, 1]], dtype=mt.int32), [1.0, 2.0])._indices().dtype == mt.int64


def test_clone_copies_both_arrays_and_passes_the_gradient():
    v = mt.tensor([1.0, 2.0], requires_grad=True)
    a = mt.sparse_coo_tensor([[0, 1]], v, (2,))
    c = a.clone()
    assert c.is_sparse and c._values().tolist() == [1.0, 2.0]
    assert not np.shares_memory(c._values().numpy(), a._values().numpy())
    c.to_dense().mul(mt.tensor([3.0, 4.0])).sum().backward()
    assert v.grad.tolist() == [3.0, 4.0]


@pytest.mark.parametrize("make, error, match", [
    (lambda: mt.sparse_coo_tensor([[0, 3]], [1.0, 2.0], (3,)), RuntimeError, "for dim 0, size is 3 but found index 3"),
    (lambda: mt.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (3,)), RuntimeError, "negative index -1 for dim 0"),
    (lambda: mt.sparse_coo_tensor([[0, 1]], [1.0], (3,)), RuntimeError, "nnz from indices: 2, nnz from values: 1"),
    (lambda: mt.sparse_coo_tensor([0, 1], [1.0, 2.0], (3,)), RuntimeError, "indices must be sparse_dim x nnz"),
    (lambda: mt.sparse_coo_tensor([[0.0, 1.0]], [1.0, 2.0]), RuntimeError, "int64"),
    (lambda: mt.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3, 3)), RuntimeError,
     "len.size. = 2, sparse_dim = 1, dense_dim = 0"),
    (lambda: mt.eye(2).to_sparse().numpy(), TypeError, "can't convert Sparse layout tensor to numpy"),
    (lambda: mt.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0]).indices(), RuntimeError, "uncoalesced"),
    (lambda: mt.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0]).values(), RuntimeError, "uncoalesced"),
    (lambda: mt.sparse.mm(mt.eye(2).to_sparse(), mt.ones(3, 2)), RuntimeError, r"cannot be multiplied \(2x2 and 3x2\)"),
    (lambda: mt.sparse.mm(mt.eye(2).to_sparse(), mt.ones(2, 2, dtype=mt.float64)), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: mt.sparse.mm(mt.eye(2), mt.ones(2, 2)), NotImplementedError, "mat1 must be a sparse COO"),
    (lambda: mt.sparse.mm(mt.eye(2).to_sparse(), mt.ones(2)), RuntimeError, "expected 2-D"),
    (lambda: mt.ones(2).coalesce(), RuntimeError, "expected sparse coordinate tensor layout but got Strided"),
    (lambda: mt.ones(2).is_coalesced(), RuntimeError, "expected sparse coordinate tensor layout"),
    (lambda: mt.ones(2)._nnz(), NotImplementedError, "_nnz"),
    (lambda: mt.sparse.sum(mt.eye(2).to_sparse(), 2), IndexError, "Dimension out of range"),
    (lambda: mt.ones(2, 2).to_sparse(3), RuntimeError, "sparse_dim argument must be in"),
])
def test_bad_input_raises_pytorchs_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_sparse_sum_over_every_dim_and_some():
    indices = np.array([[0, 1, 1, 0], [2, 0, 2, 2]])
    values = np.array([1.0, 2.0, 3.0, 4.0])
    a = mt.sparse_coo_tensor(indices, values, (2, 3))
    assert not mt.sparse.sum(a).is_sparse and mt.sparse.sum(a).item() == 10.0
    ref = dense_reference(indices, values, (2, 3))
    for dim in (0, 1, -1, (0, 1)):
        got = mt.sparse.sum(a, dim)
        np.testing.assert_allclose(got.to_dense().numpy(), ref.sum(axis=dim))


@pytest.mark.gpu
def test_sparse_on_cuda_matches_the_cpu():
    if not mt.cuda.is_available():
        pytest.skip("no CUDA device")
    indices = mt.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    a = mt.sparse_coo_tensor(indices, [1.0, 2.0, 3.0, 4.0], (2, 3), requires_grad=True)
    x = mt.randn(3, 5)
    xg = x.cuda().requires_grad_()
    ag = a.detach().cuda().requires_grad_()
    assert ag.is_sparse and ag.device.type == "cuda"
    y, yg = a @ x, ag @ xg
    np.testing.assert_allclose(yg.detach().cpu().numpy(), y.detach().numpy(), rtol=1e-5)
    y.sum().backward()
    yg.sum().backward()
    np.testing.assert_allclose(ag.grad.cpu().to_dense().numpy(), a.grad.to_dense().numpy(), rtol=1e-5)
    np.testing.assert_allclose(ag.detach().coalesce().to_dense().cpu().numpy(), a.detach().to_dense().numpy())


@pytest.mark.torch
def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    indices = np.stack([rng.integers(0, 4, 9), rng.integers(0, 5, 9)])
    values, x = rng.standard_normal(9), rng.standard_normal((5, 3))
    ours_v, theirs_v = mt.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    ours_x, theirs_x = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = mt.sparse_coo_tensor(indices, ours_v, (4, 5))
    theirs = torch.sparse_coo_tensor(torch.tensor(indices), theirs_v, (4, 5))
    (mt.sparse.mm(ours, ours_x) ** 2).sum().backward()
    (torch.sparse.mm(theirs, theirs_x) ** 2).sum().backward()
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours_v.grad.numpy(), theirs_v.grad.numpy(), rtol=1e-10)
    oc, tc = ours.detach().coalesce(), theirs.detach().coalesce()
    np.testing.assert_array_equal(oc.indices().numpy(), tc.indices().numpy())
    np.testing.assert_allclose(oc.values().numpy(), tc.values().numpy(), rtol=1e-12)
    assert ours.is_coalesced() == theirs.is_coalesced() and str(ours.layout)[-10:] == str(theirs.layout)[-10:]
    for exc, make in ((NotImplementedError, lambda lib, s: s.exp()),
                      (RuntimeError, lambda lib, s: s.indices())):
        with pytest.raises(exc):
            make(torch, theirs.detach())
        with pytest.raises(exc):
            make(mt, ours.detach())
