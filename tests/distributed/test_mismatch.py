"""Collectives whose ranks disagree raise on every rank (worker_mismatch.py under mpiexec -n 2); the
signature words and the queue of checked operations (checks.py) without MPI."""
from __future__ import annotations

from .launch import assert_ranks_ok, run_mpi


def test_mismatched_collectives_raise_on_every_rank_and_matching_ones_still_work():
    assert_ranks_ok(run_mpi("worker_mismatch.py", timeout=120))
