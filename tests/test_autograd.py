"""Autograd semantics: graph shapes, retain_graph, grad modes, grad(), retain_grad, freeing, anomalies."""
from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import ArrayFunction

from helpers import assert_close, check_grad, t64


# ----------------------------------------------------------------------------------- graph shapes
def test_fan_in_accumulates():
    x = t64([1.0, -2.0, 3.0])
    y = x * x + x + x.exp() * x  # x reaches the sum along four paths
    y.sum().backward()
    a = np.array([1.0, -2.0, 3.0])
    assert_close(x.grad, 2 * a + 1 + np.exp(a) * (a + 1), rtol=1e-12)


def test_diamond_shares_a_subgraph():
    x = t64([0.3, -0.7])
    a = x * 2.0
    out = (a.exp() + a.sin() * a).sum()
    out.backward()
    v = np.array([0.6, -1.4])
    assert_close(x.grad, 2 * (np.exp(v) + np.cos(v) * v + np.sin(v)), rtol=1e-12)
    check_grad(lambda t: ((t * 2.0).exp() + (t * 2.0).sin() * (t * 2.0)).sum(), [0.3, -0.7])


def test_the_same_tensor_twice_in_one_op():
    x = t64([3.0])
    (x * x).backward()
    assert x.grad.item() == 6.0
    y = t64([2.0])
    (y / y + y - y).backward()
    assert y.grad.item() == 0.0


def test_several_outputs_and_leaf_outputs():
    x = t64([1.0, 2.0])
    y1, y2 = x * 2, x * x
    mt.autograd.backward([y1.sum(), y2.sum()])
    assert_close(x.grad, [4.0, 6.0])
    w = t64([1.0, 2.0])
    w.backward(mt.tensor([3.0, 4.0], dtype=mt.float64))  # a leaf as the output: its grad is the seed
    assert_close(w.grad, [3.0, 4.0])


def test_only_leaves_get_grad():
    x = t64([1.0])
    h = x * 3
    (h * h).backward()
    assert h.grad is None and x.grad.item() == 18.0
    c = mt.tensor([1.0])
    (x * c).backward()
    assert c.grad is None


# ---------------------------------------------------------------------------------- retain_graph
def test_second_backward_without_retain_graph_raises():
    x = t64([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_retain_graph_lets_grads_accumulate_twice():
    x = t64([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, [4.0, 8.0])


def test_grad_accumulates_across_calls_until_cleared():
    x = t64([1.0, 2.0])
    for _ in range(3):
        (x * 3).sum().backward()
    assert_close(x.grad, [9.0, 9.0])
    x.grad.zero_()
    (x * 3).sum().backward()
    assert_close(x.grad, [3.0, 3.0])
    x.grad = None
    (x * 2).sum().backward()
    assert_close(x.grad, [2.0, 2.0])


def test_grad_owns_its_memory():
    x = t64([1.0, 2.0])
    seed = mt.tensor([1.0, 1.0], dtype=mt.float64)
    x.clone().backward(seed)
    seed[0] = 100.0
    assert x.grad.tolist() == [1.0, 1.0]
    y = t64([1.0])
    (y + 0).backward()
    assert not np.shares_memory(y.grad.numpy(), y.detach().numpy())


# ------------------------------------------------------------------------------- seeding backward
def test_non_scalar_backward_needs_a_gradient():
    x = t64([1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        y.backward()
    y.backward(gradient=mt.tensor([1.0, 10.0], dtype=mt.float64))
    assert_close(x.grad, [2.0, 20.0])
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).backward(mt.ones(3, dtype=mt.float64))


def test_backward_gradient_as_array_and_list():
    x = t64([1.0, 2.0])
    (x * 3).backward(np.array([1.0, 2.0]))
    assert_close(x.grad, [3.0, 6.0])
    x.grad = None
    (x * 3).backward([1.0, 1.0])
    assert_close(x.grad, [3.0, 3.0])


def test_backward_of_a_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mt.ones(2).sum().backward()


def test_backward_inputs_restricts_accumulation():
    x, w = t64([1.0]), t64([2.0])
    (x * w).backward(inputs=[w])
    assert x.grad is None and w.grad.item() == 1.0


def test_backward_create_graph_gives_a_grad_with_a_graph():
    x = t64([3.0])
    (x * x * x).backward(create_graph=True)
    assert x.grad.grad_fn is not None and x.grad.item() == 27.0
    (g,) = mt.autograd.grad(x.grad.sum(), x)
    assert g.item() == 18.0  # d/dx 3 x^2


# ----------------------------------------------------------------------------------- grad modes
def test_no_grad_context_and_nesting():
    x = t64([1.0])
    with mt.no_grad():
        assert not mt.is_grad_enabled()
        y = x * 2
        with mt.enable_grad():
            assert mt.is_grad_enabled()
            z = x * 2
        assert not mt.is_grad_enabled()
    assert mt.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None


def test_grad_mode_decorators():
    @mt.no_grad()
    def f(t):
        """doc"""
        return t * 2, mt.is_grad_enabled()

    @mt.enable_grad()
    def g(t):
        return t * 2

    @mt.set_grad_enabled(False)
    def h(t):
        return t * 2

    x = t64([1.0])
    y, inside = f(x)
    assert not y.requires_grad and not inside and f.__name__ == "f" and f.__doc__ == "doc"
    assert mt.is_grad_enabled(), "the decorator restores the mode after the call"
    assert not h(x).requires_grad and mt.is_grad_enabled()
    with mt.no_grad():
        assert g(x).requires_grad
        assert not mt.is_grad_enabled()


def test_grad_mode_restored_after_an_exception():
    with pytest.raises(ValueError):
        with mt.no_grad():
            raise ValueError
    assert mt.is_grad_enabled()

    @mt.no_grad()
    def boom():
        raise KeyError

    with pytest.raises(KeyError):
        boom()
    assert mt.is_grad_enabled()


def test_set_grad_enabled_as_call_and_context():
    x = t64([1.0])
    mt.set_grad_enabled(False)
    try:
        assert not mt.is_grad_enabled() and not (x * 2).requires_grad
    finally:
        mt.set_grad_enabled(True)
    assert mt.is_grad_enabled()
    with mt.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert mt.is_grad_enabled()
    with mt.no_grad():
        with mt.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not mt.is_grad_enabled()


def test_inference_mode():
    x = t64([1.0])
    with mt.inference_mode():
        assert not (x * 2).requires_grad
    with mt.inference_mode(False):
        assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def worker():
        with mt.no_grad():
            entered.set()
            release.wait(5)
            seen["worker"] = mt.is_grad_enabled()

    th = threading.Thread(target=worker)
    th.start()
    assert entered.wait(5)
    seen["main"] = mt.is_grad_enabled()
    seen["main_graph"] = (t64([1.0]) * 2).requires_grad
    release.set()
    th.join(5)
    assert seen == {"worker": False, "main": True, "main_graph": True}

    with mt.no_grad():  # a new thread starts with grad mode on, whatever the parent's mode
        fresh = []
        t = threading.Thread(target=lambda: fresh.append(mt.is_grad_enabled()))
        t.start()
        t.join(5)
    assert fresh == [True]


# ------------------------------------------------------------------------------ detach, requires
def test_detach_stops_gradients():
    x = t64([2.0])
    y = x * x.detach()  # only the first factor carries a gradient
    y.backward()
    assert x.grad.item() == 2.0
    d = x.detach()
    assert d.requires_grad is False and d.is_leaf
    z = x * 3
    z.detach_()
    assert z.grad_fn is None and not z.requires_grad


def test_requires_grad_():
    x = mt.tensor([1.0, 2.0])
    assert x.requires_grad_() is x and x.requires_grad
    (x * x).sum().backward()
    assert_close(x.grad, [2.0, 4.0])
    x.requires_grad_(False)
    assert not (x * 2).requires_grad


# --------------------------------------------------------------------------------- autograd.grad
def test_autograd_grad_leaves_dot_grad_alone():
    x = t64([1.0, 2.0])
    y = (x ** 3).sum()
    (g,) = mt.autograd.grad(y, x)
    assert_close(g, [3.0, 12.0])
    assert x.grad is None
    x.grad = mt.ones(2, dtype=mt.float64)
    mt.autograd.grad((x * 2).sum(), [x])
    assert x.grad.tolist() == [1.0, 1.0]


def test_autograd_grad_for_non_leaf_inputs():
    x = t64([1.0, 2.0])
    h = x * 3
    out = (h * h).sum()
    gh, gx = mt.autograd.grad(out, [h, x])
    assert_close(gh, [6.0, 12.0])
    assert_close(gx, [18.0, 36.0])
    assert x.grad is None and h.grad is None


def test_autograd_grad_options():
    x, unused = t64([1.0]), t64([5.0])
    with pytest.raises(RuntimeError, match="allow_unused"):
        mt.autograd.grad((x * 2).sum(), [x, unused])
    gx, gu = mt.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gx.item() == 2.0 and gu is None
    gx, gu = mt.autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
    assert gu.tolist() == [0.0]
    (g,) = mt.autograd.grad(x * 2, x, grad_outputs=mt.tensor([4.0], dtype=mt.float64))
    assert g.item() == 8.0
    y = (x * x).sum()
    mt.autograd.grad(y, x, retain_graph=True)
    (g,) = mt.autograd.grad(y, x)
    assert g.item() == 2.0
    with pytest.raises(RuntimeError, match="retain_graph"):
        mt.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="does not require grad"):
        mt.autograd.grad((x * 2).sum(), mt.ones(1))


def test_autograd_grad_sums_broadcast_inputs():
    x = t64([[1.0], [2.0]])
    (g,) = mt.autograd.grad((x * mt.ones(2, 3, dtype=mt.float64)).sum(), x)
    assert g.shape == (2, 1) and g.tolist() == [[3.0], [3.0]]


def test_retain_grad():
    x = t64([1.0, 2.0])
    h = x * 3
    h.retain_grad()
    u = h * h + h  # fan-in at h
    u.sum().backward()
    assert_close(h.grad, 2 * np.array([3.0, 6.0]) + 1)
    assert_close(x.grad, 3 * (2 * np.array([3.0, 6.0]) + 1))
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        mt.ones(1).retain_grad()
    x.retain_grad()  # a no-op on leaves


# ----------------------------------------------------------------------------- memory, deep graphs
def test_saved_arrays_are_freed_after_backward():
    x = t64(np.arange(4.0))
    e = (x * 2).exp()  # Exp saves its output; nothing else keeps that array after `del e`
    node = e.grad_fn
    saved_ref = weakref.ref(node.saved_arrays[0])
    loss = (e * 1.0).sum()
    del e
    gc.collect()
    assert saved_ref() is not None
    loss.backward()
    gc.collect()
    assert node._saved is None
    assert saved_ref() is None, "the saved array is released once backward has used it"
    with pytest.raises(RuntimeError, match="retain_graph"):
        node.saved_arrays


def test_retain_graph_keeps_saved_arrays():
    x = t64([1.0])
    e = x.exp()
    e.backward(retain_graph=True)
    assert e.grad_fn._saved is not None
    e.backward()
    assert e.grad_fn._saved is None and x.grad.item() == pytest.approx(2 * np.e)


def test_a_long_chain_has_no_recursion_limit():
    x = t64([1.0])
    y = x
    for _ in range(10000):
        y = y * 1.0001
    y.backward()
    assert x.grad.item() == pytest.approx(1.0001 ** 10000, rel=1e-9)
    z = x
    for i in range(10000):
        z = z + 0.5 if i % 2 else z.sin()
    z.backward()  # a mixed chain too
    del y, z
    gc.collect()


def test_graph_is_released_with_its_output():
    x = t64(np.ones(3))
    y = (x * 2).exp()
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None


# ------------------------------------------------------------------------------------ anomalies
def test_detect_anomaly_forward_names_the_op():
    x = t64([-1.0, 1.0])
    with np.errstate(invalid="ignore"):
        assert np.isnan(x.log().detach().numpy()[0])  # off: no check
        with mt.autograd.detect_anomaly():
            assert mt.autograd.is_anomaly_enabled()
            with pytest.raises(RuntimeError, match="Log"):
                x.log()
    assert not mt.autograd.is_anomaly_enabled()


def test_detect_anomaly_backward_names_the_op_and_the_line():
    x = t64([0.0, 1.0])
    with np.errstate(divide="ignore"):
        with mt.autograd.detect_anomaly():
            y = x.sqrt().sum()  # finite forward, infinite gradient at 0
            with pytest.raises(RuntimeError, match=r"Sqrt(?s:.*)test_autograd\.py"):
                y.backward()
        # outside anomaly mode the inf gradient is silently produced, as in PyTorch
        x.sqrt().sum().backward()
    assert np.isinf(x.grad.numpy()[0])


def test_detect_anomaly_also_refuses_a_forward_inf():
    """Documented in docs/differences.md: forward outputs are checked for inf too (PyTorch does not)."""
    with np.errstate(divide="ignore"):
        with mt.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="Log"):
                mt.log(t64([0.0, 1.0]))


def test_set_detect_anomaly():
    with mt.autograd.set_detect_anomaly(True):
        assert mt.autograd.is_anomaly_enabled()
        with mt.autograd.set_detect_anomaly(False):
            assert not mt.autograd.is_anomaly_enabled()
        assert mt.autograd.is_anomaly_enabled()
    assert not mt.autograd.is_anomaly_enabled()


# --------------------------------------------------------------------------------- custom Function
class ScaledCube(ArrayFunction):
    """y = s * x^3 with a non-tensor parameter s; dx = 3 s x^2."""

    @staticmethod
    def forward(ctx, B, x, s):
        ctx.save_for_backward(x)
        ctx.s = s
        return s * x * x * x

    @staticmethod
    def backward(ctx, B, gy):
        x, = ctx.saved_arrays
        return gy * 3 * ctx.s * x * x, None


class AddWithCount(ArrayFunction):
    """a + b (broadcasting), and a non-differentiable extra output; backward ignores broadcasting and
    returns float64 gradients: the engine sums them to each input's shape and casts them."""

    @staticmethod
    def forward(ctx, B, a, b):
        ctx.needs = ctx.needs_input_grad
        return a + b, B.xp.asarray(a.size + b.size)

    @staticmethod
    def backward(ctx, B, gy):
        return gy.astype(np.float64), (gy.astype(np.float64) if ctx.needs_input_grad[1] else None)


def test_custom_function():
    check_grad(lambda t: ScaledCube.apply(t, 2.5), [0.5, -1.5])
    x = mt.tensor([2.0], requires_grad=True)
    y = ScaledCube.apply(x, 2.0)
    assert y.grad_fn.name() == "ScaledCubeBackward0" and y.item() == 16.0
    y.backward()
    assert x.grad.item() == 24.0


def test_custom_function_extras_broadcasting_and_needs_input_grad():
    a = mt.ones(3, 1, requires_grad=True)
    b = mt.ones(4)
    y, count = AddWithCount.apply(a, b)
    assert y.shape == (3, 4) and count.item() == 7 and not count.requires_grad
    assert tuple(y.grad_fn.needs) == (True, False)
    y.sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.dtype is mt.float32 and a.grad.tolist() == [[4.0]] * 3
    with mt.no_grad():
        y2, _ = AddWithCount.apply(a, b)
    assert y2.grad_fn is None


def test_function_needs_a_tensor_argument():
    with pytest.raises(TypeError, match="tensor"):
        ScaledCube.apply(1.0, 2.0)


def test_next_functions_describe_the_graph():
    x = mt.ones(1, requires_grad=True)
    y = (x * 2).exp()
    ((mul_node, i),) = y.grad_fn.next_functions
    ((acc, j),) = mul_node.next_functions
    assert "Mul" in mul_node.name() and acc.variable is x and i == j == 0
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.next_functions == ()


def test_autograd_grad_runs_only_the_part_of_the_graph_it_needs():
    x = t64([0.5, 1.0])
    h = x.exp()  # Exp saves its output
    out = (h * h).sum()
    (gh,) = mt.autograd.grad(out, h)
    assert_close(gh, 2 * np.exp([0.5, 1.0]), rtol=1e-12)
    assert h.grad_fn._saved is not None, "the node below the input neither ran nor freed its arrays"
    h.sum().backward()  # so the rest of the graph is still usable, as in PyTorch
    assert_close(x.grad, np.exp([0.5, 1.0]), rtol=1e-12)


def test_autograd_grad_with_the_same_input_twice():
    x = t64([2.0])
    h = x * 3
    g1, g2 = mt.autograd.grad((h * h).sum(), [h, h])
    assert g1.item() == 12.0 and g2.item() == 12.0
    a, b = mt.autograd.grad((x * x).sum(), [x, x])
    assert a.item() == 4.0 and b.item() == 4.0


def test_many_slices_of_one_tensor_accumulate_into_one_gradient() -> None:
    """Slices of one tensor (an RNN's time steps), basic and advanced, overlapping, summed with weights:
    the engine writes each slice's gradient into one buffer; the result equals the dense reference."""
    rng = np.random.default_rng(0)
    x = mt.tensor(rng.standard_normal((6, 3, 2)), requires_grad=True)
    weights = rng.standard_normal(6)
    total = sum(x[t] * float(weights[t]) for t in range(6)) + x[1:4].sum(0) + x[[0, 0, 5]].sum(0)
    total.sum().backward()
    expected = np.repeat(weights[:, None, None], 3, 1).repeat(2, 2)
    expected[1:4] += 1
    expected[0] += 2
    expected[5] += 1
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_zero_dim_leaf_with_fan_in_gets_an_array_grad_that_accumulates() -> None:
    """The engine hands its own sums to .grad without a copy; for 0-d leaves NumPy makes those sums scalars,
    and .grad must still hold an array that later backwards add into in place."""
    x = mt.tensor(2.0, requires_grad=True)
    (x * x + x * 3).backward()
    assert isinstance(x.grad.array, np.ndarray) and x.grad.item() == 7.0
    held = x.grad.array
    (x * 5).backward()
    assert x.grad.array is held and x.grad.item() == 12.0


class FreshGradient(ArrayFunction):
    """y = 2 x; backward returns a new array, and (for the test) keeps only a weak reference to it."""
    made: list = []

    @staticmethod
    def forward(ctx, B, x):
        return x * 2

    @staticmethod
    def backward(ctx, B, gy):
        g = gy * 2
        FreshGradient.made.append(weakref.ref(g))
        return g


class ReturnsSaved(ArrayFunction):
    """y = x * c for a constant array c it saves; backward hands back c * gy, or c itself (the gradient
    for a gy of ones) when told to: an array the node and the caller still hold."""

    @staticmethod
    def forward(ctx, B, x, c, as_is):
        ctx.save_for_backward(c)
        ctx.as_is = as_is
        return x * c

    @staticmethod
    def backward(ctx, B, gy):
        c, = ctx.saved_arrays
        return (c if ctx.as_is else gy * c), None, None


def test_grad_takes_a_fresh_gradient_without_a_copy():
    x = t64([1.0, 2.0])
    FreshGradient.made.clear()
    FreshGradient.apply(x).backward(mt.tensor([1.0, 3.0], dtype=mt.float64))
    assert FreshGradient.made[0]() is x.grad.array  # nothing else held it: it became .grad itself
    assert_close(x.grad, [2.0, 6.0])
    FreshGradient.apply(x).backward(mt.tensor([1.0, 1.0], dtype=mt.float64))  # later ones add in place
    assert FreshGradient.made[0]() is x.grad.array
    assert_close(x.grad, [4.0, 8.0])


def test_grad_copies_a_gradient_that_something_else_holds():
    c = np.array([3.0, 4.0])
    for retain in (False, True):  # the saved array, or (freed) the caller's array
        x = t64([1.0, 2.0])
        ReturnsSaved.apply(x, c, True).backward(mt.ones(2, dtype=mt.float64), retain_graph=retain)
        assert not np.shares_memory(x.grad.numpy(), c)
        x.grad.array += 1  # .grad is x's own memory
        assert c.tolist() == [3.0, 4.0]
    a, b = t64([1.0]), t64([2.0])
    (a + b).backward()  # one gy for both inputs
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    a.grad.array += 1
    assert b.grad.item() == 1.0


def test_fan_in_adds_into_a_fresh_gradient_and_leaves_shared_ones_alone():
    x = t64([1.0, 2.0])
    h = x * 1.0
    out = FreshGradient.apply(h) + h  # h gets a fresh gradient and the add's gy (shared with the add)
    g = mt.tensor([1.0, 10.0], dtype=mt.float64)
    out.backward(g)
    assert_close(x.grad, [3.0, 30.0])
    assert g.tolist() == [1.0, 10.0]  # the seed was not added into


def test_nodes_run_after_everything_that_feeds_them_across_roots():
    """Roots that are ancestors of other roots, and nodes made in an interleaved order: each node runs once,
    after all its consumers (they are newer), and every path adds in."""
    x = t64([0.5, -1.0])
    y = x * 2
    a = y.exp()
    b = x.sin()
    z = a * b + y  # made after a and b; y feeds a, z and itself is a root below
    mt.autograd.backward([z.sum(), y.sum(), a.sum()])
    v = np.array([0.5, -1.0])
    want = 2 * np.exp(2 * v) * np.sin(v) + np.exp(2 * v) * np.cos(v) + 2 + 2 + 2 * np.exp(2 * v)
    assert_close(x.grad, want, rtol=1e-12)


def test_autograd_grad_for_a_leaf_leaves_the_other_branches_alone():
    x, w = t64([1.0, 2.0]), t64([0.5, -0.5])
    h = w.exp()  # Exp saves its output; it leads to w only
    (gx,) = mt.autograd.grad((x * h).sum(), x)
    assert_close(gx, np.exp([0.5, -0.5]), rtol=1e-12)
    assert h.grad_fn._saved is not None, "a node that feeds no wanted gradient neither ran nor freed its arrays"
    assert w.grad is None


def test_a_function_cannot_define_init():
    """apply makes the ctx without calling __init__ (it is on every op's path), so one is refused at once."""
    from minitensor.autograd.function import ArrayFunction
    with pytest.raises(TypeError, match="cannot define __init__"):
        class WithInit(ArrayFunction):  # noqa: F841
            def __init__(self) -> None:
                self.x = 1


def test_an_existing_grad_accumulates_as_each_gradient_arrives() -> None:
    """PyTorch's AccumulateGrad: a leaf with a .grad adds each gradient into it in place when it arrives, not at
    the end of backward (so a step after zero_grad(set_to_none=False) holds no second copy of the gradients):
    a hook on a node that runs later already sees it (PyTorch 2.13 gives the same)."""
    v = mt.ones(3, requires_grad=True)
    w = mt.ones(3, requires_grad=True)
    w.grad = mt.zeros(3)
    grad_before = w.grad
    a = v * 1  # the oldest node: it runs last
    seen = []
    a.register_hook(lambda g: seen.append(w.grad.tolist()))
    ((w * 2).sum() + (w * 3).sum() + a.sum()).backward()
    assert seen == [[5.0, 5.0, 5.0]] and w.grad is grad_before and w.grad.tolist() == [5.0, 5.0, 5.0]
