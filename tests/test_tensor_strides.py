"""Tensor memory queries (stride, storage_offset, data_ptr, nbytes, itemsize), the transposes H / mH / mT /
adjoint, index_put / index_put_ and signbit: against NumPy references, gradcheck and PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.testing import gradcheck

VIEWS = [  # name: a view of arange(24).reshape(2, 3, 4) PyTorch makes without a copy
    ("whole", lambda x: x),
    ("slices", lambda x: x[:, 1:, ::2]),
    ("select", lambda x: x[1, 2]),
    ("transpose", lambda x: x.transpose(0, 2)),
    ("permute", lambda x: x.permute(1, 2, 0)),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4)),
    ("narrow", lambda x: x.narrow(2, 1, 2)),
    ("unsqueeze", lambda x: x[0].unsqueeze(1)),
]


def _numpy_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


@pytest.mark.parametrize("name, view", VIEWS, ids=[v[0] for v in VIEWS])
def test_stride_and_offset_follow_the_array(name, view):
    x = mt.arange(24.0).reshape(2, 3, 4)
    v = view(x)
    base = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    ref = view(base) if name in ("whole", "slices", "select") else None  # NumPy has the same expression
    assert v.stride() == _numpy_strides(v.array)
    assert all(v.stride(d) == v.stride()[d] == v.stride(d - v.ndim) for d in range(v.ndim))
    if ref is not None:
        assert v.stride() == _numpy_strides(ref)
    # the offset: v's first element sits storage_offset() elements into x's memory
    first = v.array.reshape(-1)[0] if v.numel() else None
    assert x.array.reshape(-1)[v.storage_offset()] == first
    assert v.data_ptr() - x.data_ptr() == v.storage_offset() * 4


def test_known_strides():
    x = mt.zeros(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.storage_offset() == 0
    assert x[:, :1].expand(2, 5, 4).stride() == (12, 0, 1)
    assert x.transpose(0, 2).stride() == (1, 4, 12)
    assert x[1, 2].storage_offset() == 20 and x[:, 1:, ::2].storage_offset() == 4
    assert mt.zeros(3, 1).stride() == (1, 1) and mt.tensor(1.0).stride() == ()
    assert x.flip(0).stride() == (12, 4, 1)  # a copy, as PyTorch's
    assert x[::-1].stride() == (-12, 4, 1)  # a reversed view (docs/differences.md)


@pytest.mark.parametrize("dim, error", [(3, "Dimension out of range"), (-4, "Dimension out of range")])
def test_stride_dim_errors(dim, error):
    with pytest.raises(IndexError, match=error):
        mt.zeros(2, 3, 4).stride(dim)


def test_stride_of_a_0d_tensor_has_no_dims():
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        mt.tensor(1.0).stride(0)


def test_sparse_tensors_have_no_strides():
    with pytest.raises(RuntimeError, match="sparse"):
        mt.eye(2).to_sparse().stride()


@pytest.mark.parametrize("dtype, size", [(mt.float16, 2), (mt.bfloat16, 2), (mt.float32, 4), (mt.float64, 8),
                                         (mt.int8, 1), (mt.uint8, 1), (mt.int64, 8), (mt.bool, 1)])
def test_nbytes_and_itemsize(dtype, size):
    x = mt.zeros(3, 5, dtype=dtype)
    assert x.itemsize == x.element_size() == size and x.nbytes == 15 * size
    assert x[:, :1].expand(3, 7).nbytes == 21 * size  # counts what the view shows


def test_transposes():
    x = mt.randn(2, 3, 4)
    assert mt.equal(x[0].H, x[0].t()) and mt.equal(x.mH, x.transpose(-2, -1)) and mt.equal(x.mT, x.mH)
    assert mt.equal(x[0].adjoint(), x[0].t())
    with pytest.warns(UserWarning, match="deprecated on 0-D"):
        s = mt.tensor(2.0)
        assert s.H is s
    for call, match in ((lambda: x.H, "2-D tensors\\). Got 3-D tensor. For batches"),
                        (lambda: x[0, 0].H, "Got 1-D tensor"),
                        (lambda: x[0, 0].mH, "tensor.mH is only supported on matrices or batches"),
                        (lambda: x[0, 0].mT, "tensor.mT is only supported on matrices or batches"),
                        (lambda: x[0, 0].adjoint(), "tensor.adjoint\\(\\) is only supported")):
        with pytest.raises(RuntimeError, match=match):
            call()


# --------------------------------------------------------------------------------------------------- index_put
def test_index_put_values():
    x = mt.arange(12.0).reshape(3, 4)
    rows, cols = mt.tensor([0, 2, 0]), mt.tensor([1, 3, 1])
    ref = x.numpy().copy()
    ref[[2, 0], [3, 1]] = [7.0, 8.0]
    got = x.index_put((rows[1:], cols[1:]), mt.tensor([8.0, 7.0])[[1, 0]])
    assert np.array_equal(got.numpy(), ref) and np.array_equal(x.numpy(), np.arange(12.0).reshape(3, 4))
    acc = x.index_put((rows, cols), mt.tensor([1.0, 2.0, 3.0]), accumulate=True)
    ref = x.numpy().copy()
    np.add.at(ref, ([0, 2, 0], [1, 3, 1]), [1.0, 2.0, 3.0])
    assert np.array_equal(acc.numpy(), ref) and acc[0, 1].item() == 1.0 + 4.0
    mask = mt.tensor([True, False, True])
    assert np.array_equal(x.index_put((mask,), mt.tensor(5.0), accumulate=True).numpy(),
                          x.numpy() + np.array([[5.0], [0.0], [5.0]]))
    i32 = mt.tensor([1], dtype=mt.int32)
    assert np.array_equal(x.index_put([i32], mt.tensor([9.0, 9.0, 9.0, 9.0])).numpy()[1], [9.0] * 4)
    ints = mt.zeros(3, dtype=mt.int64).index_put((mt.tensor([0, 0, 1]),), mt.tensor(1), accumulate=True)
    assert ints.tolist() == [2, 1, 0] and ints.dtype == mt.int64


@pytest.mark.parametrize("args, error, match", [
    ((mt.tensor([0]), mt.tensor(1.0)), TypeError, "must be tuple of Tensors, not Tensor"),
    (((None, mt.tensor([0])), mt.tensor(1.0)), TypeError, "expected Tensor as element 0"),
    (((mt.tensor([0]),), 1.0), TypeError, "'values' \\(position 2\\) must be Tensor, not float"),
    (((mt.tensor([0]),), mt.tensor(1.0, dtype=mt.float64)), RuntimeError, "got Float for the destination and Double"),
    (((mt.tensor([0]),) * 3, mt.tensor(1.0)), IndexError, "too many indices for tensor of dimension 2 \\(got 3\\)"),
    (((mt.tensor([5]),), mt.tensor(1.0)), IndexError, "out of bounds"),
    (((mt.tensor([1.0]),), mt.tensor(1.0)), IndexError, "tensors used as indices must be long"),
])
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_errors(args, error, match, accumulate):
    with pytest.raises(error, match=match):
        mt.zeros(3, 2).index_put(*args, accumulate=accumulate)


def test_index_put_accumulate_shape_mismatch():
    with pytest.raises(RuntimeError, match="value tensor of shape \\[3\\] cannot be broadcast to indexing result "
                                           "of shape \\[1, 2\\]"):
        mt.zeros(3, 2).index_put((mt.tensor([1]),), mt.tensor([5.0, 6.0, 7.0]), accumulate=True)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_gradients(accumulate):
    idx = (mt.tensor([0, 2, 0]), mt.tensor([1, 3, 1])) if accumulate else (mt.tensor([0, 2]), mt.tensor([1, 3]))
    x = mt.randn(3, 4, dtype=mt.float64, requires_grad=True)
    v = mt.randn(len(idx[0]), dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda a, b: a.index_put(idx, b, accumulate=accumulate).sin(), (x, v))
    s = mt.randn(1, dtype=mt.float64, requires_grad=True)  # a broadcast value: its gradient sums
    assert gradcheck(lambda a, b: a.index_put(idx, b, accumulate=accumulate).exp(), (x, s))
    x.index_put(idx, v, accumulate=accumulate).sum().backward()
    expect = np.ones((3, 4))
    if not accumulate:
        expect[[0, 2], [1, 3]] = 0.0
    assert np.array_equal(x.grad.numpy(), expect) and np.array_equal(v.grad.numpy(), np.ones(len(idx[0])))


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_in_place(accumulate):
    leaf = mt.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.index_put_((mt.tensor([0]),), mt.tensor(1.0), accumulate=accumulate)
    y = leaf.clone()
    view = y[:2]
    before = y._version
    assert y.index_put_((mt.tensor([0, 0]),), mt.tensor(2.0), accumulate=accumulate) is y
    assert y._version == view._version > before and view.tolist()[0] == (4.0 if accumulate else 2.0)
    e = leaf.exp()  # saves its output (as PyTorch's): writing into it afterwards breaks its backward
    e.index_put_((mt.tensor([1]),), mt.tensor(0.0), accumulate=accumulate)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()
    z = leaf * 2  # mul saved leaf, not z: the write is recorded and the gradient goes through it
    z.index_put_((mt.tensor([1, 1]),), mt.tensor(3.0), accumulate=accumulate)
    (z * z).sum().backward()
    assert np.allclose(leaf.grad.numpy(), [0.0, 24.0 if accumulate else 0.0, 0.0])  # z[1] = 2 leaf[1] + 6


def test_signbit():
    x = mt.tensor([-0.0, 0.0, -1.5, 2.0, float("-inf"), float("nan")])
    x = mt.cat([x, -x[-1:]])
    assert mt.signbit(x).tolist() == np.signbit(x.numpy()).tolist() == [True, False, True, False, True, False, True]
    assert x.signbit().dtype == mt.bool and not x.requires_grad
    assert mt.tensor([-3, 0, 4]).signbit().tolist() == [True, False, False]
    assert mt.tensor([3], dtype=mt.uint8).signbit().tolist() == [False]
    assert mt.tensor([True]).signbit().tolist() == [False]
    assert mt.tensor([-1.0], dtype=mt.bfloat16).signbit().tolist() == [True]
    assert not mt.signbit(mt.tensor([-1.0], requires_grad=True)).requires_grad


# --------------------------------------------------------------------------------------------------- torch
@pytest.mark.torch
@pytest.mark.parametrize("name, view", VIEWS, ids=[v[0] for v in VIEWS])
def test_strides_match_torch(name, view):
    torch = pytest.importorskip("torch")
    ours, theirs = view(mt.arange(24.0).reshape(2, 3, 4)), view(torch.arange(24.0).reshape(2, 3, 4))
    assert ours.stride() == theirs.stride() and ours.storage_offset() == theirs.storage_offset()
    assert (ours.nbytes, ours.itemsize) == (theirs.nbytes, theirs.itemsize)


_INDEX_PUT_CASES = [  # (index, whether it repeats a place)
    (lambda lib: (lib.tensor([0, 2, 0]), lib.tensor([1, 3, 1])), True),
    (lambda lib: (lib.tensor([0, 2]), lib.tensor([1, 3])), False),
    (lambda lib: (lib.tensor([True, False, True]),), False),
    (lambda lib: (lib.tensor([[0], [2]]), lib.tensor([1, 3, 0])), False),
    (lambda lib: (lib.tensor([2, 2, 2]),), True),
]


@pytest.mark.torch
@pytest.mark.parametrize("index, accumulate", [
    (index, accumulate) for index, repeats in _INDEX_PUT_CASES for accumulate in (False, True)
    if accumulate or not repeats])  # a repeated place without accumulate: PyTorch leaves the winner unspecified
def test_index_put_matches_torch(index, accumulate):
    torch = pytest.importorskip("torch")
    x0 = np.random.default_rng(0).standard_normal((3, 4))
    results = []
    for lib in (mt, torch):
        x = lib.tensor(x0, requires_grad=True)
        shape = x.detach()[index(lib)].shape
        v = lib.tensor(np.arange(float(np.prod(shape))).reshape(tuple(shape)) + 1.0, requires_grad=True)
        out = x.index_put(index(lib), v, accumulate=accumulate)
        (out * lib.tensor(x0 + 2.0)).sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), v.grad.numpy()))
    for ours, theirs in zip(*results):
        assert np.allclose(ours, theirs)


@pytest.mark.torch
def test_signbit_matches_torch():
    torch = pytest.importorskip("torch")
    values = [-0.0, 0.0, -1.5, 2.0, float("-inf"), float("nan")]
    for dt in ("float16", "bfloat16", "float32", "float64"):
        x = torch.tensor(values, dtype=getattr(torch, dt))
        assert mt.tensor(values, dtype=getattr(mt, dt)).signbit().tolist() == torch.signbit(x).tolist()
    assert mt.tensor([-3, 0, 4]).signbit().tolist() == torch.tensor([-3, 0, 4]).signbit().tolist()
