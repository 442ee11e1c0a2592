"""The padding layers (ReflectionPad, ReplicationPad, CircularPad, ConstantPad, ZeroPad in 1-3 dims) against
np.pad, their reprs, and gradients (F.pad's own cases are in test_shape.py)."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.testing import gradcheck

NP_MODES = {"Reflection": "reflect", "Replication": "edge", "Circular": "wrap", "Constant": "constant",
            "Zero": "constant"}


@pytest.mark.parametrize("kind", sorted(NP_MODES))
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_padding_layers_match_numpy_pad(kind, dims):
    rng = np.random.default_rng(dims)
    x = rng.normal(size=(2, 3) + (4,) * dims)
    padding = tuple(int(v) for v in rng.integers(0, 3, 2 * dims))
    layer = getattr(nn, f"{kind}Pad{dims}d")
    module = layer(padding, 1.5) if kind == "Constant" else layer(padding)
    widths = [(0, 0), (0, 0)] + [(padding[2 * i], padding[2 * i + 1]) for i in reversed(range(dims))]
    kwargs = {"constant_values": 1.5} if kind == "Constant" else {}
    np.testing.assert_array_equal(module(mt.tensor(x)).numpy(), np.pad(x, widths, NP_MODES[kind], **kwargs))
    assert module.state_dict() == {}
    gradcheck(module, (mt.tensor(x[:1, :1], requires_grad=True),))


def test_an_int_pads_every_side_and_reprs_match_pytorch():
    assert repr(nn.ReflectionPad2d(1)) == "ReflectionPad2d((1, 1, 1, 1))"
    assert repr(nn.ReplicationPad2d((1, 2, 3, 4))) == "ReplicationPad2d((1, 2, 3, 4))"
    assert repr(nn.ZeroPad2d(2)) == "ZeroPad2d((2, 2, 2, 2))"
    assert repr(nn.ConstantPad2d(1, 3.5)) == "ConstantPad2d(padding=(1, 1, 1, 1), value=3.5)"
    assert repr(nn.ConstantPad1d((1, 2), 0.0)) == "ConstantPad1d(padding=(1, 2), value=0.0)"
    assert repr(nn.ReflectionPad1d(2)) == "ReflectionPad1d((2, 2))"
    assert repr(nn.CircularPad3d(1)) == "CircularPad3d((1, 1, 1, 1, 1, 1))"
    assert nn.ZeroPad1d(1)(mt.ones(1, 2)).tolist() == [[0.0, 1.0, 1.0, 0.0]]
