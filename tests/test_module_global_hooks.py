"""The global module hooks of ``minitensor.nn.modules.module`` (register_module_*): applied to every module,
before the module's own hooks; their handles remove them."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.nn.modules import module as M
from minitensor.nn.modules import module_hooks


@pytest.fixture(autouse=True)
def clean_globals():
    yield
    module_hooks._global_is_full_backward_hook[0] = None  # as PyTorch's, it stays set after removal
    assert not M._global_any, "a test left a global hook registered"


def test_forward_hooks_run_before_the_modules_own():
    order = []
    lin = nn.Linear(2, 2)
    lin.register_forward_pre_hook(lambda m, a: order.append("pre"))
    lin.register_forward_hook(lambda m, a, o: order.append("fwd"))
    with M.register_module_forward_pre_hook(lambda m, a: order.append("gpre")), \
            M.register_module_forward_hook(lambda m, a, o: order.append("gfwd")):
        lin(mt.randn(1, 2))
    assert order == ["gpre", "pre", "gfwd", "fwd"]
    lin(mt.randn(1, 2))
    assert order[4:] == ["pre", "fwd"]  # removed on leaving the with-blocks


def test_global_hooks_reach_every_module_and_may_replace_values():
    m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seen = []
    h1 = M.register_module_forward_pre_hook(lambda mod, a: seen.append(type(mod).__name__))
    h2 = M.register_module_forward_hook(lambda mod, a, out: out * 0 if isinstance(mod, nn.ReLU) else None)
    try:
        out = m(mt.randn(3, 2))
    finally:
        h1.remove()
        h2.remove()
    assert seen == ["Sequential", "Linear", "ReLU"]
    assert np.all(out.detach().numpy() == 0)


def test_forward_hook_with_kwargs_and_always_call():
    class Boom(nn.Module):
        def forward(self, x, scale=1.0):
            if scale < 0:
                raise ValueError("negative")
            return x * scale
    got = []
    h = M.register_module_forward_hook(lambda m, a, k, o: got.append(k), with_kwargs=True)
    h2 = M.register_module_forward_hook(lambda m, a, o: got.append("always"), always_call=True)
    try:
        Boom()(mt.ones(1), scale=2.0)
        assert got == [{"scale": 2.0}, "always"]
        with pytest.raises(ValueError, match="negative"):
            Boom()(mt.ones(1), scale=-1.0)
        assert got[2:] == ["always"]  # ran though forward raised; the with_kwargs one did not
    finally:
        h.remove()
        h2.remove()
    assert not module_hooks._global_forward_hooks_with_kwargs and not module_hooks._global_forward_hooks_always_called


def test_global_backward_hooks_run_before_the_modules_own():
    lin = nn.Linear(2, 2)
    order = []
    lin.register_full_backward_pre_hook(lambda m, go: order.append("pre"))
    lin.register_full_backward_hook(lambda m, gi, go: order.append("full"))
    h1 = M.register_module_full_backward_pre_hook(lambda m, go: order.append("gpre"))
    h2 = M.register_module_full_backward_hook(lambda m, gi, go: order.append("gfull"))
    try:
        lin(mt.randn(1, 2, requires_grad=True)).sum().backward()
    finally:
        h1.remove()
        h2.remove()
    assert order == ["gpre", "pre", "gfull", "full"]


def test_global_backward_hook_replaces_grad_input():
    h = M.register_module_full_backward_hook(lambda m, gi, go: tuple(None if g is None else g * 0 for g in gi))
    try:
        x = mt.randn(3, requires_grad=True)
        nn.Tanh()(x).sum().backward()
    finally:
        h.remove()
    assert np.all(x.grad.numpy() == 0)


def test_regular_and_full_global_backward_hooks_do_not_mix():
    h = M.register_module_backward_hook(lambda m, gi, go: None)
    h.remove()
    with pytest.raises(RuntimeError, match="as a global Module hook"):
        M.register_module_full_backward_hook(lambda m, gi, go: None)


def test_registration_hooks():
    seen = []

    def param_hook(m, name, p):
        seen.append(("param", name))
        return nn.Parameter(mt.zeros(p.shape)) if name == "bias" else None
    hp = M.register_module_parameter_registration_hook(param_hook)
    hb = M.register_module_buffer_registration_hook(lambda m, n, b: seen.append(("buf", n)))
    hm = M.register_module_module_registration_hook(lambda m, n, c: seen.append(("mod", n)))
    try:
        s = nn.Sequential(nn.BatchNorm1d(2))
        s.extra = nn.ReLU()
        s[0].running_mean = mt.ones(2)
    finally:
        hp.remove()
        hb.remove()
        hm.remove()
    assert seen == [("param", "weight"), ("param", "bias"), ("buf", "running_mean"), ("buf", "running_var"),
                    ("buf", "num_batches_tracked"), ("mod", "0"), ("mod", "extra"), ("buf", "running_mean")]
    assert np.all(s[0].bias.detach().numpy() == 0)
    nn.Linear(1, 1)
    assert len(seen) == 8


@pytest.mark.torch
def test_registration_and_forward_hook_order_match_pytorch():
    torch = pytest.importorskip("torch")
    from torch.nn.modules import module as TM
    logs = []
    for lib, mod in ((mt, M), (torch, TM)):
        log = []
        handles = [mod.register_module_parameter_registration_hook(lambda m, n, p: log.append(("p", n))),
                   mod.register_module_buffer_registration_hook(lambda m, n, b: log.append(("b", n))),
                   mod.register_module_module_registration_hook(lambda m, n, c: log.append(("m", n))),
                   mod.register_module_forward_pre_hook(lambda m, a: log.append(("f", type(m).__name__)))]
        try:
            s = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
            s(lib.randn(3, 2))
        finally:
            for h in handles:
                h.remove()
        logs.append(log)
    assert logs[0] == logs[1]
