"""PyTorch's rarer Tensor methods (tensor_extras.py) and their top-level forms: dist, fill_diagonal_, the
in-place addmm_ family, new, map_ / apply_, new_empty_strided, nonzero_static, narrow_copy, the unsafe_
splits, dim_order, is_set_to, output_nr, const_data_ptr, as_subclass, record_stream."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from minitensor.testing import gradcheck


def _np_dist(a, b, p):
    d = np.abs(np.subtract(a, b, dtype=np.float64)).ravel()
    if p == math.inf:
        return d.max()
    if p == -math.inf:
        return d.min()
    if p == 0:
        return float((d != 0).sum())
    return (d ** p).sum() ** (1 / p)


@pytest.mark.parametrize("p", [2, 1, 3.5, 0, math.inf, -math.inf])
def test_dist_is_the_norm_of_the_broadcast_difference(p):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3,))
    want = _np_dist(a, b, p)
    got = mt.dist(mt.tensor(a), mt.tensor(b), p)
    assert got.shape == () and np.isclose(got.item(), want)
    assert np.isclose(mt.tensor(a).dist(mt.tensor(b), p).item(), want)


def test_dist_gradient_and_errors():
    x = mt.tensor(np.random.default_rng(1).standard_normal((2, 3)), requires_grad=True)
    y = mt.tensor(np.random.default_rng(2).standard_normal(3), requires_grad=True)
    assert gradcheck(lambda a, b: mt.dist(a, b, 3.0), (x, y))
    with pytest.raises(RuntimeError, match="Got Long instead"):
        mt.dist(mt.tensor([1, 2]), mt.tensor([1, 3]))
    with pytest.raises(TypeError, match="argument 'other' \\(position 2\\) must be Tensor, not float"):
        mt.dist(mt.ones(2), 2.0)


@pytest.mark.parametrize("shape, wrap", [((7, 3), True), ((7, 3), False), ((3, 7), True), ((4, 4), False),
                                         ((3, 3, 3), False), ((1, 5), True)])
def test_fill_diagonal_matches_numpy(shape, wrap):
    want = np.zeros(shape)
    np.fill_diagonal(want, 5, wrap=wrap)
    x = mt.zeros(*shape, dtype=mt.float64)
    assert x.fill_diagonal_(5, wrap=wrap) is x and np.array_equal(x.numpy(), want)


def test_fill_diagonal_gradient_version_and_errors():
    leaf = mt.ones(3, 3, requires_grad=True)
    y = leaf * 2
    y.fill_diagonal_(0.0)
    y.sum().backward()
    assert np.array_equal(leaf.grad.numpy(), 2 * (1 - np.eye(3)))
    x = mt.zeros(2, 2)
    v = x._version
    x.fill_diagonal_(1)
    assert x._version > v
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        mt.zeros(3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        mt.zeros(2, 3, 4).fill_diagonal_(1)


@pytest.mark.parametrize("name, args, out_of_place", [
    ("addmm_", lambda r: (r.standard_normal((2, 3)), r.standard_normal((3, 4))), "addmm"),
    ("baddbmm_", lambda r: (r.standard_normal((5, 2, 3)), r.standard_normal((5, 3, 4))), "baddbmm"),
    ("addbmm_", lambda r: (r.standard_normal((5, 2, 3)), r.standard_normal((5, 3, 4))), "addbmm"),
    ("addmv_", lambda r: (r.standard_normal((2, 3)), r.standard_normal(3)), "addmv")])
def test_in_place_products(name, args, out_of_place):
    r = np.random.default_rng(3)
    m1, m2 = args(r)
    start = r.standard_normal((5, 2, 4) if name == "baddbmm_" else (2,) if name == "addmv_" else (2, 4))
    x = mt.tensor(start)
    want = getattr(mt, out_of_place)(mt.tensor(start), mt.tensor(m1), mt.tensor(m2), beta=0.5, alpha=2.0)
    assert getattr(x, name)(mt.tensor(m1), mt.tensor(m2), beta=0.5, alpha=2.0) is x
    assert np.allclose(x.numpy(), want.numpy())
    ref = 0.5 * start + 2.0 * (m1 @ m2 if name != "addbmm_" else (m1 @ m2).sum(0))
    assert np.allclose(x.numpy(), ref)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        getattr(mt.zeros(1, dtype=mt.float64), name)(mt.tensor(m1), mt.tensor(m2))


def test_top_level_addmv_():
    z = mt.zeros(2)
    assert mt.addmv_(z, mt.ones(2, 3), mt.ones(3), beta=2, alpha=3) is z and z.tolist() == [9.0, 9.0]


def test_new_is_the_legacy_constructor():
    t = mt.ones(2, dtype=mt.float64)
    assert t.new().shape == (0,) and t.new().dtype == mt.float64
    assert t.new(2, 3).shape == (2, 3) and t.new(mt.Size([2, 3])).shape == (2, 3)
    assert t.new([1, 2]).tolist() == [1.0, 2.0] and t.new((2, 3)).tolist() == [2.0, 3.0]
    same = mt.tensor([1.0, 2.0], dtype=mt.float64)
    assert t.new(same).data_ptr() == same.data_ptr()
    with pytest.raises(TypeError, match="must be a sequence"):
        t.new(2.5)
    with pytest.raises(TypeError):
        t.new(mt.tensor([1, 2]))


def test_map_and_apply_call_python_per_element():
    x = mt.arange(6.0).reshape(2, 3)
    assert x.apply_(lambda v: v * 10) is x and x.tolist() == [[0, 10, 20], [30, 40, 50]]
    y = mt.ones(2, 3, dtype=mt.int64)
    assert y.map_(mt.tensor([1, 2, 3]), lambda a, b: a + b).tolist() == [[2, 3, 4], [2, 3, 4]]
    v = x[:, 1]  # a strided view: written through
    v.apply_(lambda e: -e)
    assert x[:, 1].tolist() == [-10, -40]
    with pytest.raises(RuntimeError, match="Can't call apply_\\(\\) on Variable that requires grad"):
        mt.ones(2, requires_grad=True).apply_(lambda e: e)
    with pytest.raises(RuntimeError):
        mt.ones(3).map_(mt.ones(2, 3), lambda a, b: a)


def test_new_empty_strided_and_nonzero_static():
    t = mt.ones(2, dtype=mt.float64)
    e = t.new_empty_strided((2, 3), (1, 2))
    assert e.shape == (2, 3) and e.stride() == (1, 2) and e.dtype == mt.float64
    assert mt.arange(10).nonzero_static(size=3).tolist() == [[1], [2], [3]]
    got = mt.nonzero_static(mt.tensor([[0, 1], [1, 1]]), size=5, fill_value=-7)
    assert got.dtype == mt.int64 and got.tolist() == [[0, 1], [1, 0], [1, 1], [-7, -7], [-7, -7]]
    assert mt.nonzero_static(mt.arange(3), size=0).shape == (0, 1)
    with pytest.raises(RuntimeError, match="non-negative integer"):
        mt.arange(3).nonzero_static(size=-1)


def test_narrow_copy_and_unsafe_splits():
    x = mt.arange(6.0).reshape(2, 3)
    c = mt.narrow_copy(x, 1, 1, 2)
    assert c.tolist() == [[1, 2], [4, 5]] and c.is_contiguous() and c.data_ptr() != x.data_ptr()
    assert x.narrow_copy(0, 1, 1).tolist() == [[3, 4, 5]]
    y = mt.arange(5.0)
    assert [p.tolist() for p in mt.unsafe_chunk(y, 2)] == [[0, 1, 2], [3, 4]]
    assert [p.tolist() for p in y.unsafe_split(2)] == [[0, 1], [2, 3], [4]]
    assert [p.tolist() for p in mt.unsafe_split_with_sizes(y, [2, 3])] == [[0, 1], [2, 3, 4]]
    with pytest.raises(RuntimeError):
        y.unsafe_split_with_sizes([2, 2])


def test_dim_order():
    assert mt.empty(2, 3, 5, 7).dim_order() == (0, 1, 2, 3)
    assert mt.empty(2, 3, 5, 7).transpose(1, 2).dim_order() == (0, 2, 1, 3)
    assert mt.empty(2, 3, 5, 7, memory_format=mt.channels_last).dim_order() == (0, 2, 3, 1)
    assert mt.ones(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
    assert mt.empty(1, 2, 3, 4).dim_order() == (0, 1, 2, 3)
    with pytest.raises(RuntimeError, match="does not have unique dim order"):
        mt.empty(1, 2, 3, 4).dim_order(ambiguity_check=True)
    assert mt.empty(1, 2, 3, 4).dim_order(ambiguity_check=[mt.contiguous_format, mt.channels_last]) == (0, 1, 2, 3)
    with pytest.raises(TypeError, match="must be a bool or a list of memory formats"):
        mt.empty(2).dim_order(ambiguity_check="ILLEGAL")


def test_queries():
    u = mt.ones(3)
    assert u.is_set_to(u) and u.is_set_to(u.view(3)) and not u.is_set_to(u[:2]) and not u.is_set_to(mt.ones(3))
    assert u.const_data_ptr() == u.data_ptr() and u.output_nr == 0 and not u.is_inference()

    class Sub(mt.Tensor):
        pass
    s = mt.ones(2, requires_grad=True).as_subclass(Sub)
    assert type(s) is Sub and s.tolist() == [1.0, 1.0] and not s.requires_grad
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        u.as_subclass(int)
    u.record_stream(mt.cuda.Stream.__new__(mt.cuda.Stream))  # accepted and a no-op
    with pytest.raises(RuntimeError, match="unknown parameter type"):
        u.record_stream(None)


@pytest.mark.torch
def test_extras_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    for p in (2, 1, 0, 3.0, math.inf, -math.inf):
        assert np.isclose(mt.dist(mt.tensor(a), mt.tensor(b), p).item(),
                          torch.dist(torch.tensor(a), torch.tensor(b), p).item())
    for shape in ((7, 3), (3, 7), (3, 3, 3)):
        for wrap in (False, True):
            if len(shape) == 3 and wrap:
                continue
            want = torch.zeros(*shape).fill_diagonal_(2.0, wrap=wrap).numpy()
            assert np.array_equal(mt.zeros(*shape).fill_diagonal_(2.0, wrap=wrap).numpy(), want)
    x = (rng.standard_normal((3, 4)) > 0).astype(np.int64)
    for size in (0, 2, 20):
        assert np.array_equal(mt.tensor(x).nonzero_static(size=size, fill_value=-3).numpy(),
                              torch.tensor(x).nonzero_static(size=size, fill_value=-3).numpy())
    for make in (lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1), lambda lib: lib.ones(2, 3).t(),
                 lambda lib: lib.ones(4, 1, 3).transpose(0, 2), lambda lib: lib.ones(2, 3, 4)[:, ::2]):
        assert make(mt).dim_order() == make(torch).dim_order()


def test_map2_set_resize_and_module_load():
    a = mt.ones(3)
    assert a.map2_(mt.arange(3.0), mt.full((3,), 2.0), lambda p, q, r: p + q * r).tolist() == [1.0, 3.0, 5.0]
    x = mt.arange(6.0)
    z = mt.zeros(2)
    assert z.set_(x) is z and z.shape == (6,) and z.data_ptr() == x.data_ptr()
    z.add_(1)  # the memory is shared
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert mt.zeros(2).set_().shape == (0,)
    assert mt.zeros(2).set_(x, 1, (2, 2), (1, 2)).tolist() == [[2.0, 4.0], [3.0, 5.0]]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        mt.zeros(2, requires_grad=True).set_(x)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        r = x.resize(2, 3)
    assert r.shape == (2, 3) and r.data_ptr() == x.data_ptr() and x.shape == (6,)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="can only change the shape"):
        x.resize(4)  # sizes, not a reshape: the element count must stay
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert x.resize_as(mt.ones(3, 2)).shape == (3, 2)
    p, src = mt.zeros(2), mt.tensor([1.0, 2.0])
    loaded = p.module_load(src)
    assert loaded.data_ptr() == p.data_ptr() and p.tolist() == [1.0, 2.0]
    assert p.module_load(src, assign=True).data_ptr() == src.data_ptr()


def test_removed_and_legacy_methods():
    x = mt.eye(2)
    for name, args in (("eig", ()), ("symeig", ()), ("solve", (x,)), ("lstsq", (x,))):
        with pytest.raises(RuntimeError, match="is now removed"):
            getattr(x, name)(*args)
    with pytest.raises(RuntimeError, match="reinforce\\(\\) was removed"):
        x.reinforce(1.0)
    with pytest.warns(UserWarning, match="deprecated"):
        assert np.allclose(mt.tensor([[2.0], [4.0]]).triangular_solve(2 * x).solution.numpy(), [[1.0], [2.0]])
    assert not x.is_distributed() and x.name is None
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert x.volatile is False


def test_adjoint_of_a_0d_tensor_warns_and_is_the_tensor():
    x = mt.tensor(0.5)
    with pytest.warns(UserWarning, match="adjoint\\(\\) is deprecated on 0-D tensors"):
        assert mt.adjoint(x) is x
    with pytest.raises(RuntimeError, match="Got 1-D tensor"):
        mt.ones(3).adjoint()
