"""Atomic file writes: a crash or an error mid-write never leaves a partial file at the target path."""
from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import IO, Iterator


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``path`` only when the ``with`` block completes.

    It is written beside the target (same file system, so ``os.replace`` is an atomic rename), flushed
    to disk before the rename, and deleted if the block raises. It is opened normally (not through
    ``mkstemp``), so the result gets the usual umask permissions.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable on POSIX (where folders can be opened and fsynced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
