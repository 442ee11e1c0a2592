"""Checkpoint files under attack: saves killed mid-write (real processes, SIGKILL), long target names, and
a battery of crafted archives, each of which must give one RuntimeError naming the file and the fault."""
from __future__ import annotations

import io
import json
import os
import signal
import struct
import subprocess
import sys
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
from minitensor.serialization import load, save
from minitensor.utils import _files

posix_only = pytest.mark.skipif(os.name != "posix", reason="SIGKILL and pid checks are POSIX")


# ------------------------------------------------------------------------------ saves killed mid-write
# The child saves a 4 MB checkpoint whose archive is fully written into the temporary file, says so,
# and then hangs before the rename: the parent kills it there, as a crash or OOM kill would.
CHILD = """
import sys, time
import numpy as np
import minitensor as mt
from minitensor import serialization
real_savez = np.savez
def savez_then_hang(file, **arrays):
    real_savez(file, **arrays)
    file.flush()
    print("written", flush=True)
    time.sleep(60)
serialization.native.np.savez = savez_then_hang
mt.save({"w": mt.ones(1024, 1024)}, sys.argv[1])
"""


def start_stuck_writer(target: Path) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(target)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "written"
    return child


def kill(child: subprocess.Popen) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait()


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@posix_only
@pytest.mark.parametrize("then", ["save", "load"])
def test_a_killed_save_leaves_a_temporary_that_the_next_save_or_load_removes(tmp_path, then):
    target = tmp_path / "model.mt"
    save({"version": 1}, target)
    kill(start_stuck_writer(target))
    left = temporaries(tmp_path)
    assert len(left) == 1 and (tmp_path / left[0]).stat().st_size > 4 * 2**20  # the whole 4 MB archive
    assert load(target) == {"version": 1}  # the previous checkpoint is intact either way
    if then == "save":
        save({"version": 2}, target)
    assert temporaries(tmp_path) == []
    assert load(target)["version"] == (2 if then == "save" else 1)


@posix_only
def test_a_live_writers_temporary_is_left_alone(tmp_path):
    target, other = tmp_path / "model.mt", tmp_path / "other.mt"
    child = start_stuck_writer(target)
    try:
        save({"version": 1}, target)  # a concurrent save of the same target
        save({"x": 1}, other)
        assert load(target) == {"version": 1}
        assert len(temporaries(tmp_path)) == 1  # the child's file: its writer is alive
    finally:
        kill(child)
    kill(start_stuck_writer(other))  # a dead writer of another target: not this target's to clean
    assert len(temporaries(tmp_path)) == 2
    load(target)
    assert len(temporaries(tmp_path)) == 1
    load(other)
    assert temporaries(tmp_path) == []


@posix_only
def test_stale_rules_for_other_hosts_and_the_old_naming(tmp_path):
    target = tmp_path / "model.mt"
    save({"v": 1}, target)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    h = _files._target_hash(target)
    other_host_recent = tmp_path / f".{h}.00000000.{dead}.0123abcd.mt-tmp"
    other_host_old = tmp_path / f".{h}.00000000.{dead}.4567abcd.mt-tmp"
    legacy_dead = tmp_path / f".model.mt.{dead}.89abcdef.tmp"
    legacy_alive = tmp_path / f".model.mt.{os.getppid()}.89abcdef.tmp"
    unrelated = tmp_path / ".model.mt.notes"
    for p in (other_host_recent, other_host_old, legacy_dead, legacy_alive, unrelated):
        p.write_bytes(b"partial")
    day_ago = time.time() - _files.STALE_AFTER_S - 60
    os.utime(other_host_old, (day_ago, day_ago))
    load(target)
    assert temporaries(tmp_path) == sorted(p.name for p in (other_host_recent, legacy_alive, unrelated))


def test_a_250_character_name_saves_and_loads(tmp_path):
    target = tmp_path / ("m" * 247 + ".mt")
    assert len(target.name) == 250
    save({"w": mt.arange(3)}, target)
    np.testing.assert_array_equal(load(target)["w"].numpy(), [0, 1, 2])
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_errors_name_the_users_path_not_the_temporary(tmp_path):
    target = tmp_path / "no such folder" / "model.mt"
    with pytest.raises(FileNotFoundError) as info:
        save({"v": 1}, target)
    assert info.value.filename == str(target) and "mt-tmp" not in str(info.value)
    folder_in_the_way = tmp_path / "taken"
    folder_in_the_way.mkdir()
    with pytest.raises(OSError) as info:
        save({"v": 1}, folder_in_the_way)
    assert info.value.filename == str(folder_in_the_way) and "mt-tmp" not in str(info.value)
    assert temporaries(tmp_path) == []


# ------------------------------------------------------------------------------------ crafted files
def npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


def npy_with_header(header: str, data: bytes, version: tuple[int, int] = (1, 0)) -> bytes:
    """A .npy written by hand: magic, version, padded header dict, data."""
    text = header.encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    size = struct.pack("<H", len(text)) if version == (1, 0) else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes(version) + size + text + data


def header_member(tree, fmt="minitensor", version=1) -> bytes:
    tree = tree if isinstance(tree, str) else json.dumps(tree)
    text = f'{{"format": "{fmt}", "version": {version}, "tree": {tree}}}'.encode()
    return npy(np.frombuffer(text, np.uint8))


def write_archive(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate-name case
        with zipfile.ZipFile(path, "w") as z:
            for name, data in members:
                z.writestr(name, data)
    return path


def nested(depth: int) -> str:
    """The JSON of lists within lists, ``depth`` deep (written out: json.dumps would recurse too)."""
    return '{"list": [' * depth + "0" + "]}" * depth


def with_central_size(data: bytes, size: int) -> bytes:
    """The archive with its (single) central directory entry claiming ``size`` uncompressed bytes."""
    at = data.index(b"PK\x01\x02") + 24
    return data[:at] + struct.pack("<I", size) + data[at + 4:]


GOOD_W = npy(np.arange(4, dtype=np.float32))
CASES = {
    "empty file": (lambda p: p.write_bytes(b""), "BadZipFile"),
    "wrong magic": (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100)), "BadZipFile"),
    "a torch-style pickle": (lambda p: p.write_bytes(b"\x80\x02}q\x00." * 20), "BadZipFile"),
    "truncated zip": (lambda p: p.write_bytes(write_archive(
        p, [("a0.npy", GOOD_W), ("__minitensor__.npy", header_member({"ndarray": "a0"}))]).read_bytes()[:-30]),
        "BadZipFile"),
    "a member that is not .npy": (lambda p: write_archive(p, [
        ("a0.txt", b"raw bytes"), ("__minitensor__.npy", header_member({"ndarray": "a0"}))]),
        "'a0.txt' is not a .npy array"),
    "a duplicate member": (lambda p: write_archive(p, [
        ("a0.npy", GOOD_W), ("a0.npy", GOOD_W), ("__minitensor__.npy", header_member({"ndarray": "a0"}))]),
        "'a0.npy' appears twice"),
    "an object array (pickled .npy)": (lambda p: write_archive(p, [
        ("a0.npy", npy(np.array([{"x": 1}, None], dtype=object))),
        ("__minitensor__.npy", header_member({"ndarray": "a0"}))]), "Python objects"),
    "a raw pickle named .npy": (lambda p: write_archive(p, [
        ("a0.npy", b"\x80\x04\x95" + bytes(40)), ("__minitensor__.npy", header_member({"ndarray": "a0"}))]),
        "no valid .npy header"),
    "a huge declared shape": (lambda p: write_archive(p, [
        ("a0.npy", npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }",
                                   bytes(32))),
        ("__minitensor__.npy", header_member({"ndarray": "a0"}))]), "declares shape (1000000, 1000000)"),
    "a record of 255 dimensions": (lambda p: write_archive(p, [
        ("a0.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ("1, " * 255),
                                   bytes(4))),
        ("__minitensor__.npy", header_member({"ndarray": "a0"}))]), "'a0.npy' declares 255 dimensions"),
    "data longer than declared": (lambda p: write_archive(p, [
        ("a0.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", bytes(12))),
        ("__minitensor__.npy", header_member({"ndarray": "a0"}))]), "declares shape (2,)"),
    "an oversized .npy header": (lambda p: write_archive(p, [
        ("a0.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }" + " " * 20000,
                                   bytes(4), version=(2, 0))),
        ("__minitensor__.npy", header_member({"ndarray": "a0"}))]), "no valid .npy header"),
    "a .npy version 3": (lambda p: write_archive(p, [
        ("a0.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", bytes(4),
                                   version=(3, 0))),
        ("__minitensor__.npy", header_member({"ndarray": "a0"}))]), "version (3, 0)"),
    "a claimed decompression bomb": (lambda p: p.write_bytes(with_central_size(write_archive(
        p, [("__minitensor__.npy", header_member(1))]).read_bytes(), 2**31)), "decompression bomb"),
    "a header nested past the JSON parser": (lambda p: write_archive(p, [
        ("__minitensor__.npy", header_member(nested(5000)))]), "nested too deeply"),
    "a header nested past the limit": (lambda p: write_archive(p, [
        ("__minitensor__.npy", header_member(nested(150)))]), "nested more than 100 deep"),
    "a header that is not bytes": (lambda p: write_archive(p, [
        ("__minitensor__.npy", npy(np.arange(3)))]), "not UTF-8 bytes"),
    "a header that is not UTF-8": (lambda p: write_archive(p, [
        ("__minitensor__.npy", npy(np.frombuffer(b"\xff\xfe{}", np.uint8)))]), "UnicodeDecodeError"),
    "a duplicate dict key": (lambda p: write_archive(p, [
        ("__minitensor__.npy", header_member({"dict": [["k", 1], ["k", 2]]}))]), "a key appears twice"),
    "an unknown node": (lambda p: write_archive(p, [
        ("__minitensor__.npy", header_member({"pickle": "cos\nsystem"}))]), "unknown node"),
    "a bare list": (lambda p: write_archive(p, [("__minitensor__.npy", header_member([1, 2]))]), "bare list"),
    "a missing array": (lambda p: write_archive(p, [
        ("__minitensor__.npy", header_member({"tensor": ["a7", "float32", "cpu", False]}))]), "KeyError"),
    "a dtype that disagrees": (lambda p: write_archive(p, [
        ("a0.npy", GOOD_W), ("__minitensor__.npy", header_member({"tensor": ["a0", "int64", "cpu", False]}))]),
        "the header says int64"),
    "an integer tensor requiring grad": (lambda p: write_archive(p, [
        ("a0.npy", npy(np.arange(3))), ("__minitensor__.npy", header_member({"tensor": ["a0", "int64", "cpu",
                                                                                        True]}))]),
        "requires_grad=True"),
    "a tensor of strings": (lambda p: write_archive(p, [
        ("a0.npy", npy(np.array(["a", "b"]))), ("__minitensor__.npy", header_member({"tensor": ["a0", "str32",
                                                                                                 "cpu", False]}))]),
        "TypeError"),
    "a malformed tensor node": (lambda p: write_archive(p, [
        ("__minitensor__.npy", header_member({"tensor": ["a0"]}))]), "ValueError"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_crafted_file_is_one_clear_error_naming_the_file(tmp_path, case):
    make, why = CASES[case]
    path = tmp_path / "crafted.mt"
    make(path)
    with pytest.raises(RuntimeError) as info:
        load(path)
    message = str(info.value)
    assert type(info.value) is RuntimeError and str(path) in message and why in message, message
    assert "allow_pickle" not in message
    with open(path, "rb") as f, pytest.raises(RuntimeError, match="crafted.mt"):
        load(f)  # the same from a file object, named by its .name


def test_save_refuses_trees_deeper_than_load_accepts(tmp_path):
    deep = [0]
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="nested more than 100"):
        save(deep, tmp_path / "deep.mt")
    save(deep[0], tmp_path / "ok.mt")
    back = load(tmp_path / "ok.mt")
    for _ in range(100):
        back = back[0]
    assert back == 0


def test_fortran_order_and_zero_size_arrays_round_trip(tmp_path):
    a = np.asfortranarray(np.arange(12, dtype=np.int16).reshape(3, 4))
    save({"f": a, "empty": np.zeros((0, 5), np.float32), "t": mt.zeros(2, 0)}, tmp_path / "x.mt")
    back = load(tmp_path / "x.mt")
    np.testing.assert_array_equal(back["f"], a)
    assert back["empty"].shape == (0, 5) and back["t"].shape == (2, 0)
