"""``minitensor.jit`` (TorchScript's names, run eagerly), ``nn.attention``, ``utils.hooks``, ``types`` and
``overrides``: code written for PyTorch's TorchScript and extension points runs unchanged."""
from __future__ import annotations

import typing

import pytest

import minitensor as mt
from minitensor import jit, nn

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # TorchScript is deprecated, as in PyTorch


class Net(nn.Module):
    scale: jit.Final[float]

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scale = 2.0
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if jit.is_scripting() or jit.is_tracing():
            raise AssertionError("code under `if is_scripting()` must not run eagerly")
        return self.fc(x) * self.scale

    @jit.export
    def half(self, x):
        return self.forward(x) / 2

    @jit.ignore
    def debug(self, x):
        return x

    @jit.unused
    def unused(self, x):
        return x


def test_script_returns_the_function_or_module_itself():
    net = Net()
    assert jit.script(net) is net

    @jit.script
    def f(x: mt.Tensor) -> mt.Tensor:
        return x * 2

    assert f(mt.tensor([1.0])).item() == 2.0

    @jit.script()
    def g(x):
        return x + 1

    assert g(1) == 2
    with pytest.warns(DeprecationWarning, match="`minitensor.jit.script` is deprecated"):
        jit.script(f)


def test_trace_runs_the_example_once_and_returns_the_object():
    net = Net()
    x = mt.randn(4, 3)
    assert jit.trace(net, x) is net and net.calls == 1
    assert jit.trace(net, (x,)) is net and net.calls == 2
    assert jit.trace(net, example_kwarg_inputs={"x": x}) is net and net.calls == 3

    def f(a, b):
        return a + b

    assert jit.trace(f, (mt.ones(2), mt.ones(2))) is f
    with pytest.raises(RuntimeError, match="size|shape|broadcast"):
        jit.trace(f, (mt.ones(2), mt.ones(3)))  # an input it cannot run fails at trace time, as PyTorch's
    assert jit.trace_module(net, {"forward": x, "half": (x,)}) is net and net.calls == 5
    assert jit.trace(net.forward, [x]) is net and net.calls == 6  # a list is the arguments, as make_tuple
    assert jit.trace(f, [mt.ones(2), mt.ones(2)]) is f
    with pytest.raises(AttributeError, match="expected a dictionary"):
        jit.trace_module(net, x)


def test_decorators_annotations_and_queries():
    net = Net()
    x = mt.ones(1, 3)
    assert net.debug(x) is x and net.unused(x) is x
    assert mt.allclose(net.half(x), net(x) / 2)
    assert jit.ignore(drop=True)(len) is len
    assert jit.script_if_tracing(len) is len and jit.interface(int) is int
    assert jit.is_scripting() is False and jit.is_tracing() is False
    assert jit.annotate(list[int], []) == [] and jit.Attribute(3, int) == 3
    assert jit.Final is typing.Final
    assert issubclass(jit.ScriptModule, nn.Module) and isinstance(jit.ScriptFunction, type)


def test_fork_runs_now_and_wait_gives_the_value():
    fut = jit.fork(lambda a, b=0: a * 10 + b, 4, b=2)
    assert fut.done() and jit.wait(fut) == 42

    def boom():
        raise ValueError("inside")

    fut = jit.fork(boom)
    with pytest.raises(ValueError, match="inside"):
        jit.wait(fut)


def test_freeze_and_optimize_for_inference():
    net = Net()
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        jit.freeze(net)
    assert jit.freeze(net.eval()) is net
    train = Net()
    assert jit.optimize_for_inference(train) is train and not train.training


def test_save_and_load_refuse_torchscript_archives(tmp_path):
    with pytest.raises(NotImplementedError, match="TorchScript archives are not supported.*minitensor.save"):
        jit.save(Net(), tmp_path / "m.pt")
    with pytest.raises(NotImplementedError, match="TorchScript archives are not supported"):
        jit.load(tmp_path / "m.pt")


def test_sdpa_kernel_is_accepted_and_changes_nothing():
    from minitensor.nn.attention import SDPBackend, sdpa_kernel
    q = mt.randn(1, 2, 4, 8)
    plain = nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        inside = nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION], set_priority=True) as state:
        assert state == {}
    assert mt.equal(plain, inside)
    assert int(SDPBackend.ERROR) == -1 and int(SDPBackend.OVERRIDEABLE) == 4
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("flash"):
            pass


def test_removable_handle_is_what_module_hooks_return():
    from minitensor.utils.hooks import RemovableHandle, unserializable_hook
    net = Net()
    handle = net.register_forward_hook(lambda m, i, o: o * 0)
    assert isinstance(handle, RemovableHandle)
    handle.remove()
    assert net(mt.ones(1, 3)).abs().sum().item() > 0
    hooks: dict = {}
    own = RemovableHandle(hooks)  # PyTorch's extension pattern: hooks[handle.id] = fn
    hooks[own.id] = print
    own.remove()
    assert hooks == {}

    def hook(grad):
        return grad

    assert unserializable_hook(hook) is hook and hook.__torch_unserializable__


def test_types_and_overrides():
    from minitensor import overrides, types
    assert typing.get_args(types.Number) == (int, float, bool)
    assert mt.Size in typing.get_args(types._size) and mt.device in typing.get_args(types.Device)
    x = mt.ones(2)
    assert overrides.has_torch_function((x,)) is False
    assert overrides.has_torch_function_unary(x) is False and overrides.has_torch_function_variadic(x, x) is False
    assert overrides.is_tensor_like(x) and overrides.is_tensor_like(nn.Parameter(x)) and not overrides.is_tensor_like(1)
    assert overrides.wrap_torch_function(lambda *a: a)(len) is len
    with pytest.raises(TypeError, match="no implementation found for 'len'"):
        overrides.handle_torch_function(len, (x,), x)


@pytest.mark.torch
def test_the_names_and_values_are_pytorch_s():
    torch = pytest.importorskip("torch")
    from minitensor.nn.attention import SDPBackend
    theirs = torch.nn.attention.SDPBackend.__members__
    assert {m.name: m.value for m in SDPBackend} == {n: int(m) for n, m in theirs.items()}
    from minitensor import overrides, types
    for module, twin in ((jit, torch.jit), (overrides, torch.overrides), (types, torch.types),
                         (mt.utils.hooks, torch.utils.hooks), (mt.nn.attention, torch.nn.attention)):
        assert [n for n in module.__all__ if not hasattr(twin, n)] == [], module.__name__
    assert typing.get_args(types.Number) == typing.get_args(torch.types.Number)
    assert jit.is_scripting() == torch.jit.is_scripting() and jit.is_tracing() == torch.jit.is_tracing()
