"""``Work``, the handle of a collective launched with ``async_op=True``, and the errors of
``minitensor.distributed`` (PyTorch's ``DistError`` family).

Neither MPI nor NCCL time out on their own, so every wait is a poll of the engine's request, bounded by the
group's ``timeout``: past it the group is marked failed and ``wait`` raises ``DistBackendError`` naming the op,
the rank and the timeout (``process_group`` then ends the job instead of letting the other ranks hang).
"""
from __future__ import annotations

import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from ..tensor import Tensor
    from .process_group import ProcessGroup


class DistError(RuntimeError):
    """An error of the distributed package (PyTorch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """The engine failed or timed out under a collective (PyTorch's ``DistBackendError``)."""


class DistStoreError(DistError):
    """The rendezvous that sets up a group failed or timed out (PyTorch's ``DistStoreError``)."""


def poll(done: Callable[[], bool], deadline: float) -> bool:
    """Call ``done`` until it is True (returns True) or ``time.monotonic()`` passes ``deadline`` (False).
    It spins for the first ``SPIN_SECONDS`` (MPI moves a message on only inside its calls, so a sleeping
    waiter stalls a large transfer: a 1.7 MB all-reduce took 10.5 ms with sleeps from the start, 0.2 ms
    spinning), then sleeps between calls from 10 us up to 1 ms, so a long wait leaves the CPU alone."""
    if done():
        return True
    now = time.monotonic()
    spin_until = min(now + SPIN_SECONDS, deadline)
    while now < spin_until:
        if done():
            return True
        now = time.monotonic()
    pause = 1e-5
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 1e-3)
    return True


SPIN_SECONDS = 0.05
# The groups' queues of checked collectives that hold operations (checks.Gate): every poll of any operation
# advances them, so a collective whose data move waits for its check starts while this rank waits on
# something else (a receive that needs the peer to finish that collective first).
ACTIVE_GATES: set[Any] = set()
LIVENESS_SECONDS = 0.5  # how often a long wait asks the engine whether a rank's process has ended


class Pending:
    """What an engine hands back for one launched operation: ``test()`` is True once it has finished (and
    raises the engine's error when it failed); ``source()`` is the sender of a receive."""

    def test(self) -> bool:
        raise NotImplementedError

    def source(self) -> int:
        raise NotImplementedError


class Done(Pending):
    """An operation that finished when it was launched (a group of one)."""

    def __init__(self, source: int = 0) -> None:
        self._source = source

    def test(self) -> bool:
        return True

    def source(self) -> int:
        return self._source


class Work:
    """One launched operation: ``wait`` blocks until it has finished (or raises past the timeout),
    ``is_completed`` asks without blocking. ``finish`` runs once, when it is first seen finished (the copies
    out of a staging buffer, AVG's division), so the tensors are final whichever of the two saw it."""

    def __init__(self, group: "ProcessGroup", op: str, pending: Pending, outputs: Sequence["Tensor"] = (),
                 finish: Callable[[], None] | None = None) -> None:
        self._group, self._op, self._pending = group, op, pending
        self._outputs, self._finish = list(outputs), finish
        self._started = time.monotonic()
        self._next_look = self._started + LIVENESS_SECONDS
        self._done = False

    def _poll(self) -> bool:
        if not self._done:
            try:
                for gate in tuple(ACTIVE_GATES):
                    gate.advance()
                finished = self._pending.test()
            except DistError:  # the ranks disagreed on the collective (checks.py): none ran it, the group stays usable
                raise
            except Exception as e:  # the engine's own error (a peer gone, a bad buffer): one error type
                raise self._group.fail(f"{self._op} failed on rank {self._group.global_rank}: {e}") from e
            if finished:
                self._done = True
                if self._finish is not None:
                    self._finish()
        return self._done

    def _poll_or_lost(self) -> bool:
        """``_poll``, and once every ``LIVENESS_SECONDS`` the engine's list of ranks known to have ended: the
        operation can then never finish (raises DistBackendError, the group failed)."""
        if self._poll():
            return True
        now = time.monotonic()
        if now >= self._next_look:
            self._next_look = now + LIVENESS_SECONDS
            lost = self._group.engine.lost_peers()
            if lost:
                raise self._group.fail(f"{self._op} failed on rank {self._group.global_rank}: the process of rank "
                                       f"{', '.join(map(str, lost))} of the group has ended (exited or killed "
                                       "before reaching this collective)", peer_ended=True)
        return False

    def is_completed(self) -> bool:
        return self._poll()

    def is_success(self) -> bool:
        return self._poll()

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until the operation has finished; ``timeout`` (default: the group's) counts from its launch.
        Past it, raise ``DistBackendError`` and mark the group failed (its later operations raise at once)."""
        limit = self._group.timeout if timeout is None else timeout
        if not poll(self._poll_or_lost, self._started + limit.total_seconds()):
            raise self._group.fail(f"{self._op} timed out on rank {self._group.global_rank} after {limit} "
                                   f"(the group's timeout): another rank is missing, hung or died")
        return True

    def result(self) -> list["Tensor"]:
        """The tensors the operation wrote (as PyTorch's ``Work.result``)."""
        return self._outputs

    def get_future(self) -> "Future":
        """A ``Future`` whose value is ``result()`` once the operation has finished (DDP's comm hooks chain
        on it with ``then``)."""
        def compute() -> list["Tensor"]:
            self.wait()
            return self.result()
        return Future(compute, self.is_completed)

    def _source_rank(self) -> int:
        """The rank a receive (``irecv``) got its message from."""
        self.wait()
        return self._group.global_rank_of(self._pending.source())

    def __repr__(self) -> str:
        return f"<minitensor.distributed.Work {self._op} {'completed' if self._done else 'pending'}>"


class Future:
    """PyTorch's ``torch.futures.Future``, as collectives hand it out: ``wait()`` (and ``value()``) give the
    value, computing it once; ``then(fn)`` is the future of ``fn(this future)``; ``done()`` asks without
    waiting."""

    def __init__(self, compute: Callable[[], Any], ready: Callable[[], bool]) -> None:
        self._compute, self._ready = compute, ready
        self._has_value, self._value = False, None

    def wait(self) -> Any:
        if not self._has_value:
            self._value, self._has_value = self._compute(), True
        return self._value

    def value(self) -> Any:
        return self.wait()

    def done(self) -> bool:
        return self._has_value or self._ready()

    def then(self, callback: Callable[["Future"], Any]) -> "Future":
        def compute() -> Any:
            self.wait()
            return callback(self)
        return Future(compute, self.done)
