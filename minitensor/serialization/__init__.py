"""``save`` / ``load``: minitensor's pickle-free checkpoints, and PyTorch's ``.pt`` layout both ways.

Two formats, told apart by ``load`` from the file's contents:

* ``"minitensor"`` (native.py): an ``.npz`` of arrays plus a JSON tree. It holds tensors, arrays, numbers,
  strings and containers of them, and no pickle at all. ``save`` writes it by default.
* ``"torch"`` (torch_format.py): ``torch.save``'s zip with a pickle. ``save(..., format="torch")`` writes
  it (``torch.load(f, weights_only=True)`` reads a state dict written so), and ``save`` uses it for
  trees holding a whole ``nn.Module``, which only pickle can store; ``load`` reads it, and files written
  by ``torch.save``, without PyTorch.

As in PyTorch 2.6+, ``load(f)`` has ``weights_only=True``: a pickle may only name tensors, storages,
dtypes, devices, containers and the user's safe globals (``add_safe_globals``, ``safe_globals``), so
opening a checkpoint runs no code of the file's choosing; ``weights_only=False`` unpickles anything, for
files from a trusted source only.

Saving to a path is atomic: the archive is written to a temporary file in the same folder, flushed to
disk and renamed over the target, so a crash mid-save leaves the previous file intact.
"""
from __future__ import annotations

import os
import warnings
import zipfile
from collections.abc import Callable
from typing import IO, Any

from ..utils._files import atomic_write, remove_stale_temporaries
from .archive import unreadable
from .devices import MapLocation
from .native import HEADER, NeedsPickle, load_native, save_native
from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from .torch_format import is_torch_archive, load_torch, save_torch

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]

FileLike = str | os.PathLike | IO[bytes]
_FORMATS = (None, "minitensor", "torch")
_TRUE = ("1", "y", "yes", "true")


def save(obj: Any, f: FileLike, *, format: str | None = None,
         pickle_protocol: int = 2) -> None:
    """Write ``obj`` to a path (atomically) or a binary file object.

    ``format=None``: minitensor's pickle-free format when ``obj`` is nested dicts, lists and tuples of
    Tensors, NumPy arrays and scalars, numbers, strings, bools and None; PyTorch's pickled layout when it
    holds a whole ``nn.Module`` (as ``torch.save(model, f)``; ``load`` then needs ``weights_only=False``).
    ``format="minitensor"`` refuses what needs pickle. ``format="torch"``: PyTorch's layout for any
    picklable ``obj`` (pickle ``pickle_protocol``, 2 as ``torch.save``)."""
    if format not in _FORMATS:
        raise ValueError(f"save: format must be None, 'minitensor' or 'torch', got {format!r}")
    if format is None:
        try:
            return _write(f, lambda out: save_native(obj, out))
        except NeedsPickle:
            format = "torch"
    if format == "torch":
        return _write(f, lambda out: save_torch(obj, out, pickle_protocol))
    return _write(f, lambda out: save_native(obj, out))


def load(f: FileLike, map_location: MapLocation = None, *, weights_only: bool | None = None,
         mmap: bool | None = None) -> Any:
    """Read a checkpoint written by ``save`` or by ``torch.save`` (format told by the contents).

    Tensors come back on the CPU, or on ``map_location``: a device (``"cuda"``, ``device("cpu")``), a dict
    from saved device names (``"cuda:0"``) to devices (unlisted ones load on the CPU), or a callable
    ``(tensor, saved_location) -> tensor``. ``weights_only`` (None means True) refuses pickled globals
    other than tensors, containers and the safe globals, with ``pickle.UnpicklingError``. As in PyTorch, the
    environment variable ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` (1, y, yes, true) forces ``weights_only=True`` and
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` forces False where the call leaves it None (with a warning). A file
    that is not a well-formed checkpoint raises one ``RuntimeError`` naming the file and what is wrong.

    ``mmap=True`` (None means False, as PyTorch's default) maps a ``torch.save`` archive's storages from the
    file instead of reading them: copy-on-write (PyTorch's default ``MAP_PRIVATE``), so writing to a loaded
    tensor leaves the file as it was. As in PyTorch, ``f`` must then be a path (``ValueError``), and a legacy
    pickle refuses it (``RuntimeError``); minitensor's own format is read as without it."""
    weights_only = _weights_only_from_env(weights_only)
    if isinstance(f, (str, os.PathLike)):
        remove_stale_temporaries(f)  # left by saves of this path that were killed mid-write
        with open(f, "rb") as file:  # ours to close, even when reading fails halfway through the archive
            return _load(file, os.fspath(f), map_location, weights_only, bool(mmap), os.fspath(f))
    return _load(f, getattr(f, "name", "<file object>"), map_location, weights_only, bool(mmap), None)


def _weights_only_from_env(weights_only: bool | None) -> bool:
    # PyTorch's switches for old scripts that torch.load pickled objects (numpy arrays, whole modules)
    # without passing weights_only=False: they run unchanged with the variable set
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force:
        return True
    if weights_only is None and force_no:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the `weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=3)
        return False
    return True if weights_only is None else weights_only


def _load(f: IO[bytes], name: str, map_location: MapLocation, weights_only: bool, mmap: bool,
          path: str | None) -> Any:
    """``load`` of the open ``f``; ``path`` is the file's path when ``load`` was given one (mmap maps it)."""
    at = f.tell()
    start = f.read(4)
    f.seek(at)
    if start == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(f) as archive:  # the member names tell the formats apart
                names = archive.namelist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            names = []  # the native reader names what is wrong
        if f"{HEADER}.npy" not in names and is_torch_archive(names):
            if mmap and path is None:
                raise ValueError("f must be a file path in order to use the mmap argument")
            return load_torch(f, name, map_location, weights_only, path if mmap else None)
    elif start[:1] == b"\x80":  # a pickle: torch.save before 1.6 (or _use_new_zipfile_serialization=False)
        if mmap:
            named = f"{name}, " if path is not None else ""
            raise RuntimeError(f"mmap can only be used with files saved with `torch.save({named}"
                               "_use_new_zipfile_serialization=True), please torch.save your checkpoint with this "
                               "option in order to use mmap.")
        raise unreadable(name, "BadZipFile: it is a PyTorch checkpoint in the legacy (pre-1.6) format, "
                               "which minitensor does not read; load it in PyTorch and save it again")
    return load_native(f, name, map_location)


def _write(f: FileLike, write: Callable[[IO[bytes]], None]) -> None:
    if hasattr(f, "write"):
        write(f)  # type: ignore[arg-type]
    else:
        with atomic_write(f) as out:
            write(out)
