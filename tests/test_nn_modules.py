"""nn.Module machinery, containers and every layer's forward (float64 NumPy references written here),
gradients of module parameters (gradcheck in float64), train/eval behaviour, clip_grad, DataParallel."""
from __future__ import annotations

import copy
import math
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
from minitensor import nn
from minitensor.nn import functional as F
from minitensor.testing import gradcheck

FEW = settings(max_examples=25, deadline=None)


# ----------------------------------------------------------------------------------------- helpers
def npa(t: mt.Tensor) -> np.ndarray:
    """A float64 copy (never a view: tests compare before/after in-place updates)."""
    return np.array(t.detach().numpy(), dtype=np.float64)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    a = npa(actual) if isinstance(actual, mt.Tensor) else np.asarray(actual)
    assert a.shape == np.shape(expected), f"shape {a.shape} != {np.shape(expected)}"
    np.testing.assert_allclose(a, expected, rtol=rtol, atol=atol)


def rng(seed=0):
    return np.random.default_rng(seed)


def t64(a, requires_grad=False):
    return mt.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def _flatten(out):
    if isinstance(out, (tuple, list)):
        return tuple(t for o in out for t in _flatten(o))
    return (out,)


def module_gradcheck(module: nn.Module, *inputs: mt.Tensor, **kwargs) -> bool:
    """gradcheck of module(*inputs) (made float64) w.r.t. the inputs that require grad and every parameter.

    On the analytic pass the module's own Parameters are the checked inputs; on the numerical passes their
    arrays are swapped for the perturbed ones and restored afterwards."""
    module.double()
    params = [p for p in module.parameters() if p.requires_grad]
    n = len(inputs)

    def fn(*args):
        saved = [p.array for p in params]
        for p, a in zip(params, args[n:]):
            p.array = a.array
        try:
            return _flatten(module(*args[:n]))
        finally:
            for p, a in zip(params, saved):
                p.array = a

    return gradcheck(fn, [*inputs, *params], **kwargs)


def test_module_gradcheck_sees_parameter_perturbations():
    """The helper must fail when a parameter's gradient is wrong (here: cut by detach)."""
    class Cut(nn.Linear):
        def forward(self, x):
            return F.linear(x, self.weight.detach() + self.weight * 0, self.bias)

    x = t64(rng().standard_normal((2, 3)), requires_grad=True)
    with pytest.raises(AssertionError, match="input 1"):
        module_gradcheck(Cut(3, 2), x)


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("steps", mt.zeros(1))
        self.scale = nn.Parameter(mt.ones(1))

    def forward(self, x):
        return self.fc(x) * self.scale


# --------------------------------------------------------------------------------------- Parameter
def test_parameter_is_a_tensor_sharing_data():
    t = mt.randn(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, mt.Tensor) and isinstance(p, nn.Parameter)
    assert p.array is t.array and p.requires_grad and p.is_leaf
    assert nn.Parameter(t, requires_grad=False).requires_grad is False
    assert repr(p).startswith("Parameter containing:\ntensor([[")
    assert "requires_grad=True" in repr(p)


def test_parameter_detaches_from_graph_and_works_in_ops():
    x = mt.randn(3, requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.grad_fn is None and p.is_leaf
    (F.linear(mt.ones(1, 3), p.reshape(1, 3)).sum() * 3).backward()
    close(p.grad, np.full(3, 3.0))
    assert x.grad is None


def test_parameter_refuses_integer_grad_and_deepcopies():
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(mt.arange(3))
    p = nn.Parameter(mt.randn(4))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.array is not p.array
    close(q, npa(p))


# ----------------------------------------------------------------------------------- registration
def test_setattr_registers_parameters_buffers_and_modules():
    m = Tiny()
    assert list(m._parameters) == ["scale"]
    assert list(m._buffers) == ["steps"]
    assert list(m._modules) == ["fc"]
    assert m.fc.weight is m._modules["fc"]._parameters["weight"]
    assert [n for n, _ in m.named_parameters()] == ["scale", "fc.weight", "fc.bias"]
    assert [n for n, _ in m.named_buffers()] == ["steps"]
    assert [n for n, _ in m.named_children()] == ["fc"]
    assert [n for n, _ in m.named_modules()] == ["", "fc"]
    assert "fc" in dir(m) and "scale" in dir(m)


def test_setattr_moves_names_between_registries_and_delattr():
    m = Tiny()
    m.fc = nn.Parameter(mt.ones(2))  # a module name reassigned as a parameter
    assert "fc" not in m._modules and "fc" in m._parameters
    m.steps = mt.ones(1) * 3  # a buffer stays a buffer when assigned a tensor
    assert float(m._buffers["steps"]) == 3
    del m.fc
    assert "fc" not in m._parameters
    with pytest.raises(AttributeError, match="no attribute 'fc'"):
        m.fc
    m.scale = None
    assert m.scale is None and list(m.parameters()) == []


def test_registration_errors():
    m = Tiny()
    with pytest.raises(TypeError, match="parameter 'scale'"):
        m.scale = mt.ones(1)
    with pytest.raises(TypeError, match="child module 'fc'"):
        m.fc = mt.ones(1)
    with pytest.raises(KeyError, match=r'contain "\."'):
        m.register_buffer("a.b", mt.ones(1))
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("forward", mt.ones(1))
    with pytest.raises(TypeError):
        m.register_buffer("x", [1.0])
    with pytest.raises(TypeError):
        m.add_module("x", 3)
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("x", _non_leaf_parameter())

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mt.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def _non_leaf_parameter():
    p = nn.Parameter(mt.ones(2))
    p.grad_fn = (mt.ones(2, requires_grad=True) * 2).grad_fn
    return p


def test_shared_parameters_and_modules_are_yielded_once():
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(m.parameters())) == 2
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4
    assert [n for n, _ in m.named_modules()] == ["", "0", "1"]
    tied = nn.Module()
    tied.enc = nn.Embedding(5, 3)
    tied.dec = nn.Linear(3, 5, bias=False)
    tied.dec.weight = tied.enc.weight
    assert [n for n, _ in tied.named_parameters()] == ["enc.weight"]
    assert list(tied.state_dict()) == ["enc.weight", "dec.weight"]  # state_dict keeps both, as PyTorch


def test_parameters_recurse_false_and_children():
    m = Tiny()
    assert [p.shape for p in m.parameters(recurse=False)] == [(1,)]
    assert list(m.children()) == [m.fc]
    assert m.get_submodule("fc") is m.fc and m.get_submodule("") is m
    with pytest.raises(AttributeError):
        m.get_submodule("nope")


def test_train_eval_apply_requires_grad_and_zero_grad():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(), nn.BatchNorm1d(2)))
    assert all(x.training for x in m.modules())
    assert m.eval() is m and not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    with pytest.raises(ValueError):
        m.train("no")
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "Dropout", "BatchNorm1d", "Sequential", "Sequential"]
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    m[0](mt.randn(3, 2)).sum().backward()
    grad = m[0].weight.grad
    m.zero_grad(set_to_none=False)
    assert m[0].weight.grad is grad and not grad.numpy().any()
    m.zero_grad()
    assert m[0].weight.grad is None


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    out = m(mt.randn(4, 2))
    close(out, np.tile(npa(m.bias) + 1, (4, 1)))
    assert calls == [(4, 2)]
    h1.remove()
    h2.remove()
    x = mt.randn(4, 2)
    close(m(x), npa(x) @ npa(m.weight).T + npa(m.bias))


# --------------------------------------------------------------------------------- device / dtype
def test_to_dtype_keeps_parameter_identity_and_converts_grads_and_buffers():
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    params = list(m.parameters())
    m(mt.randn(4, 3)).sum().backward()
    grads = [p.grad for p in params]
    assert m.double() is m
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    assert all(p.dtype == mt.float64 for p in params)
    assert all(p.grad is g and g.dtype == mt.float64 for p, g in zip(params, grads))
    assert m[1].running_mean.dtype == mt.float64
    assert m[1].num_batches_tracked.dtype == mt.int64  # integer buffers keep their dtype
    m.to(mt.float32)
    assert all(p.dtype == mt.float32 for p in params)
    m.half()
    assert m[0].weight.dtype == mt.float16
    m.float()
    m.to("cpu", dtype=mt.float64)
    assert m[0].weight.dtype == mt.float64 and m[0].weight.device == mt.device("cpu")
    m.to(mt.zeros(1, dtype=mt.float32))
    assert m[0].weight.dtype == mt.float32
    assert m.cpu() is m
    assert m.to("cpu", True) is m and m[0].weight.dtype == mt.float32  # positional non_blocking, not a dtype
    with pytest.raises(TypeError, match="floating point"):
        m.to(mt.int64)


def test_to_dtype_values_are_the_same():
    m = nn.Linear(3, 2)
    w = npa(m.weight)
    m.double()
    close(m.weight, w, rtol=0, atol=0)


def test_factory_kwargs():
    m = nn.Linear(3, 2, dtype=mt.float64, device="cpu")
    assert m.weight.dtype == mt.float64 and m.bias.dtype == mt.float64
    assert nn.Conv2d(1, 2, 3).weight.dtype == mt.float32
    assert nn.LSTM(2, 3, dtype=mt.float64).weight_hh_l0.dtype == mt.float64
    assert nn.BatchNorm2d(3, dtype=mt.float64).running_var.dtype == mt.float64


# -------------------------------------------------------------------------------------------- repr
def test_nested_repr_matches_pytorch_layout():
    m = nn.Sequential(OrderedDict([
        ("conv", nn.Conv2d(1, 4, 3, padding=1, bias=False)),
        ("bn", nn.BatchNorm2d(4)),
        ("act", nn.ReLU(inplace=True)),
        ("head", nn.Sequential(nn.Flatten(), nn.Linear(16, 10), nn.Dropout(0.1))),
    ]))
    assert repr(m) == (
        "Sequential(\n"
        "  (conv): Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)\n"
        "  (bn): BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)\n"
        "  (act): ReLU(inplace=True)\n"
        "  (head): Sequential(\n"
        "    (0): Flatten(start_dim=1, end_dim=-1)\n"
        "    (1): Linear(in_features=16, out_features=10, bias=True)\n"
        "    (2): Dropout(p=0.1, inplace=False)\n"
        "  )\n"
        ")")


@pytest.mark.parametrize("module, text", [
    (nn.Linear(2, 3, bias=False), "Linear(in_features=2, out_features=3, bias=False)"),
    (nn.Conv2d(2, 4, (3, 5), stride=2, dilation=2, groups=2, padding_mode="reflect"),
     "Conv2d(2, 4, kernel_size=(3, 5), stride=(2, 2), dilation=(2, 2), groups=2, padding_mode=reflect)"),
    (nn.Conv2d(2, 4, 3, padding="same"), "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=same)"),
    (nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1),
     "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"),
    (nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (nn.AvgPool2d(3, 1, 1), "AvgPool2d(kernel_size=3, stride=1, padding=1)"),
    (nn.AdaptiveAvgPool2d((1, 1)), "AdaptiveAvgPool2d(output_size=(1, 1))"),
    (nn.LayerNorm(8), "LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)"),
    (nn.Embedding(10, 3, padding_idx=0), "Embedding(10, 3, padding_idx=0)"),
    (nn.LeakyReLU(0.2), "LeakyReLU(negative_slope=0.2)"),
    (nn.ELU(inplace=True), "ELU(alpha=1.0, inplace=True)"),
    (nn.GELU(), "GELU(approximate='none')"),
    (nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
    (nn.Softmax(dim=-1), "Softmax(dim=-1)"),
    (nn.Tanh(), "Tanh()"),
    (nn.Unflatten(1, (2, 2)), "Unflatten(dim=1, unflattened_size=(2, 2))"),
    (nn.CrossEntropyLoss(), "CrossEntropyLoss()"),
    (nn.LSTM(3, 4, num_layers=2, batch_first=True), "LSTM(3, 4, num_layers=2, batch_first=True)"),
    (nn.GRU(3, 4, num_layers=2, bidirectional=True, dropout=0.5),
     "GRU(3, 4, num_layers=2, dropout=0.5, bidirectional=True)"),
])
def test_extra_repr(module, text):
    assert repr(module) == text


# ------------------------------------------------------------------------------------- containers
def test_sequential_indexing_slicing_and_mutation():
    layers = [nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)]
    s = nn.Sequential(*layers)
    assert len(s) == 3 and list(s) == layers
    assert s[0] is layers[0] and s[-1] is layers[2]
    with pytest.raises(IndexError):
        s[3]
    head = s[:2]
    assert isinstance(head, nn.Sequential) and list(head) == layers[:2] and head[0] is layers[0]
    x = mt.randn(5, 2)
    close(s(x), npa(layers[2](layers[1](layers[0](x)))))
    s.append(nn.Sigmoid())
    assert len(s) == 4 and list(s._modules) == ["0", "1", "2", "3"]
    del s[1]
    assert list(s._modules) == ["0", "1", "2"] and s[1] is layers[2]
    s.insert(1, nn.Tanh())
    assert isinstance(s[1], nn.Tanh) and s[2] is layers[2]
    s[0] = nn.Identity()
    assert isinstance(s[0], nn.Identity)
    popped = s.pop(1)
    assert isinstance(popped, nn.Tanh) and len(s) == 3
    assert len(s + nn.Sequential(nn.ReLU())) == 4


def test_sequential_ordered_dict_names():
    s = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert isinstance(s.fc, nn.Linear) and s[1] is s.act
    assert list(s.state_dict()) == ["fc.weight", "fc.bias"]
    assert list(s[0:1].state_dict()) == ["fc.weight", "fc.bias"]


def test_module_list():
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    assert len(ml) == 3 and len(list(ml.parameters())) == 6
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    ml += [nn.Sigmoid()]
    assert len(ml) == 6 and isinstance(ml[-1], nn.Sigmoid)
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    ml.insert(0, nn.Identity())
    assert isinstance(ml[0], nn.Identity) and list(ml._modules) == [str(i) for i in range(7)]
    del ml[0]
    assert isinstance(ml[0], nn.Linear) and list(ml._modules) == [str(i) for i in range(6)]
    assert list(ml.state_dict())[:2] == ["0.weight", "0.bias"]
    with pytest.raises(NotImplementedError):
        ml(mt.ones(1))


def test_module_dict():
    md = nn.ModuleDict({"a": nn.Linear(1, 2), "b": nn.ReLU()})
    assert list(md) == ["a", "b"] and "a" in md and len(md) == 2
    md.update([("c", nn.Tanh())])
    md["d"] = nn.Linear(2, 2)
    assert list(md.keys()) == ["a", "b", "c", "d"]
    assert isinstance(md.pop("c"), nn.Tanh)
    del md["b"]
    assert [k for k, _ in md.items()] == ["a", "d"]
    assert list(md.state_dict()) == ["a.weight", "a.bias", "d.weight", "d.bias"]
    md.clear()
    assert len(md) == 0


def test_parameter_list_and_dict():
    pl = nn.ParameterList([nn.Parameter(mt.ones(2)), mt.zeros(3)])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    pl.append(mt.ones(1))
    assert list(pl.state_dict()) == ["0", "1", "2"]
    pd = nn.ParameterDict({"w": mt.ones(2)})
    pd["b"] = nn.Parameter(mt.zeros(1))
    assert list(pd) == ["w", "b"] and isinstance(pd["w"], nn.Parameter)
    assert list(pd.state_dict()) == ["w", "b"]
    holder = nn.Module()
    holder.params = pl
    assert [n for n, _ in holder.named_parameters()] == ["params.0", "params.1", "params.2"]


# ---------------------------------------------------------------------------------- simple layers
def test_identity_flatten_unflatten():
    x = mt.randn(2, 3, 4, 5)
    assert nn.Identity(54, unused=1)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    close(nn.Flatten()(x), npa(x).reshape(2, 60))
    y = nn.Unflatten(1, (3, 20))(nn.Flatten()(x))
    close(y, npa(x).reshape(2, 3, 20))
    with pytest.raises(TypeError):
        nn.Unflatten(1, 3)


@FEW
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 5), st.booleans(), st.integers(0, 2**31))
def test_linear_forward(batch, fin, fout, bias, seed):
    m = nn.Linear(fin, fout, bias=bias)
    x = rng(seed).standard_normal((batch, 2, fin)).astype(np.float32)
    ref = x.astype(np.float64) @ npa(m.weight).T + (npa(m.bias) if bias else 0)
    out = m(mt.tensor(x))
    assert out.dtype == mt.float32
    close(out, ref, rtol=1e-5, atol=1e-5)


def test_linear_gradcheck():
    m = nn.Linear(3, 2)
    assert module_gradcheck(m, t64(rng().standard_normal((4, 3)), requires_grad=True))


# ----------------------------------------------------------------------------------------- conv
def conv2d_ref(x, w, b, stride, padding, dilation, groups):
    """Direct float64 cross-correlation; padding (top, bottom, left, right) with zeros."""
    x = np.pad(x, ((0, 0), (0, 0), padding[:2], padding[2:]))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dilation
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                win = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", win, w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def conv_transpose2d_ref(x, w, b, stride, padding, output_padding, dilation, groups):
    n, cin, h, wd = x.shape
    _, og, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dilation
    full = np.zeros((n, og * groups, (h - 1) * sh + dh * (kh - 1) + 1 + output_padding[0],
                     (wd - 1) * sw + dw * (kw - 1) + 1 + output_padding[1]))
    cg = cin // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg, :, i, j])
                full[:, g * og:(g + 1) * og, i * dh:i * dh + sh * (h - 1) + 1:sh,
                     j * dw:j * dw + sw * (wd - 1) + 1:sw] += contrib
    ph, pw = padding
    oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + output_padding[0] + 1
    ow = (wd - 1) * sw - 2 * pw + dw * (kw - 1) + output_padding[1] + 1
    out = full[:, :, ph:ph + oh, pw:pw + ow]
    if b is not None:
        out = out + b[None, :, None, None]
    return out


_NP_PAD = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@FEW
@given(st.sampled_from(list(_NP_PAD)), st.integers(1, 3), st.integers(1, 2), st.integers(0, 2),
       st.integers(1, 2), st.sampled_from([1, 2]), st.booleans(), st.integers(0, 2**31))
def test_conv2d_forward_padding_modes(mode, k, stride, pad, dilation, groups, bias, seed):
    r = rng(seed)
    m = nn.Conv2d(2 * groups, 2 * groups, k, stride=stride, padding=pad, dilation=dilation, groups=groups,
                  bias=bias, padding_mode=mode)
    x = r.standard_normal((2, 2 * groups, 6, 7)).astype(np.float32)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode=_NP_PAD[mode])
    ref = conv2d_ref(xp, npa(m.weight), npa(m.bias) if bias else None, (stride,) * 2, (0, 0, 0, 0),
                     (dilation,) * 2, groups)
    close(m(mt.tensor(x)), ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["zeros", "reflect"])
@pytest.mark.parametrize("k", [(2, 3), (4, 4)])
def test_conv2d_same_and_valid_padding(mode, k):
    x = rng(1).standard_normal((1, 2, 7, 6))
    m = nn.Conv2d(2, 3, k, padding="same", padding_mode=mode).double()
    # 'same': total d(k-1), the odd pixel at the bottom/right
    pads = [(kk - 1) // 2 for kk in k], [(kk - 1) - (kk - 1) // 2 for kk in k]
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0][0], pads[1][0]), (pads[0][1], pads[1][1])), mode=_NP_PAD[mode])
    out = m(t64(x))
    assert out.shape == (1, 3, 7, 6)
    close(out, conv2d_ref(xp, npa(m.weight), npa(m.bias), (1, 1), (0,) * 4, (1, 1), 1), rtol=1e-10)
    valid = nn.Conv2d(2, 3, k, padding="valid").double()
    close(valid(t64(x)), conv2d_ref(x, npa(valid.weight), npa(valid.bias), (1, 1), (0,) * 4, (1, 1), 1),
          rtol=1e-10)


def test_conv2d_checks():
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding string"):
        nn.Conv2d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match="zeros"):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


@pytest.mark.parametrize("mode", ["zeros", "circular"])
def test_conv2d_gradcheck(mode):
    m = nn.Conv2d(2, 4, 3, stride=2, padding=1, groups=2, padding_mode=mode)
    assert module_gradcheck(m, t64(rng(2).standard_normal((2, 2, 5, 5)), requires_grad=True))


@FEW
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.integers(1, 2), st.sampled_from([1, 2]),
       st.booleans(), st.integers(0, 2**31))
def test_conv_transpose2d_forward(k, stride, pad, dilation, groups, bias, seed):
    out_pad = stride - 1 if stride > 1 else 0
    m = nn.ConvTranspose2d(2 * groups, 3 * groups, k, stride=stride, padding=pad, output_padding=out_pad,
                           groups=groups, bias=bias, dilation=dilation)
    assert m.weight.shape == (2 * groups, 3, k, k)
    x = rng(seed).standard_normal((2, 2 * groups, 4, 5))
    m.double()
    ref = conv_transpose2d_ref(x, npa(m.weight), npa(m.bias) if bias else None, (stride,) * 2, (pad,) * 2,
                               (out_pad,) * 2, (dilation,) * 2, groups)
    close(m(t64(x)), ref, rtol=1e-9, atol=1e-10)


def test_conv_transpose2d_output_size():
    m = nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1).double()
    x = t64(rng(3).standard_normal((1, 2, 4, 4)))
    assert m(x).shape == (1, 2, 7, 7)
    y = m(x, output_size=[8, 8])
    assert y.shape == (1, 2, 8, 8)
    ref = conv_transpose2d_ref(npa(x), npa(m.weight), npa(m.bias), (2, 2), (1, 1), (1, 1), (1, 1), 1)
    close(y, ref, rtol=1e-10)
    assert m(x, output_size=(1, 2, 7, 8)).shape == (1, 2, 7, 8)
    with pytest.raises(ValueError, match="valid sizes range from"):
        m(x, output_size=[9, 9])


def test_conv_transpose2d_gradcheck():
    m = nn.ConvTranspose2d(2, 2, 2, stride=2, padding=0, output_padding=1)
    assert module_gradcheck(m, t64(rng(4).standard_normal((1, 2, 3, 3)), requires_grad=True))


# -------------------------------------------------------------------------------------- pooling
def pool_ref(x, k, s, p, op, count_include_pad=True):
    n, c, h, w = x.shape
    fill = -np.inf if op == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, oh, ow))
    ones = np.pad(np.ones((h, w)), p)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            if op == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                count = k * k if count_include_pad else ones[i * s:i * s + k, j * s:j * s + k].sum()
                out[:, :, i, j] = win.sum(axis=(2, 3)) / count
    return out


def _needs(name):
    if not hasattr(F, name):
        pytest.skip(f"F.{name} has not landed yet")


@pytest.mark.parametrize("k, s, p", [(2, None, 0), (3, 2, 1), (3, 1, 1)])
def test_max_pool2d(k, s, p):
    _needs("max_pool2d")
    x = rng(5).standard_normal((2, 3, 7, 6))
    m = nn.MaxPool2d(k, s, p)
    close(m(t64(x)), pool_ref(x, k, s or k, p, "max"))
    out, idx = nn.MaxPool2d(k, s, p, return_indices=True)(t64(x))
    close(out, pool_ref(x, k, s or k, p, "max"))
    flat = x.reshape(2, 3, -1)
    close(out, np.take_along_axis(flat, npa(idx).astype(np.int64).reshape(2, 3, -1), 2).reshape(out.shape))


@pytest.mark.parametrize("include", [True, False])
def test_avg_pool2d(include):
    _needs("avg_pool2d")
    x = rng(6).standard_normal((2, 3, 7, 6))
    m = nn.AvgPool2d(3, 2, 1, count_include_pad=include)
    close(m(t64(x)), pool_ref(x, 3, 2, 1, "avg", include))
    assert module_gradcheck(nn.AvgPool2d(2), t64(x[:1, :1, :4, :4], requires_grad=True))


def test_adaptive_avg_pool2d():
    _needs("adaptive_avg_pool2d")
    x = rng(7).standard_normal((2, 3, 6, 5))
    close(nn.AdaptiveAvgPool2d((1, 1))(t64(x)), x.mean(axis=(2, 3), keepdims=True))
    out = nn.AdaptiveAvgPool2d((3, None))(t64(x))
    close(out, x.reshape(2, 3, 3, 2, 5).mean(axis=3))
    # PyTorch's windows: start = floor(i * H / oh), end = ceil((i + 1) * H / oh)
    ref = np.stack([x[:, :, math.floor(i * 6 / 4):math.ceil((i + 1) * 6 / 4)].mean(axis=2) for i in range(4)], 2)
    ref = np.stack([ref[..., math.floor(j * 5 / 2):math.ceil((j + 1) * 5 / 2)].mean(axis=-1) for j in range(2)], 3)
    close(nn.AdaptiveAvgPool2d((4, 2))(t64(x)), ref)


# ------------------------------------------------------------------------------------- batch norm
def bn_ref(x, w, b, eps, axes):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    shape = [1] * x.ndim
    shape[1] = -1
    return (x - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("cls, shape", [(nn.BatchNorm1d, (8, 3)), (nn.BatchNorm1d, (4, 3, 5)),
                                        (nn.BatchNorm2d, (4, 3, 2, 5))])
def test_batch_norm_train_then_eval(cls, shape):
    r = rng(8)
    m = cls(3, momentum=0.2).double()
    with mt.no_grad():
        m.weight.copy_(mt.tensor(r.standard_normal(3)))
        m.bias.copy_(mt.tensor(r.standard_normal(3)))
    axes = tuple(i for i in range(len(shape)) if i != 1)
    rm, rv = np.zeros(3), np.ones(3)
    for step in range(3):
        x = r.standard_normal(shape) * 2 + 1
        close(m(t64(x)), bn_ref(x, npa(m.weight), npa(m.bias), 1e-5, axes), rtol=1e-9, atol=1e-9)
        n = x.size // 3
        rm = 0.8 * rm + 0.2 * x.mean(axis=axes)
        rv = 0.8 * rv + 0.2 * x.var(axis=axes) * n / (n - 1)
        close(m.running_mean, rm, rtol=1e-10)
        close(m.running_var, rv, rtol=1e-10)
        assert int(m.num_batches_tracked) == step + 1
    m.eval()
    x = r.standard_normal(shape)
    bshape = [1] * len(shape)
    bshape[1] = -1
    ref = (x - rm.reshape(bshape)) / np.sqrt(rv.reshape(bshape) + 1e-5) * npa(m.weight).reshape(bshape) \
        + npa(m.bias).reshape(bshape)
    close(m(t64(x)), ref, rtol=1e-9)
    assert int(m.num_batches_tracked) == 3  # eval does not count


def test_batch_norm_cumulative_average_when_momentum_is_none():
    m = nn.BatchNorm1d(2, momentum=None).double()
    xs = [rng(i).standard_normal((5, 2)) for i in range(4)]
    for x in xs:
        m(t64(x))
    close(m.running_mean, np.mean([x.mean(0) for x in xs], axis=0), rtol=1e-10)
    close(m.running_var, np.mean([x.var(0, ddof=1) for x in xs], axis=0), rtol=1e-10)


def test_batch_norm_without_affine_or_running_stats():
    x = rng(9).standard_normal((6, 2, 3))
    m = nn.BatchNorm1d(2, affine=False, track_running_stats=False).double()
    assert m.weight is None and m.running_mean is None and list(m.state_dict()) == []
    close(m(t64(x)), bn_ref(x, np.ones(2), np.zeros(2), 1e-5, (0, 2)), rtol=1e-9)
    m.eval()  # no running stats: still the batch's
    close(m(t64(x)), bn_ref(x, np.ones(2), np.zeros(2), 1e-5, (0, 2)), rtol=1e-9)


def test_batch_norm_input_dims():
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(mt.randn(2, 3))
    with pytest.raises(ValueError, match="2D or 3D"):
        nn.BatchNorm1d(3)(mt.randn(2, 3, 4, 5))


def test_batch_norm_gradcheck_train_and_eval():
    x = t64(rng(10).standard_normal((4, 2, 2, 3)), requires_grad=True)
    m = nn.BatchNorm2d(2)
    assert module_gradcheck(m, x)
    m.eval()
    assert module_gradcheck(m, x)


# ------------------------------------------------------------------------------------- layer norm
@pytest.mark.parametrize("shape, normalized", [((4, 5), 5), ((2, 3, 4), (3, 4))])
def test_layer_norm(shape, normalized):
    x = rng(11).standard_normal(shape)
    m = nn.LayerNorm(normalized).double()
    with mt.no_grad():
        m.weight.normal_()
        m.bias.normal_()
    k = 1 if isinstance(normalized, int) else len(normalized)
    axes = tuple(range(len(shape) - k, len(shape)))
    ref = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5) * npa(m.weight) \
        + npa(m.bias)
    close(m(t64(x)), ref, rtol=1e-9)
    assert module_gradcheck(m, t64(x, requires_grad=True))
    bare = nn.LayerNorm(normalized, elementwise_affine=False)
    assert bare.weight is None and list(bare.parameters()) == []
    assert nn.LayerNorm(normalized, bias=False).bias is None


# ---------------------------------------------------------------------------------------- dropout
def test_dropout_train_and_eval():
    m = nn.Dropout(0.25)
    x = mt.ones(200, 100)
    y = npa(m(x))
    assert np.all(np.isclose(y, 0) | np.isclose(y, 1 / 0.75))
    assert abs((y == 0).mean() - 0.25) < 0.02
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


# -------------------------------------------------------------------------------------- embedding
def test_embedding_lookup_padding_and_gradient():
    m = nn.Embedding(6, 3, padding_idx=-1)
    assert m.padding_idx == 5 and not npa(m.weight)[5].any()
    idx = mt.tensor([[0, 5, 2], [2, 2, 1]])
    out = m(idx)
    close(out, npa(m.weight)[npa(idx).astype(int)])
    out.sum().backward()
    counts = np.bincount(npa(idx).astype(int).ravel(), minlength=6)[:, None] * np.ones(3)
    counts[5] = 0
    close(m.weight.grad, counts)
    with pytest.raises(ValueError, match="Padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)


def test_embedding_from_pretrained():
    table = mt.randn(4, 2)
    m = nn.Embedding.from_pretrained(table)
    assert m.weight.array is table.array and not m.weight.requires_grad
    assert (m.num_embeddings, m.embedding_dim) == (4, 2)
    close(m(mt.tensor([3, 0])), npa(table)[[3, 0]])
    trainable = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=1)
    assert trainable.weight.requires_grad and npa(trainable.weight)[1].any()  # not zeroed, as PyTorch
    with pytest.raises(ValueError):
        nn.Embedding.from_pretrained(mt.randn(3))


# ------------------------------------------------------------------------------------ activations
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_ERF = np.vectorize(math.erf)

ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.Hardtanh(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.ELU(0.7), lambda x: np.where(x > 0, x, 0.7 * (np.exp(x) - 1))),
    (nn.GELU(), lambda x: 0.5 * x * (1 + _ERF(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x * _sigmoid(x)),
    (nn.Softplus(2.0, 3.0), lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2)),
    (nn.Sigmoid(), _sigmoid),
    (nn.Tanh(), np.tanh),
    (nn.Softmax(dim=1), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    (nn.LogSoftmax(dim=-1), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
]


@pytest.mark.parametrize("module, ref", ACTIVATIONS, ids=[type(m).__name__ for m, _ in ACTIVATIONS])
def test_activation_modules(module, ref):
    x = rng(12).standard_normal((3, 4)) * 3
    close(module(t64(x)), ref(x), rtol=1e-7, atol=1e-9)
    assert module(mt.tensor(x.astype(np.float32))).dtype == mt.float32


def test_inplace_activation_writes_input():
    x = mt.tensor([-1.0, 2.0])
    y = nn.ReLU(inplace=True)(x)
    close(x, [0.0, 2.0])
    assert y.array is x.array or np.shares_memory(y.array, x.array)


# ----------------------------------------------------------------------------------------- losses
def _log_softmax(x):
    m = x.max(1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(1, keepdims=True))


def test_regression_losses():
    r = rng(13)
    a, b = r.standard_normal((4, 3)), r.standard_normal((4, 3))
    close(nn.MSELoss()(t64(a), t64(b)), np.mean((a - b) ** 2))
    close(nn.MSELoss(reduction="sum")(t64(a), t64(b)), np.sum((a - b) ** 2))
    close(nn.L1Loss(reduction="none")(t64(a), t64(b)), np.abs(a - b))
    with pytest.warns(UserWarning, match="reduction='sum'"):
        legacy = nn.L1Loss(size_average=False)
    assert legacy.reduction == "sum"


def test_cross_entropy_and_nll_modules():
    r = rng(14)
    x = r.standard_normal((6, 4))
    t = np.array([0, 3, 1, 1, 2, 0])
    w = np.array([1.0, 2.0, 0.5, 1.5])
    logp = _log_softmax(x)
    picked = -logp[np.arange(6), t]
    close(nn.CrossEntropyLoss()(t64(x), mt.tensor(t)), picked.mean())
    close(nn.CrossEntropyLoss(weight=t64(w))(t64(x), mt.tensor(t)), (w[t] * picked).sum() / w[t].sum())
    t_ign = t.copy()
    t_ign[2] = -100
    keep = t_ign != -100
    close(nn.CrossEntropyLoss(reduction="sum")(t64(x), mt.tensor(t_ign)), picked[keep].sum())
    eps = 0.1
    smooth = (1 - eps) * picked + eps * (-logp).mean(1)
    close(nn.CrossEntropyLoss(label_smoothing=eps)(t64(x), mt.tensor(t)), smooth.mean())
    close(nn.NLLLoss(weight=t64(w), ignore_index=3)(t64(logp), mt.tensor(t)),
          (w[t] * picked)[t != 3].sum() / w[t][t != 3].sum())


def test_binary_losses_and_weight_buffers():
    r = rng(15)
    z = r.standard_normal((5, 3))
    y = (r.random((5, 3)) > 0.5).astype(np.float64)
    w = r.random(3) + 0.5
    pw = np.array([1.0, 2.0, 3.0])
    p = _sigmoid(z)
    close(nn.BCELoss(weight=t64(w))(t64(p), t64(y)), np.mean(-w * (y * np.log(p) + (1 - y) * np.log(1 - p))))
    ref = -(pw * y * np.log(p) + (1 - y) * np.log(1 - p))
    close(nn.BCEWithLogitsLoss(pos_weight=t64(pw), reduction="none")(t64(z), t64(y)), ref, rtol=1e-9)
    loss = nn.BCEWithLogitsLoss(weight=mt.tensor(w.astype(np.float32)), pos_weight=mt.tensor(pw))
    assert list(loss.state_dict()) == ["weight", "pos_weight"]
    loss.double()
    assert loss.weight.dtype == mt.float64 and loss.pos_weight.dtype == mt.float64
    assert list(nn.CrossEntropyLoss().state_dict()) == []


def test_loss_module_gradient_flows():
    m = nn.Sequential(nn.Linear(3, 4))
    x = mt.randn(5, 3)
    nn.CrossEntropyLoss()(m(x), mt.tensor([0, 1, 2, 3, 0])).backward()
    assert m[0].weight.grad is not None and m[0].weight.grad.shape == (4, 3)


# -------------------------------------------------------------------------------- gradient clipping
def _params_with_grads(seed, shapes=((3, 4), (4,), (2, 2, 2))):
    r = rng(seed)
    ps = []
    for s in shapes:
        p = nn.Parameter(mt.tensor(r.standard_normal(s)))
        p.grad = mt.tensor(r.standard_normal(s) * 3)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm(norm_type, max_norm):
    ps = _params_with_grads(16)
    flat = np.concatenate([npa(p.grad).ravel() for p in ps])
    before = [npa(p.grad) for p in ps]
    total = np.abs(flat).max() if norm_type == math.inf else np.sum(np.abs(flat) ** norm_type) ** (1 / norm_type)
    out = nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
    close(out, total, rtol=1e-9)
    coef = min(1.0, max_norm / (total + 1e-6))
    for p, g in zip(ps, before):
        close(p.grad, g * coef, rtol=1e-9)
    if coef < 1:
        new = np.concatenate([npa(p.grad).ravel() for p in ps])
        norm = np.abs(new).max() if norm_type == math.inf else np.sum(np.abs(new) ** norm_type) ** (1 / norm_type)
        assert norm <= max_norm + 1e-6


def test_clip_grad_norm_edge_cases():
    p = nn.Parameter(mt.ones(3))
    assert float(nn.utils.clip_grad_norm_([p], 1.0)) == 0.0  # no gradients
    p.grad = mt.tensor([3.0, 4.0, 0.0])
    close(nn.utils.clip_grad_norm_(p, 1.0), 5.0)  # a single tensor works too
    assert p.grad.dtype == mt.float32
    close(p.grad, np.array([0.6, 0.8, 0.0]), rtol=1e-5)
    p.grad = mt.tensor([float("nan"), 1.0, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


def test_clip_grad_value_and_vector_conversion():
    ps = _params_with_grads(17)
    before = [npa(p.grad) for p in ps]
    nn.utils.clip_grad_value_(ps, 0.5)
    for p, g in zip(ps, before):
        close(p.grad, np.clip(g, -0.5, 0.5))
    vec = nn.utils.parameters_to_vector(ps)
    close(vec, np.concatenate([npa(p).ravel() for p in ps]))
    nn.utils.vector_to_parameters(vec * 2, ps)
    close(nn.utils.parameters_to_vector(ps), npa(vec) * 2)
    with pytest.raises(RuntimeError, match="elements"):
        nn.utils.vector_to_parameters(vec[:3], ps)


# --------------------------------------------------------------------------------- DataParallel
def test_data_parallel_is_a_transparent_wrapper():
    inner = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    dp = nn.DataParallel(inner, device_ids=[0])
    assert nn.parallel.DataParallel is nn.DataParallel
    assert dp.module is inner and dp.device_ids == [0] and dp.output_device == 0 and dp.dim == 0
    x = mt.randn(4, 3)
    inner.eval()
    close(dp(x), npa(inner(x)))
    assert list(dp.state_dict()) == ["module." + k for k in inner.state_dict()]
    assert [n for n, _ in dp.named_parameters()][0] == "module.0.weight"
    dp.train()
    assert inner.training
    with pytest.raises(TypeError):
        nn.DataParallel(lambda x: x)


# ------------------------------------------------------------------------------- optional: torch
@pytest.mark.torch
def test_against_torch_with_copied_weights():
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), nn.BatchNorm2d(3), nn.ReLU(),
                         nn.Flatten(), nn.Linear(3 * 5 * 5, 4), nn.LogSoftmax(dim=1)).double()
    theirs = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
                                 torch.nn.BatchNorm2d(3), torch.nn.ReLU(), torch.nn.Flatten(),
                                 torch.nn.Linear(75, 4), torch.nn.LogSoftmax(dim=1)).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    x = rng(18).standard_normal((2, 2, 5, 5))
    close(ours(t64(x)), theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-9)


MODULE_LIST_REPR = """ModuleList(
  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
  (3): ReLU()
  (4-5): 2 x Sequential(
    (0): Linear(in_features=1, out_features=1, bias=True)
    (1): Tanh()
  )
)"""


def _module_list(lib):
    block = lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.Tanh())
    return lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)] + [lib.nn.ReLU(), block, block])


def test_module_list_repr_folds_repeated_modules():
    """PyTorch's ModuleList repr: a run of equal reprs shows once as (first-last): n x repr."""
    assert repr(_module_list(mt)) == MODULE_LIST_REPR
    assert repr(nn.ModuleList()) == "ModuleList()"


@pytest.mark.torch
def test_module_list_repr_matches_pytorch():
    torch = pytest.importorskip("torch")
    assert repr(_module_list(mt)) == repr(_module_list(torch))
