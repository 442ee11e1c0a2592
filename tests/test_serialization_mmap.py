"""``load(f, mmap=True)``: a ``torch.save`` archive's storages mapped copy-on-write from the file (PyTorch's
``MAP_PRIVATE`` default), the same values as reading them, and PyTorch's errors for a file object and a legacy
pickle."""
from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import minitensor as mt
from minitensor.serialization import load, save


def _reference():
    rng = np.random.default_rng(0)
    return {"w": rng.standard_normal((3, 5)), "i": rng.integers(-9, 9, 7), "b": rng.random(4) < 0.5,
            "empty": np.zeros((0, 2))}


def _tensors(ref):
    out = {"w": mt.tensor(ref["w"].astype(np.float32)), "i": mt.tensor(ref["i"]), "b": mt.tensor(ref["b"]),
           "empty": mt.tensor(ref["empty"])}
    out["w_rows"] = out["w"][1:]  # a view: shares the storage of "w", from an offset
    return out


def _mapped(t) -> bool:
    base = np.asarray(t.detach().numpy())
    while base is not None:
        if isinstance(base, np.memmap):
            return True
        base = getattr(base, "base", None)
    return False


def test_mmap_loads_the_same_values_mapped_from_the_file(tmp_path):
    ref = _reference()
    path = tmp_path / "ck.pt"
    save(_tensors(ref), path, format="torch")
    got = load(path, mmap=True)
    np.testing.assert_array_equal(got["w"].numpy(), ref["w"].astype(np.float32))
    np.testing.assert_array_equal(got["w_rows"].numpy(), ref["w"].astype(np.float32)[1:])
    np.testing.assert_array_equal(got["i"].numpy(), ref["i"])
    np.testing.assert_array_equal(got["b"].numpy(), ref["b"])
    assert got["empty"].shape == (0, 2) and got["w"].dtype == mt.float32
    assert _mapped(got["w"]) and _mapped(got["i"])
    plain = load(path)
    assert not _mapped(plain["w"])
    for key in got:
        np.testing.assert_array_equal(got[key].numpy(), plain[key].numpy())


def test_mmap_is_copy_on_write(tmp_path):
    ref = _reference()
    path = tmp_path / "ck.pt"
    save(_tensors(ref), path, format="torch")
    before = path.read_bytes()
    got = load(path, mmap=True)
    got["w"].add_(1.0)
    np.testing.assert_array_equal(got["w"].numpy(), ref["w"].astype(np.float32) + 1)
    np.testing.assert_array_equal(got["w_rows"].numpy(), ref["w"].astype(np.float32)[1:] + 1)  # one storage
    assert path.read_bytes() == before
    np.testing.assert_array_equal(load(path, mmap=True)["w"].numpy(), ref["w"].astype(np.float32))


def test_mmap_false_or_none_reads(tmp_path):
    path = tmp_path / "ck.pt"
    save({"x": mt.arange(6.0)}, path, format="torch")
    for flag in (False, None):
        got = load(path, mmap=flag)["x"]
        assert not _mapped(got) and got.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_mmap_needs_a_path():
    buffer = io.BytesIO()
    save({"x": mt.ones(2)}, buffer, format="torch")
    buffer.seek(0)
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
        load(buffer, mmap=True)
    buffer.seek(0)
    assert load(buffer, mmap=False)["x"].tolist() == [1.0, 1.0]


def test_mmap_refuses_a_legacy_pickle(tmp_path):
    path = tmp_path / "legacy.pt"
    path.write_bytes(pickle.dumps({"x": 1}, protocol=2))
    with pytest.raises(RuntimeError, match=r"mmap can only be used with files saved with `torch.save\(.*legacy.pt, "
                                           r"_use_new_zipfile_serialization=True\)"):
        load(path, mmap=True)
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        load(io.BytesIO(path.read_bytes()), mmap=True)


def test_mmap_reads_the_native_format_as_without_it(tmp_path):
    path = tmp_path / "ck.mt"
    save({"x": mt.arange(3)}, path)
    assert load(path, mmap=True)["x"].tolist() == [0, 1, 2]


@pytest.mark.torch
def test_mmap_matches_pytorch_both_ways(tmp_path):
    torch = pytest.importorskip("torch")
    ref = _reference()
    theirs = tmp_path / "theirs.pt"
    torch.save({"w": torch.tensor(ref["w"].astype(np.float32)), "i": torch.tensor(ref["i"])}, theirs)
    got = load(theirs, mmap=True)
    assert _mapped(got["w"])
    np.testing.assert_array_equal(got["w"].numpy(), ref["w"].astype(np.float32))
    np.testing.assert_array_equal(got["i"].numpy(), ref["i"])
    ours = tmp_path / "ours.pt"
    save(_tensors(ref), ours, format="torch")
    back = torch.load(ours, mmap=True)
    for key, value in _tensors(ref).items():
        np.testing.assert_array_equal(back[key].numpy(), value.numpy())
    for loader in (torch.load, load):
        with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
            loader(io.BytesIO(ours.read_bytes()), mmap=True)
