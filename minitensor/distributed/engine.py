"""``Engine``: what a transport (MPI through mpi4py, NCCL through CuPy) does for a process group.

Every method takes raw contiguous arrays (NumPy on the host, CuPy on a GPU) and ranks of the engine's own
communicator, launches the operation without waiting and returns its ``Pending``. In-place where PyTorch's
collective is in-place: ``all_reduce``, ``broadcast`` and ``reduce`` (at the root) write into ``buf``.
"""
from __future__ import annotations

from typing import Any

from .reduce_op import RedOpType
from .work import Done, Pending

Array = Any  # a NumPy or CuPy array


class Engine:
    name = ""
    rank = 0
    size = 1
    native_avg = False  # False: the caller divides a SUM by the group's size
    device = "cpu"  # where the object collectives put their byte tensors
    joined: Pending = Done()  # finished once every rank has joined the communicator (init_process_group waits)

    def check_tensor(self, array: Array, device_type: str, param: str) -> None:
        """Raise PyTorch's error for a tensor this engine cannot take (device, layout)."""
        raise NotImplementedError

    def all_reduce(self, buf: Array, op: RedOpType) -> Pending:
        raise NotImplementedError

    def broadcast(self, buf: Array, root: int) -> Pending:
        raise NotImplementedError

    def reduce(self, buf: Array, op: RedOpType, root: int) -> Pending:
        raise NotImplementedError

    def all_gather(self, send: Array, recv: Array) -> Pending:
        """``recv`` (size x send's elements) gets every rank's ``send``, in rank order."""
        raise NotImplementedError

    def reduce_scatter(self, send: Array, recv: Array, op: RedOpType) -> Pending:
        """Rank r's ``recv`` gets the reduction of block r of every rank's ``send`` (size blocks)."""
        raise NotImplementedError

    def gather(self, send: Array, recv: Array | None, root: int) -> Pending:
        raise NotImplementedError

    def scatter(self, send: Array | None, recv: Array, root: int) -> Pending:
        raise NotImplementedError

    def all_to_all(self, send: Array, recv: Array, send_counts: list[int], recv_counts: list[int]) -> Pending:
        """Block j of ``send`` (``send_counts[j]`` elements) goes to rank j; ``recv`` gets rank j's block in
        its slot j (``recv_counts[j]`` elements)."""
        raise NotImplementedError

    def send(self, buf: Array, dst: int, tag: int) -> Pending:
        raise NotImplementedError

    def recv(self, buf: Array, src: int | None, tag: int) -> Pending:
        """``src`` None: from any rank (the Pending's ``source()`` tells which)."""
        raise NotImplementedError

    def barrier(self) -> Pending:
        raise NotImplementedError

    def batch_p2p(self, plan: list[tuple[bool, Array, int, int]]) -> list[Pending]:
        """(is a send, buffer, peer, tag) each, launched together (default: one by one, in order)."""
        return [self.send(buf, peer, tag) if is_send else self.recv(buf, peer, tag) for is_send, buf, peer, tag in plan]

    def split(self, members: list[int]) -> "Engine | None":
        """A communicator of the ``members`` (ranks of this one, sorted), made by every rank of this one
        (collective); None on the ranks outside it."""
        raise NotImplementedError(f"new_group is not supported on the {self.name} engine in minitensor")

    def locate(self) -> Pending:
        """Exchange what ``lost_peers`` needs (collective, once, at ``init_process_group``); default: nothing."""
        return Done()

    def lost_peers(self) -> list[int]:
        """Ranks whose process is known to have ended (a wait stops waiting for them); default: none known."""
        return []

    def close(self, failed: bool) -> None:
        """Free the communicator (``failed``: a peer may be gone, so nothing collective)."""
        raise NotImplementedError

    def abort_job(self) -> None:
        """End every rank of the job now (a rank failed: the others must not wait for it)."""
        raise NotImplementedError
