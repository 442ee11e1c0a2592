"""minitensor.testing.gradcheck itself: it must pass correct gradients and catch wrong ones."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import ArrayFunction
from minitensor.testing import GradcheckError, gradcheck

from helpers import randn, t64


class WrongSquare(ArrayFunction):
    """y = x^2 with a wrong gradient (3x instead of 2x)."""

    @staticmethod
    def forward(ctx, B, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, B, gy):
        x, = ctx.saved_arrays
        return gy * 3 * x


class WrongSecondInput(ArrayFunction):
    """y = a * b with a correct gradient for a and a sign error for b."""

    @staticmethod
    def forward(ctx, B, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, B, gy):
        a, b = ctx.saved_arrays
        return gy * b, -gy * a


class ForgetsAnInput(ArrayFunction):
    """y = a + b but returns no gradient for b."""

    @staticmethod
    def forward(ctx, B, a, b):
        return a + b

    @staticmethod
    def backward(ctx, B, gy):
        return gy, None


class SlightlyOff(ArrayFunction):
    """y = sin(x) with a gradient 1% too large, to test tolerances."""

    @staticmethod
    def forward(ctx, B, x):
        ctx.save_for_backward(x)
        return B.sin(x)

    @staticmethod
    def backward(ctx, B, gy):
        x, = ctx.saved_arrays
        return gy * B.cos(x) * 1.01


def test_passes_correct_ops():
    x, y = t64(randn(0, (3, 4))), t64(randn(1, (4,)))
    assert gradcheck(lambda a, b: (a * b).exp().sum(1), (x, y)) is True
    assert gradcheck(lambda a: a.tanh(), [x], eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradcheck(lambda a: a.sin(), x)  # a single tensor instead of a sequence


def test_catches_a_wrong_backward():
    x = t64([0.5, -1.0, 2.0])
    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(WrongSquare.apply, (x,))
    assert issubclass(GradcheckError, AssertionError)
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_names_the_input_with_the_wrong_gradient():
    a, b = t64([1.0, 2.0]), t64([3.0, -1.0])
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck(WrongSecondInput.apply, (a, b))
    assert gradcheck(WrongSecondInput.apply, (a, t64([3.0, -1.0], requires_grad=False)))


def test_a_missing_gradient_is_an_error():
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck(ForgetsAnInput.apply, (t64([1.0]), t64([2.0])))


def test_tolerances_decide():
    x = t64([0.3, 0.9])
    with pytest.raises(GradcheckError):
        gradcheck(SlightlyOff.apply, (x,))
    assert gradcheck(SlightlyOff.apply, (x,), rtol=0.05)


def test_refuses_float32_and_inputs_without_grad():
    with pytest.raises(ValueError, match="float64"):
        gradcheck(lambda a: a * 2, (mt.ones(2, requires_grad=True),))
    with pytest.raises(ValueError, match="requires grad"):
        gradcheck(lambda a: a * 2, (mt.ones(2, dtype=mt.float64),))


def test_output_without_graph_is_an_error():
    with pytest.raises(GradcheckError, match="does not require grad"):
        gradcheck(lambda a: a.detach() * 2, (t64([1.0]),))


def test_fast_mode_directional_path():
    x = t64(randn(2, (5, 6)))
    assert gradcheck(lambda a: (a * a).sin(), (x,), fast_mode=True)
    with pytest.raises(GradcheckError, match="directional"):
        gradcheck(WrongSquare.apply, (x,), fast_mode=True)
    big = t64(randn(3, (30, 20)))  # more than 400 entries: fast mode by default
    with pytest.raises(GradcheckError, match="directional"):
        gradcheck(WrongSquare.apply, (big,))
    assert gradcheck(lambda a: a.exp(), (big,))


def test_multiple_outputs():
    x = t64([0.5, 1.5])
    assert gradcheck(lambda a: (a.sin(), a * 3), (x,))
    with pytest.raises(GradcheckError):
        gradcheck(lambda a: (a.sin(), WrongSquare.apply(a)), (x,))


def test_non_tensor_and_constant_inputs_pass_through():
    x = t64([0.5, 1.5])
    c = mt.tensor([2.0, 3.0], dtype=mt.float64)
    assert gradcheck(lambda a, k, s: (a * k) ** s, (x, c, 2))


def test_only_the_perturbed_entries_matter():
    # a function that ignores part of its input has zero gradient there; gradcheck agrees
    x = t64(np.arange(6.0).reshape(2, 3))
    assert gradcheck(lambda a: a[0] * 2, (x,))


def test_gradcheck_handles_non_contiguous_inputs() -> None:
    """A transposed (non-contiguous) float64 input must be perturbed element by element, not via a copy."""
    a = mt.tensor(np.random.default_rng(1).standard_normal((4, 3)).T, dtype=mt.float64, requires_grad=True)
    assert not a.array.flags.c_contiguous
    assert gradcheck(lambda t: (t * t * t).sum(), (a,))
