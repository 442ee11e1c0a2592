"""CPU tensors in shared memory, as PyTorch's ``share_memory_()``: the array moves into a POSIX shared
memory block (``multiprocessing.shared_memory``), so processes forked afterwards write into the same
memory, and a tensor pickled to another process (a ``Queue``, ``Process`` arguments under "spawn") is sent
as the block's name, not its bytes (``reductions.py``)."""
from __future__ import annotations

import atexit
import functools
import os
import weakref
from multiprocessing import resource_tracker, shared_memory
from typing import Any

import numpy as np

from ..utils._signals import on_termination

# id(array) -> (the block holding it, the array itself as a weak reference); an entry lives as long as the array.
_BLOCKS: dict[int, tuple[shared_memory.SharedMemory, "weakref.ref[np.ndarray]"]] = {}
_CREATED: list[str] = []  # names this process made: unlinked at its exit (attached mappings stay valid)


def _forget(key: int) -> None:
    _BLOCKS.pop(key, None)  # the block closes when its last array view is gone (SharedMemory.__del__)


def _register(array: np.ndarray, block: shared_memory.SharedMemory) -> np.ndarray:
    _BLOCKS[id(array)] = (block, weakref.ref(array))
    weakref.finalize(array, _forget, id(array))
    return array


def block_of(array: Any) -> shared_memory.SharedMemory | None:
    """The shared block ``array`` lives in, or None (a view of a shared array counts: its base does)."""
    while isinstance(array, np.ndarray):
        entry = _BLOCKS.get(id(array))
        if entry is not None and entry[1]() is array:
            return entry[0]
        array = array.base
    return None


def to_shared(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` in a new shared memory block (C order, same dtype and shape)."""
    block = _untracked(shared_memory.SharedMemory(create=True, size=max(array.nbytes, 1)))
    if not _CREATED:  # at exit, and on SIGTERM / SIGHUP, which skip atexit
        atexit.register(_unlink_created, os.getpid())
        on_termination(functools.partial(_unlink_created, os.getpid()))
    _CREATED.append(block.name)
    shared = np.ndarray(array.shape, dtype=array.dtype, buffer=block.buf)
    shared[...] = array
    return _register(shared, block)


def attach(name: str, shape: tuple[int, ...], dtype: str, offset: int, strides: tuple[int, ...]) -> np.ndarray:
    """The array another process shared: a view of block ``name`` (``reductions.rebuild_shared``)."""
    block = _untracked(shared_memory.SharedMemory(name=name))
    base = np.ndarray((block.size,), dtype=np.uint8, buffer=block.buf)
    _register(base, block)
    return np.ndarray(shape, dtype=dtype, buffer=base, offset=offset, strides=strides)  # base: the block's


def location(array: np.ndarray, block: shared_memory.SharedMemory) -> tuple[int, tuple[int, ...]]:
    """(byte offset of ``array``'s first element in ``block``, its strides)."""
    start = np.ndarray((0,), dtype=np.uint8, buffer=block.buf).__array_interface__["data"][0]
    return array.__array_interface__["data"][0] - start, array.strides


def _unlink_created(pid: int) -> None:
    if os.getpid() != pid:  # a forked child inherits the atexit hook; only the creator unlinks
        return
    for name in _CREATED:
        try:
            shared_memory.SharedMemory(name=name).unlink()
        except FileNotFoundError:
            pass


def _untracked(block: shared_memory.SharedMemory) -> shared_memory.SharedMemory:
    """``block`` withdrawn from multiprocessing's resource tracker, which would unlink it when *any* process
    that opened it exits (before Python 3.13 attaching registers too): the creator unlinks it at its exit."""
    resource_tracker.unregister(block._name, "shared_memory")  # type: ignore[attr-defined]
    return block
