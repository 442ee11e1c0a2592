"""A ``weights_only`` load changes only the objects its pickle builds: BUILD, SETITEM(S), APPEND(S),
NEWOBJ and REDUCE on the globals a checkpoint may name (dtypes, ``Size``, storage types) are refused, as
PyTorch's weights_only unpickler refuses them, and minitensor's globals stay as they were."""
from __future__ import annotations

import collections
import pickle

import numpy as np
import pytest
from test_torch_format import dict_of, glob, tensor, text, torch_file

import minitensor as mt
from minitensor import serialization
from minitensor.serialization import load

EMPTY = b"}"
HOSTILE = {  # name: (pickle body, the gist of the error)
    "BUILD on a dtype": (glob("torch", "float32") + b"N}" + text("np") + text("float16") + b"s\x86b",
                         "Can only build"),
    "BUILD on Size": (glob("torch", "Size") + b"N}" + text("__repr__") + glob("builtins", "set") + b"s\x86b",
                      "Can only build"),
    "BUILD on a storage type": (glob("torch", "FloatStorage") + b"}" + text("file_dtype") + text("f2") + b"sb",
                                "Can only build"),
    "BUILD on a function": (glob("torch._utils", "_rebuild_tensor_v2") + b"}" + text("__defaults__") + b")sb",
                            "Can only build"),
    "BUILD on a tensor": (tensor("FloatStorage", "0", 2, 0, (2,), (1,)) + b"N}" + text("array") + b"Ns\x86b",
                          "Can only build"),
    "SETITEM on a dtype": (glob("torch", "float32") + text("np") + text("float16") + b"s", "Can only SETITEM"),
    "SETITEMS on a tensor": (tensor("FloatStorage", "0", 2, 0, (2,), (1,)) + b"(K\x00G" + b"@\x1c" + bytes(6)
                             + b"u", "Can only SETITEMS"),
    "APPEND to a dict": (EMPTY + b"K\x01a", "Can only APPEND"),
    "APPENDS to an OrderedDict": (glob("collections", "OrderedDict") + b")R(K\x01e", "Can only APPENDS"),
    "NEWOBJ of a dtype": (glob("torch", "float32") + b")\x81", "Can only create new object"),
}


def snapshot() -> tuple:
    return (mt.float32.np, mt.zeros(2).dtype.name, mt.tensor([1.5]).dtype, repr(mt.Size([2, 3])),
            repr(serialization.unpickler.TORCH_NAMES["torch.FloatStorage"]),
            serialization.unpickler.TORCH_NAMES["torch.FloatStorage"].file_dtype,
            serialization.unpickler.rebuild_tensor_v2.__defaults__)


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_checkpoint_cannot_change_minitensors_globals(tmp_path, case):
    body, why = HOSTILE[case]
    path = tmp_path / "evil.pt"
    torch_file(path, body, {"0": np.ones(2, np.float32).tobytes()})
    before = snapshot()
    with pytest.raises(pickle.UnpicklingError, match=why):
        load(path)
    assert snapshot() == before
    assert mt.ones(2).dtype == mt.float32 and mt.ones(2).numpy().dtype == np.float32


class Point:
    """A user class allow-listed for weights_only loads."""

    def __init__(self) -> None:
        self.x = 0


def test_build_still_sets_state_dict_metadata_and_allowlisted_instances(tmp_path):
    path = tmp_path / "ok.pt"
    metadata = text("_metadata") + dict_of([(text(""), dict_of([(text("version"), b"K\x01")]))])
    point = glob(__name__, "Point") + b")\x81}" + text("x") + b"K\x07sb"
    torch_file(path, dict_of([(text("sd"), glob("collections", "OrderedDict") + b")R}" + metadata + b"sb"),
                              (text("p"), point)]), {})
    with pytest.raises(pickle.UnpicklingError, match="Point was not an allowed global"):
        load(path)
    with serialization.safe_globals([Point]):
        out = load(path)
    assert out["sd"]._metadata == {"": {"version": 1}} and type(out["sd"]) is collections.OrderedDict
    assert type(out["p"]) is Point and out["p"].x == 7
    cls_build = tmp_path / "cls.pt"  # the allow-listed class itself is still not built
    torch_file(cls_build, glob(__name__, "Point") + b"}" + text("x") + b"K\x07sb", {})
    with serialization.safe_globals([Point]), pytest.raises(pickle.UnpicklingError, match="Can only build"):
        load(cls_build)
    assert not hasattr(Point, "x")


@pytest.mark.torch
@pytest.mark.parametrize("case", ["BUILD on a dtype", "BUILD on Size", "SETITEM on a dtype", "APPEND to a dict",
                                  "BUILD on a function"])
def test_pytorch_refuses_the_same_pickles(tmp_path, case):
    torch = pytest.importorskip("torch")
    body, _ = HOSTILE[case]
    path = tmp_path / "evil.pt"
    torch_file(path, body, {"0": np.ones(2, np.float32).tobytes()})
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(path)
    assert torch.ones(2).dtype == torch.float32 and repr(torch.Size([2])) == "torch.Size([2])"
