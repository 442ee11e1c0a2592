"""``grad_fn.next_functions``: PyTorch's ``(node, output index)`` pairs, a leaf seen as its ``AccumulateGrad``
(pytorch/tutorials' blitz/neural_networks_tutorial.py walks ``loss.grad_fn.next_functions[0][0]``)."""
from __future__ import annotations

import pytest

import minitensor as mt
import minitensor.nn as nn


def _walk(fn):
    """Every node reachable from ``fn`` by next_functions[i][0], in order (depth first)."""
    out, stack = [], [fn]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(n for n, _ in reversed(node.next_functions) if n is not None)
    return out


def test_pairs_and_accumulate_grad():
    x = mt.ones(3, requires_grad=True)
    w = mt.ones(3, requires_grad=True)
    y = (x * w).relu().sum()
    (relu, i), = y.grad_fn.next_functions
    (mul, j), = relu.next_functions
    (acc_x, k), (acc_w, m) = mul.next_functions
    assert (i, j, k, m) == (0, 0, 0, 0)
    assert acc_x.variable is x and acc_w.variable is w and acc_x.next_functions == ()
    assert acc_x is ((x * 2).grad_fn.next_functions[0][0])  # one AccumulateGrad per leaf while held


def test_tutorial_walk_through_a_linear_network():
    """The tutorial's three prints: the loss node, the last Linear's node, a node under it."""
    mt.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    loss = nn.MSELoss()(net(mt.randn(1, 4)), mt.randn(1, 2))
    first = loss.grad_fn.next_functions[0][0]
    second = first.next_functions[0][0]
    assert "Mse" in loss.grad_fn.name() or "MSE" in loss.grad_fn.name()
    assert first is not None and second is not None
    leaves = [n.variable for n in _walk(loss.grad_fn) if hasattr(n, "variable")]
    assert {id(t) for t in leaves} == {id(p) for p in net.parameters()}


@pytest.mark.torch
def test_leaves_reached_match_pytorch():
    torch = pytest.importorskip("torch")

    def leaf_count(lib, seq):
        lib.manual_seed(0)
        net = seq(lib)
        x = lib.randn(2, 4)
        loss = ((net(x) - 1) ** 2).mean()
        accs = [n for n in _walk(loss.grad_fn) if hasattr(n, "variable")]
        return len({id(a.variable) for a in accs}), all(isinstance(i, int) for _, i in loss.grad_fn.next_functions)

    def seq(lib):
        return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1))
    assert leaf_count(mt, seq) == leaf_count(torch, seq) == (4, True)
