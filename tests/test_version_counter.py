"""Version counters (PyTorch's ``Tensor._version``): every in-place write bumps the counter its views
share, and a backward that would read a saved tensor written after it was saved raises PyTorch's error
instead of silently using the new values."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

from helpers import check_grad

MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"


def test_optimizer_step_between_two_backwards_raises():
    """The issue's reproducer: backward(retain_graph=True), opt.step(), backward()."""
    mt.manual_seed(0)
    net = mt.nn.Sequential(mt.nn.Linear(4, 3), mt.nn.Tanh(), mt.nn.Linear(3, 2))
    opt = mt.optim.SGD(net.parameters(), lr=0.1)
    loss = net(mt.randn(5, 4)).pow(2).sum()
    loss.backward(retain_graph=True)
    before = net[2].weight._version
    opt.step()
    assert net[2].weight._version == before + 1
    with pytest.raises(RuntimeError, match=MODIFIED + r": \[minitensor.FloatTensor \[2, 3\]\] is at version "
                       f"{before + 1}; expected version {before} instead. Hint: enable anomaly detection"):
        loss.backward()


def test_backward_twice_without_a_write_still_works():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0])), rtol=1e-6)


@pytest.mark.parametrize("write", [
    lambda t: t.add_(1.0), lambda t: t.mul_(2.0), lambda t: t.zero_(), lambda t: t.fill_(3.0),
    lambda t: t.copy_(mt.ones(3)), lambda t: t.clamp_(0.0, 1.0), lambda t: t.__setitem__(1, 5.0),
    lambda t: t.uniform_(), lambda t: t.normal_(), lambda t: t.masked_fill_(mt.tensor([True, False, True]), 0.0)])
def test_every_in_place_write_bumps_the_version(write):
    t = mt.zeros(3)
    assert t._version == 0
    write(t)
    assert t._version == 1
    with mt.no_grad():  # grad mode does not matter
        write(t)
    assert t._version == 2


def test_views_and_detach_share_the_counter_data_does_not():
    x = mt.zeros(2, 3)
    row, flat, tr, det, data = x[0], x.reshape(6), x.t(), x.detach(), x.data
    row.add_(1.0)
    assert x._version == row._version == flat._version == tr._version == det._version == 1
    data.add_(1.0)
    assert data._version == 1 and x._version == 1
    det.mul_(2.0)
    assert x._version == 2 and row._version == 2
    assert x[:, [0, 2]]._version == 0  # advanced indexing copies: a counter of its own


def test_a_saved_input_written_later_raises_with_its_maker_named():
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = mt.tensor([0.5, 0.5, 0.5], requires_grad=True)
    h = x * 2.0  # h is output 0 of MulBackward
    y = (h * w).sum()  # saves h (for w's gradient)
    h.add_(1.0)
    with pytest.raises(RuntimeError, match=r"\[minitensor.FloatTensor \[3\]\], which is output 0 of "
                       r"MulBackward0, is at version 1; expected version 0 instead"):
        y.backward()


def test_a_write_under_no_grad_is_caught_too():
    w = mt.tensor([1.0, -2.0], requires_grad=True)
    y = (w * w).sum()
    with mt.no_grad():
        w.sub_(0.1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_write_into_a_view_of_a_saved_output_raises():
    y = F.softmax(mt.ones(2, 3, requires_grad=True), dim=1)
    y[0].zero_()
    with pytest.raises(RuntimeError, match="output 0 of SoftmaxBackward"):
        y.sum().backward()


def test_writes_through_data_escape_the_check_as_in_pytorch():
    """Optimizers written against .data (p.data.add_) do not invalidate graphs, as in PyTorch."""
    w = mt.tensor([1.0, -2.0], requires_grad=True)
    y = (w * 3.0 * w).sum()
    w.data.add_(1.0)
    assert w._version == 0
    y.backward()  # h = 3 w was computed before the write; the saved w is read as written: 3 w_new + h
    np.testing.assert_allclose(w.grad.numpy(), 3 * np.array([2.0, -1.0]) + 3 * np.array([1.0, -2.0]))


def test_freed_graph_error_comes_first():
    x = mt.tensor([1.0], requires_grad=True)
    y = x.exp()
    y.sum().backward()
    with mt.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_unsaved_outputs_can_be_written_before_backward():
    """Add and scalar Mul save nothing of their operands, so writing them is fine (PyTorch agrees)."""
    a = np.array([0.5, -1.0, 2.0])
    x = mt.tensor(a, requires_grad=True)
    h = x + 1.0
    y = h * 2.0
    h.mul_(10.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("make", [
    lambda x, s: x / s, lambda x, s: x ** 2.0, lambda x, s: F.leaky_relu(x * s, 0.1),
    lambda x, s: F.elu(x * s), lambda x, s: F.hardtanh(x * s, -0.5, 0.5), lambda x, s: x * s])
@pytest.mark.parametrize("write", [lambda y: y.add_(1.0), lambda y: y.mul_(3.0), lambda y: y.__setitem__(0, 2.0)])
def test_writing_an_output_pytorch_does_not_save_keeps_the_gradient(make, write):
    """PyTorch saves the inputs of div, pow(scalar), leaky_relu, elu and hardtanh, so writing into their
    output is allowed there; minitensor matches (finite differences of the whole function)."""
    def fn(x, s):
        y = make(x, s)
        write(y)
        return y * y

    check_grad(fn, np.array([0.3, -1.2, 0.8]), np.array([1.5, 0.7, -2.0]))


def test_batch_norm_training_bumps_the_running_statistics_an_eval_graph_saved():
    bn = mt.nn.BatchNorm1d(3).eval()
    x = mt.randn(4, 3, requires_grad=True)
    y = bn(x).sum()  # evaluation saves running_mean and running_var's inverse std
    versions = bn.running_mean._version, bn.running_var._version
    bn.train()
    bn(mt.randn(4, 3))
    assert (bn.running_mean._version, bn.running_var._version) == (versions[0] + 1, versions[1] + 1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


# --------------------------------------------------------------- writes through another view of the memory
def test_writing_through_a_view_rewrites_the_base_history():
    """y[0].mul_(3) changes y's values and y's history (PyTorch's CopySlices): d sum(y)/dx = 2, 6 on row 0."""
    x = mt.randn(3, 4, requires_grad=True)
    y = x * 2
    y[0].mul_(3)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[6.0] * 4, [2.0] * 4, [2.0] * 4])


def test_a_view_made_before_a_write_into_its_base_reads_the_new_base():
    x = mt.randn(3, 4, requires_grad=True)
    y = x * 2
    v = y[0]
    y.mul_(3)
    v.sum().backward()  # v's node is remade over the written y (PyTorch's AsStridedBackward)
    np.testing.assert_allclose(x.grad.numpy(), [[6.0] * 4, [0.0] * 4, [0.0] * 4])


def test_the_written_tensor_itself_and_later_views_keep_exact_gradients():
    x = mt.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    y = x * 2
    v = y[0]
    v.mul_(3)  # v's own history covers the write
    (v * v).sum().backward()
    expected = np.zeros((3, 4))
    expected[0] = 2 * (6 * np.arange(4.0)) * 6  # d/dx (6x)^2 = 72 x
    np.testing.assert_allclose(x.grad.numpy(), expected)

    x.grad = None
    y = x * 2
    y[1] = 3.0  # setitem on y: y's history covers it
    w = y[2]    # a view made after the write is current
    (w.sum() + y.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[2.0] * 4, [0.0] * 4, [4.0] * 4])


def test_a_view_written_in_place_then_used_alone_is_fine():
    """The usual pattern: a view made, written in place, and used; the base is not used again."""
    x = mt.randn(2, 6, requires_grad=True)
    y = (x * 2).view(12)
    mt.nn.functional.relu(y, inplace=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(x.detach().numpy() > 0, 2.0, 0.0))


def test_writes_through_detach_do_not_make_the_history_stale():
    """detach() shares the version counter but is no graph view: y keeps its history, as in PyTorch."""
    x = mt.ones(3, requires_grad=True)
    y = x * 2
    y.detach().mul_(3)
    (y * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])
