"""The NCCL engine: CuPy's NCCL communicator (``backends/cuda/nccl.py``), one GPU per rank, every operation
queued on the current CUDA stream with the tensors' device pointers.

PyTorch's NCCL rules: CUDA tensors only; booleans travel as uint8; no bitwise ops and no receive from any
source; ``gather``, ``scatter`` and the all-to-alls are grouped sends and receives. ``Work.wait`` waits on
the host for the operation's event (PyTorch's blocking wait), so that the group's timeout applies; past it
the communicator is aborted.

Never run on a GPU in this project's CI (none there): the argument handling and the rendezvous are tested on
the CPU (tests/distributed/test_nccl_setup.py).
"""
from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import numpy as np

from .engine import Array, Engine
from .reduce_op import BITWISE, RedOpType
from .rendezvous import parse, share
from .work import Pending


def start_nccl(init_method: str | None, world_size: int, rank: int, timeout: timedelta, device_id: Any) -> "NcclEngine":
    """Rendezvous (``rendezvous.parse``), then every rank joins rank 0's communicator on its current GPU (or
    ``device_id``'s)."""
    from . import process_group
    rv = parse(init_method, world_size, rank, os.environ, process_group.under_mpi_launcher())
    from ..backends.cuda import nccl as cuda_nccl
    if not cuda_nccl.nccl_available():
        raise RuntimeError("backend 'nccl' needs CuPy built with NCCL and an NVIDIA GPU: pip install "
                           "'minitensor[cuda12]' (or cuda13); on CPUs use backend 'mpi'")
    device = _device_index(device_id)
    if rv.via_mpi:
        from .mpi import mpi_share
        rv.rank, rv.world_size, uid = mpi_share(lambda: cuda_nccl.unique_id(), timeout)
    else:
        uid = share(rv, cuda_nccl.unique_id() if rv.rank == 0 else None, timeout)
    return NcclEngine(cuda_nccl.NcclComm(rv.world_size, uid, rv.rank, device), rv.rank, rv.world_size, rv.via_mpi)


def _device_index(device_id: Any) -> int:
    from .. import cuda
    from ..device import as_device, device
    if device_id is None:
        return cuda.current_device()
    d = device("cuda", device_id) if isinstance(device_id, int) else as_device(device_id)
    if d.type != "cuda":
        raise ValueError(f"device_id must be a CUDA device for backend 'nccl', got {d}")
    index = d.index if d.index is not None else cuda.current_device()
    cuda.set_device(index)
    return index


class NcclPending(Pending):
    def __init__(self, event: Any, source: int = 0) -> None:
        self.event, self._source = event, source

    def test(self) -> bool:
        return bool(self.event.done())

    def source(self) -> int:
        return self._source


class NcclEngine(Engine):
    name = "nccl"

    def __init__(self, comm: Any, rank: int, size: int, mpi_launched: bool) -> None:
        from ..backends.cuda.nccl import AVG_SINCE
        self.comm, self.rank, self.size, self.mpi_launched = comm, rank, size, mpi_launched
        self.native_avg = comm.version >= AVG_SINCE
        self.device = f"cuda:{comm.device}"

    def check_tensor(self, array: Array, device_type: str, param: str) -> None:
        if device_type != "cuda":
            raise ValueError(f"Tensors must be CUDA and dense ({param})")
        if not array.flags.c_contiguous:
            raise ValueError(f"Tensors must be contiguous ({param})")
        if self.comm.datatype(array) is None:
            raise TypeError(f"Input tensor data type is not supported for NCCL process group: {array.dtype}")

    @staticmethod
    def _op(op: RedOpType) -> str:
        if op in BITWISE:
            raise ValueError(f"Cannot use ReduceOp.{op.name} with NCCL")
        return op.name

    def all_reduce(self, buf: Array, op: RedOpType) -> Pending:
        return NcclPending(self.comm.all_reduce(buf, self._op(op)))

    def broadcast(self, buf: Array, root: int) -> Pending:
        return NcclPending(self.comm.broadcast(buf, root))

    def reduce(self, buf: Array, op: RedOpType, root: int) -> Pending:
        return NcclPending(self.comm.reduce(buf, self._op(op), root))

    def all_gather(self, send: Array, recv: Array) -> Pending:
        return NcclPending(self.comm.all_gather(send, recv))

    def reduce_scatter(self, send: Array, recv: Array, op: RedOpType) -> Pending:
        return NcclPending(self.comm.reduce_scatter(send, recv, self._op(op)))

    def gather(self, send: Array, recv: Array | None, root: int) -> Pending:
        n = send.size
        recvs = [(recv, r * n, n, r) for r in range(self.size)] if recv is not None else []
        return NcclPending(self.comm.exchange([(send, 0, n, root)], recvs))

    def scatter(self, send: Array | None, recv: Array, root: int) -> Pending:
        n = recv.size
        sends = [(send, r * n, n, r) for r in range(self.size)] if send is not None else []
        return NcclPending(self.comm.exchange(sends, [(recv, 0, n, root)]))

    def all_to_all(self, send: Array, recv: Array, send_counts: list[int], recv_counts: list[int]) -> Pending:
        def blocks(a: Array, counts: list[int]) -> list[tuple[Array, int, int, int]]:
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist()
            return [(a, starts[r], counts[r], r) for r in range(self.size)]
        return NcclPending(self.comm.exchange(blocks(send, send_counts), blocks(recv, recv_counts)))

    def send(self, buf: Array, dst: int, tag: int) -> Pending:
        return NcclPending(self.comm.exchange([(buf, 0, buf.size, dst)], []))

    def recv(self, buf: Array, src: int | None, tag: int) -> Pending:
        if src is None:
            raise ValueError("NCCL cannot receive from any source: give recv a src rank")
        return NcclPending(self.comm.exchange([], [(buf, 0, buf.size, src)]), src)

    def batch_p2p(self, plan: list[tuple[bool, Array, int, int]]) -> list[Pending]:
        """One NCCL group for the whole batch (two ranks that both send first do not wait on each other)."""
        sends = [(buf, 0, buf.size, peer) for is_send, buf, peer, _ in plan if is_send]
        recvs = [(buf, 0, buf.size, peer) for is_send, buf, peer, _ in plan if not is_send]
        event = self.comm.exchange(sends, recvs)
        return [NcclPending(event, peer) for _, _, peer, _ in plan]

    def barrier(self) -> Pending:
        return NcclPending(self.comm.barrier())

    def close(self, failed: bool) -> None:
        (self.comm.abort if failed else self.comm.destroy)()

    def abort_job(self) -> None:
        """Abort the communicator (its kernels stop waiting for the peers); under mpiexec, end the job."""
        self.comm.abort()
        if self.mpi_launched:
            from mpi4py import MPI
            MPI.COMM_WORLD.Abort(1)
