"""DistributedDataParallel on 2 ranks through ``mpiexec -n 2`` (skipped without mpi4py and mpiexec), and its
bucket assignment in one process."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import minitensor as mt
from minitensor import nn
from minitensor.nn.parallel._reducer import bucket_assignment

from .launch import assert_ranks_ok, run_mpi


def test_buckets_are_in_reverse_order_and_close_at_their_cap():
    params = [mt.zeros(n) for n in (10, 3, 4, 5, 6)]  # float32: 40, 12, 16, 20, 24 bytes
    assert bucket_assignment(params, 30, 30) == [[4, 3], [2, 1, 0]]
    assert bucket_assignment(params, 1, 1000) == [[4], [3, 2, 1, 0]]  # the small first bucket
    assert bucket_assignment(params, 10**6, 10**6) == [[4, 3, 2, 1, 0]]


def test_buckets_hold_one_dtype_each():
    params = [mt.zeros(2), mt.zeros(2, dtype=mt.float64), mt.zeros(2)]
    assert sorted(bucket_assignment(params, 10**6, 10**6)) == [[1], [2, 0]]


def test_without_a_process_group_ddp_says_so():
    import minitensor.distributed as dist
    if dist.is_initialized():
        pytest.skip("a process group is open in this process")
    with pytest.raises(RuntimeError, match="init_process_group"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cap,view", [("25", "copy"), ("0.0002", "view")])
def test_ddp_on_two_ranks_equals_one_process_on_the_whole_batch(dtype, cap, view):
    assert_ranks_ok(run_mpi("ddp_worker.py", "equal", dtype, cap, view))


@pytest.mark.parametrize("scenario", ["no_sync", "batchnorm", "shapes", "unused", "overlap", "comm_hooks"])
def test_ddp_scenarios_on_two_ranks(scenario):
    assert_ranks_ok(run_mpi("ddp_worker.py", scenario))


def test_cnn_example_trains_on_two_ranks_and_only_rank_0_reports(tmp_path):
    example = Path(__file__).resolve().parents[2] / "examples" / "cnn.py"
    done = run_mpi(str(example), "--distributed", "--dataset", "digits", "--limit-steps", "2", "--out",
                   str(tmp_path), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("test accuracy") == 2, done.stdout  # rank 0's epoch line and its final line
    assert done.stdout.count("parameters:") == 1, done.stdout
    log = json.loads((tmp_path / "metrics.json").read_text())
    assert log["args"]["distributed"] and log["final"]["steps"] == 2
    assert "model" in mt.load(tmp_path / "checkpoint.mt")["modules"]
    assert "0.weight" in mt.load(tmp_path / "checkpoint.mt")["modules"]["model"]  # the plain module's names
