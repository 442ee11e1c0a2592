"""Cleanups that must also run when the process is told to stop by SIGTERM or SIGHUP (a job scheduler, a
closed terminal), whose default action ends the process without ``atexit`` hooks or ``finally`` blocks:
shared-memory blocks would stay in /dev/shm and a save's temporary file beside its target.

Handlers are installed once, from the main thread, over whatever was installed before. When a signal
arrives and the previous handler was a Python function, that function decides (it runs; if it exits, the
usual exit paths clean up; if it returns, the process goes on and nothing is removed). When it was the
default action, the registered cleanups run and the default action is then re-raised, so the process ends
by the same signal as it would have. An ignored signal stays ignored.
"""
from __future__ import annotations

import itertools
import os
import signal
import threading
from types import FrameType
from typing import Any, Callable

_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
_cleanups: dict[int, tuple[int, Callable[[], None]]] = {}  # token -> (the registering pid, cleanup)
_previous: dict[int, Any] = {}
_tokens = itertools.count()
_lock = threading.Lock()


def on_termination(cleanup: Callable[[], None]) -> int:
    """Run ``cleanup`` (in this process only, not in forked children) if SIGTERM or SIGHUP ends it; the
    token returned withdraws it (``forget``). Best effort: without the main thread's help to install the
    handlers (first call from another thread) the cleanup is kept for when they are."""
    with _lock:
        token = next(_tokens)
        _cleanups[token] = (os.getpid(), cleanup)
    _install()
    return token


def forget(token: int) -> None:
    with _lock:
        _cleanups.pop(token, None)


def _install() -> None:
    if _previous or threading.current_thread() is not threading.main_thread():
        return
    for signum in _SIGNALS:
        _previous[signum] = signal.signal(signum, _handle)


def _handle(signum: int, frame: FrameType | None) -> None:
    previous = _previous.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)  # the program's own handler: it decides whether the process ends
        return
    if previous == signal.SIG_IGN:
        return
    pid = os.getpid()
    with _lock:
        mine = [cleanup for owner, cleanup in _cleanups.values() if owner == pid]
        _cleanups.clear()
    for cleanup in mine:
        try:
            cleanup()
        except Exception:  # noqa: BLE001 - the process is ending: the other cleanups still run
            pass
    signal.signal(signum, signal.SIG_DFL)
    os.kill(pid, signum)  # the default action: the process ends by this signal, as it would have
