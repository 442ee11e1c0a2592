"""``x[index]`` and ``x[index] = value``: basic indices against NumPy, gradients by gradcheck, accumulation
(where PyTorch places index-tensor dims: test_indexing_rules.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, nonscalar_shapes, randn, seeds, shapes, t64
from indexing_reference import positions


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_basic_indices(shape, seed, data):
    """Ints (negative too), slices with steps, Ellipsis and None give NumPy's result and a view."""
    index = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    x = randn(seed, shape)
    expected = x[index]
    assert_close(t64(x, False)[index], np.asarray(expected))
    check_grad(lambda t: t[index], x)
    t = mt.tensor(x)
    if isinstance(expected, np.ndarray) and expected.size and np.shares_memory(expected, x):
        assert np.shares_memory(t[index].numpy(), t.numpy()), "basic indexing gives views"


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_integer_array_indices(shape, seed, data):
    index = data.draw(hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(min_dims=1, max_dims=2,
                                                                                     max_side=4)))
    x = randn(seed, shape)
    assert_close(t64(x, False)[index], x[index])
    tensor_index = tuple(mt.tensor(i) for i in index)
    assert_close(t64(x, False)[tensor_index], x[index])
    check_grad(lambda t: t[tensor_index], x)  # repeated indices accumulate in the gradient


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_boolean_masks(shape, seed, data):
    k = data.draw(st.integers(1, len(shape)))
    mask = np.random.default_rng(seed).random(shape[:k]) < 0.5
    x = randn(seed, shape)
    assert_close(t64(x, False)[mt.tensor(mask)], x[mask])
    check_grad(lambda t: t[mt.tensor(mask)], x)
    if k == len(shape):
        check_grad(lambda t: t[t.detach() > 0], x)


def test_mixed_advanced_and_basic():
    """PyTorch's placement (the model in indexing_reference.py); NumPy's differs for the second index."""
    a = randn(0, (3, 4, 5))
    for index in [(slice(None), [0, 2, 2]), (1, slice(None, None, 2), [4, 0]), (Ellipsis, [1, 1]),
                  ([0, 2], slice(1, 3), [3, 3]), (None, [2, 0]), ([[0], [2]], [1, 3])]:
        tindex = tuple(mt.tensor(i) if isinstance(i, list) else i for i in index)
        assert_close(t64(a, False)[tindex], a.reshape(-1)[positions(a.shape, index)])
        check_grad(lambda t, i=tindex: t[i], a)


def test_lists_tensors_and_numpy_integers_as_indices():
    x = mt.tensor([10.0, 20.0, 30.0, 40.0])
    assert x[[3, 0, 3]].tolist() == [40.0, 10.0, 40.0]
    assert x[mt.tensor([1, 2])].tolist() == [20.0, 30.0]
    assert x[mt.tensor(2)].tolist() == 30.0
    assert x[np.int64(1)].item() == 20.0
    assert x[np.array([0, 1])].tolist() == [10.0, 20.0]
    assert x[[True, False, True, False]].tolist() == [10.0, 30.0]
    assert x[x > 25].tolist() == [30.0, 40.0]
    assert x[-1].item() == 40.0 and x[-3:-1].tolist() == [20.0, 30.0] and x[::-2].tolist() == [40.0, 20.0]


def test_repeated_indices_accumulate():
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]
    y = mt.zeros(2, 3, requires_grad=True)
    (y[mt.tensor([1, 1]), mt.tensor([2, 2])] * mt.tensor([2.0, 5.0])).sum().backward()
    assert y.grad.tolist() == [[0, 0, 0], [0, 0, 7.0]]


def test_index_errors():
    x = mt.ones(2, 3)
    with pytest.raises(IndexError, match=r"\(2, 3\)"):
        x[5]
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        x[mt.tensor([0.5])]
    with pytest.raises(IndexError):
        x[0, 0, 0]


# ---------------------------------------------------------------------------------------- setitem
class TestSetItem:
    @pytest.mark.parametrize("index, value", [
        (0, 5.0), ((1, slice(None, None, 2)), [7.0, 8.0]), ((Ellipsis, 1), -1.0),
        ([0, 1], np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])), ((slice(None), [2, 0]), 9.0),
        (np.array([[True, False, True], [False, True, False]]), 4.0), ((slice(None), 1), [1.5, 2.5]),
    ])
    def test_without_grad_matches_numpy(self, index, value):
        a = randn(0, (2, 3))
        expected = a.copy()
        expected[index] = value
        t = mt.tensor(a)
        view = t[:]
        tindex = mt.tensor(index) if isinstance(index, np.ndarray) else index
        t[tindex] = mt.tensor(np.asarray(value)) if isinstance(value, np.ndarray) else value
        assert_close(t, expected)
        assert_close(view, expected)  # written in place: views see it

    def test_value_is_cast_and_broadcast(self):
        t = mt.zeros(2, 3, dtype=mt.int64)
        t[0] = 2.7
        t[1] = mt.tensor([1.0, 2.0, 3.0])
        assert t.dtype is mt.int64 and t.tolist() == [[2, 2, 2], [1, 2, 3]]
        f = mt.zeros(3)
        f[1:] = np.float64(0.5)
        assert f.dtype is mt.float32 and f.tolist() == [0.0, 0.5, 0.5]

    def test_with_grad_into_a_non_leaf(self):
        a = np.array([1.0, 2.0, 3.0, 4.0])
        b = np.array([10.0, 20.0])

        def fn(x, v):
            y = x * 1.0
            y[1:3] = v * 2.0
            return y * y

        check_grad(fn, a, b)
        x, v = t64(a), t64(b)
        out = fn(x, v)
        assert_close(out, np.array([1.0, 400.0, 1600.0, 16.0]))
        out.sum().backward()
        assert_close(x.grad, [2.0, 0.0, 0.0, 8.0])  # the overwritten places get no gradient
        assert_close(v.grad, [80.0, 160.0])

    def test_with_grad_advanced_index_and_broadcast_value(self):
        a = randn(1, (3, 4))

        def fn(x, v):
            y = x.clone()
            y[[0, 2], 1:3] = v
            return y.exp()

        check_grad(fn, a, np.array([0.5, -0.5]))
        check_grad(fn, a, np.array(1.5))

    def test_with_grad_from_value_into_a_constant(self):
        v = mt.tensor(3.0, requires_grad=True)
        t = mt.zeros(4)
        t[mt.tensor([True, False, True, True])] = v
        assert t.requires_grad and t.tolist() == [3.0, 0.0, 3.0, 3.0]
        (t * mt.tensor([1.0, 10.0, 100.0, 1000.0])).sum().backward()
        assert v.grad.item() == 1101.0

    def test_a_leaf_requiring_grad_is_refused_unless_no_grad(self):
        w = mt.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            w[0] = 2.0
        with mt.no_grad():
            w[0] = 2.0
        assert w.tolist() == [2.0, 1.0, 1.0] and w.is_leaf and w.grad_fn is None
