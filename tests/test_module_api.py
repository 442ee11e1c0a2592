"""nn.Module methods PyTorch programs use: dotted-path look-ups (get_parameter, get_buffer, set_submodule),
extra state in state_dict, the state_dict and load_state_dict hooks, to_empty, type, compile,
call_super_init and the class attributes (dump_patches, T_destination, _version)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn


def net(lib):
    return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))


def test_get_parameter_and_get_buffer():
    m = net(mt)
    assert m.get_parameter("0.weight") is m[0].weight
    assert m.get_buffer("1.running_mean") is m[1].running_mean
    with pytest.raises(AttributeError, match="Linear has no attribute `nope`"):
        m.get_parameter("0.nope")
    with pytest.raises(AttributeError, match="`running_mean` is not an nn.Parameter"):
        m.get_parameter("1.running_mean")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        m.get_buffer("0.weight")
    with pytest.raises(AttributeError, match="`in_features` is not an nn.Module"):
        m.get_submodule("0.in_features")


def test_set_submodule():
    m = net(mt)
    new = nn.Linear(2, 3, bias=False)
    m.set_submodule("0", new)
    assert m[0] is new
    m.set_submodule("1.extra", nn.ReLU())  # strict=False adds to an existing parent
    assert isinstance(m[1].extra, nn.ReLU)
    with pytest.raises(AttributeError, match="BatchNorm1d has no attribute `other`"):
        m.set_submodule("1.other", nn.ReLU(), strict=True)
    with pytest.raises(ValueError, match="without a target name"):
        m.set_submodule("", nn.ReLU())
    with pytest.raises(ValueError, match="is not an nn.Module"):
        m.set_submodule("0", 3)
    with pytest.raises(AttributeError, match="`eps` is not an nn.Module"):
        m.set_submodule("1.eps", nn.ReLU())


class Counter(nn.Module):
    """A module with extra (non-tensor) state."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(1, 1)
        self.steps = 0

    def get_extra_state(self):
        return {"steps": self.steps}

    def set_extra_state(self, state):
        self.steps = state["steps"]


def test_extra_state_round_trip_and_strictness():
    a = nn.Sequential(Counter())
    a[0].steps = 7
    sd = a.state_dict()
    assert list(sd) == ["0._extra_state", "0.lin.weight", "0.lin.bias"] and sd["0._extra_state"] == {"steps": 7}
    b = nn.Sequential(Counter())
    b.load_state_dict(sd)
    assert b[0].steps == 7
    del sd["0._extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0._extra_state"'):
        b.load_state_dict(sd)
    plain = nn.Linear(1, 1)
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        plain.load_state_dict({**plain.state_dict(), "_extra_state": 1})
    with pytest.raises(RuntimeError, match="should never be called"):
        plain.get_extra_state()


def test_state_dict_hooks():
    m = net(mt)
    calls = []
    m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))

    def post(mod, sd, prefix, meta):
        calls.append(("post", prefix, meta["version"]))
        sd[prefix + "note"] = mt.zeros(1)
    h = m[0].register_state_dict_post_hook(post)
    sd = m.state_dict()
    assert calls == [("pre", "0.", False), ("post", "0.", 1)] and "0.note" in sd
    h.remove()
    assert "0.note" not in m.state_dict()
    m.register_state_dict_post_hook(lambda *a: {})
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        m.state_dict()
    with pytest.raises(RuntimeError, match="Cannot register the same function"):
        m._register_state_dict_hook(post)


def test_private_state_dict_hook_may_replace_the_dict():
    m = nn.Linear(1, 1)
    m._register_state_dict_hook(lambda mod, sd, prefix, meta: {"only": 1})
    assert m.state_dict() == {"only": 1}


def test_load_state_dict_hooks():
    src, dst = net(mt), net(mt)
    seen = []
    dst[0].register_load_state_dict_pre_hook(
        lambda mod, sd, prefix, *rest: seen.append((type(mod).__name__, prefix, sorted(sd))))

    def forgive(mod, keys):
        seen.append(("post", list(keys.missing_keys)))
        keys.missing_keys.clear()
    dst.register_load_state_dict_post_hook(forgive)
    sd = src.state_dict()
    del sd["1.running_var"]
    assert repr(dst.load_state_dict(sd)) == "<All keys matched successfully>"  # the post hook cleared it
    assert seen == [("Linear", "0.", ["0.bias", "0.weight"]), ("post", ["1.running_var"])]
    np.testing.assert_array_equal(dst[0].weight.detach().numpy(), src[0].weight.detach().numpy())
    dst.register_load_state_dict_post_hook(lambda mod, keys: keys)
    with pytest.raises(AssertionError, match="not expected to return new values"):
        dst.load_state_dict(src.state_dict())


def test_to_empty_type_and_compile():
    m = net(mt)
    weight = m[0].weight
    assert m.to_empty(device="cpu") is m and m[0].weight is weight and m[0].weight.shape == (3, 2)
    assert m.type(mt.float64) is m and m[0].weight.dtype == mt.float64
    assert m[1].num_batches_tracked.dtype == mt.float64  # type() casts every tensor, as Tensor.type
    assert m.compile() is None and m.compile(mode="reduce-overhead") is None
    with pytest.raises(RuntimeError, match="Either mode or options"):
        m.compile(mode="max-autotune", options={})
    x = mt.randn(4, 2, dtype=mt.float64)
    m.eval()
    assert m(x).shape == (4, 3)


def test_to_empty_without_recursion_leaves_children():
    m = net(mt)
    m.register_buffer("own", mt.ones(2))
    w = m[0].weight.detach().clone()
    m.to_empty(device="cpu", recurse=False)
    np.testing.assert_array_equal(m[0].weight.detach().numpy(), w.numpy())


def test_call_super_init_and_class_attributes():
    class Mixin:
        def __init__(self, tag=None):
            self.tag = tag

    class Cooperative(nn.Module, Mixin):
        call_super_init = True

    assert Cooperative(tag="x").tag == "x"
    with pytest.raises(TypeError, match="unexpected keyword argument 'tag'"):
        type("Plain", (nn.Module, Mixin), {})(tag="x")
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        nn.Module(1)
    assert nn.Module.dump_patches is False and nn.Module._version == 1 and nn.Module.call_super_init is False
    assert nn.Module.T_destination.__name__ == "T_destination"


@pytest.mark.torch
def test_errors_and_extra_state_keys_match_pytorch():
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (mt, torch):
        m = net(lib)
        got = []
        for call in (lambda: m.get_parameter("0.nope"), lambda: m.get_parameter("1.running_mean"),
                     lambda: m.get_buffer("0.weight"), lambda: m.get_submodule("0.in_features"),
                     lambda: m.set_submodule("1.other", lib.nn.ReLU(), strict=True),
                     lambda: m.set_submodule("", lib.nn.ReLU())):
            with pytest.raises(Exception) as info:
                call()
            got.append((type(info.value).__name__, str(info.value)))
        messages.append(got)
    assert messages[0] == messages[1]

    def with_extra(lib):
        class C(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(1, 1)

            def get_extra_state(self):
                return 5
        return lib.nn.Sequential(C())
    assert list(with_extra(mt).state_dict()) == list(with_extra(torch).state_dict())


# ------------------------------------------------------------------------- forward hooks' options
class Scaled(nn.Module):
    def forward(self, x, scale=1.0):
        if scale < 0:
            raise ValueError("negative scale")
        return x * scale


def test_forward_pre_hook_with_kwargs_replaces_args_and_kwargs():
    m = Scaled()
    m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), {"scale": kwargs["scale"] * 10}),
                                with_kwargs=True)
    np.testing.assert_allclose(m(mt.ones(2), scale=2.0).numpy(), [40.0, 40.0])
    m2 = Scaled()
    m2.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
    with pytest.raises(RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\)"):
        m2(mt.ones(2), scale=2.0)


def test_forward_hook_with_kwargs_prepend_and_always_call():
    m = Scaled()
    order = []
    m.register_forward_hook(lambda mod, args, out: order.append("plain"))
    m.register_forward_hook(lambda mod, args, kwargs, out: order.append(("kw", kwargs)), with_kwargs=True,
                            prepend=True)
    h = m.register_forward_hook(lambda mod, args, out: order.append("always"), always_call=True)
    m(mt.ones(1), scale=3.0)
    assert order == [("kw", {"scale": 3.0}), "plain", "always"]
    order.clear()
    with pytest.raises(ValueError, match="negative scale"):
        m(mt.ones(1), scale=-1.0)
    assert order == ["always"]
    h.remove()
    assert not m._forward_hooks_always_called and len(m._forward_hooks_with_kwargs) == 1
    bad = Scaled()
    bad.register_forward_hook(lambda mod, args, out: 1 / 0, always_call=True)
    with pytest.warns(UserWarning, match="always_call=True`` raised an exception that was silenced"):
        with pytest.raises(ValueError, match="negative scale"):
            bad(mt.ones(1), scale=-1.0)


@pytest.mark.torch
def test_forward_hook_options_match_pytorch():
    torch = pytest.importorskip("torch")
    logs = []
    for lib in (mt, torch):
        class S(lib.nn.Module):
            def forward(self, x, scale=1.0):
                if scale < 0:
                    raise ValueError("negative")
                return x * scale
        m, log = S(), []
        m.register_forward_pre_hook(lambda mod, a, k: log.append(("pre-kw", sorted(k))), with_kwargs=True)
        m.register_forward_pre_hook(lambda mod, a: log.append("pre-first"), prepend=True)
        m.register_forward_hook(lambda mod, a, k, o: log.append(("kw", sorted(k))), with_kwargs=True,
                                always_call=True)
        m.register_forward_hook(lambda mod, a, o: log.append("first"), prepend=True)
        m(lib.ones(1), scale=2.0)
        try:
            m(lib.ones(1), scale=-1.0)
        except ValueError:
            log.append("raised")
        logs.append(log)
    assert logs[0] == logs[1]


def test_call_impl_names_and_backward_hook_lists():
    lin = nn.Linear(2, 2)
    x = mt.randn(1, 2)
    np.testing.assert_array_equal(lin._call_impl(x).detach().numpy(), lin(x).detach().numpy())
    assert lin._wrapped_call_impl is lin._call_impl or lin._wrapped_call_impl == lin._call_impl
    assert lin._compiled_call_impl is None
    def hook(m, gi, go):
        return None
    lin.register_full_backward_hook(hook)
    assert lin._get_backward_hooks() == ([hook], []) and lin._get_backward_pre_hooks() == []
    relu = nn.ReLU()
    relu.register_backward_hook(hook)
    assert relu._get_backward_hooks() == ([], [hook])
