"""``minitensor.multiprocessing``: Python's ``multiprocessing`` with tensors that cross processes as
PyTorch's do (``torch.multiprocessing``). ``Tensor.share_memory_()`` / ``Module.share_memory()`` put CPU
tensors in shared memory, so several processes train one model in place (Hogwild); a tensor sent through a
``Queue`` or as a spawned ``Process``'s argument keeps that sharing (``reductions.py``). CUDA tensors travel
as copies (PyTorch shares them by CUDA IPC; docs/differences.md)."""
from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F401,F403  (PyTorch re-exports the whole module)
from .reductions import init_reductions
from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes

__all__ = [*multiprocessing.__all__, "ProcessContext", "ProcessExitedException", "ProcessRaisedException",
           "get_all_sharing_strategies", "get_sharing_strategy", "init_reductions", "set_sharing_strategy",
           "spawn", "start_processes"]

# PyTorch's strategies name how storages are passed (file descriptors or files in /dev/shm); minitensor's one
# way, POSIX shared memory by name, is closest to "file_system".
_STRATEGIES = {"file_system"}
_strategy = "file_system"


def get_all_sharing_strategies() -> set[str]:
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported here; minitensor shares memory "
                         f"by {sorted(_STRATEGIES)}")


init_reductions()
