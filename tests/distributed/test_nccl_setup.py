"""The NCCL engine's setup without a GPU: the rendezvous arguments (PyTorch's env:// and tcp:// rules and
errors), the id exchange over TCP between threads, its timeouts, and the clear refusal where CuPy's NCCL is
absent. The collectives themselves need a GPU (the gpu-marked test at the end)."""
from __future__ import annotations

import socket
import threading
from datetime import timedelta

import pytest

import minitensor as mt
import minitensor.distributed as dist
from minitensor.backends.cuda.nccl import nccl_available
from minitensor.distributed.rendezvous import Rendezvous, parse, share

ENV = {"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "RANK": "2", "WORLD_SIZE": "4"}


def test_env_rendezvous_reads_the_launcher_variables():
    assert parse(None, -1, -1, ENV, under_mpi=False) == Rendezvous(2, 4, "10.0.0.1", 29500)
    assert parse("env://", 8, 5, ENV, under_mpi=True) == Rendezvous(5, 8, "10.0.0.1", 29500)  # arguments first


@pytest.mark.parametrize("var", sorted(ENV))
def test_env_rendezvous_names_the_missing_variable(var):
    env = {k: v for k, v in ENV.items() if k != var}
    with pytest.raises(ValueError, match=f"env:// rendezvous: environment variable {var} expected, but not set"):
        parse("env://", -1, -1, env, under_mpi=False)


def test_tcp_rendezvous_needs_rank_world_size_and_port():
    assert parse("tcp://127.0.0.1:23456", 3, 1, {}, under_mpi=False) == Rendezvous(1, 3, "127.0.0.1", 23456)
    with pytest.raises(ValueError, match="tcp:// rendezvous: rank parameter missing"):
        parse("tcp://127.0.0.1:23456", 3, -1, {}, under_mpi=False)
    with pytest.raises(ValueError, match="tcp:// rendezvous: world size parameter missing"):
        parse("tcp://127.0.0.1:23456", -1, 0, {}, under_mpi=False)
    with pytest.raises(ValueError, match="port number missing"):
        parse("tcp://127.0.0.1", 2, 0, {}, under_mpi=False)


def test_other_rendezvous_and_bad_ranks_are_refused():
    with pytest.raises(RuntimeError, match="No rendezvous handler for file://"):
        parse("file:///tmp/x", 2, 0, {}, under_mpi=False)
    with pytest.raises(ValueError, match="rank 4 is not a rank of a group of world size 4"):
        parse("env://", 4, 4, ENV, under_mpi=False)


def test_under_mpiexec_without_master_addr_the_id_goes_over_mpi():
    assert parse(None, -1, -1, {}, under_mpi=True).via_mpi
    assert not parse(None, -1, -1, ENV, under_mpi=True).via_mpi  # MASTER_ADDR set: the launcher's rendezvous


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(world: int, ranks: list[int], port: int, timeout: float, payload: bytes = bytes(range(128))) -> dict:
    """``share`` on threads standing for ranks (clients may start before rank 0); {rank: bytes or error}."""
    results: dict = {}

    def rank_main(rank: int) -> None:
        rv = Rendezvous(rank, world, "127.0.0.1", port)
        try:
            results[rank] = share(rv, payload if rank == 0 else None, timedelta(seconds=timeout))
        except Exception as e:
            results[rank] = e

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in sorted(ranks, reverse=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_every_rank_gets_rank_0s_id():
    payload = bytes(range(256))[::2]
    results = run_ranks(4, [0, 1, 2, 3], free_port(), 20, payload)
    assert results == {r: payload for r in range(4)}


def test_rank_0_times_out_naming_the_missing_clients():
    results = run_ranks(3, [0, 1], free_port(), 1.0)
    assert results[1] == bytes(range(128))
    assert isinstance(results[0], dist.DistStoreError)
    assert "waiting for clients. 1/2 clients joined." in str(results[0])


def test_a_rank_without_rank_0_times_out():
    results = run_ranks(2, [1], free_port(), 0.5)
    assert isinstance(results[1], dist.DistStoreError) and "could not reach rank 0's rendezvous" in str(results[1])


def test_a_world_size_mismatch_is_refused():
    port = free_port()
    out: dict = {}
    server = threading.Thread(target=lambda: out.update(run_ranks(2, [0], port, 1.5)))
    server.start()
    with pytest.raises(dist.DistStoreError, match="world size mismatch: rank 0 has 2, rank 1 has 3"):
        share(Rendezvous(1, 3, "127.0.0.1", port), None, timedelta(seconds=5))
    server.join(30)
    assert isinstance(out[0], dist.DistStoreError)


def test_world_size_one_needs_no_network():
    assert share(Rendezvous(0, 1, "unreachable.invalid", 1), b"id", timedelta(seconds=1)) == b"id"


@pytest.mark.skipif(nccl_available(), reason="CuPy's NCCL is installed here: the GPU test runs instead")
def test_without_cupys_nccl_the_backend_is_refused_clearly():
    with pytest.raises(RuntimeError, match="backend 'nccl' needs CuPy built with NCCL"):
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    assert not dist.is_initialized()


def test_device_id_must_be_a_cuda_device():
    from minitensor.distributed.nccl import _device_index
    with pytest.raises(ValueError, match="device_id must be a CUDA device for backend 'nccl', got cpu"):
        _device_index("cpu")


def test_arguments_are_checked_before_the_engine_starts():
    with pytest.raises(ValueError, match="rank parameter missing"):
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", world_size=2)
    with pytest.raises(TypeError, match="Expected timeout argument to be of type datetime.timedelta"):
        dist.init_process_group("nccl", timeout=30)
    with pytest.raises(ValueError, match="Invalid backend: 'smoke'"):
        dist.init_process_group("smoke")
    assert not dist.is_initialized()


@pytest.mark.gpu
def test_nccl_world_size_one_on_a_gpu():
    if not (mt.cuda.is_available() and nccl_available()):
        pytest.skip("needs a GPU and CuPy's NCCL")
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    try:
        x = mt.arange(6, dtype=mt.float32, device="cuda")
        dist.all_reduce(x, op=dist.ReduceOp.AVG)
        dist.broadcast(x, src=0)
        out = mt.zeros(6, device="cuda")
        dist.all_gather_into_tensor(out, x)
        dist.reduce_scatter_tensor(x, out.clone(), op=dist.ReduceOp.MAX)
        work = dist.all_reduce(x, async_op=True)
        assert work is not None and work.wait()
        dist.barrier()
        assert x.cpu().tolist() == out.cpu().tolist() == list(range(6))
        with pytest.raises(ValueError, match="Tensors must be CUDA and dense"):
            dist.all_reduce(mt.ones(2))
        with pytest.raises(ValueError, match="Cannot use ReduceOp.BAND with NCCL"):
            dist.all_reduce(mt.ones(2, dtype=mt.int32, device="cuda"), op=dist.ReduceOp.BAND)
    finally:
        dist.destroy_process_group()


class RecordingComm:
    """Stands for backends/cuda/nccl.NcclComm: records the transfers the engine asks for."""
    version, device = 22000, 0

    def __init__(self) -> None:
        self.calls: list = []

    @staticmethod
    def datatype(array):
        return {"float32": 7, "float64": 8, "bool": 1}.get(array.dtype.name)

    def exchange(self, sends, recvs):
        self.calls.append(([(a.dtype.name, s, c, p) for a, s, c, p in sends],
                           [(a.dtype.name, s, c, p) for a, s, c, p in recvs]))
        return None


def test_nccl_engine_plans_grouped_transfers_in_elements_of_the_wire_type():
    """gather / scatter / all-to-all as grouped sends and receives: offsets and counts per peer (rank 1 of 3)."""
    import numpy as np

    from minitensor.distributed.nccl import NcclEngine
    comm = RecordingComm()
    engine = NcclEngine(comm, rank=1, size=3, mpi_launched=False)
    assert engine.native_avg
    engine.gather(np.zeros(4, np.float32), np.zeros(12, np.float32), root=1)
    engine.scatter(None, np.zeros(4, np.float32), root=0)
    engine.all_to_all(np.zeros(6, np.float64), np.zeros(3, np.float64), [1, 2, 3], [1, 1, 1])
    assert comm.calls[0] == ([("float32", 0, 4, 1)], [("float32", 0, 4, 0), ("float32", 4, 4, 1),
                                                       ("float32", 8, 4, 2)])
    assert comm.calls[1] == ([], [("float32", 0, 4, 0)])
    assert comm.calls[2] == ([("float64", 0, 1, 0), ("float64", 1, 2, 1), ("float64", 3, 3, 2)],
                             [("float64", 0, 1, 0), ("float64", 1, 1, 1), ("float64", 2, 1, 2)])
    pendings = engine.batch_p2p([(True, np.zeros(2, np.float32), 2, 0), (False, np.zeros(3, np.float32), 0, 5)])
    assert comm.calls[3] == ([("float32", 0, 2, 2)], [("float32", 0, 3, 0)])  # one group for the batch
    assert len(comm.calls) == 4 and [p.source() for p in pendings] == [2, 0]
    with pytest.raises(ValueError, match="NCCL cannot receive from any source"):
        engine.recv(np.zeros(1, np.float32), None, 0)
    with pytest.raises(ValueError, match="Tensors must be CUDA and dense"):
        engine.check_tensor(np.zeros(1, np.float32), "cpu", "tensor")
    with pytest.raises(TypeError, match="not supported for NCCL process group: int16"):
        engine.check_tensor(np.zeros(1, np.int16), "cuda", "tensor")
    with pytest.raises(ValueError, match="Tensors must be contiguous"):
        engine.check_tensor(np.zeros((2, 2), np.float32).T, "cuda", "tensor")
