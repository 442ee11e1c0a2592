"""The MPI engine across real processes: workers of this folder run under ``mpiexec -n 2`` (the MPI of the
``distributed`` extra) and check themselves against NumPy; skipped where mpi4py or mpiexec is absent."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from .launch import assert_ranks_ok, run_mpi


def test_collectives_match_numpy_for_every_op_and_dtype():
    assert_ranks_ok(run_mpi("worker_collectives.py"))


def test_collectives_on_one_rank_with_pytorchs_cpu_backend_name():
    assert_ranks_ok(run_mpi("worker_collectives.py", "gloo", n=1), n=1)  # "gloo" runs on MPI


def failed_job(mode: str, folder: Path) -> tuple[str, str]:
    """Run worker_failure.py in ``mode`` (rank 1 would sleep 600 s: the job must end first), check that the
    job failed, and return what rank 0 caught (written to ``folder``) and the job's output."""
    done = run_mpi("worker_failure.py", mode, str(folder), timeout=120)
    report = f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert done.returncode != 0, report
    return (folder / "rank0.txt").read_text(), report


def test_a_hung_rank_makes_the_others_fail_with_the_timeout_error_and_ends_the_job(tmp_path):
    caught, report = failed_job("hang", tmp_path)
    assert "caught on rank 0: all_reduce timed out on rank 0 after 0:00:02" in caught, report
    assert "then: the process group cannot be used after an earlier failure" in caught, report
    assert "was not stopped" not in report, report


def test_a_rank_that_raises_ends_the_job_without_waiting_for_the_timeout():
    done = run_mpi("worker_failure.py", "raise", timeout=120)  # rank 0's timeout is 10 minutes
    report = f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert done.returncode != 0, report
    assert "RuntimeError: rank 1 fails on purpose" in done.stderr, report
    assert "was not stopped" not in done.stdout, report


def test_a_rank_that_dies_ends_the_job():
    done = run_mpi("worker_failure.py", "exit", timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr  # mpiexec ends the others and reports the dead rank's exit
    assert "was not stopped" not in done.stdout


@pytest.mark.parametrize("mode", ["return", "return-late"])
def test_a_rank_that_returns_early_makes_the_others_collective_fail_at_once(tmp_path, mode):
    """Rank 1 leaves its program (status 0) while rank 0 is still to call all_reduce, or is inside it (rank
    0's timeout: 10 minutes): rank 1's exit is checked as a collective, so both see the mismatch and the job
    fails."""
    start = time.monotonic()
    done = run_mpi("worker_failure.py", mode, str(tmp_path), timeout=60)
    report = f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert done.returncode != 0 and time.monotonic() - start < 60, report
    # the first rank to see it ends the job: the other's lines may not all come out (rank 0's go to a file)
    seen = report + ((tmp_path / "rank0.txt").read_text() if (tmp_path / "rank0.txt").exists() else "")
    assert ("Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=1, OpType=ALLREDUCE, "
            "TensorShape=[4], TensorDtypes=Float, ReduceOp=SUM), but Rank 1 is running collective: "
            "CollectiveFingerPrint(SequenceNumber=1, OpType=DESTROY_PROCESS_GROUP)") in seen, report
    assert "was not stopped" not in report, report


def test_a_rank_that_exits_0_fails_the_job_when_mpiexec_leaves_the_others_running(tmp_path):
    """os._exit(0) skips every exit handler of rank 1; under mpiexec -disable-auto-cleanup rank 0 (timeout 10
    minutes) sees that rank 1's process has ended and fails, so the job exits non-zero."""
    start = time.monotonic()
    done = run_mpi("worker_failure.py", "exit0", str(tmp_path), timeout=60, extra=("-disable-auto-cleanup",))
    report = f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert done.returncode != 0 and time.monotonic() - start < 60, report
    caught = (tmp_path / "rank0.txt").read_text()
    assert "all_reduce failed on rank 0: the process of rank 1 of the group has ended" in caught, report


def test_a_rank_that_exits_0_under_mpiexecs_default_cleanup_ends_the_job_at_once():
    """By default MPICH's mpiexec kills the other ranks (SIGKILL) when one exits without MPI_Finalize, and
    reports the exiting rank's status: 0 here (docs/distributed.md); nothing waits."""
    done = run_mpi("worker_failure.py", "exit0", timeout=60)
    assert "was not stopped" not in done.stdout, done.stdout + done.stderr


def test_a_rank_that_never_joins_makes_init_time_out(tmp_path):
    caught, report = failed_job("late", tmp_path)
    assert "caught on rank 0: init_process_group timed out on rank 0 after 0:00:02" in caught, report
