"""minitensor.save / minitensor.load: exact round trips of nested checkpoints, atomic writes, clear errors
for files that are not (or no longer) checkpoints."""
from __future__ import annotations

import collections
import io
import json
import math
import os
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor import serialization
from minitensor.serialization import load, save

FEW = settings(max_examples=30, deadline=None)
DTYPES = [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_]


def arr(t):
    return np.asarray(t.detach().numpy())


def assert_same_tensor(got, expected_array):
    assert isinstance(got, mt.Tensor) and got.device == mt.device("cpu")
    assert got.dtype.np == expected_array.dtype and got.shape == expected_array.shape
    np.testing.assert_array_equal(arr(got), expected_array)  # NaNs compare equal here


@FEW
@given(dtype=st.sampled_from(DTYPES), data=st.data())
def test_tensors_round_trip_exactly(tmp_path_factory, dtype, data):
    a = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
    path = tmp_path_factory.mktemp("ck") / "t.mt"
    save({"t": mt.tensor(a), "a": a}, path)
    back = load(path)
    assert_same_tensor(back["t"], a)
    assert isinstance(back["a"], np.ndarray) and back["a"].dtype == a.dtype
    np.testing.assert_array_equal(back["a"], a)


def test_nested_optimizer_like_state_round_trips(tmp_path):
    w = mt.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    state = {
        "state": {0: {"step": 12, "exp_avg": mt.zeros(2, 3), "exp_avg_sq": mt.ones(3, dtype=mt.float64)},
                  1: {"step": 12, "momentum_buffer": None}},
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "amsgrad": False,
                          "params": [0, 1], "name": "body"}],
        "model": collections.OrderedDict([("fc.weight", w), ("fc.bias", mt.tensor([1.5, -2.0]))]),
        "specials": [float("inf"), -float("inf"), float("nan"), 2**70, -0.0, True, None, ""],
        (1, "pair"): np.float32(2.5),
        3.5: "float key",
        None: "none key",
    }
    path = tmp_path / "opt.ckpt"
    save(state, path)
    back = load(path)
    assert set(back) == set(state)
    assert list(back["state"]) == [0, 1] and back["state"][1] == {"step": 12, "momentum_buffer": None}
    assert back["state"][0]["step"] == 12 and isinstance(back["state"][0]["step"], int)
    assert_same_tensor(back["state"][0]["exp_avg"], np.zeros((2, 3), np.float32))
    assert_same_tensor(back["state"][0]["exp_avg_sq"], np.ones(3, np.float64))
    group = back["param_groups"][0]
    assert group == {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "amsgrad": False, "params": [0, 1],
                     "name": "body"}
    assert isinstance(group["betas"], tuple) and group["amsgrad"] is False
    assert type(back["model"]) is collections.OrderedDict and list(back["model"]) == ["fc.weight", "fc.bias"]
    assert_same_tensor(back["model"]["fc.weight"], np.arange(6, dtype=np.float32).reshape(2, 3))
    inf, ninf, nan, big, negzero, true, none, empty = back["specials"]
    assert inf == math.inf and ninf == -math.inf and math.isnan(nan) and big == 2**70
    assert math.copysign(1, negzero) == -1 and true is True and none is None and empty == ""
    assert back[(1, "pair")] == np.float32(2.5) and back[(1, "pair")].dtype == np.float32
    assert back[3.5] == "float key" and back[None] == "none key"


def test_requires_grad_views_paths_and_file_objects(tmp_path):
    p = mt.tensor(np.arange(12, dtype=np.float64).reshape(3, 4), requires_grad=True)
    transposed = mt.tensor(np.arange(12, dtype=np.float32).reshape(3, 4)).T  # not contiguous
    obj = {"p": p, "view": transposed}
    path = tmp_path / "no_suffix"
    save(obj, str(path))
    assert path.is_file() and sorted(os.listdir(tmp_path)) == ["no_suffix"]  # no ".npz" added, no temp left
    back = load(path)
    assert back["p"].requires_grad and back["p"].is_leaf
    assert not back["view"].requires_grad
    np.testing.assert_array_equal(arr(back["view"]), np.arange(12, dtype=np.float32).reshape(3, 4).T)
    buffer = io.BytesIO()
    save(obj, buffer)
    buffer.seek(0)
    again = load(buffer, map_location="cpu")
    np.testing.assert_array_equal(arr(again["p"]), arr(p))
    mapped = load(path, map_location={"cuda:0": "cpu"})
    assert mapped["p"].device == mt.device("cpu")


def test_saved_from_device_loads_on_cpu_or_map_location(tmp_path, device):
    t = mt.tensor(np.arange(5, dtype=np.float32)).to(device)
    save({"t": t}, tmp_path / "d.mt")
    assert_same_tensor(load(tmp_path / "d.mt")["t"], np.arange(5, dtype=np.float32))
    back = load(tmp_path / "d.mt", map_location=device)["t"]
    assert back.device == device
    np.testing.assert_array_equal(back.cpu().numpy(), np.arange(5, dtype=np.float32))


def test_unsupported_values_are_refused_with_their_place(tmp_path):
    """The pickle-free format refuses what only pickle stores (``save`` without a format pickles it)."""
    with pytest.raises(TypeError, match=r"obj\['a'\]\[1\] of type set"):
        save({"a": [1, {2}]}, tmp_path / "x", format="minitensor")
    with pytest.raises(TypeError, match="dict key"):
        save({frozenset(): 1}, tmp_path / "x", format="minitensor")
    assert not (tmp_path / "x").exists()


# ----------------------------------------------------------------------------------------- atomicity
def test_a_failed_save_leaves_the_previous_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "model.mt"
    save({"version": 1, "w": mt.ones(3)}, path)
    before = path.read_bytes()

    def crash_midway(file, **arrays):
        file.write(b"PK\x03\x04 half an archive")
        raise OSError("disk full")
    monkeypatch.setattr(serialization.native.np, "savez", crash_midway)
    with pytest.raises(OSError, match="disk full"):
        save({"version": 2, "w": mt.zeros(3)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before and load(path)["version"] == 1
    assert os.listdir(tmp_path) == ["model.mt"]  # the temporary file was removed

    def failing_replace(src, dst):
        raise OSError("power cut before the rename")
    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="power cut"):
        save({"version": 3}, path)
    monkeypatch.undo()
    assert load(path)["version"] == 1 and os.listdir(tmp_path) == ["model.mt"]


# ------------------------------------------------------------------------------------------- errors
@pytest.fixture
def good_checkpoint(tmp_path):
    path = tmp_path / "good.mt"
    save({"w": mt.tensor(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32))}, path)
    return path, path.read_bytes()


@pytest.mark.parametrize("cut", [1, 100, 1000, -1])
def test_truncated_file_is_a_clear_error(tmp_path, good_checkpoint, cut):
    _, data = good_checkpoint
    path = tmp_path / "truncated.mt"
    path.write_bytes(data[:cut])
    with pytest.raises(RuntimeError, match="not a readable minitensor checkpoint") as info:
        load(path)
    assert str(path) in str(info.value)


def test_corrupt_bytes_are_a_clear_error(tmp_path, good_checkpoint):
    _, data = good_checkpoint
    corrupt = bytearray(data)
    corrupt[len(data) // 2] ^= 0xFF  # inside the weight array: its CRC no longer matches
    path = tmp_path / "corrupt.mt"
    path.write_bytes(bytes(corrupt))
    with pytest.raises(RuntimeError, match="corrupt.mt"):
        load(path)


def test_other_files_are_not_checkpoints(tmp_path):
    cases = {"plain.npz": lambda p: np.savez(p, x=np.arange(3)),
             "single.npy": lambda p: np.save(p, np.arange(3)),
             "text.txt": lambda p: p.write_text("hello"),
             "empty.bin": lambda p: p.write_bytes(b"")}
    for name, make in cases.items():
        path = tmp_path / name
        make(path)
        with pytest.raises(RuntimeError, match="checkpoint") as info:
            load(path)
        assert name in str(info.value)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.mt")


def test_checkpoints_hold_no_pickles_and_a_foreign_header_is_refused(tmp_path, good_checkpoint):
    path, _ = good_checkpoint
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    assert "__minitensor__.npy" in names
    with np.load(path, allow_pickle=False) as archive:  # every entry reads without pickle
        header = json.loads(archive["__minitensor__"].tobytes())
        assert header["format"] == "minitensor" and all(archive[k].dtype != object for k in archive.files)
    forged = tmp_path / "forged.mt"
    with open(forged, "wb") as f:
        np.savez(f, __minitensor__=np.frombuffer(b'{"format": "other"}', dtype=np.uint8))
    with pytest.raises(RuntimeError, match="not a minitensor checkpoint"):
        load(forged)


def test_model_and_optimizer_state_dicts_resume_identically(tmp_path):
    optim = pytest.importorskip("minitensor.optim")
    x = mt.tensor(np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32))

    def step(model, opt):
        opt.zero_grad()
        (model(x) ** 2).mean().backward()
        opt.step()
    model = mt.nn.Linear(3, 2)
    opt = optim.Adam(model.parameters(), lr=0.1)
    step(model, opt)
    save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "run.mt")
    restored = mt.nn.Linear(3, 2)
    restored_opt = optim.Adam(restored.parameters(), lr=0.1)
    checkpoint = load(tmp_path / "run.mt")
    restored.load_state_dict(checkpoint["model"])
    restored_opt.load_state_dict(checkpoint["opt"])
    step(model, opt)
    step(restored, restored_opt)
    for a, b in zip(model.parameters(), restored.parameters()):
        np.testing.assert_array_equal(arr(a), arr(b))
