"""Pipeline parallelism: ``split_sequential`` in one process; GPipe over 2 ranks through ``mpiexec -n 2``
(skipped without mpi4py and mpiexec): the split MLP's gradients equal the unsplit model's."""
from __future__ import annotations

from pathlib import Path

import pytest

from minitensor import nn
from minitensor.distributed.pipelining import split_sequential

from .launch import assert_ranks_ok, run_mpi


def test_split_sequential_cuts_evenly_or_at_the_given_points_sharing_the_layers():
    layers = [nn.Linear(2, 2) for _ in range(5)]
    seq = nn.Sequential(*layers)
    parts = split_sequential(seq, 2)
    assert [len(p) for p in parts] == [2, 3]
    assert parts[1][0] is layers[2]
    assert [len(p) for p in split_sequential(seq, 3, split_points=[1, 4])] == [1, 3, 1]
    with pytest.raises(ValueError, match="increasing"):
        split_sequential(seq, 3, split_points=[3, 2])
    with pytest.raises(ValueError, match="num_stages"):
        split_sequential(seq, 6)


@pytest.mark.parametrize("n_microbatches,dtype", [(4, "float64"), (2, "float32"), (1, "float64")])
def test_gpipe_on_two_ranks_gives_the_unsplit_models_gradients(n_microbatches, dtype):
    assert_ranks_ok(run_mpi("ddp_pipeline_worker.py", str(n_microbatches), dtype))


def test_pipeline_example_trains_on_two_ranks(tmp_path):
    example = Path(__file__).resolve().parents[2] / "examples" / "pipeline_mlp.py"
    done = run_mpi(str(example), "--dataset", "digits", "--limit-steps", "3", "--batch-size", "32",
                   "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("test accuracy") == 1, done.stdout  # rank 1 (the last stage) reports, once
    assert (tmp_path / "metrics.json").is_file()
