"""An adaptive pooling's output_size of 0 gives an empty output, as PyTorch (a negative one is refused); and
pow's input gradient is grouped as PyTorch's, gy * (b * a^(b-1)), so that an overflow there is nan too."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

CASES = [("adaptive_max_pool1d", 1, 0), ("adaptive_avg_pool1d", 1, 0), ("adaptive_max_pool2d", 2, (0, 2)),
         ("adaptive_avg_pool2d", 2, (2, 0)), ("adaptive_max_pool3d", 3, (0, 2, 1)),
         ("adaptive_avg_pool3d", 3, (1, 0, 0))]


@pytest.mark.parametrize("name,dims,size", CASES)
def test_an_output_size_of_zero_gives_an_empty_output(name, dims, size):
    x = mt.randn(2, 3, *([4] * dims))
    want = (2, 3, *((size,) if dims == 1 else size))
    assert tuple(getattr(F, name)(x, size).shape) == want
    with pytest.raises(RuntimeError, match="output_size"):
        getattr(F, name)(x, -1 if dims == 1 else tuple(-1 for _ in range(dims)))


@pytest.mark.torch
@pytest.mark.parametrize("name,dims,size", CASES)
def test_empty_adaptive_outputs_match_pytorch(name, dims, size):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, *([4] * dims))).astype(np.float32)
    assert tuple(getattr(F, name)(mt.tensor(x), size).shape) == \
        tuple(getattr(torch.nn.functional, name)(torch.tensor(x), size).shape)


def test_pow_gradient_overflows_to_nan_as_pytorch():
    a = mt.tensor([3e38, 2.0], requires_grad=True)
    (a ** 2.0).backward(mt.tensor([0.0, 1.0]))
    # b * a = 6e38 overflows float32 to inf, and 0 * inf is nan (PyTorch's order); 4 where nothing overflows
    assert np.isnan(a.grad.numpy()[0]) and a.grad.numpy()[1] == 4.0
