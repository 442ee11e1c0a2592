"""Checks shared by both checkpoint formats (zip archives): member sizes before allocating, bounded reads,
the errors that name the file."""
from __future__ import annotations

import collections
import os
import re
import zipfile
from typing import IO

import numpy as np

_CHUNK = 1 << 22
# the most bytes one stored byte can expand to: 1 uncompressed; DEFLATE's limit is about 1032
_MAX_RATIO = collections.defaultdict(lambda: 1032, {zipfile.ZIP_STORED: 1})


class Malformed(Exception):
    """What is wrong with the archive (becomes the error naming the file)."""


def file_size(f: IO[bytes]) -> int:
    return f.seek(0, os.SEEK_END)  # zipfile seeks to the end itself


def check_member(info: zipfile.ZipInfo, size_of_file: int) -> None:
    """Refuse a member that claims more than the file holds or more than it can decompress to."""
    if info.header_offset + info.compress_size > size_of_file:
        raise Malformed(f"archive member {info.filename!r} runs past the end of the file (truncated)")
    if info.file_size > _MAX_RATIO[info.compress_type] * info.compress_size + 4096:
        raise Malformed(f"archive member {info.filename!r} claims {info.file_size} bytes from "
                        f"{info.compress_size} stored (corrupt, or a decompression bomb)")


MAX_DIMS = 64  # NumPy's limit on an array's dimensions (PyTorch has none)


def read_array(member: IO[bytes], count: int, dtype: np.dtype, what: str) -> np.ndarray:
    """``count`` elements of ``dtype`` read straight into a new 1-D array; the member must end there
    (reading past it also makes zipfile check the member's CRC)."""
    flat = np.empty(count, dtype)
    nbytes = count * dtype.itemsize
    if nbytes:
        buffer, filled = memoryview(flat.view(np.uint8)), 0  # type: ignore[arg-type]
        while filled < nbytes:
            got = member.readinto(buffer[filled:filled + _CHUNK])  # type: ignore[attr-defined] # zipfile reads a chunk, then copies
            if not got:
                raise Malformed(f"archive member {what!r} is truncated")
            filled += got
    if member.read(1):
        raise Malformed(f"archive member {what!r} holds more data than its header declares")
    return flat


def first_sentence(e: Exception) -> str:
    return re.split(r"\.\s", str(e), maxsplit=1)[0]


def unreadable(name: str, why: str) -> RuntimeError:
    return RuntimeError(f"{name}: not a readable minitensor checkpoint (truncated, corrupt or another "
                        f"format): {why}")
