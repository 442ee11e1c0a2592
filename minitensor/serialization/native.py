"""The minitensor format: checkpoints without pickled code.

A checkpoint is an ``.npz`` archive (NumPy's zip of ``.npy`` arrays): one entry per tensor or array
(``a0``, ``a1``, ...) and an entry ``__minitensor__`` holding, as UTF-8 JSON, the format name, its
version and the object tree. The tree records nesting (dict with keys of any JSON-able type, OrderedDict,
list, tuple), scalars (int, float, bool, str, None) and, for each tensor, its array entry, dtype,
device and ``requires_grad``. Loading reads each member's ``.npy`` header itself and never pickles, so
opening a checkpoint never runs code, and checks every size and structure before allocating or trusting
it. Tensors that shared memory when saved come back as separate tensors.
"""
from __future__ import annotations

import collections
import json
import math
import zipfile
import zlib
from typing import IO, Any

import numpy as np

from ..dtypes import bfloat16
from ..creation import from_numpy
from ..nn import Module
from ..size import Size
from ..tensor import Tensor
from .archive import MAX_DIMS, Malformed, check_member, file_size, first_sentence, read_array, unreadable
from .devices import MapLocation, place

_FORMAT, _VERSION = "minitensor", 1
HEADER = "__minitensor__"
_MAX_DEPTH = 100  # containers within containers: deeper trees are refused (JSON and Python recursion)


class NeedsPickle(TypeError):
    """The tree holds what only pickle can store (a whole ``nn.Module``, a config dataclass, a set...):
    ``save`` then writes the pickled format, as ``torch.save`` does, and ``load`` needs ``weights_only=False``
    or the class in ``add_safe_globals``. ``format="minitensor"`` refuses it."""


def save_native(obj: Any, out: IO[bytes]) -> None:
    """Write ``obj`` (nested dicts, lists and tuples of Tensors, NumPy arrays and scalars, numbers,
    strings, bools and None) to the binary file ``out``."""
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, arrays, "obj")
    header = json.dumps({"format": _FORMAT, "version": _VERSION, "tree": tree})
    arrays[HEADER] = np.frombuffer(header.encode("utf-8"), dtype=np.uint8)
    np.savez(out, **arrays)  # type: ignore[arg-type]


def load_native(f: IO[bytes], name: str, map_location: MapLocation) -> Any:
    """Read what ``save_native`` wrote; any file that is not a well-formed checkpoint raises one
    ``RuntimeError`` naming the file and what is wrong with it."""
    arrays, tree = _read_archive(f, name)
    return _decode(tree, arrays, map_location, name)


def _read_archive(f: IO[bytes], name: str) -> tuple[dict[str, np.ndarray], Any]:
    """Every array of the archive, and the object tree; a clear error naming the file when it is not a
    readable minitensor checkpoint."""
    try:
        arrays = _read_members(f)
        if HEADER not in arrays:
            raise _not_a_checkpoint(name, "it has no minitensor header")
        raw = arrays.pop(HEADER)
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise Malformed(f"its header entry is {raw.dtype} {raw.shape}, not UTF-8 bytes")
        header = json.loads(raw.tobytes().decode("utf-8"))
    except RecursionError as e:
        raise unreadable(name, "its header is nested too deeply") from e
    except Malformed as e:
        raise unreadable(name, str(e)) from e
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError) as e:
        raise unreadable(name, f"{type(e).__name__}: {e}") from e  # UnicodeDecodeError is a ValueError
    if not isinstance(header, dict) or header.get("format") != _FORMAT or "tree" not in header:
        raise _not_a_checkpoint(name, "its header is not minitensor's")
    if header.get("version") != _VERSION:
        raise RuntimeError(f"{name}: minitensor checkpoint format version {header.get('version')}; this "
                           f"minitensor reads version {_VERSION}")
    return arrays, header["tree"]


def _read_members(f: IO[bytes]) -> dict[str, np.ndarray]:
    """The archive's ``.npy`` members by name (without ``.npy``), each checked before it is allocated.

    NumPy's ``np.load`` is not used: it returns members that are not ``.npy`` as raw bytes and reads a
    header's declared shape before knowing whether the file holds that much."""
    size = file_size(f)
    with zipfile.ZipFile(f) as archive:
        arrays: dict[str, np.ndarray] = {}
        for info in archive.infolist():
            key = info.filename.removesuffix(".npy")
            if key == info.filename:
                raise Malformed(f"archive member {info.filename!r} is not a .npy array")
            if key in arrays:
                raise Malformed(f"archive member {info.filename!r} appears twice")
            check_member(info, size)
            with archive.open(info) as member:
                arrays[key] = _read_npy(member, info.file_size, info.filename)
    return arrays


_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def _read_npy(member: IO[bytes], size: int, what: str) -> np.ndarray:
    """One ``.npy`` member of ``size`` bytes: header checked (no object dtype, data size as declared), then
    the data read straight into the new array."""
    try:
        version = np.lib.format.read_magic(member)
        if version not in _HEADER_READERS:
            raise Malformed(f"archive member {what!r} is .npy format version {version}, not 1.0 or 2.0")
        shape, fortran, dtype = _HEADER_READERS[version](member)
    except ValueError as e:  # NumPy's first sentence only: the rest can advise allow_pickle
        raise Malformed(f"archive member {what!r} has no valid .npy header: {first_sentence(e)}") from None
    if len(shape) > MAX_DIMS:  # NumPy's own error would not name the file or the record
        raise Malformed(f"archive member {what!r} declares {len(shape)} dimensions; arrays have at most "
                        f"{MAX_DIMS}")
    if dtype.hasobject:
        raise Malformed(f"archive member {what!r} holds Python objects (dtype {dtype}), which only pickle "
                        f"could restore; checkpoints hold plain arrays")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes != size - member.tell():
        raise Malformed(f"archive member {what!r} declares shape {shape} of {dtype} ({nbytes} bytes) but "
                        f"holds {size - member.tell()} bytes of data")
    flat = read_array(member, math.prod(shape), dtype, what)
    return flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)


def _not_a_checkpoint(name: str, why: str) -> RuntimeError:
    return RuntimeError(f"{name}: not a minitensor checkpoint ({why})")


# --------------------------------------------------------------------------------------- the tree
# JSON scalars (int, float, bool, str, None) stand for themselves; everything else is a one-key dict
# {"kind": payload} so that no user value can be mistaken for a node.

def _encode(obj: Any, arrays: dict[str, np.ndarray], where: str, depth: int = 0) -> Any:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Tensor):
        key = _store(obj.detach().numpy(force=True), arrays)  # a CUDA tensor is copied to the host
        return {"tensor": [key, obj.dtype.name, str(obj.device), obj.requires_grad]}
    if isinstance(obj, np.ndarray):
        return {"ndarray": _store(obj, arrays)}
    if isinstance(obj, np.generic):
        return {"npscalar": _store(np.asarray(obj), arrays)}
    if isinstance(obj, Module):
        raise NeedsPickle(f"save: {where} is a whole {type(obj).__name__} module, which only pickle can store")
    if isinstance(obj, (dict, list, tuple)) and depth >= _MAX_DEPTH:
        raise ValueError(f"save: {where[:200]}... is nested more than {_MAX_DEPTH} containers deep")
    if isinstance(obj, dict):
        kind = "odict" if isinstance(obj, collections.OrderedDict) else "dict"
        return {kind: [[_encode_key(k, where), _encode(v, arrays, f"{where}[{k!r}]", depth + 1)]
                       for k, v in obj.items()]}
    if isinstance(obj, Size):
        return {"size": list(obj)}
    if isinstance(obj, (list, tuple)):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [_encode(v, arrays, f"{where}[{i}]", depth + 1) for i, v in enumerate(obj)]}
    raise NeedsPickle(f"save: cannot store {where} of type {type(obj).__name__}; checkpoints hold Tensors, "
                    f"NumPy arrays, numbers, strings, bools, None and dicts/lists/tuples of them (format=\"torch\" "
                    f"pickles other objects)")


def _encode_key(key: Any, where: str) -> Any:
    if key is None or isinstance(key, (bool, int, float, str)):
        return key
    if isinstance(key, tuple):
        return {"tuple": [_encode_key(k, where) for k in key]}
    raise NeedsPickle(f"save: dict key {key!r} in {where} has type {type(key).__name__}; keys must be "
                    f"str, int, float, bool, None or tuples of them")


def _store(array: np.ndarray, arrays: dict[str, np.ndarray]) -> str:
    if array.dtype.hasobject:
        raise TypeError("save: object arrays cannot be stored without pickle")
    key = f"a{len(arrays)}"
    # .npy has no bfloat16: its bits go as uint16, and the tensor's dtype in the header says how to read them
    arrays[key] = array.view(np.uint16) if array.dtype == bfloat16.np else array
    return key


def _decode(tree: Any, arrays: dict[str, np.ndarray], map_location: MapLocation, name: str) -> Any:
    try:
        return _decode_node(tree, arrays, map_location, 0)
    except Malformed as e:
        raise RuntimeError(f"{name}: corrupt minitensor checkpoint structure: {e}") from e


def _decode_node(node: Any, arrays: dict[str, np.ndarray], map_location: MapLocation, depth: int) -> Any:
    if not isinstance(node, dict):
        if isinstance(node, list):
            raise Malformed(f"a bare list {node!r:.60} where a value belongs")
        return node
    if depth > _MAX_DEPTH:
        raise Malformed(f"containers nested more than {_MAX_DEPTH} deep")
    kind = "?"
    try:
        (kind, payload), = node.items()
        if kind == "tensor":
            key, dtype, saved_device, requires_grad = payload
            a = arrays[key]
            t = from_numpy(a.view(bfloat16.np) if dtype == "bfloat16" and a.dtype == np.uint16 else a)
            # (from_numpy: a TypeError for dtypes tensors cannot hold)
            if t.dtype.name != dtype or not isinstance(requires_grad, bool) \
                    or (requires_grad and not t.is_floating_point()):
                raise ValueError(f"array {key} is {arrays[key].dtype}, the header says {dtype} with "
                                 f"requires_grad={requires_grad!r}")
            t = place(t, str(saved_device), map_location)
            return t.requires_grad_(True) if requires_grad else t
        if kind == "ndarray":
            return arrays[payload]
        if kind == "npscalar" and arrays[payload].ndim == 0:
            return arrays[payload][()]
        if kind in ("dict", "odict"):
            items = [(_decode_key(k, depth + 1), _decode_node(v, arrays, map_location, depth + 1))
                     for k, v in payload]
            out = collections.OrderedDict(items) if kind == "odict" else dict(items)
            if len(out) != len(items):
                raise ValueError("a key appears twice")
            return out
        if kind == "size" and isinstance(payload, list):
            return Size(payload)  # a TypeError for items that are not ints
        if kind in ("list", "tuple"):
            values = [_decode_node(v, arrays, map_location, depth + 1) for v in payload]
            return tuple(values) if kind == "tuple" else values
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise Malformed(f"bad {kind!r} node {node!r:.80}: {type(e).__name__}: {e}") from None
    raise Malformed(f"unknown node {node!r:.80}")


def _decode_key(key: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise Malformed(f"dict keys nested more than {_MAX_DEPTH} deep")
    if isinstance(key, dict):
        return tuple(_decode_key(k, depth + 1) for k in key["tuple"])
    if isinstance(key, list):
        raise TypeError(f"a list {key!r:.60} as a key")
    return key
