"""The IDX file format of MNIST-style datasets, raw or gzip-compressed.

Layout: two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32,
0x0E float64), the number of dimensions d, then d big-endian uint32 sizes, then the values, big-endian,
row-major: exactly prod(sizes) * itemsize bytes.

Files are read as a stream: the header first, checked against what the file can hold (a gzip stream
expands at most about 1032-fold), then the values straight into the array that is returned, so memory
never exceeds the array itself, whatever a corrupt or hostile file declares or decompresses to.
"""
from __future__ import annotations

import io
import math
import os
import sys
import zlib
from typing import IO

import numpy as np

_TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
          0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_GZIP_MAGIC = b"\x1f\x8b"
_DEFLATE_MAX_RATIO = 1032  # the most bytes one compressed byte can expand to
_CHUNK = 1 << 20  # uncompressed bytes per read
_CHUNK_IN = 1 << 20  # compressed bytes per read


class IDXFormatError(ValueError):
    """An IDX file that is truncated, corrupt or not IDX at all (the message names the file)."""


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """The array stored in an IDX file (gzip detected from its first bytes), in native byte order."""
    name = os.fspath(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if f.read(2) != _GZIP_MAGIC:
            f.seek(0)
            return _read_stream(f, name, size, size)
        f.seek(0)
        try:
            return _read_stream(_Gunzip(f), name, size * _DEFLATE_MAX_RATIO, None)  # type: ignore[arg-type]
        except (OSError, EOFError, zlib.error) as e:
            raise IDXFormatError(f"{name}: corrupt or truncated gzip data ({e}); delete the file and fetch "
                                 f"it again") from e


def parse_idx(raw: bytes, name: str = "<bytes>") -> np.ndarray:
    """Parse uncompressed IDX bytes; ``name`` appears in errors. Checks magic, type code, sizes, length."""
    return _read_stream(io.BytesIO(raw), name, len(raw), len(raw))


def _read_stream(stream: IO[bytes], name: str, max_size: int, exact_size: int | None) -> np.ndarray:
    """The array of an uncompressed IDX stream of at most ``max_size`` bytes (exactly ``exact_size`` when
    known): the header is checked before anything is allocated."""
    start = stream.read(4)
    if len(start) < 4 or start[0] != 0 or start[1] != 0:
        raise IDXFormatError(f"{name}: not an IDX file (it should start with two zero bytes, a type code "
                             f"and a dimension count; found {start!r})")
    code, ndim = start[2], start[3]
    if code not in _TYPES:
        raise IDXFormatError(f"{name}: unknown IDX type code 0x{code:02X} (known: "
                             f"{', '.join(f'0x{c:02X}' for c in _TYPES)})")
    if ndim == 0 or ndim > 64:  # 64: NumPy's limit, whose own error would not name the file
        raise IDXFormatError(f"{name}: IDX header says {ndim} dimensions (an array has 1 to 64)")
    sizes = stream.read(4 * ndim)
    header = 4 + 4 * ndim
    if len(sizes) < 4 * ndim:
        raise IDXFormatError(f"{name}: truncated IDX header ({4 + len(sizes)} bytes, the header alone needs "
                             f"{header})")
    shape = tuple(int(n) for n in np.frombuffer(sizes, dtype=">u4"))
    dtype = _TYPES[code]
    expected = header + math.prod(shape) * dtype.itemsize  # type: ignore[attr-defined] # Python ints: no overflow
    if expected > max_size or (exact_size is not None and expected != exact_size):
        found = f"found {exact_size}" if exact_size is not None else f"the file can hold at most {max_size}"
        state = "truncated" if expected > max_size else "longer than its header says"
        raise IDXFormatError(f"{name}: IDX file {state}: shape {shape} of {dtype.newbyteorder('=')} needs "  # type: ignore[attr-defined]
                             f"{expected} bytes, {found}")
    values = np.empty(shape, dtype.newbyteorder("="))  # type: ignore[attr-defined]
    filled = _read_into(stream, memoryview(values.reshape(-1).view(np.uint8)))  # type: ignore[arg-type]
    if filled < expected - header or stream.read(1):
        state = "truncated" if filled < expected - header else "longer than its header says"
        raise IDXFormatError(f"{name}: IDX file {state}: shape {shape} of {dtype.newbyteorder('=')} needs "  # type: ignore[attr-defined]
                             f"{expected} bytes, found {header + filled if state == 'truncated' else 'more'}")
    if dtype.itemsize > 1 and sys.byteorder == "little":  # type: ignore[attr-defined]
        values.byteswap(inplace=True)  # the bytes were big-endian: swap them in place, no second copy
    return values


class _Gunzip:
    """A single-member gzip file as a stream of its uncompressed bytes, inflated in bounded pieces (zlib
    checks the gzip header, CRC and length). ``gzip.GzipFile`` does the same but inflates 8 KiB at a time,
    twice as slow here."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f, self._z = f, zlib.decompressobj(16 + zlib.MAX_WBITS)

    def read(self, n: int) -> bytes:
        z = self._z
        while not z.eof:
            data = z.unconsumed_tail or self._f.read(_CHUNK_IN)
            if not data:
                raise EOFError("the file ends before the gzip stream does")
            out = z.decompress(data, n)
            if out:
                return out
        if z.unused_data or self._f.read(1):
            raise OSError("data after the end of the gzip stream")
        return b""

    def readinto(self, buffer: memoryview) -> int:
        out = self.read(len(buffer))
        buffer[:len(out)] = out
        return len(out)


def _read_into(stream: IO[bytes], buffer: memoryview) -> int:
    """Fill ``buffer`` from ``stream`` in bounded chunks; the number of bytes read (short at the end)."""
    filled = 0
    while filled < len(buffer):
        got = stream.readinto(buffer[filled:filled + _CHUNK])  # type: ignore[attr-defined]
        if not got:
            break
        filled += got
    return filled
