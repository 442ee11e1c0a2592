"""Sparse COO tensors: construction, coalescing, conversions and the sparse @ dense product against dense
NumPy float64 references, gradients by finite differences, PyTorch's errors, and PyTorch itself where
installed."""
from __future__ import annotations

import itertools

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


@pytest.mark.parametrize("op", [lambda s: s.exp(), lambda s: s.cumsum(0), lambda s: s // 2, lambda s: s.mean(),
                                lambda s: s.reshape(-1), lambda s: s[0],
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


# ------------------------------------------------------------------------------------- sparse arithmetic
def _pair(seed, shape=(4, 5), nnz=9, hybrid=()):
    """Two random uncoalesced sparse operands of one shape, as (indices, values) each, float64."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(2):
        idx = np.stack([rng.integers(0, n, nnz) for n in shape]).astype(np.int64)
        out.append((idx, rng.standard_normal((nnz, *hybrid))))
    return out


def _sp(case, shape, **kw):
    return mt.sparse_coo_tensor(case[0], case[1], shape, **kw)


@settings(max_examples=30, deadline=None)
@given(coo(), st.integers(0, 2 ** 31), st.sampled_from([1, 2, -0.5]))
def test_add_and_sub_match_dense_numpy(case, seed, alpha):
    indices, values, shape = case
    a = mt.sparse_coo_tensor(indices, values, shape)
    rng = np.random.default_rng(seed)
    other = (rng.integers(0, shape[0], 5), rng.integers(0, shape[1], 5))
    bv = rng.standard_normal(5)
    b = mt.sparse_coo_tensor(np.stack(other), bv, shape)
    ra, rb, d = dense_reference(indices, values, shape), dense_reference(np.stack(other), bv, shape), \
        rng.standard_normal(shape)
    for got, ref in ((a + b, ra + rb), (a - b, ra - rb), (a.add(b, alpha=alpha), ra + alpha * rb),
                     (a.coalesce() + b.coalesce(), ra + rb)):
        assert got.is_sparse and got.shape == shape
        np.testing.assert_allclose(got.to_dense().numpy(), ref, rtol=1e-12, atol=1e-12)
    assert (a.coalesce() + b.coalesce()).is_coalesced()  # PyTorch merges two coalesced operands
    for got, ref in ((mt.tensor(d) + a, d + ra), (mt.tensor(d) - a, d - ra),
                     (mt.add(mt.tensor(d), a, alpha=alpha), d + alpha * ra)):
        assert not got.is_sparse
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(coo(), st.integers(0, 2 ** 31))
def test_mul_div_pow_neg_match_dense_numpy(case, seed):
    indices, values, shape = case
    a = mt.sparse_coo_tensor(indices, values, shape)
    ra = dense_reference(indices, values, shape)
    rng = np.random.default_rng(seed)
    d, row = rng.standard_normal(shape), rng.standard_normal(shape[1])
    (bi, bv), _ = _pair(seed, shape, 7)
    b, rb = mt.sparse_coo_tensor(bi, bv, shape), dense_reference(bi, bv, shape)
    for got, ref in ((a * 2.5, ra * 2.5), (3 * a, 3 * ra), (a * mt.tensor(-2.0, dtype=mt.float64), -2 * ra),
                     (a * mt.tensor(d), ra * d), (mt.tensor(d) * a, ra * d), (a * mt.tensor(row), ra * row),
                     (a * b, ra * rb), (a / 4, ra / 4), (a / mt.tensor(4.0, dtype=mt.float64), ra / 4),
                     (a ** 2, ra ** 2), (a.pow(3), ra ** 3), (-a, -ra), (a.neg(), -ra)):
        assert got.is_sparse and got.shape == shape and got.dtype == mt.float64
        np.testing.assert_allclose(got.to_dense().numpy(), ref, rtol=1e-12, atol=1e-12)


def test_integer_sparse_tensors_promote_as_pytorch():
    a = mt.sparse_coo_tensor([[0, 1, 0], [1, 2, 1]], mt.ones(3), (3, 3), dtype=mt.int64)
    assert a.dtype == mt.int64
    eye = mt.eye(3) + a  # float32 dense + int64 sparse: float32 dense
    assert not eye.is_sparse and eye.dtype == mt.float32
    np.testing.assert_array_equal(eye.numpy(), np.eye(3) + [[0, 2, 0], [0, 0, 1], [0, 0, 0]])
    assert (a * 2).dtype == mt.int64 and (a * 2.5).dtype == mt.float32 and (a / 2).dtype == mt.float32
    assert (a + a).dtype == mt.int64 and (-a).to_dense().tolist()[0] == [0, -2, 0]
    total, rows = mt.sum(a), mt.sum(a, dim=1)
    assert not total.is_sparse and total.dtype == mt.int64 and total.item() == 3
    assert rows.is_sparse and rows.dtype == mt.int64 and rows.to_dense().tolist() == [2, 1, 0]
    assert mt.sum(a.int(), 0).dtype == mt.int64 and a.bool().sum().item() == 3 and a.bool().coalesce().sum().item() == 2


@pytest.mark.parametrize("shape, hybrid", [((4, 5), ()), ((3, 4, 2), ()), ((4, 3), (2,)), ((2, 3), (2, 3))])
def test_sum_over_any_dims_matches_dense_numpy(shape, hybrid):
    (idx, v), _ = _pair(7, shape, 11, hybrid)
    a = mt.sparse_coo_tensor(idx, v, shape + hybrid)
    ref = dense_reference(idx, v, shape)
    ndim = len(shape + hybrid)
    dims = [d for r in range(1, ndim + 1) for d in itertools.combinations(range(ndim), r)]
    for dim in dims:
        for keepdim in (False, True):
            got = a.sum(dim, keepdim=keepdim)
            assert got.is_sparse == (not all(d in dim for d in range(len(shape))))
            np.testing.assert_allclose(got.to_dense().numpy(), ref.sum(axis=dim, keepdims=keepdim),
                                       rtol=1e-12, atol=1e-12)
    assert a.sum().shape == () and np.isclose(mt.sum(a).item(), ref.sum())
    np.testing.assert_allclose(mt.sparse.sum(a, -1).to_dense().numpy(), ref.sum(-1), rtol=1e-12)


def test_transpose_t_and_permute_of_sparse_tensors():
    (idx, v), _ = _pair(3, (3, 4, 2), 8)
    a = mt.sparse_coo_tensor(idx, v, (3, 4, 2))
    ref = dense_reference(idx, v, (3, 4, 2))
    for got, r in ((a.transpose(0, 2), ref.transpose(2, 1, 0)), (a.permute(1, 2, 0), ref.transpose(1, 2, 0)),
                   (a.sum(2).t(), ref.sum(2).T), (a.sum(2).T, ref.sum(2).T),
                   (mt.transpose(a, 1, 0), ref.transpose(1, 0, 2))):
        assert got.is_sparse
        np.testing.assert_allclose(got.to_dense().numpy(), r, rtol=1e-12)
    h = mt.sparse_coo_tensor([[0, 2]], np.arange(12.0).reshape(2, 2, 3), (3, 2, 3))
    np.testing.assert_array_equal(h.transpose(1, 2).to_dense().numpy(), h.to_dense().numpy().transpose(0, 2, 1))
    with pytest.raises(RuntimeError, match="sparse dims"):
        h.transpose(0, 1)


@settings(max_examples=30, deadline=None)
@given(coo(), st.integers(1, 5), st.integers(0, 2 ** 31))
def test_products_with_a_sparse_operand_match_dense_numpy(case, m, seed):
    indices, values, shape = case
    a, ra = mt.sparse_coo_tensor(indices, values, shape), dense_reference(indices, values, shape)
    rng = np.random.default_rng(seed)
    bi = np.stack([rng.integers(0, shape[1], 6), rng.integers(0, m, 6)])
    bv = rng.standard_normal(6)
    b, rb = mt.sparse_coo_tensor(bi, bv, (shape[1], m)), dense_reference(bi, bv, (shape[1], m))
    for got in (a @ b, mt.sparse.mm(a, b), mt.mm(a, b), mt.spmm(a, b)):
        assert got.is_sparse and got.is_coalesced() and got.shape == (shape[0], m)
        np.testing.assert_allclose(got.to_dense().numpy(), ra @ rb, rtol=1e-10, atol=1e-12)
    d, vec = rng.standard_normal((m, shape[0])), rng.standard_normal(shape[0])
    for got, ref in ((mt.tensor(d) @ a, d @ ra), (mt.sparse.mm(mt.tensor(d), a), d @ ra),
                     (mt.tensor(vec) @ a, vec @ ra)):
        assert not got.is_sparse
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_the_gcn_normalisation_runs_as_in_pytorchs_example():
    """pytorch/examples' GCN: eye + sparse, sum over rows, diag(...).to_sparse() on both sides, to_sparse."""
    rng = np.random.default_rng(5)
    edges = rng.integers(0, 6, (10, 2)).astype(np.int32)
    adj = mt.sparse_coo_tensor(edges.T, mt.ones(10), (6, 6), dtype=mt.int64)
    adj = mt.eye(6) + adj
    deg = mt.diag(mt.sqrt(1 / mt.sum(adj, dim=1))).to_sparse()
    norm = (deg @ adj @ deg).to_sparse()
    a = np.eye(6)
    np.add.at(a, (edges[:, 0], edges[:, 1]), 1)
    s = np.diag(1 / np.sqrt(a.sum(1)))
    assert norm.is_sparse
    np.testing.assert_allclose(norm.to_dense().numpy(), s @ a @ s, rtol=1e-6)


@pytest.mark.parametrize("make, error, match", [
    (lambda s, d: s + d, RuntimeError, r"add\(sparse, dense\) is not supported"),
    (lambda s, d: s + 1, RuntimeError, r"add\(sparse, dense\) is not supported"),
    (lambda s, d: 1 - s, RuntimeError, "self has size \\[\\] while other has size \\[3, 3\\]"),
    (lambda s, d: mt.ones(3) + s, RuntimeError, "does not currently support broadcasting"),
    (lambda s, d: s + mt.eye(2).to_sparse().double(), RuntimeError, "same size"),
    (lambda s, d: s * mt.eye(2).to_sparse().double(), RuntimeError, "equal dimensionality"),
    (lambda s, d: s * mt.ones(2, 3, 3, dtype=mt.float64), NotImplementedError, "larger shape"),
    (lambda s, d: s / s, RuntimeError, "scalar or zero-dim dense tensor divisor"),
    (lambda s, d: d / s, RuntimeError, "scalar or zero-dim dense tensor divisor"),
    (lambda s, d: s ** 0, RuntimeError, "zeroth power"),
    (lambda s, d: s ** mt.tensor(2.0), NotImplementedError, "pow.Tensor_Tensor"),
    (lambda s, d: mt.sparse.mm(s, mt.sparse_coo_tensor([[0], [0], [0]], [1.0], (3, 3, 3))), RuntimeError,
     "2 sparse dims"),
])
def test_sparse_arithmetic_raises_pytorchs_errors(make, error, match):
    s = mt.eye(3, dtype=mt.float64).to_sparse()
    with pytest.raises(error, match=match):
        make(s, mt.ones(3, 3, dtype=mt.float64))


def mt_or_torch(t):
    """minitensor for its tensors, torch for PyTorch's: one lambda runs under both."""
    return mt if isinstance(t, mt.Tensor) else pytest.importorskip("torch")


_IDX = np.array([[0, 1, 2, 0, 2, 1], [1, 0, 3, 1, 3, 3]])  # (0, 1) and (2, 3) twice: uncoalesced
_OTHER = np.array([[0, 2, 1, 0], [1, 3, 2, 0]])
_GRAD_CASES = {  # op on two sparse (3, 4) tensors a, b (values v, w) and a dense (3, 4) x: a dense result
    "add": lambda a, b, x: (a + b).to_dense(),
    "sub alpha": lambda a, b, x: a.sub(b, alpha=0.5).to_dense(),
    "dense+sparse": lambda a, b, x: x + a,
    "dense-sparse": lambda a, b, x: x - a * 2,
    "mul scalar": lambda a, b, x: (a * 3).to_dense(),
    "mul dense": lambda a, b, x: (a * x).to_dense(),
    "mul sparse": lambda a, b, x: (a * b).to_dense(),
    "div": lambda a, b, x: (a / 4).to_dense(),
    "pow": lambda a, b, x: (a ** 3).to_dense(),
    "neg": lambda a, b, x: (-a).to_dense(),
    "sum": lambda a, b, x: a.sum() * x,
    "sum dim": lambda a, b, x: mt_or_torch(a).sparse.sum(a, 0).to_dense() ** 2,
    "t": lambda a, b, x: a.t().to_dense(),
    "sparse@sparse": lambda a, b, x: (a @ b.t()).to_dense() ** 2,
    "dense@sparse": lambda a, b, x: (x.t() @ a) ** 2,
}


@pytest.mark.parametrize("name", list(_GRAD_CASES))
def test_gradients_of_sparse_ops_match_finite_differences(name):
    rng = np.random.default_rng(11)
    v = mt.tensor(rng.standard_normal(_IDX.shape[1]), requires_grad=True)
    w = mt.tensor(rng.standard_normal(_OTHER.shape[1]), requires_grad=True)
    x = mt.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    op = _GRAD_CASES[name]
    gradcheck(lambda v, w, x: op(mt.sparse_coo_tensor(_IDX, v, (3, 4)), mt.sparse_coo_tensor(_OTHER, w, (3, 4)), x)
              .sin(), (v, w, x))


@pytest.mark.parametrize("shape, hybrid, dims, keepdim", [((3, 4, 2), (), (1,), False), ((3, 4), (2,), (0,), True),
                                                          ((3, 4), (2,), (2,), False), ((3, 4), (2,), (0, 1), False),
                                                          ((3, 4), (2,), (1, 2), True)])
def test_gradient_of_sum_over_sparse_and_dense_dims(shape, hybrid, dims, keepdim):
    (idx, v), _ = _pair(9, shape, 7, hybrid)
    values = mt.tensor(v, requires_grad=True)
    gradcheck(lambda v: mt.sparse_coo_tensor(idx, v, shape + hybrid).sum(dims, keepdim=keepdim).to_dense().sin(),
              (values,))


def test_a_sparse_leaf_gets_sparse_gradients_from_arithmetic():
    a = mt.sparse_coo_tensor(_IDX, np.arange(1.0, 7.0), (3, 4)).coalesce().requires_grad_()
    x = mt.tensor(np.arange(12.0).reshape(3, 4))
    ((a * 2 + a * x).to_dense() + x - a).sum().backward()
    assert a.grad.is_sparse
    mask = a.detach().to_dense().numpy() != 0
    np.testing.assert_allclose(a.grad.to_dense().numpy(), mask * (2 + x.numpy() - 1), rtol=1e-12)


_TORCH_CASES = {**_GRAD_CASES,
                "sum dim 1": lambda a, b, x: mt_or_torch(a).sparse.sum(a, 1).to_dense(),
                "transpose": lambda a, b, x: a.transpose(0, 1).to_dense(),
                "sparse.mm sparse": lambda a, b, x: mt_or_torch(a).sparse.mm(a, b.t()).to_dense(),
                "to_sparse mm": lambda a, b, x: mt_or_torch(a).mm(x.to_sparse(), a.t().to_dense()),
                "spmm": lambda a, b, x: mt_or_torch(a).spmm(a, x.t())}


@pytest.mark.torch
@pytest.mark.parametrize("name", list(_TORCH_CASES))
def test_sparse_ops_match_pytorch(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    v, w, x = rng.standard_normal(_IDX.shape[1]), rng.standard_normal(_OTHER.shape[1]), rng.standard_normal((3, 4))
    results = []
    for lib in (mt, torch):
        vt, wt, xt = (lib.tensor(a, requires_grad=True) for a in (v, w, x))
        a = lib.sparse_coo_tensor(lib.tensor(_IDX), vt, (3, 4))
        b = lib.sparse_coo_tensor(lib.tensor(_OTHER), wt, (3, 4))
        out = _TORCH_CASES[name](a, b, xt)
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum().backward()
        grads = [np.zeros(t.shape) if t.grad is None else t.grad.to_dense().numpy() for t in (vt, wt, xt)]
        results.append([out.detach().numpy()] + grads)  # PyTorch's gradient for x in s * x is sparse
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.torch
def test_result_layouts_dtypes_and_coalescing_match_pytorch():
    torch = pytest.importorskip("torch")
    ops = {"s+s": lambda lib, s, d: s + s, "c+c": lambda lib, s, d: s.coalesce() + s.coalesce(),
           "d+s": lambda lib, s, d: d + s, "s*2": lambda lib, s, d: s * 2, "s*2.5": lambda lib, s, d: s * 2.5,
           "s*d": lambda lib, s, d: s * d, "s/2": lambda lib, s, d: s / 2, "s**2": lambda lib, s, d: s.float() ** 2,
           "sum": lambda lib, s, d: lib.sum(s), "sum1": lambda lib, s, d: lib.sum(s, dim=1),
           "sumk": lambda lib, s, d: s.sum(dim=(0, 1), keepdim=True), "s@s": lambda lib, s, d: s.float() @ s.float(),
           "d@s": lambda lib, s, d: d @ s.float(), "t": lambda lib, s, d: s.t(), "neg": lambda lib, s, d: -s}
    for name, op in ops.items():
        got = []
        for lib in (mt, torch):
            s = lib.sparse_coo_tensor(lib.tensor(_IDX), lib.ones(6), (3, 4), dtype=lib.int64)
            s = s.t().t() if name != "t" else s
            if name in ("s@s",):
                s = lib.sparse_coo_tensor(lib.tensor(_IDX % 3), lib.ones(6), (3, 3), dtype=lib.int64)
            d = lib.ones(tuple(s.shape)) if name != "d@s" else lib.ones(2, s.shape[0])
            r = op(lib, s, d)
            got.append((r.is_sparse, str(r.dtype).split(".")[-1], tuple(r.shape),
                        r.is_coalesced() if r.is_sparse and name in ("c+c", "s**2", "s@s", "sum1") else None,
                        (r.to_dense() if r.is_sparse else r).tolist()))
        assert got[0] == got[1], name


@pytest.mark.parametrize("make, name", [
    (lambda: mt.sparse_csr_tensor([0, 1], [0], [1.0]), "sparse_csr_tensor"),
    (lambda: mt.sparse_csc_tensor([0, 1], [0], [1.0]), "sparse_csc_tensor"),
    (lambda: mt.sparse_bsr_tensor([0, 1], [0], [[[1.0]]]), "sparse_bsr_tensor"),
    (lambda: mt.sparse_compressed_tensor([0, 1], [0], [1.0], layout=mt.sparse_csr), "sparse_compressed_tensor"),
    (lambda: mt.eye(2).to_sparse_csr(), "to_sparse_csr"), (lambda: mt.eye(2).to_sparse_csc(), "to_sparse_csc"),
    (lambda: mt.eye(2).to_sparse_bsr((1, 1)), "to_sparse_bsr"),
    (lambda: mt.eye(2).to_sparse_bsc((1, 1)), "to_sparse_bsc"),
    (lambda: mt.eye(2).to_sparse(layout=mt.sparse_csr), "to_sparse"),
    (lambda: mt.sparse.softmax(mt.eye(2).to_sparse(), 0), "sparse.softmax"),
    (lambda: mt.sparse.log_softmax(mt.eye(2).to_sparse(), 0), "sparse.log_softmax"),
    (lambda: mt.sparse.addmm(mt.eye(2), mt.eye(2).to_sparse(), mt.eye(2)), "sparse.addmm"),
    (lambda: mt.sparse.sampled_addmm(mt.eye(2), mt.eye(2), mt.eye(2)), "sparse.sampled_addmm"),
])
def test_the_parts_of_torch_sparse_not_there_raise_naming_themselves(make, name):
    assert repr(mt.sparse_csr) == "minitensor.sparse_csr" and mt.sparse_bsc is not mt.sparse_coo
    with pytest.raises(NotImplementedError, match=f"^{name}: .*COO"):
        make()


def test_hybrid_sparse_tensors_in_arithmetic_match_dense_numpy():
    (ia, va), (ib, vb) = _pair(21, (4,), 6, (3,))
    a, b = mt.sparse_coo_tensor(ia, va, (4, 3)), mt.sparse_coo_tensor(ib, vb, (4, 3))
    ra, rb = dense_reference(ia, va, (4,)), dense_reference(ib, vb, (4,))
    d = np.random.default_rng(0).standard_normal((4, 3))
    for got, ref in ((a + b, ra + rb), (a - b * 2, ra - 2 * rb), (a * b, ra * rb), (a * mt.tensor(d), ra * d),
                     (a * mt.tensor(d[0]), ra * d[0]), (a / 2, ra / 2), (a ** 2, ra ** 2), (-a, -ra),
                     (mt.tensor(d) + a, d + ra)):
        np.testing.assert_allclose(got.to_dense().numpy(), ref, rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="2 sparse dims"):
        a @ mt.ones(3, 2, dtype=mt.float64)
    with pytest.raises(RuntimeError, match="same sparse_dim"):
        mt.sparse_coo_tensor(ia, va, (4, 3)) + mt.tensor(d).to_sparse()


def test_in_place_dense_plus_sparse_and_its_gradient():
    v = mt.tensor([1.0, 2.0, 3.0], dtype=mt.float64, requires_grad=True)
    s = mt.sparse_coo_tensor([[0, 1, 0], [1, 2, 1]], v, (3, 3))
    x = mt.zeros(3, 3, dtype=mt.float64, requires_grad=True)
    d = x * 2
    d += s * 2
    d.sub_(s)
    np.testing.assert_array_equal(d.detach().numpy(), [[0, 4, 0], [0, 0, 2], [0, 0, 0]])  # (0, 1) listed twice
    (d * mt.arange(9.0, dtype=mt.float64).reshape(3, 3)).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [1, 5, 1])
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.arange(9.0).reshape(3, 3))
    with pytest.raises(NotImplementedError, match="SparseCPU"):  # in place into a sparse tensor
        s.detach().mul_(2)


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(_GRAD_CASES))
def test_sparse_arithmetic_on_cuda_matches_the_cpu(name):
    if not mt.cuda.is_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(17)
    host = (rng.standard_normal(_IDX.shape[1]), rng.standard_normal(_OTHER.shape[1]), rng.standard_normal((3, 4)))
    results = []
    for device in ("cpu", "cuda"):
        v, w, x = (mt.tensor(a, device=device, requires_grad=True) for a in host)
        a = mt.sparse_coo_tensor(mt.tensor(_IDX, device=device), v, (3, 4))
        b = mt.sparse_coo_tensor(mt.tensor(_OTHER, device=device), w, (3, 4))
        out = _GRAD_CASES[name](a, b, x)
        (out * mt.arange(float(out.numel()), dtype=mt.float64, device=device).reshape(out.shape)).sum().backward()
        results.append([out.detach().cpu().numpy()] + [np.zeros(t.shape) if t.grad is None else t.grad.cpu().numpy()
                                                       for t in (v, w, x)])
    for on_cuda, on_cpu in zip(results[1], results[0]):
        np.testing.assert_allclose(on_cuda, on_cpu, rtol=1e-10, atol=1e-12)
