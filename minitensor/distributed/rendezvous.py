"""The rendezvous of the NCCL engine: where rank and world size come from, and how rank 0's communicator id
(128 bytes) reaches the others. Only the id travels here; the data go through NCCL.

``init_method``: ``"env://"`` (the default: ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``, with
``rank``/``world_size`` arguments taking precedence, PyTorch's rules and errors), ``"tcp://host:port"`` (rank and
world size as arguments), or none under ``mpiexec`` without ``MASTER_ADDR``: the id is broadcast over MPI.
Over TCP, rank 0 serves the id on ``port`` until every other rank has fetched it (PyTorch's TCPStore's role).
"""
from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Mapping
from urllib.parse import urlparse

from .work import DistStoreError, poll

MAGIC = b"MTID"
MAX_REPLY = 1 << 16  # bytes: the id is 128, a refusal a sentence; a longer reply is not ours (or broken)


@dataclass
class Rendezvous:
    rank: int
    world_size: int
    host: str = ""
    port: int = 0
    via_mpi: bool = False


def parse(init_method: str | None, world_size: int, rank: int, env: Mapping[str, str],
          under_mpi: bool) -> Rendezvous:
    """The rendezvous that ``init_process_group("nccl", init_method, world_size=..., rank=...)`` means."""
    if init_method is None and "MASTER_ADDR" not in env and under_mpi:
        return Rendezvous(rank=-1, world_size=-1, via_mpi=True)  # rank and size: MPI's
    url = urlparse(init_method or "env://")
    if url.scheme == "env":
        def need(var: str) -> str:
            if var not in env:
                raise ValueError("Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {var} expected, but not set")
            return env[var]
        rank = rank if rank != -1 else int(need("RANK"))
        world_size = world_size if world_size != -1 else int(need("WORLD_SIZE"))
        host, port = need("MASTER_ADDR"), int(need("MASTER_PORT"))
    elif url.scheme == "tcp":
        def missing(what: str) -> ValueError:
            return ValueError(f"Error initializing torch.distributed using tcp:// rendezvous: {what}")
        if url.port is None:
            raise missing("port number missing")
        if rank == -1:
            raise missing("rank parameter missing")
        if world_size == -1:
            raise missing("world size parameter missing")
        host, port = url.hostname or "", url.port
    else:
        raise RuntimeError(f"No rendezvous handler for {url.scheme}:// (minitensor's NCCL engine takes env://, "
                           "tcp://host:port, or mpiexec)")
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not a rank of a group of world size {world_size}")
    return Rendezvous(rank, world_size, host, port)


def share(rv: Rendezvous, payload: bytes | None, timeout: timedelta) -> bytes:
    """Rank 0's ``payload``, on every rank (rank 0 returns once every other rank has it)."""
    if rv.world_size == 1:
        assert payload is not None
        return payload
    return _serve(rv, payload, timeout) if rv.rank == 0 else _fetch(rv, timeout)


def _serve(rv: Rendezvous, payload: bytes | None, timeout: timedelta) -> bytes:
    assert payload is not None and len(payload) <= MAX_REPLY
    deadline = time.monotonic() + timeout.total_seconds()
    served: set[int] = set()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("", rv.port))
        server.listen()
        while len(served) < rv.world_size - 1:
            server.settimeout(max(deadline - time.monotonic(), 0.0))
            try:
                conn, _ = server.accept()
            except (socket.timeout, BlockingIOError):
                raise DistStoreError(f"Timed out after {timeout.total_seconds():g} seconds waiting for clients. "
                                     f"{len(served)}/{rv.world_size - 1} clients joined.") from None
            with conn:
                conn.settimeout(max(deadline - time.monotonic(), 0.1))
                try:
                    magic, rank, world = struct.unpack("!4sii", _read(conn, 12))
                except (OSError, ConnectionError, struct.error):
                    continue  # not one of ours (a port scan, a client that gave up): ignore it
                if magic != MAGIC:
                    continue
                if world != rv.world_size:
                    reply = f"world size mismatch: rank 0 has {rv.world_size}, rank {rank} has {world}".encode()
                    conn.sendall(struct.pack("!bi", 1, len(reply)) + reply)
                    continue
                conn.sendall(struct.pack("!bi", 0, len(payload)) + payload)
                served.add(rank)
    return payload


def _fetch(rv: Rendezvous, timeout: timedelta) -> bytes:
    deadline = time.monotonic() + timeout.total_seconds()
    conn: socket.socket | None = None

    def connect() -> bool:
        nonlocal conn
        try:
            conn = socket.create_connection((rv.host, rv.port), timeout=max(deadline - time.monotonic(), 0.1))
        except OSError:  # rank 0 not listening yet: try again
            time.sleep(0.05)
            return False
        return True

    if not poll(connect, deadline) or conn is None:
        raise DistStoreError(f"rank {rv.rank} could not reach rank 0's rendezvous at {rv.host}:{rv.port} within "
                             f"{timeout} (MASTER_ADDR / MASTER_PORT, or the tcp:// address)")
    with conn:
        conn.settimeout(max(deadline - time.monotonic(), 0.1))
        try:
            conn.sendall(struct.pack("!4sii", MAGIC, rv.rank, rv.world_size))
            status, size = struct.unpack("!bi", _read(conn, 5))
            if not 0 <= size <= MAX_REPLY:  # read nothing of a length no rendezvous of ours sends
                raise DistStoreError(f"rank {rv.rank}: the rendezvous at {rv.host}:{rv.port} announced a reply "
                                     f"of {size} bytes (at most {MAX_REPLY}): not minitensor's rendezvous, or a "
                                     "broken peer")
            body = _read(conn, size)
        except (OSError, ConnectionError) as e:
            raise DistStoreError(f"rank {rv.rank}: the rendezvous at {rv.host}:{rv.port} failed: {e}") from e
    if status != 0:
        raise DistStoreError(f"rank {rv.rank}: the rendezvous refused it: {body.decode()}")
    return body


def _read(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the rendezvous peer closed the connection")
        data += chunk
    return data
