"""minitensor.distributed.optim.ZeroRedundancyOptimizer: PyTorch's error without a process group, and (under
mpiexec, worker_zero.py) the same parameters as one plain optimizer, with the optimizer state sharded."""
from __future__ import annotations

import pytest

import minitensor as mt
import minitensor.distributed as dist
from minitensor.distributed.optim import ZeroRedundancyOptimizer

from .launch import assert_ranks_ok, run_mpi


def test_without_a_group_pytorchs_error():
    if dist.is_initialized():
        pytest.skip("a process group is open in this process")
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        ZeroRedundancyOptimizer([mt.zeros(2, requires_grad=True)], optimizer_class=mt.optim.SGD, lr=0.1)


def test_overlap_with_ddp_is_refused():
    with pytest.raises(NotImplementedError, match="overlap_with_ddp"):
        ZeroRedundancyOptimizer([mt.zeros(2, requires_grad=True)], mt.optim.SGD, overlap_with_ddp=True, lr=0.1)


def test_two_ranks_match_one_plain_optimizer():
    assert_ranks_ok(run_mpi("worker_zero.py", n=2))


def test_one_rank_holds_every_shard():
    assert_ranks_ok(run_mpi("worker_zero.py", "gloo", n=1), n=1)


@pytest.mark.torch
def test_the_name_is_pytorchs():
    torch_optim = pytest.importorskip("torch.distributed.optim")
    assert hasattr(torch_optim, "ZeroRedundancyOptimizer")
