"""NCCL through CuPy (``cupy.cuda.nccl``): the communicator behind ``minitensor.distributed``'s ``"nccl"``
engine. CuPy is imported only when a group is made (layout rule: CuPy lives under ``backends/cuda/``).

Every operation is queued on CuPy's current stream, as PyTorch queues NCCL on the current stream, with the
arrays' device pointers (no copies), and followed by an event: the engine's ``Pending`` is that event, polled
with ``check_async_error`` so that a peer's failure surfaces as an error instead of a wait.
"""
from __future__ import annotations

from typing import Any

# NCCL's ncclDataType_t and ncclRedOp_t (nccl.h; CuPy's NCCL_* constants): stable across NCCL 2.x.
DATATYPES = {"int8": 0, "uint8": 1, "bool": 1, "int32": 2, "uint32": 3, "int64": 4, "uint64": 5, "float16": 6,
             "float32": 7, "float64": 8, "bfloat16": 9}
OPS = {"SUM": 0, "PRODUCT": 1, "MAX": 2, "MIN": 3, "AVG": 4}
AVG_SINCE = 21000  # ncclAvg: NCCL 2.10


def _nccl() -> Any:
    from cupy.cuda import nccl
    return nccl


def nccl_available() -> bool:
    try:
        nccl = _nccl()
    except Exception:  # CuPy absent, or built without NCCL, or no CUDA driver: not available, never an error
        return False
    return bool(getattr(nccl, "available", True))


def unique_id() -> bytes:
    """A new communicator id (ncclGetUniqueId's 128 bytes), to hand to every rank."""
    uid = _nccl().get_unique_id()
    return uid if isinstance(uid, bytes) else bytes(b & 0xFF for b in uid)  # CuPy < 14: a tuple of signed chars


class Event:
    """Done once the queued operation has finished; raises NCCL's asynchronous error (a peer gone)."""

    def __init__(self, comm: "NcclComm") -> None:
        import cupy
        self.comm, self.event = comm, cupy.cuda.Event(disable_timing=True)
        self.event.record()

    def done(self) -> bool:
        self.comm.comm.check_async_error()
        return bool(self.event.done)


class NcclComm:
    """One rank's communicator on GPU ``device`` (ncclCommInitRank: blocks until every rank has joined)."""

    def __init__(self, world_size: int, uid: bytes, rank: int, device: int) -> None:
        import cupy
        nccl = _nccl()
        self.device = device
        with cupy.cuda.Device(device):
            try:
                self.comm = nccl.NcclCommunicator(world_size, uid, rank)
            except TypeError:  # CuPy < 14 takes the id as a tuple of signed chars
                self.comm = nccl.NcclCommunicator(world_size, tuple(b - 256 if b > 127 else b for b in uid), rank)
        self.version = nccl.get_version()

    @staticmethod
    def datatype(array: Any) -> int | None:
        return DATATYPES.get(array.dtype.name)

    def _stream(self) -> int:
        import cupy
        return int(cupy.cuda.get_current_stream().ptr)

    def _ptr(self, array: Any, offset: int = 0) -> int:
        return int(array.data.ptr) + offset * array.itemsize

    def all_reduce(self, buf: Any, op: str) -> Event:
        self.comm.allReduce(self._ptr(buf), self._ptr(buf), buf.size, DATATYPES[buf.dtype.name], OPS[op],
                            self._stream())
        return Event(self)

    def broadcast(self, buf: Any, root: int) -> Event:
        self.comm.broadcast(self._ptr(buf), self._ptr(buf), buf.size, DATATYPES[buf.dtype.name], root,
                            self._stream())
        return Event(self)

    def reduce(self, buf: Any, op: str, root: int) -> Event:
        self.comm.reduce(self._ptr(buf), self._ptr(buf), buf.size, DATATYPES[buf.dtype.name], OPS[op], root,
                         self._stream())
        return Event(self)

    def all_gather(self, send: Any, recv: Any) -> Event:
        self.comm.allGather(self._ptr(send), self._ptr(recv), send.size, DATATYPES[send.dtype.name], self._stream())
        return Event(self)

    def reduce_scatter(self, send: Any, recv: Any, op: str) -> Event:
        self.comm.reduceScatter(self._ptr(send), self._ptr(recv), recv.size, DATATYPES[recv.dtype.name], OPS[op],
                                self._stream())
        return Event(self)

    def exchange(self, sends: list[tuple[Any, int, int, int]], recvs: list[tuple[Any, int, int, int]]) -> Event:
        """Point-to-point transfers as one NCCL group: (array, first element, count, peer) each."""
        nccl, stream = _nccl(), self._stream()
        nccl.groupStart()
        try:
            for array, start, count, peer in sends:
                self.comm.send(self._ptr(array, start), count, DATATYPES[array.dtype.name], peer, stream)
            for array, start, count, peer in recvs:
                self.comm.recv(self._ptr(array, start), count, DATATYPES[array.dtype.name], peer, stream)
        finally:
            nccl.groupEnd()
        return Event(self)

    def destroy(self) -> None:
        self.comm.destroy()

    def abort(self) -> None:
        self.comm.abort()

    def barrier(self) -> Event:
        """PyTorch's NCCL barrier: an all-reduce of one element on this GPU."""
        import cupy
        with cupy.cuda.Device(self.device):
            return self.all_reduce(cupy.zeros(1, dtype=cupy.float32), "SUM")
