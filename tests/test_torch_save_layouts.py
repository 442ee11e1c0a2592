"""``save(..., format="torch")`` writes every view as a layout PyTorch can express: views with negative
strides (``flip``) or strides that are not whole elements (a dtype view) go to a storage of their own,
contiguous, and both minitensor and ``torch.load`` read them back."""
from __future__ import annotations

import io

import numpy as np
import pytest

import minitensor as mt
from minitensor.serialization import load, save


def views() -> dict[str, mt.Tensor]:
    base = mt.arange(12.0).reshape(3, 4)
    return {"flip": mt.arange(4.0).flip(0), "flip2d": base.flip(0, 1), "flip_t": base.flip(1).t(),
            "flip_slice": base.flip(0)[1:, ::2], "flip_row": base.flip(1)[2], "base": base,
            "bytes": mt.arange(4.0).view(mt.int32)[1:3]}


def round_trip(obj, weights_only=True):
    buffer = io.BytesIO()
    save(obj, buffer, format="torch")
    buffer.seek(0)
    return load(buffer, weights_only=weights_only), buffer


def test_negative_stride_views_round_trip():
    sd = views()
    out, _ = round_trip(sd)
    for k, v in sd.items():
        assert out[k].dtype == v.dtype and np.array_equal(out[k].numpy(), v.numpy()), k


def test_a_whole_module_with_a_flipped_parameter_round_trips():
    model = mt.nn.Linear(3, 2)
    with mt.no_grad():
        model.weight.copy_(mt.arange(6.0).reshape(2, 3))
    model.register_buffer("rev", mt.arange(3.0).flip(0))
    out, _ = round_trip(model, weights_only=False)
    assert np.array_equal(out.rev.numpy(), [2.0, 1.0, 0.0])
    assert np.array_equal(out.weight.detach().numpy(), model.weight.detach().numpy())


@pytest.mark.torch
def test_torch_load_reads_the_views():
    torch = pytest.importorskip("torch")
    sd = views()
    _, buffer = round_trip(sd)
    buffer.seek(0)
    out = torch.load(buffer, weights_only=True)
    for k, v in sd.items():
        assert np.array_equal(out[k].numpy(), v.numpy()), k
