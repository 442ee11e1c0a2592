"""Atomic file writes: a crash or an error mid-write never leaves a partial file at the target path.

The temporary file is named ``.<target hash>.<host hash>.<pid>.<random>.mt-tmp`` beside the target: short
whatever the target's name (a 250-character name still leaves room within the usual 255-byte limit), and
naming its writer, so that a later save or load of the same target can remove the temporary files of
writers that were killed mid-write (``remove_stale_temporaries``). A writer ended by SIGTERM or SIGHUP
removes its own (``_signals``); only SIGKILL (or a power cut) leaves one for the next save or load.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ._signals import forget, on_termination

# A temporary file whose writer we cannot see (another host or PID namespace) counts as abandoned only
# after a day untouched: a live writer touches its file far more often than that.
STALE_AFTER_S = 24 * 3600.0
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
_TMP = re.compile(r"\.(?P<target>[0-9a-f]{16})\.(?P<host>[0-9a-f]{8})\.(?P<pid>\d+)\.[0-9a-f]{8}\.mt-tmp")


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``path`` only when the ``with`` block completes.

    It is written beside the target (same file system, so ``os.replace`` is an atomic rename), flushed
    to disk before the rename, and deleted if the block raises. It is opened normally (not through
    ``mkstemp``), so the result gets the usual umask permissions. OS errors name ``path``, not the
    temporary file.
    """
    path = Path(path)
    remove_stale_temporaries(path)
    tmp = path.with_name(f".{_target_hash(path)}.{_HOST}.{os.getpid()}.{secrets.token_hex(4)}.mt-tmp")
    token = on_termination(lambda: tmp.unlink(missing_ok=True))  # SIGTERM / SIGHUP skip the except below
    try:
        with open(tmp, "xb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        if isinstance(e, OSError) and e.filename is not None:
            e.filename, e.filename2 = os.fspath(path), None  # the user's path, not our temporary name
        raise
    finally:
        forget(token)
    _fsync_folder(path.parent)


def remove_stale_temporaries(path: str | os.PathLike) -> None:
    """Delete the temporary files that writers of ``path`` left behind when they were killed: those whose
    writer process (named in the file name) no longer exists on this host, and those untouched for
    ``STALE_AFTER_S``. A concurrent writer's file is left alone. Never raises."""
    path = Path(path)
    prefix, legacy_prefix = f".{_target_hash(path)}.", f".{path.name}."
    # earlier versions named it ".<target name>.<pid>.<random>.tmp" (this host's, pid-checked like ours)
    legacy = re.compile(rf"\.{re.escape(path.name)}\.(?P<pid>\d+)\.[0-9a-f]{{8}}\.tmp")
    try:
        with os.scandir(path.parent) as entries:
            candidates = [e for e in entries if e.name.startswith((prefix, legacy_prefix))]
    except OSError:
        return
    now = time.time()
    for entry in candidates:
        match = _TMP.fullmatch(entry.name) or legacy.fullmatch(entry.name)
        if match is None:
            continue
        try:
            ours = match.re is legacy or match["host"] == _HOST
            abandoned = (ours and not _alive(int(match["pid"]))) \
                or now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER_S
            if abandoned:
                os.unlink(entry.path)
        except OSError:
            pass  # removed meanwhile by another cleaner, or not ours to remove


def _target_hash(path: Path) -> str:
    return hashlib.sha256(os.fsencode(path.name)).hexdigest()[:16]


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (signal 0 checks without sending anything)."""
    if pid == os.getpid() or os.name == "nt":  # Windows' os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # exists under another user, or we cannot tell: keep its file
    return True


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
