"""The MPI engine, on mpi4py: NumPy buffers go to MPI as they are (no copies), every operation is a
nonblocking MPI call (``Iallreduce``...) whose request ``Work`` polls.

MPI has no bfloat16 (and some MPIs no float16): those reduce with a user-defined MPI op over a same-size
integer carrier type, whose body is NumPy's ufunc on the two buffers viewed as the real dtype, so the data
travel at 2 bytes per element. Booleans travel as uint8. A CUDA tensor goes to MPI only where the MPI is
CUDA-aware (``MINITENSOR_CUDA_AWARE_MPI=1`` says so; MPICH's wheel is not), after the current stream is
synchronized, since MPI knows nothing of CUDA streams.
"""
from __future__ import annotations

import hashlib
import os
import socket
import time
from datetime import timedelta
from typing import Any, Callable

import numpy as np

from ..dtypes import bfloat16
from .engine import Array, Engine
from .reduce_op import RedOpType
from .rendezvous import MAX_REPLY
from .work import Done, DistStoreError, Pending, poll

UFUNCS: dict[RedOpType, Callable[..., Any]] = {
    RedOpType.SUM: np.add, RedOpType.PRODUCT: np.multiply, RedOpType.MIN: np.minimum, RedOpType.MAX: np.maximum,
    RedOpType.BAND: np.bitwise_and, RedOpType.BOR: np.bitwise_or, RedOpType.BXOR: np.bitwise_xor}


class MpiRequest(Pending):
    def __init__(self, request: Any, status: Any = None) -> None:
        self.request, self.status = request, status

    def test(self) -> bool:
        return bool(self.request.Test(self.status))

    def source(self) -> int:
        return int(self.status.Get_source())


def start_mpi(backend: str) -> "MpiEngine":
    """Start MPI (importing mpi4py initializes it) and wrap a private copy of COMM_WORLD."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(f"backend '{backend}' runs on MPI, which needs mpi4py and an MPI library: "
                           "pip install 'minitensor[distributed]' (mpi4py and MPICH), then launch with "
                           "mpiexec -n N python script.py") from e
    world = MPI.COMM_WORLD
    comm, request = world.Idup()  # nonblocking: a rank that never joins is caught by the timeout, not waited for
    engine = MpiEngine(MPI, comm, world.Get_rank(), world.Get_size())
    engine.joined = MpiRequest(request)
    return engine


class MpiEngine(Engine):
    name = "mpi"

    def __init__(self, mpi: Any, comm: Any, rank: int, size: int) -> None:
        self.MPI, self.comm, self.rank, self.size = mpi, comm, rank, size
        self.cuda_aware = os.environ.get("MINITENSOR_CUDA_AWARE_MPI") == "1"
        self._ops = {RedOpType.SUM: mpi.SUM, RedOpType.PRODUCT: mpi.PROD, RedOpType.MIN: mpi.MIN,
                     RedOpType.MAX: mpi.MAX, RedOpType.BAND: mpi.BAND, RedOpType.BOR: mpi.BOR,
                     RedOpType.BXOR: mpi.BXOR}
        self._user_ops: dict[tuple[np.dtype, RedOpType], Any] = {}
        self._types: dict[np.dtype, Any] = {}
        self.places: np.ndarray | None = None  # (host id, pid) of every rank, once ``locate`` has run

    def locate(self) -> Pending:
        """Every rank's (host, pid), so that a wait can tell that a rank of this machine has ended."""
        host = int.from_bytes(hashlib.blake2b(socket.gethostname().encode(), digest_size=7).digest(), "little")
        mine = np.array([host, os.getpid()], dtype=np.int64)
        self.places = np.zeros((self.size, 2), dtype=np.int64)
        return MpiRequest(self.comm.Iallgather(mine, self.places))

    def lost_peers(self) -> list[int]:
        """The ranks of this machine whose process has ended (a rank of another machine is not seen: its
        absence shows as the timeout). mpiexec's default cleanup kills the others at once when a rank exits
        without MPI_Finalize; under ``mpiexec -disable-auto-cleanup`` this is what ends their waits."""
        if self.places is None:
            return []
        here = self.places[self.rank, 0]
        return [r for r, (host, pid) in enumerate(self.places.tolist()) if host == here and not _alive(pid)]

    def check_tensor(self, array: Array, device_type: str, param: str) -> None:
        if device_type == "cuda" and not self.cuda_aware:
            raise RuntimeError("CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support "
                               "(set MINITENSOR_CUDA_AWARE_MPI=1 under a CUDA-aware MPI, or use backend 'nccl')")
        if not array.flags.c_contiguous:
            raise RuntimeError(f"input tensor has to be contiguous ({param})")
        if device_type == "cuda":
            from ..backends.cuda.runtime import synchronize
            synchronize()  # MPI reads the memory now: the kernels that write it must have finished

    def _native(self, dtype: np.dtype) -> Any:
        """The MPI datatype of ``dtype``, or None where MPI has none."""
        if dtype not in self._types:
            try:
                self._types[dtype] = None if dtype == bfloat16.np else self.MPI.Datatype.fromcode(dtype.char)
            except ValueError:
                self._types[dtype] = None
        return self._types[dtype]

    def _buf(self, a: Array | None) -> Any:
        """``[array, MPI datatype]`` for mpi4py (bfloat16 and float16 without MPI support travel as uint16,
        booleans as uint8: views, not copies)."""
        if a is None:
            return None
        if a.dtype.kind == "b":
            return [a.view(np.uint8), self.MPI.UINT8_T]
        native = self._native(a.dtype)
        return [a, native] if native is not None else [a.view(np.uint16), self.MPI.UINT16_T]

    def _op(self, op: RedOpType, dtype: np.dtype) -> Any:
        if dtype.kind == "b" or self._native(dtype) is not None:
            return self._ops[op]
        key = (dtype, op)
        if key not in self._user_ops:
            ufunc = UFUNCS[op]

            def reduce(inbuf: Any, inoutbuf: Any, datatype: Any) -> None:
                out = np.frombuffer(inoutbuf, dtype=dtype)
                with np.errstate(all="ignore"):  # overflow gives inf, silently, as PyTorch's reductions
                    ufunc(np.frombuffer(inbuf, dtype=dtype), out, out=out)

            self._user_ops[key] = self.MPI.Op.Create(reduce, commute=True)
        return self._user_ops[key]

    def all_reduce(self, buf: Array, op: RedOpType) -> Pending:
        return MpiRequest(self.comm.Iallreduce(self.MPI.IN_PLACE, self._buf(buf), self._op(op, buf.dtype)))

    def broadcast(self, buf: Array, root: int) -> Pending:
        return MpiRequest(self.comm.Ibcast(self._buf(buf), root))

    def reduce(self, buf: Array, op: RedOpType, root: int) -> Pending:
        send, recv = (self.MPI.IN_PLACE, self._buf(buf)) if self.rank == root else (self._buf(buf), None)
        return MpiRequest(self.comm.Ireduce(send, recv, self._op(op, buf.dtype), root))

    def all_gather(self, send: Array, recv: Array) -> Pending:
        return MpiRequest(self.comm.Iallgather(self._buf(send), self._buf(recv)))

    def reduce_scatter(self, send: Array, recv: Array, op: RedOpType) -> Pending:
        return MpiRequest(self.comm.Ireduce_scatter_block(self._buf(send), self._buf(recv), self._op(op, send.dtype)))

    def gather(self, send: Array, recv: Array | None, root: int) -> Pending:
        return MpiRequest(self.comm.Igather(self._buf(send), self._buf(recv), root))

    def scatter(self, send: Array | None, recv: Array, root: int) -> Pending:
        return MpiRequest(self.comm.Iscatter(self._buf(send), self._buf(recv), root))

    def all_to_all(self, send: Array, recv: Array, send_counts: list[int], recv_counts: list[int]) -> Pending:
        def spec(a: Array, counts: list[int]) -> Any:
            view, datatype = self._buf(a)
            return [view, (counts, np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist()), datatype]
        return MpiRequest(self.comm.Ialltoallv(spec(send, send_counts), spec(recv, recv_counts)))

    def send(self, buf: Array, dst: int, tag: int) -> Pending:
        return MpiRequest(self.comm.Isend(self._buf(buf), dst, tag))

    def recv(self, buf: Array, src: int | None, tag: int) -> Pending:
        source = self.MPI.ANY_SOURCE if src is None else src
        return MpiRequest(self.comm.Irecv(self._buf(buf), source, tag), self.MPI.Status())

    def barrier(self) -> Pending:
        return MpiRequest(self.comm.Ibarrier()) if self.size > 1 else Done()

    def split(self, members: list[int]) -> "MpiEngine | None":
        comm = self.comm.Create(self.comm.Get_group().Incl(members))  # MPI_Comm_create: every rank takes part
        if comm == self.MPI.COMM_NULL:
            return None
        engine = MpiEngine(self.MPI, comm, comm.Get_rank(), comm.Get_size())
        engine.places = None if self.places is None else self.places[members]
        return engine

    def close(self, failed: bool) -> None:
        if not failed:
            self.comm.Free()
        for op in self._user_ops.values():
            op.Free()
        self._user_ops.clear()

    def abort_job(self) -> None:
        self.MPI.COMM_WORLD.Abort(1)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped by mpiexec's proxy, has ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def mpi_share(make: Callable[[], bytes], timeout: timedelta) -> tuple[int, int, bytes]:
    """(rank, size, rank 0's ``make()``) over MPI's COMM_WORLD, for an engine launched by mpiexec; bounded by
    ``timeout`` like every wait."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    payload = make() if rank == 0 else b""
    sizes = np.array([len(payload)], dtype=np.int64)
    _wait(comm.Ibcast(sizes, 0), timeout, rank)
    if not 0 <= int(sizes[0]) <= MAX_REPLY:  # allocate nothing for a length rank 0 of ours never sends
        raise DistStoreError(f"rank {rank}: rank 0 announced a communicator id of {int(sizes[0])} bytes over MPI "
                             f"(at most {MAX_REPLY}): a broken or foreign rank 0")
    buf = np.frombuffer(payload, dtype=np.uint8).copy() if rank == 0 else np.empty(int(sizes[0]), dtype=np.uint8)
    _wait(comm.Ibcast(buf, 0), timeout, rank)
    return rank, size, buf.tobytes()


def _wait(request: Any, timeout: timedelta, rank: int) -> None:
    if not poll(request.Test, time.monotonic() + timeout.total_seconds()):
        raise DistStoreError(f"rank {rank}: rank 0's communicator id did not arrive over MPI within {timeout}")
