"""minitensor.distributed without a group: PyTorch's names and errors before init_process_group (MPI is never
started in this process: mpi4py is imported only by init_process_group)."""
from __future__ import annotations

import sys

import pytest

import minitensor as mt
import minitensor.distributed as dist


def test_importing_starts_no_engine():
    assert "mpi4py.MPI" not in sys.modules
    assert dist.is_available() and not dist.is_initialized() and not dist.is_gloo_available()
    assert dist.group.WORLD is None and dist.GroupMember.WORLD is None


@pytest.mark.parametrize("call", [dist.get_rank, dist.get_world_size, dist.get_backend, dist.barrier,
                                  lambda: dist.all_reduce(mt.ones(1)), lambda: dist.broadcast(mt.ones(1), 0)])
def test_without_a_group_pytorchs_error(call):
    with pytest.raises(ValueError, match="Default process group has not been initialized, please make sure to "
                                         "call init_process_group."):
        call()


def test_destroy_without_a_group():
    with pytest.raises(AssertionError, match="Process group cannot be None"):
        dist.destroy_process_group()


def test_backend_names_and_reduce_ops():
    assert dist.Backend("MPI") == dist.Backend.MPI == "mpi" and dist.Backend("NCCL") == "nccl"
    with pytest.raises(ValueError, match="Backend constructor parameter must be string-ish"):
        dist.Backend(3)  # type: ignore[arg-type]
    assert {op.name for op in dist.ReduceOp.RedOpType} >= {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR",
                                                           "BXOR", "PREMUL_SUM"}
    assert dist.ReduceOp.SUM is dist.ReduceOp.RedOpType.SUM
    assert issubclass(dist.DistBackendError, dist.DistError) and issubclass(dist.DistError, RuntimeError)


def test_the_store_argument_is_refused():
    with pytest.raises(ValueError, match="store= is not supported"):
        dist.init_process_group("mpi", store=object())
    assert not dist.is_initialized()


@pytest.mark.torch
def test_the_public_names_are_pytorchs():
    torch_dist = pytest.importorskip("torch.distributed")
    missing = [n for n in dist.__all__ if not hasattr(torch_dist, n)]
    assert not missing, missing
    assert dist.default_pg_timeout == torch_dist.default_pg_timeout


def test_node_local_rank_from_the_launcher(monkeypatch):
    for var in ("LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
                "SLURM_LOCALID"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    monkeypatch.setenv("MPI_LOCALRANKID", "1")  # mpiexec (MPICH)
    assert dist.get_node_local_rank() == 1
    monkeypatch.setenv("LOCAL_RANK", "2")  # torchrun's wins, as PyTorch reads it
    assert dist.get_node_local_rank(fallback_rank=0) == 2
