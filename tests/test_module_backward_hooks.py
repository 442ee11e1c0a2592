"""nn.Module backward hooks: register_full_backward_hook, register_full_backward_pre_hook and the deprecated
register_backward_hook (grad_input/grad_output contents, replacement, removal, firing rules), checked against
manual chain rule and finite differences, and against PyTorch (marked torch)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn


def npa(t):
    return None if t is None else np.array(t.detach().numpy(), dtype=np.float64)


class Pair(nn.Module):
    """Two tensor inputs and a non-tensor one; three outputs, the last not differentiable."""

    def forward(self, x, y, k=3):
        return x * 2, y * 3, x.detach()


def recorder(calls):
    def hook(module, grad_input, grad_output):
        calls.append((grad_input, grad_output))
    return hook


def test_linear_grad_input_and_grad_output_match_the_chain_rule():
    lin = nn.Linear(3, 2).double()
    calls = []
    lin.register_full_backward_hook(recorder(calls))
    x = mt.randn(4, 3, dtype=mt.float64, requires_grad=True)
    w = mt.randn(4, 2, dtype=mt.float64)
    (lin(x) * w).sum().backward()
    (gi,), (go,) = calls[0]
    assert len(calls) == 1
    np.testing.assert_allclose(npa(go), npa(w))
    np.testing.assert_allclose(npa(gi), npa(w) @ npa(lin.weight))  # d/dx (x W^T + b) . w
    np.testing.assert_allclose(npa(x.grad), npa(gi))


def test_grad_input_matches_finite_differences():
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    calls = []
    m[1].register_full_backward_hook(recorder(calls))
    x = mt.randn(2, 3, dtype=mt.float64, requires_grad=True)
    m(x).sum().backward()
    (gi,), _ = calls[0]
    # d(loss)/d(tanh's input), by central differences on that input
    h = m[0](x).detach()
    eps, fd = 1e-6, np.zeros(tuple(h.shape))
    for idx in np.ndindex(*fd.shape):
        e = np.zeros(fd.shape)
        e[idx] = eps
        up = m[2](m[1](h + mt.tensor(e))).sum().item()
        down = m[2](m[1](h - mt.tensor(e))).sum().item()
        fd[idx] = (up - down) / (2 * eps)
    np.testing.assert_allclose(npa(gi), fd, rtol=1e-6, atol=1e-8)


def test_grad_cam_capture_of_conv_activations_and_gradients():
    conv = nn.Conv2d(1, 2, 3, padding=1)
    model = nn.Sequential(conv, nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2, 3))
    store = {}
    conv.register_forward_hook(lambda m, a, out: store.__setitem__("act", out.detach()))
    conv.register_full_backward_hook(lambda m, gi, go: store.__setitem__("grad", go[0]))
    x = mt.randn(1, 1, 5, 5)  # no input requires grad: the hook fires on grad_output
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model(x)[0, 1].backward()
    act, grad = npa(store["act"]), npa(store["grad"])
    assert grad.shape == act.shape == (1, 2, 5, 5)
    # d out[1] / d act = W[1, c] * 1[act > 0] / 25, per channel c
    relu_mask = (act > 0).astype(np.float64)
    expected = npa(model[4].weight)[1][None, :, None, None] * relu_mask / 25
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-7)
    cam = np.maximum((grad.mean(axis=(2, 3), keepdims=True) * act).sum(1), 0)
    assert cam.shape == (1, 5, 5)


def test_returned_grad_input_replaces_it():
    relu = nn.ReLU()
    relu.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
    x = mt.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    relu(x).sum().backward()
    np.testing.assert_allclose(npa(x.grad), [0.0, 10.0, 10.0])


def test_pre_hook_replaces_grad_output_and_prepend_orders_hooks():
    lin = nn.Linear(2, 2, bias=False)
    order = []
    lin.register_full_backward_pre_hook(lambda m, go: order.append("a") or (go[0] * 0,))
    lin.register_full_backward_pre_hook(lambda m, go: order.append("first"), prepend=True)
    x = mt.randn(3, 2, requires_grad=True)
    lin(x).sum().backward()
    assert order == ["first", "a"]
    np.testing.assert_allclose(npa(x.grad), np.zeros((3, 2)))
    assert np.all(npa(lin.weight.grad) == 0)  # the weight's gradient comes from the replaced grad_output too


def test_hooks_on_sequential_see_the_whole_block():
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2)).double()
    seen = []
    for name, mod in m.named_modules():
        mod.register_full_backward_hook(lambda mod, gi, go, name=name: seen.append(name))
    x = mt.randn(4, 3, dtype=mt.float64, requires_grad=True)
    m(x).sum().backward()
    assert seen == ["2", "1", "0", ""]  # outputs first: the innermost last layer's hook fires first


def test_none_for_non_tensor_inputs_and_outputs_without_gradient():
    m = Pair()
    calls = []
    m.register_full_backward_hook(recorder(calls))
    x, y = mt.randn(2, requires_grad=True), mt.randn(3)
    a, b, c = m(x, y, k=4)
    assert not c.requires_grad and a.grad_fn.name() == "BackwardHookFunctionBackward"
    a.sum().backward()
    gi, go = calls[0]
    assert len(gi) == 2 and len(go) == 3  # positional arguments only (k= is not in grad_input)
    np.testing.assert_allclose(npa(gi[0]), [2.0, 2.0])
    np.testing.assert_allclose(npa(gi[1]), [0.0, 0.0, 0.0])  # a tensor input: zeros, as PyTorch
    assert go[1] is None and go[2] is None


def test_non_tensor_positional_argument_gets_none():
    class Scale(nn.Module):
        def forward(self, x, k):
            return x * k
    m, calls = Scale(), []
    m.register_full_backward_hook(recorder(calls))
    x = mt.randn(2, requires_grad=True)
    m(x, 3.0).sum().backward()
    gi, go = calls[0]
    assert gi[1] is None and len(gi) == 2
    np.testing.assert_allclose(npa(gi[0]), [3.0, 3.0])


def test_no_input_requires_grad_fires_with_none_and_warns():
    lin = nn.Linear(2, 3)
    calls = []
    lin.register_full_backward_hook(recorder(calls))
    with pytest.warns(UserWarning, match="no inputs require gradients") as record:
        lin(mt.randn(4, 2)).sum().backward()
    assert record[0].filename == __file__  # points at the backward() call, as PyTorch's
    gi, go = calls[0]
    assert gi == (None,) and tuple(go[0].shape) == (4, 3)
    lin2 = nn.Linear(2, 3)
    lin2.register_full_backward_hook(lambda m, gi, go: (mt.ones(4, 2),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="should always return None"):
            lin2(mt.randn(4, 2)).sum().backward()


def test_no_output_requires_grad_never_fires():
    lin = nn.Linear(2, 3)
    calls = []
    lin.register_full_backward_hook(recorder(calls))
    with mt.no_grad():
        out = lin(mt.randn(4, 2, requires_grad=True))
    assert out.grad_fn is None and calls == []


def test_wrong_number_of_gradients_raises():
    lin = nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        lin(mt.randn(1, 2, requires_grad=True)).sum().backward()
    lin = nn.Linear(2, 2)
    lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_output, got 2, but expected 1"):
        lin(mt.randn(1, 2, requires_grad=True)).sum().backward()


def test_handle_removes_and_full_and_regular_hooks_do_not_mix():
    lin = nn.Linear(2, 2)
    calls = []
    handle = lin.register_full_backward_hook(recorder(calls))
    handle.remove()
    lin(mt.randn(1, 2, requires_grad=True)).sum().backward()
    assert calls == [] and not lin._backward_hooks and not lin._backward_hook_ids  # the hook-less call path again
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        lin.register_backward_hook(recorder(calls))


def test_deprecated_backward_hook_runs_as_a_full_hook():
    relu = nn.ReLU()
    calls = []
    relu.register_backward_hook(recorder(calls))
    x = mt.tensor([-1.0, 2.0], requires_grad=True)
    relu(x).sum().backward()
    (gi,), (go,) = calls[0]
    np.testing.assert_allclose(npa(gi), [0.0, 1.0])
    np.testing.assert_allclose(npa(go), [1.0, 1.0])


def test_hook_fires_once_per_backward_and_per_call():
    lin = nn.Linear(2, 2)
    calls = []
    lin.register_full_backward_hook(recorder(calls))
    x = mt.randn(1, 2, requires_grad=True)
    (lin(x) + lin(x)).sum().backward(retain_graph=True)
    assert len(calls) == 2
    y = lin(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert len(calls) == 4


def test_tuple_outputs_and_namedtuple_inputs():
    class Split(nn.Module):
        def forward(self, x):
            return x[:, :1] * 1, x[:, 1:] * 2
    m, calls = Split(), []
    m.register_full_backward_hook(recorder(calls))
    x = mt.randn(3, 2, requires_grad=True)
    a, b = m(x)
    (a.sum() + 2 * b.sum()).backward()
    (gi,), (ga, gb) = calls[0]
    np.testing.assert_allclose(npa(ga), np.ones((3, 1)))
    np.testing.assert_allclose(npa(gb), np.full((3, 1), 2.0))
    np.testing.assert_allclose(npa(gi), np.tile([1.0, 4.0], (3, 1)))


def test_module_output_not_a_tensor_warns():
    class D(nn.Module):
        def forward(self, x):
            return {"y": x * 2}
    m = D()
    m.register_full_backward_hook(recorder([]))
    with pytest.warns(UserWarning, match="module output should be a Tensor or a tuple of Tensors"):
        m(mt.randn(2, requires_grad=True))


# ----------------------------------------------------------------------------------- PyTorch parity
def _torch_pair(torch):
    class TPair(torch.nn.Module):
        def forward(self, x, y, k=3):
            return x * 2, y * 3, x.detach()
    return TPair()


def _summary(calls):
    return [tuple(None if g is None else npa_any(g) for g in part) for call in calls for part in call]


def npa_any(g):
    return np.array(g.detach().numpy(), dtype=np.float64)


@pytest.mark.torch
@pytest.mark.parametrize("x_grad,y_grad,use", [(True, False, "a"), (False, True, "b"), (True, True, "ab")])
def test_grad_tuples_match_pytorch(x_grad, y_grad, use):
    torch = pytest.importorskip("torch")
    xs, ys = np.random.randn(2), np.random.randn(3)
    results = []
    for lib, m in ((mt, Pair()), (torch, _torch_pair(torch))):
        calls, pre = [], []
        m.register_full_backward_hook(recorder(calls))
        m.register_full_backward_pre_hook(lambda mod, go: pre.append((go,)))
        x = lib.tensor(xs, requires_grad=x_grad)
        y = lib.tensor(ys, requires_grad=y_grad)
        a, b, c = m(x, y)
        loss = (a.sum() if "a" in use else 0) + (b.sum() if "b" in use else 0)
        loss.backward()
        results.append((_summary(calls), _summary(pre)))
    (mine, mine_pre), (theirs, theirs_pre) = results
    for got, want in ((mine, theirs), (mine_pre, theirs_pre)):
        assert len(got) == len(want)
        for g_part, w_part in zip(got, want):
            assert [g is None for g in g_part] == [w is None for w in w_part]
            for g, w in zip(g_part, w_part):
                if g is not None:
                    np.testing.assert_allclose(g, w)


@pytest.mark.torch
def test_conv_relu_sequential_hooks_match_pytorch():
    torch = pytest.importorskip("torch")
    ref = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(12, 2))
    mine = nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))
    mine.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    xs = np.random.randn(1, 2, 4, 4).astype(np.float32)
    out = []
    for lib, m in ((mt, mine), (torch, ref)):
        calls = []
        for mod in m:
            mod.register_full_backward_hook(recorder(calls))
        m(lib.tensor(xs, requires_grad=True))[0, 1].backward()
        out.append(_summary(calls))
    assert len(out[0]) == len(out[1]) == 8
    for g_part, w_part in zip(*out):
        assert len(g_part) == len(w_part)
        for g, w in zip(g_part, w_part):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_custom_function_input_returned_as_is_can_be_marked_non_differentiable():
    # what BackwardHookFunction relies on: the mark follows the input to the output that aliases it
    class Ident(mt.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            return ga, gb
    a, b = mt.randn(2, requires_grad=True), mt.randn(2, requires_grad=True)
    out_a, out_b = Ident.apply(a, b)
    assert out_a.requires_grad and not out_b.requires_grad and out_b.grad_fn is None
    assert out_b is not b


def test_hooks_survive_deepcopy_and_old_pickles_get_the_registries():
    import copy
    lin = nn.Linear(2, 2)
    calls = []
    lin.register_full_backward_pre_hook(lambda m, go: calls.append(1))
    twin = copy.deepcopy(lin)
    twin(mt.randn(1, 2, requires_grad=True)).sum().backward()
    assert calls == [1]
    state = {k: v for k, v in nn.Linear(2, 2).__dict__.items() if "backward" not in k}  # as saved before them
    old = nn.Linear.__new__(nn.Linear)
    old.__setstate__(state)
    assert tuple(old(mt.randn(3, 2)).shape) == (3, 2)


def test_double_backward_through_hooked_modules():
    def model():
        mt.manual_seed(3)
        return nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)).double()
    hooked, plain, calls = model(), model(), []
    hooked[1].register_full_backward_hook(recorder(calls))
    xs = mt.randn(4, 2, dtype=mt.float64)
    grads = []
    for m in (hooked, plain):
        x = xs.clone().requires_grad_()
        g, = mt.autograd.grad(m(x).sum(), x, create_graph=True)
        (g ** 2).sum().backward()  # the second pass reaches the hook's input node without its output's gradient
        grads.append(npa(x.grad))
    assert len(calls) == 1  # as PyTorch: only the first backward went through the module's output
    np.testing.assert_allclose(grads[0], grads[1])


# ------------------------------------------------------------------------ in-place on hooked tensors
CUSTOM_VIEW = "Output 0 of BackwardHookFunction is a view and is being modified inplace. This view was created inside"


def test_in_place_on_hooked_output_or_input_is_refused():
    lin = nn.Linear(2, 2)
    lin.register_full_backward_hook(recorder([]))
    with pytest.raises(RuntimeError, match=CUSTOM_VIEW):
        nn.Sequential(lin, nn.ReLU(inplace=True))(mt.randn(3, 2, requires_grad=True))
    relu = nn.ReLU(inplace=True)
    relu.register_full_backward_hook(recorder([]))
    with pytest.raises(RuntimeError, match=CUSTOM_VIEW):
        relu(mt.randn(3, requires_grad=True) * 1)
    with mt.no_grad():  # untracked writes stay allowed
        out = lin(mt.randn(3, 2))
        out.add_(1)


def test_custom_function_returning_its_input_refuses_in_place_writes():
    class Ident(mt.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g
    a = mt.randn(3, requires_grad=True) * 1
    b = Ident.apply(a)
    with pytest.raises(RuntimeError, match="Output 0 of Ident is a view and is being modified inplace"):
        b.add_(1)
    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        b.view(3).add_(1)  # a view of it too
    a.mul_(2)  # the base written: using b would bypass Ident's backward
    with pytest.raises(RuntimeError, match="Output 0 of Ident is a view and its base or another view of its base "
                                           "has been modified inplace"):
        b * 2


@pytest.mark.torch
def test_in_place_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (mt, torch):
        got = []
        lin = lib.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda *a: None)
        relu = lib.nn.ReLU(inplace=True)
        relu.register_full_backward_pre_hook(lambda *a: None)
        for call in (lambda: lib.nn.Sequential(lin, lib.nn.ReLU(inplace=True))(lib.randn(3, 2, requires_grad=True)),
                     lambda: relu(lib.randn(3, requires_grad=True) * 1)):
            with pytest.raises(RuntimeError) as info:
                call()
            got.append(str(info.value))
        messages.append(got)
    assert messages[0] == messages[1]
