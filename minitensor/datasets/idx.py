"""The IDX file format of MNIST-style datasets, raw or gzip-compressed.

Layout: two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32,
0x0E float64), the number of dimensions d, then d big-endian uint32 sizes, then the values, big-endian,
row-major: exactly prod(sizes) * itemsize bytes.
"""
from __future__ import annotations

import gzip
import os
import zlib

import numpy as np

_TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
          0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_GZIP_MAGIC = b"\x1f\x8b"


class IDXFormatError(ValueError):
    """An IDX file that is truncated, corrupt or not IDX at all (the message names the file)."""


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """The array stored in an IDX file (gzip detected from its first bytes), in native byte order."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise IDXFormatError(f"{os.fspath(path)}: corrupt or truncated gzip data ({e}); delete the "
                                 f"file and fetch it again") from e
    return parse_idx(raw, os.fspath(path))


def parse_idx(raw: bytes, name: str = "<bytes>") -> np.ndarray:
    """Parse uncompressed IDX bytes; ``name`` appears in errors. Checks magic, type code, sizes, length."""
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise IDXFormatError(f"{name}: not an IDX file (it should start with two zero bytes, a type code "
                             f"and a dimension count; found {raw[:4]!r})")
    code, ndim = raw[2], raw[3]
    if code not in _TYPES:
        raise IDXFormatError(f"{name}: unknown IDX type code 0x{code:02X} (known: "
                             f"{', '.join(f'0x{c:02X}' for c in _TYPES)})")
    if ndim == 0:
        raise IDXFormatError(f"{name}: IDX header says 0 dimensions")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise IDXFormatError(f"{name}: truncated IDX header ({len(raw)} bytes, the header alone needs {header})")
    shape = tuple(int(n) for n in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = _TYPES[code]
    expected = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) != expected:
        state = "truncated" if len(raw) < expected else "longer than its header says"
        raise IDXFormatError(f"{name}: IDX file {state}: shape {shape} of {dtype.newbyteorder('=')} needs "
                             f"{expected} bytes, found {len(raw)}")
    values = np.frombuffer(raw, dtype=dtype, offset=header)
    return values.astype(dtype.newbyteorder("="), copy=True).reshape(shape)  # native and writable
