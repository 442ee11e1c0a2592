"""``save`` / ``load``: checkpoints without pickled code.

A checkpoint is an ``.npz`` archive (NumPy's zip of ``.npy`` arrays): one entry per tensor or array
(``a0``, ``a1``, ...) and an entry ``__minitensor__`` holding, as UTF-8 JSON, the format name, its
version and the object tree. The tree records nesting (dict with keys of any JSON-able type, OrderedDict,
list, tuple), scalars (int, float, bool, str, None) and, for each tensor, its array entry, dtype,
dtype, device and ``requires_grad``. Loading reads it with ``allow_pickle=False``, so opening a checkpoint
never runs code. Tensors that shared memory when saved come back as separate tensors.

Saving to a path is atomic: the archive is written to a temporary file in the same folder, flushed to
disk and renamed over the target, so a crash mid-save leaves the previous file intact.
"""
from __future__ import annotations

import collections
import json
import os
import zipfile
import zlib
from typing import IO, Any

import numpy as np

from .device import as_device, cpu, device
from .tensor import Tensor, from_numpy
from .utils._files import atomic_write

_FORMAT, _VERSION = "minitensor", 1
_HEADER = "__minitensor__"
FileLike = str | os.PathLike | IO[bytes]
MapLocation = str | device | dict[str, str | device] | None


def save(obj: Any, f: FileLike) -> None:
    """Write ``obj`` (nested dicts, lists and tuples of Tensors, NumPy arrays and scalars, numbers,
    strings, bools and None) to a path (atomically) or a binary file object."""
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, arrays, "obj")
    header = json.dumps({"format": _FORMAT, "version": _VERSION, "tree": tree})
    arrays[_HEADER] = np.frombuffer(header.encode("utf-8"), dtype=np.uint8)
    if hasattr(f, "write"):
        np.savez(f, **arrays)
        return
    with atomic_write(f) as out:
        np.savez(out, **arrays)


def load(f: FileLike, map_location: MapLocation = None) -> Any:
    """Read what ``save`` wrote. Tensors come back on the CPU, or on ``map_location``: a device, or a
    dict from saved device names ("cuda:0") to devices (unlisted devices load on the CPU)."""
    if isinstance(f, (str, os.PathLike)):
        name = os.fspath(f)
        with open(f, "rb") as file:  # ours to close, even when NumPy fails halfway through the archive
            arrays, tree = _read_archive(file, name)
    else:
        name = getattr(f, "name", "<file object>")
        arrays, tree = _read_archive(f, name)
    return _decode(tree, arrays, map_location, name)


def _read_archive(f: IO[bytes], name: str) -> tuple[dict[str, np.ndarray], Any]:
    """Every array of the archive, and the object tree; a clear error naming the file when it is not a
    readable minitensor checkpoint."""
    try:
        archive = np.load(f, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise _not_a_checkpoint(name, "it holds a single .npy array, not an archive")
        with archive:
            if _HEADER not in archive.files:
                raise _not_a_checkpoint(name, "it has no minitensor header")
            arrays = {key: archive[key] for key in archive.files}
        header = json.loads(arrays.pop(_HEADER).tobytes().decode("utf-8"))
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, UnicodeDecodeError) as e:
        raise RuntimeError(f"{name}: not a readable minitensor checkpoint (truncated, corrupt or another "
                           f"format): {type(e).__name__}: {e}") from e
    if not isinstance(header, dict) or header.get("format") != _FORMAT or "tree" not in header:
        raise _not_a_checkpoint(name, "its header is not minitensor's")
    if header.get("version") != _VERSION:
        raise RuntimeError(f"{name}: minitensor checkpoint format version {header.get('version')}; this "
                           f"minitensor reads version {_VERSION}")
    return arrays, header["tree"]


def _not_a_checkpoint(name: str, why: str) -> RuntimeError:
    return RuntimeError(f"{name}: not a minitensor checkpoint ({why})")


# --------------------------------------------------------------------------------------- the tree
# JSON scalars (int, float, bool, str, None) stand for themselves; everything else is a one-key dict
# {"kind": payload} so that no user value can be mistaken for a node.

def _encode(obj: Any, arrays: dict[str, np.ndarray], where: str) -> Any:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Tensor):
        key = _store(obj.detach().numpy(force=True), arrays)  # a CUDA tensor is copied to the host
        return {"tensor": [key, obj.dtype.name, str(obj.device), obj.requires_grad]}
    if isinstance(obj, np.ndarray):
        return {"ndarray": _store(obj, arrays)}
    if isinstance(obj, np.generic):
        return {"npscalar": _store(np.asarray(obj), arrays)}
    if isinstance(obj, dict):
        kind = "odict" if isinstance(obj, collections.OrderedDict) else "dict"
        return {kind: [[_encode_key(k, where), _encode(v, arrays, f"{where}[{k!r}]")] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]}
    raise TypeError(f"save: cannot store {where} of type {type(obj).__name__}; checkpoints hold Tensors, "
                    f"NumPy arrays, numbers, strings, bools, None and dicts/lists/tuples of them")


def _encode_key(key: Any, where: str) -> Any:
    if key is None or isinstance(key, (bool, int, float, str)):
        return key
    if isinstance(key, tuple):
        return {"tuple": [_encode_key(k, where) for k in key]}
    raise TypeError(f"save: dict key {key!r} in {where} has type {type(key).__name__}; keys must be "
                    f"str, int, float, bool, None or tuples of them")


def _store(array: np.ndarray, arrays: dict[str, np.ndarray]) -> str:
    if array.dtype.hasobject:
        raise TypeError("save: object arrays cannot be stored without pickle")
    key = f"a{len(arrays)}"
    arrays[key] = array
    return key


def _decode(node: Any, arrays: dict[str, np.ndarray], map_location: MapLocation, name: str) -> Any:
    if not isinstance(node, dict):
        return node
    try:
        (kind, payload), = node.items()
        if kind == "tensor":
            key, dtype, saved_device, requires_grad = payload
            if arrays[key].dtype.name != dtype:
                raise ValueError(f"array {key} is {arrays[key].dtype.name}, the header says {dtype}")
            return _restore_tensor(arrays[key], saved_device, requires_grad, map_location)
        if kind == "ndarray":
            return arrays[payload]
        if kind == "npscalar":
            return arrays[payload][()]
        if kind in ("dict", "odict"):
            items = ((_decode_key(k), _decode(v, arrays, map_location, name)) for k, v in payload)
            return collections.OrderedDict(items) if kind == "odict" else dict(items)
        if kind in ("list", "tuple"):
            values = [_decode(v, arrays, map_location, name) for v in payload]
            return tuple(values) if kind == "tuple" else values
    except (ValueError, TypeError, KeyError) as e:
        raise RuntimeError(f"{name}: corrupt minitensor checkpoint structure near {node!r:.80}: {e}") from e
    raise RuntimeError(f"{name}: corrupt minitensor checkpoint: unknown node kind {kind!r}")


def _decode_key(key: Any) -> Any:
    return tuple(_decode_key(k) for k in key["tuple"]) if isinstance(key, dict) else key


def _restore_tensor(array: np.ndarray, saved_device: str, requires_grad: bool,
                    map_location: MapLocation) -> Tensor:
    target = map_location.get(saved_device) if isinstance(map_location, dict) else map_location
    t = from_numpy(array)
    dev = as_device(target)
    if dev is not cpu:
        t = t.to(dev)
    if requires_grad:
        t.requires_grad_(True)
    return t
