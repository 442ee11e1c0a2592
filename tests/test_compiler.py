"""``minitensor.compile`` / ``minitensor.compiler``: PyTorch's names; the model comes back unchanged."""
import numpy as np
import pytest

import minitensor as mt


def test_compile_returns_the_model_and_it_trains_the_same():
    mt.manual_seed(0)
    model = mt.nn.Linear(3, 2)
    compiled = mt.compile(model, mode="reduce-overhead", dynamic=False)
    assert compiled is model
    x = mt.randn(4, 3)
    np.testing.assert_array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    assert list(compiled.state_dict()) == ["weight", "bias"]


def test_decorator_forms():
    @mt.compile
    def double(x):
        return x * 2

    @mt.compile(fullgraph=True, backend="inductor")
    def triple(x):
        return x * 3

    @mt.compiler.disable
    def plain(x):
        return x

    assert double(mt.tensor(2.)).item() == 4.0 and triple(mt.tensor(2.)).item() == 6.0
    assert plain(5) == 5 and mt.compiler.disable(recursive=False)(plain) is plain
    assert mt.compiler.is_compiling() is False and mt.compiler.reset() is None


def test_bad_arguments_raise_as_pytorch():
    with pytest.raises(RuntimeError, match="Either mode or options"):
        mt.compile(mt.nn.ReLU(), mode="max-autotune", options={"trace.enabled": True})
    with pytest.raises(AssertionError, match="A callable function is expected"):
        mt.compile(3)
