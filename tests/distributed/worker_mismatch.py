"""Collectives whose ranks disagree (shape, dtype, ReduceOp, root, the operation itself), under mpiexec -n 2
(test_mismatch.py): every rank must raise the same error naming both ranks' collectives, move no data, and
the group must still give the right values afterwards. Prints ``ok <rank>``."""
from __future__ import annotations

from typing import Callable

import numpy as np

import minitensor as mt
import minitensor.distributed as dist
from minitensor.distributed import ReduceOp

HEAD = "Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint("


def mismatch(name: str, call: Callable[[], object], rank0: str, rank1: str) -> None:
    """``call`` raises on this rank with a message naming rank 0's ``rank0`` and rank 1's ``rank1``."""
    try:
        call()
    except dist.DistError as e:
        message = str(e)
    else:
        raise AssertionError(f"{name}: no error on rank {dist.get_rank()}")
    assert message.startswith(HEAD), (name, message)
    mine, theirs = message.split(", but Rank 1 is running collective: ")
    assert rank0 in mine and rank1 in theirs, (name, message)
    assert mine.count("SequenceNumber=") == theirs.count("SequenceNumber=") == 1, (name, message)


def main() -> None:
    dist.init_process_group("mpi")
    rank = dist.get_rank()
    assert dist.get_world_size() == 2

    t = mt.ones(4 if rank == 0 else 6)
    mismatch("4 vs 6 elements", lambda: dist.all_reduce(t), "TensorShape=[4]", "TensorShape=[6]")
    assert t.tolist() == [1.0] * t.numel(), t  # no data moved
    t = mt.ones(4, dtype=mt.float32 if rank == 0 else mt.float64)
    mismatch("float32 vs float64", lambda: dist.all_reduce(t), "TensorDtypes=Float", "TensorDtypes=Double")
    t = mt.ones(4, dtype=mt.int32 if rank == 0 else mt.float32)
    mismatch("int32 vs float32", lambda: dist.all_reduce(t), "TensorDtypes=Int", "TensorDtypes=Float")
    t = mt.ones(4)
    op = ReduceOp.SUM if rank == 0 else ReduceOp.MAX
    mismatch("SUM vs MAX", lambda: dist.all_reduce(t, op=op), "ReduceOp=SUM", "ReduceOp=MAX")
    mismatch("AVG vs SUM", lambda: dist.all_reduce(t, op=ReduceOp.AVG if rank == 0 else ReduceOp.SUM),
             "ReduceOp=AVG", "ReduceOp=SUM")
    mismatch("broadcast roots", lambda: dist.broadcast(t, src=rank), "OpType=BROADCAST, TensorShape=[4], "
             "TensorDtypes=Float, Root=0", "Root=1")
    mismatch("reduce roots", lambda: dist.reduce(t, dst=rank), "OpType=REDUCE", "Root=1")
    mismatch("all_reduce vs broadcast", lambda: dist.all_reduce(t) if rank == 0 else dist.broadcast(t, src=0),
             "OpType=ALLREDUCE", "OpType=BROADCAST")
    mismatch("barrier vs all_reduce", lambda: dist.barrier() if rank == 0 else dist.all_reduce(t),
             "OpType=BARRIER)", "OpType=ALLREDUCE")
    part = mt.ones(2 + rank)
    out = mt.zeros(2 * (2 + rank))
    mismatch("all_gather_into_tensor shapes", lambda: dist.all_gather_into_tensor(out, part),
             "OpType=_ALLGATHER_BASE, TensorShape=[2]", "TensorShape=[3]")
    everyone = [mt.zeros(2 + rank) for _ in range(2)]
    mismatch("gather roots", lambda: dist.gather(part, everyone, dst=rank), "OpType=GATHER", "Root=1")
    mismatch("new_group ranks", lambda: dist.new_group([0, 1] if rank == 0 else [1]), "Ranks=[0, 1]", "Ranks=[1]")
    t = mt.ones(4 if rank == 0 else 6)
    work = dist.all_reduce(t, async_op=True)  # an async_op collective: its wait raises
    assert work is not None
    mismatch("async 4 vs 6", work.wait, "TensorShape=[4]", "TensorShape=[6]")

    # matching calls still give the right values, async ones queued together included
    t = mt.ones(4) * (rank + 1)
    dist.all_reduce(t)
    assert t.tolist() == [3.0] * 4, t
    a, b, c = mt.ones(3) * (rank + 1), mt.ones(2, dtype=mt.int64) * (rank + 5), mt.ones(5) * (rank + 1)
    works = [dist.all_reduce(a, async_op=True), dist.broadcast(b, src=1, async_op=True),
             dist.all_reduce(c, op=ReduceOp.MAX, async_op=True)]
    for w in reversed(works):
        assert w is not None and w.wait()
    assert a.tolist() == [3.0] * 3 and b.tolist() == [6, 6] and c.tolist() == [2.0] * 5, (a, b, c)
    # an async collective, then a point-to-point wait that needs the peer to have finished it: waiting on the
    # receive must start the queued collective's data move too
    a, b = mt.ones(3) * (rank + 1), mt.zeros(2)
    work = dist.all_reduce(a, async_op=True)
    assert work is not None
    if rank == 0:
        assert dist.recv(b, src=1) == 1 and b.tolist() == [7.0, 7.0], b
        work.wait()
    else:
        work.wait()
        dist.send(mt.ones(2) * 7, dst=0)
    assert a.tolist() == [3.0] * 3, a
    g = dist.new_group([0, 1])
    gathered = mt.zeros(4)
    dist.all_gather_into_tensor(gathered, mt.tensor(np.array([rank, 10 + rank], dtype=np.float32)), group=g)
    assert gathered.tolist() == [0.0, 10.0, 1.0, 11.0], gathered
    dist.destroy_process_group()  # the ranks leave after the same collectives: no error
    print(f"ok {rank}", flush=True)


if __name__ == "__main__":
    main()
