"""PyTorch's checkpoint layout (``torch.save`` since 1.6), read and written without PyTorch.

A zip archive (stored, not compressed) whose members all sit in one folder ``<name>/``::

    <name>/data.pkl            the pickled object; storages are persistent ids (see pickler.py)
    <name>/byteorder           "little" or "big": the byte order of the storages
    <name>/data/<key>          each storage's raw elements, 64-byte aligned in the file
    <name>/version             "3\\n", the format version PyTorch's reader checks
    <name>/.format_version, <name>/.storage_alignment, <name>/.data/serialization_id

(caffe2/serialize/inline_container.cc and torch/serialization.py ``_save``/``_load``).
"""
from __future__ import annotations

import io
import pickle
import secrets
import struct
import sys
import zipfile
import zlib
from typing import IO, Any

import numpy as np

from .archive import Malformed, check_member, file_size, read_array, unreadable
from .devices import MapLocation, MapLocationError
from .pickler import TorchPickler
from .unpickler import FullUnpickler, Storage, StorageType
from .weights_unpickler import WeightsUnpickler

_ALIGNMENT = 64
_FOLDER = "archive"  # torch.save names it after the file; any one name will do


def is_torch_archive(names: list[str]) -> bool:
    return any(n == "data.pkl" or n.endswith("/data.pkl") for n in names)


def save_torch(obj: Any, out: IO[bytes], protocol: int) -> None:
    """Write ``obj`` in PyTorch's layout to the binary file ``out`` (which need not be seekable)."""
    buffer = io.BytesIO()
    pickler = TorchPickler(buffer, protocol)
    pickler.dump(obj)
    records: list[tuple[str, bytes | memoryview]] = [("data.pkl", buffer.getvalue()), (".format_version", b"1"),
               (".storage_alignment", str(_ALIGNMENT).encode()), ("byteorder", sys.byteorder.encode())]
    records += [(f"data/{r.key}", r.array.view(np.uint8).data) for r in pickler.storages.values()]
    records += [("version", b"3\n"), (".data/serialization_id", str(secrets.randbits(128)).encode())]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        at = 0  # where the next local header starts
        for name, data in records:
            info = zipfile.ZipInfo(f"{_FOLDER}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            header = 30 + len(info.filename)
            if name.startswith("data/"):  # pad through an extra field so the data starts aligned (mmap)
                pad = -(at + header + 4) % _ALIGNMENT
                info.extra = b"FB" + struct.pack("<H", pad) + bytes(pad)
            archive.writestr(info, data)
            at += header + len(info.extra) + len(data)


def load_torch(f: IO[bytes], name: str, map_location: MapLocation, weights_only: bool,
               mmap_path: str | None = None) -> Any:
    """What ``save_torch`` or ``torch.save`` wrote, tensors on the CPU or ``map_location``. Zip-level damage
    raises RuntimeError naming the file; everything wrong inside the pickle (including a global that is not
    allowed) raises ``pickle.UnpicklingError``. With ``mmap_path`` (the file's path) stored storages are
    mapped from the file, copy-on-write, rather than read."""
    size = file_size(f)
    try:
        archive = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise unreadable(name, f"{type(e).__name__}: {e}") from e
    with archive:
        prefix = min((n[:-len("data.pkl")] for n in archive.namelist() if n.endswith("data.pkl")), key=len)
        if prefix + "constants.pkl" in archive.namelist():
            raise RuntimeError(f"{name}: a TorchScript archive (torch.jit.save), which minitensor does not read; "
                               f"save the model's state_dict() with torch.save instead")
        try:
            data = _member_bytes(archive, prefix + "data.pkl", size)
            order = _member_bytes(archive, prefix + "byteorder", size) if prefix + "byteorder" in \
                archive.namelist() else sys.byteorder.encode()
            if order not in (b"little", b"big"):
                raise Malformed(f"unknown byte order {order[:20]!r}")
        except (Malformed, zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as e:
            raise unreadable(name, f"{type(e).__name__}: {e}") from e

        def storage(kind: StorageType, key: str, location: str, numel: int) -> Storage:
            what = f"{prefix}data/{key}"
            try:
                info = archive.getinfo(what)
                check_member(info, size)
                if info.file_size != numel * kind.file_dtype.itemsize:
                    raise Malformed(f"archive member {what!r} holds {info.file_size} bytes, not the "
                                    f"{numel} elements of its {kind!r}")
                if mmap_path and numel and info.compress_type == zipfile.ZIP_STORED:
                    raw = _mapped(mmap_path, info, numel, kind.file_dtype)
                else:
                    with archive.open(info) as member:
                        raw = read_array(member, numel, kind.file_dtype, what)
            except (KeyError, Malformed, zipfile.BadZipFile, zlib.error, OSError, EOFError) as e:
                raise pickle.UnpicklingError(f"storage {key!r}: {e}") from e
            return Storage(kind.decode(raw, order == b"big"), location, map_location, key)

        unpickler = (WeightsUnpickler if weights_only else FullUnpickler)(io.BytesIO(data), storage)
        try:
            return unpickler.load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(f"{name}: {e}") from e
        except MapLocationError:
            raise
        except (EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
                MemoryError) as e:  # a malformed pickle; RuntimeError (a device that is missing) passes
            if not weights_only:
                raise
            raise pickle.UnpicklingError(f"{name}: Weights only load failed: {type(e).__name__}: {e}") from e


def _member_bytes(archive: zipfile.ZipFile, what: str, size: int) -> bytes:
    info = archive.getinfo(what)
    check_member(info, size)
    with archive.open(info) as member:
        return read_array(member, info.file_size, np.dtype(np.uint8), what).tobytes()


def _mapped(path: str, info: zipfile.ZipInfo, numel: int, dtype: np.dtype) -> np.ndarray:
    """A stored member's ``numel`` elements mapped copy-on-write from the file (PyTorch's ``MAP_PRIVATE``):
    its data starts after the member's local header, whose name and extra field lengths the header gives."""
    with open(path, "rb") as file:
        file.seek(info.header_offset)
        header = file.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise Malformed(f"archive member {info.filename!r} has no local header")
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    mapped = np.memmap(path, dtype=dtype, mode="c", offset=info.header_offset + 30 + name_length + extra_length,
                       shape=(numel,))
    return mapped.view(np.ndarray)  # a plain array; the mapping lives on as its base
