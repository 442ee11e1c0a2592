"""Collectives whose ranks disagree raise on every rank (worker_mismatch.py under mpiexec -n 2); the
signature words and the queue of checked operations (checks.py) without MPI."""
from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Callable

import numpy as np
import pytest

import minitensor as mt
from minitensor.distributed import DistError, ReduceOp
from minitensor.distributed.checks import RECORD, Gate, describe, enabled, signature
from minitensor.distributed.work import ACTIVE_GATES, Done, Pending

from .launch import assert_ranks_ok, run_mpi


def test_mismatched_collectives_raise_on_every_rank_and_matching_ones_still_work():
    assert_ranks_ok(run_mpi("worker_mismatch.py", timeout=120))


class Flag(Pending):
    """A Pending finished when the test says so."""

    def __init__(self) -> None:
        self.done = False

    def test(self) -> bool:
        return self.done


class FakeEngine:
    """Rank 0 of 2, logging what it is asked to issue; the other rank's signature hash is ours, or ours + 1."""
    name, rank, size, device = "mpi", 0, 2, "cpu"

    def __init__(self, other: str | None = None) -> None:
        self.other, self.log, self.checks = other, [], []

    def all_reduce(self, buf: np.ndarray, op: object) -> Pending:
        self.log.append("check")
        if self.other is not None:
            buf[0] += 1  # max(h) over the ranks is not min(h)
        self.checks.append(Flag())
        return self.checks[-1]

    def all_gather(self, send: np.ndarray, recv: np.ndarray) -> Pending:
        theirs = np.zeros(RECORD, dtype=np.uint8)
        text = f"CollectiveFingerPrint(SequenceNumber=1, {self.other})".encode()
        theirs[8:8 + len(text)] = np.frombuffer(text, dtype=np.uint8)
        recv[:] = np.concatenate([send, theirs])
        return Done()


def gate(engine: FakeEngine) -> Gate:
    pg = SimpleNamespace(engine=engine, size=lambda: 2, rank=lambda: 0, timeout=timedelta(seconds=5))
    return Gate(pg)  # type: ignore[arg-type]


def launch(engine: FakeEngine, name: str) -> Callable[[], Pending]:
    def run() -> Pending:
        engine.log.append(name)
        return Done()
    return run


def test_the_queue_issues_check_then_data_in_call_order_and_async_ops_do_not_block():
    engine = FakeEngine()
    g = gate(engine)
    ops = [g.submit(signature("ALLREDUCE", [(4,)], mt.float32, ReduceOp.SUM), launch(engine, f"data {k}"))
           for k in range(3)]
    assert engine.log == ["check"]  # the next check waits for this data move: every rank issues one sequence
    assert g in ACTIVE_GATES  # every wait, on any operation, advances it
    assert not ops[2].test()
    engine.checks[0].done = True
    assert not ops[2].test() and engine.log == ["check", "data 0", "check"]
    assert ops[0].test()
    engine.checks[1].done = True
    assert not ops[2].test() and ops[1].test()
    engine.checks[2].done = True
    assert ops[2].test() and g not in ACTIVE_GATES
    assert engine.log == ["check", "data 0", "check", "data 1", "check", "data 2"]


def test_a_mismatch_raises_naming_both_ranks_moves_no_data_and_the_next_op_runs():
    engine = FakeEngine(other="OpType=ALLREDUCE, TensorShape=[6], TensorDtypes=Float, ReduceOp=SUM")
    g = gate(engine)
    bad = g.submit(signature("ALLREDUCE", [(4,)], mt.float32, ReduceOp.SUM), launch(engine, "data"))
    engine.checks[0].done = True
    with pytest.raises(DistError) as caught:
        bad.test()
    assert str(caught.value) == (
        "Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint("
        "SequenceNumber=1, OpType=ALLREDUCE, TensorShape=[4], TensorDtypes=Float, ReduceOp=SUM), but Rank 1 is "
        "running collective: CollectiveFingerPrint(SequenceNumber=1, OpType=ALLREDUCE, TensorShape=[6], "
        "TensorDtypes=Float, ReduceOp=SUM).")
    assert engine.log == ["check"]
    engine.other = None
    good = g.submit(signature("BARRIER"), launch(engine, "barrier"))
    engine.checks[1].done = True
    assert good.test() and engine.log == ["check", "check", "barrier"]


def test_signature_words_are_pytorchs():
    assert describe(signature("BROADCAST", [(2, 3)], mt.int64, root=1)) == \
        "OpType=BROADCAST, TensorShape=[2, 3], TensorDtypes=Long, Root=1"
    assert describe(signature("ALLTOALL", dtype=mt.bfloat16)) == "OpType=ALLTOALL, TensorDtypes=BFloat16"


def test_the_check_is_on_for_mpi_off_for_nccl_and_the_environment_decides(monkeypatch):
    monkeypatch.delenv("MINITENSOR_DISTRIBUTED_CHECK", raising=False)
    monkeypatch.delenv("TORCH_DISTRIBUTED_DEBUG", raising=False)
    assert enabled("mpi") and not enabled("nccl")
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "DETAIL")
    assert enabled("nccl")
    monkeypatch.setenv("MINITENSOR_DISTRIBUTED_CHECK", "0")
    assert not enabled("mpi") and not enabled("nccl")
