"""Where PyTorch masks a gradient (clamp, maximum / minimum, clamp with tensor bounds, the whole-tensor max /
min / median), an element that gets none gets exactly 0 even when the incoming gradient is nan: a where,
not a product (nan * 0 = nan). Where PyTorch multiplies (amax, relu's mask...), the nan reaches it too."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt

N = math.nan


def _grads(lib, name):
    t = lib.tensor
    if name == "clamp":
        x = t([-2.0, 0.5, 2.0, N], requires_grad=True)
        x.clamp(-1, 1).backward(t([N] * 4))
        return [x.grad]
    if name == "clamp_min":
        x = t([-2.0, 0.5, 2.0, N], requires_grad=True)
        x.clamp(min=-1).backward(t([N] * 4))
        return [x.grad]
    if name in ("maximum", "minimum"):
        a, b = t([1.0, 2.0], requires_grad=True), t([2.0, 1.0], requires_grad=True)
        getattr(lib, name)(a, b).backward(t([N, N]))
        return [a.grad, b.grad]
    if name == "clamp_tensor_bounds":
        x = t([-2.0, 0.5, 2.0], requires_grad=True)
        lib.clamp(x, t([-1.0, 0.0, 0.0]), t([1.0, 1.0, 1.0])).backward(t([N] * 3))
        return [x.grad]
    if name == "clamp_min_tensor_nan_input":
        a, b = t([N, 1.0, 3.0], requires_grad=True), t([0.0, 2.0, 2.0], requires_grad=True)
        lib.clamp(a, min=b).backward(t([1.0, N, N]))
        return [a.grad, b.grad]
    if name in ("max", "min", "median"):
        x = t([-1.0, 2.0, 3.0], requires_grad=True)
        getattr(x, name)().backward(t(N))
        return [x.grad]
    if name == "amax":
        x = t([-1.0, 2.0], requires_grad=True)
        x.amax().backward(t(N))
        return [x.grad]
    raise KeyError(name)


EXPECTED = {
    "clamp": [[0.0, N, 0.0, 0.0]],
    "clamp_min": [[0.0, N, N, 0.0]],
    "maximum": [[0.0, N], [N, 0.0]],
    "minimum": [[N, 0.0], [0.0, N]],
    "clamp_tensor_bounds": [[0.0, N, 0.0]],
    "clamp_min_tensor_nan_input": [[0.0, 0.0, N], [0.0, N, 0.0]],
    "max": [[0.0, 0.0, N]],
    "min": [[N, 0.0, 0.0]],
    "median": [[0.0, N, 0.0]],
    "amax": [[N, N]],  # PyTorch's amax multiplies by its mask
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_masked_gradients_stay_zero_under_a_nan_gradient(name):
    got = [g.numpy() for g in _grads(mt, name)]
    for g, want in zip(got, EXPECTED[name]):
        np.testing.assert_array_equal(g, np.array(want, dtype=np.float32))


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_masked_gradients_match_pytorch(name):
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_grads(mt, name), _grads(torch, name)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
