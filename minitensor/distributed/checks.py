"""The cross-rank check that every rank runs the same collective (PyTorch's ``TORCH_DISTRIBUTED_DEBUG=DETAIL``
check, on by default on MPI).

Before a collective's data move, each rank's signature - (operation, shapes, dtype, ReduceOp, root) - is
hashed to 62 bits h, and the ranks all-reduce the two int64 ``[h, -h]`` with MAX: the signatures agree iff
``max h == min h``. That exchange has the same size whatever the collective, so it always matches across
ranks, even when the collectives do not (a cache of "signatures already checked" would not: a rank that
skips the exchange pairs its data with another rank's check). Only on a mismatch is a second exchange made,
of fixed 256-byte readable descriptions, for the error every rank raises. Neither rank launched the data
move then, so the group stays usable.

The operations of a group go through one queue, in call order: operation k's data move starts once its
check has finished (polled by any wait), and operation k+1's check starts after it, so every rank issues the
same sequence of collectives on the communicator, ``async_op`` ones included. Leaving (``destroy_process_group``,
the interpreter's exit) is checked as one more collective: a rank still inside, or still to call, a collective
then fails at once instead of waiting for ranks that are gone.
"""
from __future__ import annotations

import hashlib
import os
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .reduce_op import RedOpType
from .work import ACTIVE_GATES, DistError, Done, Pending, poll

if TYPE_CHECKING:
    from .process_group import ProcessGroup

RECORD = 256  # bytes of a rank's description in the mismatch exchange
MASK = (1 << 62) - 1  # h and -h both fit an int64
# PyTorch's scalar type names, as its fingerprints print them
DTYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int8": "Char",
               "uint8": "Byte", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}
_hashes: dict[tuple, int] = {}


def enabled(engine: str) -> bool:
    """``MINITENSOR_DISTRIBUTED_CHECK=0``/``1`` turns the check off/on; else ``TORCH_DISTRIBUTED_DEBUG=DETAIL``
    turns it on; else it is on for MPI and off for NCCL (a GPU all-reduce and a host sync per collective)."""
    forced = os.environ.get("MINITENSOR_DISTRIBUTED_CHECK")
    if forced in ("0", "1"):
        return forced == "1"
    if os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL":
        return True
    return engine == "mpi"


Signature = tuple  # (op_type, shapes, dtype name, ReduceOp, root, extra): cheap to make and to look up


def signature(op_type: str, shapes: Sequence[Sequence[int]] = (), dtype: Any = None, reduce_op: object = None,
              root: int | None = None, extra: str = "") -> Signature:
    """What must agree across ranks (``op_type`` in PyTorch's words: ALLREDUCE, BROADCAST...)."""
    return (op_type, tuple(shapes), None if dtype is None else dtype.name, reduce_op, root, extra)


def describe(sig: Signature) -> str:
    """``sig`` in PyTorch's fingerprint words: ``OpType=ALLREDUCE, TensorShape=[4], TensorDtypes=Float...``."""
    op_type, shapes, dtype, reduce_op, root, extra = sig
    parts = [f"OpType={op_type}"]
    if shapes:
        parts.append("TensorShape=" + ", ".join(str(list(s)) for s in shapes))
    if dtype is not None:
        parts.append(f"TensorDtypes={DTYPE_NAMES.get(dtype, dtype)}")
    if isinstance(reduce_op, RedOpType):
        parts.append(f"ReduceOp={reduce_op.name}")
    if root is not None:
        parts.append(f"Root={root}")
    return ", ".join(parts + ([extra] if extra else []))


def _hash(sig: Signature) -> int:
    h = _hashes.get(sig)
    if h is None:  # blake2b, not hash(): Python's str hash differs between processes
        h = int.from_bytes(hashlib.blake2b(describe(sig).encode(), digest_size=8).digest(), "little") & MASK
        if len(_hashes) > 4096:
            _hashes.clear()
        _hashes[sig] = h
    return h


class Checked(Pending):
    """One operation of the queue: its check, then (when every rank's signature agreed) its data move."""

    def __init__(self, gate: "Gate", sig: Signature, launch: Callable[[], Pending]) -> None:
        self.gate, self.sig, self.launch = gate, sig, launch
        self.seq = gate.seq
        self.inner: Pending | None = None
        self.error: Exception | None = None  # the mismatch, or what launching the data move raised
        self.check: Pending | None = None
        self.values: Any = None

    def start(self) -> None:
        h = _hash(self.sig)
        self.values = self.gate.array(np.array([h, -h], dtype=np.int64))
        self.check = self.gate.pg.engine.all_reduce(self.values, RedOpType.MAX)

    def test(self) -> bool:
        if self.inner is None and self.error is None:
            self.gate.advance()
        if self.error is not None:
            raise self.error
        return self.inner is not None and self.inner.test()

    def source(self) -> int:
        assert self.inner is not None
        return self.inner.source()


class Gate:
    """A group's queue of checked operations (``seq`` counts them: every rank numbers them alike)."""

    def __init__(self, pg: "ProcessGroup") -> None:
        self.pg = pg
        self.on = pg.size() > 1 and enabled(pg.engine.name)
        self.queue: deque[Checked] = deque()
        self.seq = 0

    def array(self, values: np.ndarray) -> Any:
        """``values`` where the engine takes them (NumPy for MPI, the group's GPU for NCCL)."""
        if self.pg.engine.device == "cpu":
            return values
        from ..creation import tensor
        return tensor(values, device=self.pg.engine.device).array

    def host(self, a: Any) -> np.ndarray:
        return a if isinstance(a, np.ndarray) else a.get()

    def submit(self, sig: Signature, launch: Callable[[], Pending]) -> Pending:
        """The Pending of ``launch()``'s data move, started once the ranks agreed on ``sig``."""
        if not self.on:
            return launch()
        self.seq += 1
        item = Checked(self, sig, launch)
        self.queue.append(item)
        if len(self.queue) == 1:
            item.start()
            ACTIVE_GATES.add(self)
        return item

    def advance(self) -> None:
        """Launch, in call order, every queued data move whose check has finished."""
        while self.queue:
            head = self.queue[0]
            assert head.check is not None
            if not head.check.test():
                return
            self.queue.popleft()
            top, neg = self.host(head.values).tolist()
            try:
                if top == -neg:
                    head.inner = head.launch()
                else:
                    head.error = DistError(self._mismatch(head))
            except Exception as e:  # raised by the head's own wait; the operations after it still run
                head.error = e
            if self.queue:
                self.queue[0].start()
            else:
                ACTIVE_GATES.discard(self)

    def _mismatch(self, item: Checked) -> str:
        """Every rank's description (the second exchange: only after a mismatch, which every rank saw)."""
        text = f"CollectiveFingerPrint(SequenceNumber={item.seq}, {describe(item.sig)})".encode()
        text = text if len(text) <= RECORD - 8 else text[:RECORD - 11] + b"..."
        mine = np.zeros(RECORD, dtype=np.uint8)
        mine[:8] = np.frombuffer(np.int64(_hash(item.sig)).tobytes(), dtype=np.uint8)
        mine[8:8 + len(text)] = np.frombuffer(text, dtype=np.uint8)
        send, recv = self.array(mine), self.array(np.zeros(RECORD * self.pg.size(), dtype=np.uint8))
        done = self.pg.engine.all_gather(send, recv)
        if not poll(done.test, time.monotonic() + self.pg.timeout.total_seconds()):
            return f"collectives differ across ranks (rank {self.pg.rank()} runs {describe(item.sig)}); the ranks' " \
                   "descriptions did not arrive within the group's timeout"
        records = self.host(recv).reshape(self.pg.size(), RECORD)
        hashes = records[:, :8].copy().view(np.int64)[:, 0]
        words = [bytes(r[8:]).rstrip(b"\0").decode(errors="replace") for r in records]
        others = [r for r in range(len(words)) if hashes[r] != hashes[0]][:8]
        return ("Detected mismatch between collectives on ranks. Rank 0 is running collective: " + words[0]
                + "".join(f", but Rank {r} is running collective: {words[r]}" for r in others) + ".")

    def leave(self) -> Pending:
        """Queue the check of leaving the group (``destroy_process_group`` or the process's end), which every
        rank must reach after the same collectives."""
        return self.submit(signature("DESTROY_PROCESS_GROUP"), Done)
