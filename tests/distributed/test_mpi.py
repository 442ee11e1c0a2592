"""The MPI engine across real processes: workers of this folder run under ``mpiexec -n 2`` (the MPI of the
``distributed`` extra) and check themselves against NumPy; skipped where mpi4py or mpiexec is absent."""
from __future__ import annotations

from .launch import assert_ranks_ok, run_mpi


def test_collectives_match_numpy_for_every_op_and_dtype():
    assert_ranks_ok(run_mpi("worker_collectives.py"))


def test_collectives_on_one_rank():
    assert_ranks_ok(run_mpi("worker_collectives.py", n=1), n=1)
