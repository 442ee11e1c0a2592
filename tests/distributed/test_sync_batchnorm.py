"""SyncBatchNorm across 2 ranks through ``mpiexec -n 2`` (skipped without mpi4py and mpiexec): the global batch's
statistics and gradients, in float64."""
from __future__ import annotations

import pytest

from .launch import assert_ranks_ok, run_mpi


@pytest.mark.parametrize("momentum, affine", [("0.3", "affine"), ("none", "plain")])
def test_sync_batchnorm_on_two_ranks_equals_batchnorm_on_the_whole_batch(momentum, affine):
    assert_ranks_ok(run_mpi("sync_bn_worker.py", momentum, affine, timeout=120))
