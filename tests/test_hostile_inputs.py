"""Files and peers that lie about a length or a shape: a clear error naming the file / record / peer, never
NumPy's own error or an allocation of what the header claims. The torch checkpoint with a 65-dim tensor
(PyTorch has no dimension limit, NumPy 64), a tensor record whose size overflows an array, a rendezvous
peer announcing a 2 GiB reply, rank 0 announcing a huge id over MPI, a pipeline stage's malformed header,
an IDX header of 65 dimensions (in tests/test_datasets.py)."""
from __future__ import annotations

import io
import pickle
import socket
import struct
import threading
import zipfile
from datetime import timedelta

import numpy as np
import pytest

import minitensor as mt
from minitensor.distributed import rendezvous
from minitensor.distributed.work import DistStoreError
from minitensor.serialization.unpickler import Storage, rebuild_tensor_v2


def torch_file_with_dims(ndim: int) -> bytes:
    """A torch-format checkpoint {'w': tensor} whose record says size (1,) * ndim, stride (0,) * ndim."""
    buf = io.BytesIO()
    mt.save({"w": mt.zeros(1)}, buf, format="torch")
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("data.pkl"):
                sizes = b"(" + b"K\x01" * ndim + b"tq\x08(" + b"K\x00" * ndim + b"tq\t"
                assert b"K\x01\x85q\x08K\x01\x85q\t" in data
                data = data.replace(b"K\x01\x85q\x08K\x01\x85q\t", sizes)
            dst.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize("weights_only", [True, False])
def test_a_65_dim_tensor_record_names_file_and_storage(tmp_path, weights_only):
    path = tmp_path / "deep.pt"
    path.write_bytes(torch_file_with_dims(65))
    with pytest.raises(pickle.UnpicklingError, match=r"deep\.pt: the tensor of storage '0' has 65 dimensions"):
        mt.load(path, weights_only=weights_only)
    path.write_bytes(torch_file_with_dims(64))  # the limit itself loads
    assert mt.load(path)["w"].ndim == 64


def test_a_size_beyond_any_array_is_an_unpickling_error():
    with pytest.raises(pickle.UnpicklingError, match="the tensor of storage 'k'"):
        rebuild_tensor_v2(Storage(np.zeros(4, np.float32), "cpu", None, "k"), 0, (2**40, 2**30, 4), (0, 0, 1),
                          False, None)


def fake_rank0(reply: bytes) -> tuple[socket.socket, threading.Thread]:
    """A listening socket that answers one client's 12-byte hello with ``reply``."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(12)
            conn.sendall(reply)
    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return server, thread


@pytest.mark.parametrize("size", [2**31 - 1, -5, 65537])
def test_a_rendezvous_reply_of_absurd_length_is_refused(size):
    server, thread = fake_rank0(struct.pack("!bi", 0, size) + b"x" * 16)
    with server:
        rv = rendezvous.Rendezvous(rank=1, world_size=2, host="127.0.0.1", port=server.getsockname()[1])
        with pytest.raises(DistStoreError, match=f"announced a reply of {size} bytes"):
            rendezvous.share(rv, None, timedelta(seconds=10))
        thread.join(5)


def test_a_rendezvous_reply_of_sane_length_still_arrives():
    server, thread = fake_rank0(struct.pack("!bi", 0, 5) + b"hello")
    with server:
        rv = rendezvous.Rendezvous(rank=1, world_size=2, host="127.0.0.1", port=server.getsockname()[1])
        assert rendezvous.share(rv, None, timedelta(seconds=10)) == b"hello"
        thread.join(5)


def test_a_malformed_pipeline_header_is_refused(monkeypatch):
    import minitensor.distributed as dist
    from minitensor.distributed.pipelining.stage import MAX_DIMS, PipelineStage

    stage = object.__new__(PipelineStage)
    stage.stage_index, stage.num_stages, stage.device, stage.group = 1, 2, "cpu", None

    def garbage(t, src, group=None):
        t.copy_(mt.tensor([10**12] + [1] * MAX_DIMS + [99]))
    monkeypatch.setattr(dist, "recv", garbage)
    with pytest.raises(RuntimeError, match="malformed activation header"):
        stage.recv_activation()

    def sane(t, src, group=None):  # a (2, 3) float32 activation's header, then its data
        if t.dtype == mt.int64:
            t.copy_(mt.tensor([2, 2, 3] + [0] * (MAX_DIMS - 2) + [0]))
        else:
            t.copy_(mt.ones(2, 3))
    monkeypatch.setattr(dist, "recv", sane)
    assert stage.recv_activation().tolist() == [[1.0] * 3] * 2


def test_mpi_share_refuses_a_huge_announced_id(monkeypatch):
    import sys
    import types

    from minitensor.distributed import mpi

    class Request:
        def Test(self) -> bool:
            return True

    class Comm:
        def Get_rank(self) -> int:
            return 1

        def Get_size(self) -> int:
            return 2

        def Ibcast(self, buf, root):
            buf[...] = 2**40  # rank 0 "announces" a terabyte
            return Request()
    fake = types.ModuleType("mpi4py")
    fake.MPI = types.SimpleNamespace(COMM_WORLD=Comm())  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mpi4py", fake)
    with pytest.raises(DistStoreError, match="communicator id of 1099511627776 bytes"):
        mpi.mpi_share(lambda: b"", timedelta(seconds=5))


@pytest.mark.torch
def test_torch_saved_65_dim_tensor_is_refused_clearly(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t65.pt"
    torch.save({"w": torch.zeros([1] * 65)}, path)
    assert torch.load(path)["w"].ndim == 65  # PyTorch reads it: minitensor cannot hold it, and says so
    with pytest.raises(pickle.UnpicklingError, match=r"t65\.pt: the tensor of storage '0' has 65 dimensions"):
        mt.load(path)
    torch.save({"w": torch.zeros([1] * 64)}, path)
    assert mt.load(path)["w"].ndim == 64
