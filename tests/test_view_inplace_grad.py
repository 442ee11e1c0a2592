"""In-place ops on views of tensors in the graph rewrite the base's history (PyTorch's CopySlices): every
scenario's gradient is checked against central finite differences of its own forward (float64, no torch)
and, torch-marked, against PyTorch's, which also pins the forward values."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import minitensor as mt

W = np.random.default_rng(0).standard_normal((3, 4))
X = np.random.default_rng(1).uniform(-1.0, 1.0, (3, 4))


def _loss(m: Any, y: Any) -> Any:
    """A non-linear scalar of a (3, 4) tensor, so each element's gradient differs."""
    return (y * y * m.tensor(W, dtype=m.float64)).sum()


def s_select(m, x):  # the issue's case, on rows
    y = x.clone()
    y[0].mul_(3)
    return _loss(m, y)


def s_int_0d(m, x):
    y = x * 2
    y[1, 2].mul_(x[0, 0])
    return _loss(m, y)


def s_slice(m, x):
    y = x * 1
    y[1:, :2].exp_()
    return _loss(m, y)


def s_narrow(m, x):
    y = x + 1
    y.narrow(1, 1, 2).mul_(x[:, :2])
    return _loss(m, y)


def s_select_method(m, x):
    y = x * 1
    y.select(1, 3).sigmoid_()
    return _loss(m, y)


def s_diagonal(m, x):
    y = x * 1
    y.diagonal().mul_(x[0, :3])
    return _loss(m, y)


def s_transpose_chain(m, x):
    y = x * 1
    y.t()[1].tanh_()
    return _loss(m, y)


def s_view(m, x):
    y = x * 1
    y.view(12)[3:9].mul_(2)
    return _loss(m, y)


def s_reshape_view(m, x):
    y = x * 1
    y.reshape(2, 6)[1].add_(x[0, :1])
    return _loss(m, y)


def s_unsqueeze(m, x):
    y = x * 1
    y.unsqueeze(0)[0, 1].mul_(3)
    return _loss(m, y)


def s_view_of_view(m, x):
    y = x * 1
    v = y[1:]
    w = v[:, 1:3]
    w.mul_(x[1:, :2])
    return _loss(m, y) + (v * v).sum()  # v was made before the write: its node is remade


def s_several(m, x):
    y = x * 1
    y[0].mul_(2)
    y[:, 1].add_(x[:, 0])
    y.t()[2].exp_()
    return _loss(m, y)


def s_base_then_view(m, x):
    y = x * 1
    v = y[0]
    y.mul_(x)  # a write into the base: v's node is remade over the new y
    return (v * 3).sum() + _loss(m, y)


def s_base_then_view_written(m, x):
    y = x * 1
    v = y[1]
    y.add_(1)
    v.mul_(x[2])
    return _loss(m, y)


def s_sibling(m, x):
    y = x * 1
    v1, v2 = y[0], y[1:]
    v1.mul_(3)
    return _loss(m, v2.reshape(2, 4).repeat(2, 1)[:3]) + (v1 * y).sum()


def s_base_without_grad(m, x):
    z = m.zeros(3, 4, dtype=m.float64)
    z[1].add_(x[0])
    z.t()[0].mul_(x[:, 1])
    return _loss(m, z)


def s_setitem_on_view(m, x):
    y = x * 1
    y.t()[1] = x[:, 0] * 2
    return _loss(m, y)


def s_setitem_on_view_chain(m, x):
    y = x * 1
    v = y[1:]
    v[:, 0] = x[0, :2]
    return _loss(m, y) + (v * v).sum()


def s_copy_into_view(m, x):
    y = x * 1
    y[2].copy_(x[0] * x[1])
    return _loss(m, y)


def s_zero_view(m, x):
    y = x * 1
    y[:, 2].zero_()
    return _loss(m, y)


def s_as_strided_view(m, x):
    y = x * 1
    y.as_strided((2, 2), (4, 1), 1).mul_(x[0, :2])
    return _loss(m, y)


def s_view_used_after_its_own_write(m, x):
    y = x * 1
    v = y[:, 1:]
    v.sin_()
    v.mul_(x[:, :3])
    return (v * v).sum() + _loss(m, y)


SCENARIOS: dict[str, Callable[[Any, Any], Any]] = {
    f.__name__[2:]: f for f in (s_select, s_int_0d, s_slice, s_narrow, s_select_method, s_diagonal,
                                s_transpose_chain, s_view, s_reshape_view, s_unsqueeze, s_view_of_view, s_several,
                                s_base_then_view, s_base_then_view_written, s_sibling, s_base_without_grad,
                                s_setitem_on_view, s_setitem_on_view_chain, s_copy_into_view, s_zero_view,
                                s_as_strided_view, s_view_used_after_its_own_write)}


def _grad(m: Any, name: str) -> tuple[float, np.ndarray]:
    x = m.tensor(X, dtype=m.float64, requires_grad=True)
    loss = SCENARIOS[name](m, x)
    loss.backward()
    return float(loss.item()), x.grad.detach().numpy()


def _finite_differences(name: str, eps: float = 1e-6) -> np.ndarray:
    def f(a: np.ndarray) -> float:
        with mt.no_grad():
            return float(SCENARIOS[name](mt, mt.tensor(a, dtype=mt.float64)).item())
    g = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        d = np.zeros_like(X)
        d[i] = eps
        g[i] = (f(X + d) - f(X - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("name", SCENARIOS)
def test_gradient_matches_finite_differences(name):
    _, g = _grad(mt, name)
    np.testing.assert_allclose(g, _finite_differences(name), rtol=1e-6, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name", SCENARIOS)
def test_value_and_gradient_match_pytorch(name):
    torch = pytest.importorskip("torch")
    value, g = _grad(mt, name)
    t_value, t_g = _grad(torch, name)
    np.testing.assert_allclose(value, t_value, rtol=1e-12)
    np.testing.assert_allclose(g, t_g, rtol=1e-12, atol=1e-12)


def test_the_issue_example_and_the_nodes():
    x = mt.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.clone()
    v = y[0]
    v.mul_(3)
    assert y.grad_fn.name() == "CopySlices" and v.grad_fn.name() == "AsStridedBackward0"
    assert v._version == y._version == 1
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 1.0]


def test_a_base_without_grad_comes_to_require_it():
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    z = mt.zeros(2, 2)
    v = z[1]
    assert not z.requires_grad
    other = z[0]
    v.add_(w)
    assert z.requires_grad and z.grad_fn.name() == "CopySlices" and v.requires_grad
    assert other.requires_grad and not other.is_leaf  # a view made before the write follows its base
    (z * z).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_writes_under_no_grad_leave_the_history_alone():
    """A write through a view under no_grad is not in the graph (PyTorch's too): the gradient is the one of
    the history recorded, and views made before it keep their nodes."""
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    v = y[1:]
    node = v.grad_fn
    with mt.no_grad():
        y[0].mul_(10)
    (v * y[:2]).sum().backward()
    assert v.grad_fn is node
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 52.0, 8.0])  # y = (20, 4, 6), dy/dx = 2 as recorded


def test_the_version_check_still_refuses_a_saved_tensor_written_through_a_view():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # saves its output y
    y[0].mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_backward_from_a_view_whose_base_was_written():
    x = mt.tensor(X, requires_grad=True)
    y = x * 2
    v = y[0, 1]
    y.mul_(3)
    v.backward()
    expected = np.zeros((3, 4))
    expected[0, 1] = 6.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def _second_order(m: Any, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """g = d loss/dx with create_graph, through CopySlices and AsStrided; then d sum(g)/dx."""
    x = m.tensor(a, dtype=m.float64, requires_grad=True)
    y = x * x
    # ops that save no written memory: minitensor keeps a copy of such memory, which its double backward
    # refuses (y.mul_(x) under create_graph fails the same way without views)
    y[1:, 1].add_(x[0, :2] * x[0, :2])
    y.t()[0].mul_(3)
    v = y.t()[2]
    y.add_(1)  # v is remade over the written y
    loss = (v * v).sum() + (y * y * m.tensor(W, dtype=m.float64)).sum()
    g, = m.autograd.grad(loss, x, create_graph=True)
    g.sum().backward()
    return g.detach().numpy(), x.grad.numpy()


def test_second_order_gradients_match_finite_differences():
    g, gg = _second_order(mt, X)
    eps, fd = 1e-6, np.zeros_like(X)
    for i in np.ndindex(X.shape):
        d = np.zeros_like(X)
        d[i] = eps
        fd[i] = (_second_order(mt, X + d)[0].sum() - _second_order(mt, X - d)[0].sum()) / (2 * eps)
    np.testing.assert_allclose(gg, fd, rtol=1e-5, atol=1e-5)


@pytest.mark.torch
def test_second_order_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_second_order(mt, X), _second_order(torch, X)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
