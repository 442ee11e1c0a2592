"""nanoGPT-style checkpoints: ``save({"model": state_dict, "config": GPTConfig(...), "iter_num": n}, f)``.
As in PyTorch, the config object is pickled; ``load`` with the default ``weights_only=True`` refuses it
with an error naming the global and both ways out, ``weights_only=False`` returns it, and
``serialization.add_safe_globals([Cfg])`` lets the default load take it."""
from __future__ import annotations

import dataclasses
import io
import pickle

import pytest

import minitensor as mt


@dataclasses.dataclass
class Cfg:
    n_layer: int = 2
    dropout: float = 0.1
    name: str = "gpt"


def round_trips(lib):
    """What each way of loading a checkpoint holding a Cfg gives (a value, or the error's type and words)."""
    buf = io.BytesIO()
    lib.save({"model": {"w": lib.arange(3.0)}, "config": Cfg(n_layer=4), "iter_num": 7}, buf)
    out = {}
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as refused:
        lib.load(buf)
    msg = str(refused.value)
    out["refused"] = ("weights_only" in msg and "add_safe_globals" in msg and f"{__name__}.Cfg" in msg)
    buf.seek(0)
    ck = lib.load(buf, weights_only=False)
    out["trusted"] = (ck["config"], ck["iter_num"], ck["model"]["w"].tolist())
    lib.serialization.add_safe_globals([Cfg])
    try:
        buf.seek(0)
        out["allowed"] = lib.load(buf)["config"]
    finally:
        lib.serialization.clear_safe_globals()
    return out


def test_config_object_is_pickled_and_guarded():
    got = round_trips(mt)
    assert got == {"refused": True, "trusted": (Cfg(n_layer=4), 7, [0.0, 1.0, 2.0]), "allowed": Cfg(n_layer=4)}


def test_minitensor_format_still_refuses_objects():
    with pytest.raises(TypeError, match="of type Cfg"):
        mt.save({"config": Cfg()}, io.BytesIO(), format="minitensor")


@pytest.mark.torch
def test_config_object_round_trips_as_torch():
    torch = pytest.importorskip("torch")
    assert round_trips(torch) == round_trips(mt)
