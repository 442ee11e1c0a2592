"""autograd.graph: saved-tensor hooks, Node and its hooks, multi-grad hooks, gradient edges, versions."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import Function
from minitensor.autograd.graph import (GradientEdge, Node, disable_saved_tensors_hooks, get_gradient_edge,
                                       increment_version, register_multi_grad_hook, save_on_cpu,
                                       saved_tensors_hooks)

from helpers import assert_close


def _mul_exp(a: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    return ((a * b).exp()).sum()


def test_pack_gets_inputs_and_outputs_unpack_at_backward():
    a = mt.tensor([1.0, 2.0], requires_grad=True)
    b = mt.tensor([0.5, -1.0], requires_grad=True)
    log: list = []

    def pack(t):
        log.append("pack")
        return ("boxed", t.detach().numpy().copy())  # anything may be packed

    def unpack(p):
        log.append("unpack")
        return mt.tensor(p[1])

    with saved_tensors_hooks(pack, unpack):
        y = a * b
        packed_inputs = list(log)
        z = y.exp()  # saves its output
    assert packed_inputs == ["pack", "pack"]
    assert log == ["pack"] * 3
    z.sum().backward()
    assert log.count("unpack") == 3
    e = np.exp(np.array([0.5, -2.0]))
    assert_close(a.grad, e * np.array([0.5, -1.0]))
    assert_close(b.grad, e * np.array([1.0, 2.0]))


def test_pack_receives_the_input_tensor_itself():
    a = mt.ones(3, requires_grad=True)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(t) or t.detach(), lambda t: t):
        (a * a).sum()
    assert any(t is a for t in seen)


def test_hooks_nest_innermost_applies_and_outside_none():
    a = mt.ones(2, requires_grad=True)
    log = []
    with saved_tensors_hooks(lambda t: log.append("outer") or t.detach(), lambda t: t):
        with saved_tensors_hooks(lambda t: log.append("inner") or t.detach(), lambda t: t):
            (a * a).sum()
        (a * 3.0).sum()  # saves nothing that is a tensor? mul by a number saves the number
        (a * a).sum()
    n = len(log)
    (a * a).sum()  # no hooks set: nothing packed
    assert log[:2] == ["inner", "inner"] and "outer" in log[2:] and len(log) == n


def test_unpack_must_return_a_tensor():
    a = mt.ones(2, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t.numpy()):
        y = (a * a).sum()
    with pytest.raises(TypeError, match="unpack_hook"):
        y.backward()


def test_custom_function_saves_through_hooks():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * x * g

    x = mt.tensor([1.0, 2.0], requires_grad=True)
    log = []
    with saved_tensors_hooks(lambda t: log.append("p") or t.detach() * 1, lambda t: log.append("u") or t):
        y = Cube.apply(x)
    y.sum().backward()
    assert log == ["p", "u"]
    assert_close(x.grad, [3.0, 12.0])


def test_hooks_with_create_graph():
    x = mt.tensor([0.3, -0.4], dtype=mt.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = (x.sin() * x).sum()
    g, = mt.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    a = np.array([0.3, -0.4])
    assert_close(x.grad, 2 * np.cos(a) - a * np.sin(a), rtol=1e-10)


def test_save_on_cpu_keeps_gradients():
    x = mt.tensor([0.1, 0.2, 0.3], requires_grad=True)
    with save_on_cpu(pin_memory=False):
        y = (x.tanh() * x).sum()
    y.backward()
    a = np.array([0.1, 0.2, 0.3])
    assert_close(x.grad, np.tanh(a) + a * (1 - np.tanh(a) ** 2), rtol=1e-5)


def test_disable_saved_tensors_hooks():
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        pass


def test_node_is_the_grad_fn_class():
    x = mt.ones(2, requires_grad=True)
    y = x * 2
    assert isinstance(y.grad_fn, Node)
    assert not isinstance(x, Node)
    assert isinstance(y.grad_fn.name(), str)
    node, index = y.grad_fn.next_functions[0]
    assert node.variable is x and index == 0
    y.grad_fn.metadata["tag"] = 1
    assert y.grad_fn.metadata == {"tag": 1}


def test_node_hook_and_prehook_replace_gradients():
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda go: (go[0] + 1,))
    h = y.grad_fn.register_hook(lambda gi, go: calls.append((gi, go)) or (gi[0] * 10,))
    y.sum().backward()
    assert_close(x.grad, [40.0, 40.0, 40.0])  # (1 + 1) * 2, then * 10
    (gi,), (go,) = calls[0]
    assert_close(gi, [4.0, 4.0, 4.0]) and assert_close(go, [2.0, 2.0, 2.0])
    h.remove()
    x.grad = None
    z = x * 2
    z.sum().backward()
    assert_close(x.grad, [2.0, 2.0, 2.0])


def test_multi_grad_hook_all_and_any():
    a = mt.tensor([1.0, 2.0], requires_grad=True)
    b = mt.tensor([3.0, 4.0], requires_grad=True)
    got = []
    h = register_multi_grad_hook([a, b], lambda gs: got.append(gs))
    (a * b).sum().backward()
    (a * 2).sum().backward()
    assert len(got) == 2
    assert_close(got[0][0], [3.0, 4.0]) and assert_close(got[0][1], [1.0, 2.0])
    assert_close(got[1][0], [2.0, 2.0]) and got[1][1] is None
    h.remove()
    (a * b).sum().backward()
    assert len(got) == 2
    first = []
    register_multi_grad_hook([a, b], lambda g: first.append(g), mode="any")
    (a * b).sum().backward()
    assert len(first) == 1
    with pytest.raises(ValueError):
        register_multi_grad_hook([a], lambda g: None, mode="some")


def test_gradient_edge_and_increment_version():
    x = mt.ones(2, requires_grad=True)
    y = x * x
    assert get_gradient_edge(y) == GradientEdge(y.grad_fn, 0)
    assert get_gradient_edge(x).node is x
    with pytest.raises(RuntimeError):
        get_gradient_edge(mt.ones(2))
    v = x._version
    increment_version(x)
    assert x._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.torch
def test_node_hooks_match_torch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (mt, torch):
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = x.exp() * x
        y.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        y.grad_fn.register_hook(lambda gi, go: tuple(None if g is None else g + 1 for g in gi))
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 1, lambda t: t):
            z = (y * y).sum()
        z.backward()
        results.append(x.grad.detach().numpy())
    assert_close(mt.tensor(results[0]), results[1], rtol=1e-5)


def test_grad_takes_gradient_edges():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    gh, gx = mt.autograd.grad(y, [get_gradient_edge(h), get_gradient_edge(x)], retain_graph=True)
    assert_close(gh, [6.0, 12.0]) and assert_close(gx, [18.0, 36.0])
    g, = mt.autograd.grad(get_gradient_edge(h), x, grad_outputs=mt.ones(2), retain_graph=True)
    assert_close(g, [3.0, 3.0])
    with pytest.raises(RuntimeError, match="GradientEdge"):
        mt.autograd.grad(get_gradient_edge(h), x)
    g2, = mt.autograd.grad(y, get_gradient_edge(h), create_graph=True)
    assert g2.requires_grad


def test_node_hook_on_a_multi_output_function():
    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = mt.ones(2, requires_grad=True)
    a, b = Two.apply(x)
    seen = []
    a.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
    (a + 2 * b).sum().backward()
    (gi,), (g1, g2) = seen[0]
    assert_close(gi, [8.0, 8.0]) and assert_close(g1, [1.0, 1.0]) and assert_close(g2, [2.0, 2.0])
    with pytest.raises(NotImplementedError):
        a.grad_fn.register_prehook(lambda go: None)


def test_pack_hook_runs_without_grad():
    x = mt.ones(2, requires_grad=True)
    modes = []

    def pack(t):
        modes.append(mt.is_grad_enabled())
        return t * t  # would save (and pack) again if recorded

    with saved_tensors_hooks(pack, lambda p: p.sqrt()):
        y = x.exp()
    assert modes == [False]
    y.sum().backward()
    assert_close(x.grad, np.exp([1.0, 1.0]))
