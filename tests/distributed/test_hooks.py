"""Tensor.register_hook, register_post_accumulate_grad_hook and the end-of-backward callbacks, against
PyTorch's semantics (hook order, replacement gradients, handle removal, non-leaves, retain_grad)."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import hooks


def test_leaf_hook_sees_the_summed_gradient_and_replaces_it():
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()))
    x.register_hook(lambda g: g * 10)
    (x * x + x).sum().backward()  # two edges into x: the hook runs once, on their sum
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0].numpy(), [3.0, 5.0, 7.0])
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 50.0, 70.0])


def test_hooks_run_in_registration_order_each_on_the_previous_result():
    x = mt.tensor([1.0], requires_grad=True)
    order = []
    x.register_hook(lambda g: order.append(("a", g.item())) or g + 1)
    x.register_hook(lambda g: order.append(("b", g.item())) or g * 3)
    (2 * x).sum().backward()
    assert order == [("a", 2.0), ("b", 3.0)]
    assert x.grad.item() == 9.0


def test_handle_remove_unregisters_and_twice_is_harmless():
    x = mt.tensor([1.0], requires_grad=True)
    h = x.register_hook(lambda g: g * 0)
    h.remove()
    h.remove()
    (3 * x).sum().backward()
    assert x.grad.item() == 3.0
    with x.register_hook(lambda g: g * 2):
        x.grad = None
        (3 * x).sum().backward()
        assert x.grad.item() == 6.0
    x.grad = None
    (3 * x).sum().backward()
    assert x.grad.item() == 3.0


def test_non_leaf_hook_changes_what_flows_on_and_retain_grad_sees_it():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()  # PyTorch: the retained grad reflects every hook, whenever registered
    y.register_hook(lambda g: g + 1)
    (y * 3).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [4.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 8.0])


def test_removed_non_leaf_hook_is_not_called():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 100).remove()
    (y * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_hook_on_a_view():
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    row = x[0]
    row.register_hook(lambda g: g * 5)
    (x.sum() + row.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[6.0, 6.0], [1.0, 1.0]])


def test_autograd_grad_runs_the_hooks_and_returns_a_non_leafs_gradient_before_them():
    """PyTorch: autograd.grad captures a non-leaf input's gradient before its hooks, a leaf's after."""
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 3)
    y = x * 2
    y.register_hook(lambda g: g * 7)
    gy, gx = mt.autograd.grad((y * y).sum(), [y, x])
    np.testing.assert_allclose(gy.numpy(), 2 * y.detach().numpy())
    np.testing.assert_allclose(gx.numpy(), 3 * 2 * 7 * gy.numpy())
    assert x.grad is None


def test_hook_that_changes_the_shape_is_refused():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="changed the size"):
        (x * 2).sum().backward()


def test_register_hook_needs_requires_grad():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        mt.zeros(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        mt.zeros(2).register_post_accumulate_grad_hook(lambda t: None)


def test_post_accumulate_hook_is_for_leaves_only():
    x = mt.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_post_accumulate_hook_sees_the_accumulated_grad():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    x.grad = mt.tensor([10.0, 10.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (x * 3).sum().backward()
    np.testing.assert_allclose(seen[0], [13.0, 13.0])
    x.backward(mt.ones(2), inputs=[x])  # backward(inputs=) accumulates through the same hooks
    np.testing.assert_allclose(seen[1], [14.0, 14.0])


def test_leaves_finish_as_soon_as_their_last_gradient_arrives():
    """The first layer's weight is finished before the second's input-side nodes run: what DDP overlaps.
    Order: w2 (the last layer) before w1, and each exactly once."""
    w1 = mt.randn(3, 3, requires_grad=True)
    w2 = mt.randn(3, 3, requires_grad=True)
    events = []
    w1.register_post_accumulate_grad_hook(lambda t: events.append("w1"))
    w2.register_post_accumulate_grad_hook(lambda t: events.append("w2"))
    x = mt.randn(4, 3)
    h = (x @ w1).tanh()
    h.register_hook(lambda g: events.append("h"))  # runs between w2 and w1
    (h @ w2).sum().backward()
    assert events == ["w2", "h", "w1"]


def test_queue_callback_runs_at_the_end_of_backward_after_every_grad():
    x = mt.tensor([1.0], requires_grad=True)
    w = mt.tensor([2.0], requires_grad=True)
    seen = []

    def hook(t):
        hooks.queue_callback(lambda: seen.append((x.grad.item(), w.grad.item())))

    w.register_post_accumulate_grad_hook(hook)
    (x * w).sum().backward()
    assert seen == [(2.0, 1.0)]
    with pytest.raises(RuntimeError, match="during backward"):
        hooks.queue_callback(lambda: None)


@pytest.mark.torch
def test_matches_pytorch_on_autograd_grad_inputs_and_self_removing_hooks():
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g * 3)
        y = x * 2
        y.register_hook(lambda g: g + 1)
        grads = list(lib.autograd.grad((y * y).sum(), [y, x]))
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        w.register_hook(lambda g: g * 2)

        def once(g):
            handle.remove()
            return g + 10
        handle = w.register_hook(once)
        for _ in range(2):
            (w * 1).sum().backward()
            grads.append(w.grad.clone())
        return [g.detach().numpy() for g in grads]

    for a, b in zip(run(mt), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.torch
def test_matches_pytorch_on_hooks_and_retain_grad():
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x.exp()
        y.register_hook(lambda g: g * 2)
        y.retain_grad()
        z = (y * x).sum()
        x.register_hook(lambda g: g - 1)
        z.backward()
        return x.grad.detach().numpy(), y.grad.detach().numpy()

    for a, b in zip(run(mt), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
