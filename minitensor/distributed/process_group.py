"""Process groups: ``init_process_group`` and the queries on the default group (PyTorch's names).

The engines are the ones clusters run: ``"mpi"`` (mpi4py; rank and size come from ``mpiexec``) and ``"nccl"``
(CuPy's NCCL; rank and size from the launcher's ``RANK``/``WORLD_SIZE`` or from ``mpiexec``). ``"gloo"``, the
CPU engine of PyTorch scripts, runs on MPI. When one rank fails (an uncaught exception, a timed-out wait) the
job is ended through the engine (``MPI_Abort``), so the other ranks never wait forever.
"""
from __future__ import annotations

import atexit
import os
import sys
import time
import warnings
from datetime import timedelta
from types import TracebackType
from typing import Any

from .checks import Gate, signature
from .engine import Engine
from .work import DistBackendError, DistError, Done, Work

__all__ = ["Backend", "ProcessGroup", "init_process_group", "destroy_process_group", "is_initialized",
           "is_available", "is_mpi_available", "is_nccl_available", "is_gloo_available", "is_torchelastic_launched",
           "get_rank", "get_world_size", "get_backend", "get_group_rank", "get_global_rank", "group", "GroupMember",
           "new_group", "get_node_local_rank", "get_process_group_ranks"]

default_pg_timeout = timedelta(minutes=30)  # PyTorch's defaults
default_pg_nccl_timeout = timedelta(minutes=10)
# Variables an MPI launcher sets in each rank (MPICH's hydra, Open MPI, PMIx, MVAPICH).
MPI_LAUNCHER_VARS = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")


class Backend(str):
    """A backend's name: ``Backend("MPI") == Backend.MPI == "mpi"``."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name: str) -> "Backend":
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        return str.__new__(cls, getattr(Backend, name.upper(), name.lower()))


class ProcessGroup:
    """A set of ranks and the engine that connects them; ``ranks`` are the members' global ranks in group
    order. ``failure`` is set once an operation failed or timed out: the group refuses work after that."""

    def __init__(self, engine: Engine, backend: str, ranks: list[int], global_rank: int, timeout: timedelta) -> None:
        self.engine, self.backend_name = engine, backend
        self.ranks, self.global_rank, self.timeout = ranks, global_rank, timeout
        self.failure: str | None = None
        self.peer_ended = False  # the failure is a peer's process having ended: its launcher ends the job
        self.gate = Gate(self)  # the cross-rank check of every collective's signature (checks.py)

    def rank(self) -> int:
        return self.engine.rank

    def size(self) -> int:
        return self.engine.size

    def name(self) -> str:
        return self.backend_name

    def fail(self, message: str, peer_ended: bool = False) -> DistBackendError:
        """Record the group's first failure; the error to raise. ``peer_ended``: the failure is that a peer's
        process ended (not this rank's own error)."""
        if self.failure is None:
            self.failure, self.peer_ended = message, peer_ended
        return DistBackendError(message)

    def check(self) -> None:
        if self.failure is not None:
            raise DistBackendError(f"the process group cannot be used after an earlier failure: {self.failure}")

    def group_rank(self, global_rank: int, param: str) -> int:
        if not isinstance(global_rank, int) or isinstance(global_rank, bool):
            raise TypeError(f"{param} must be an int rank, got {type(global_rank).__name__}")
        if global_rank not in self.ranks:
            raise ValueError(f"Global rank {global_rank} is not part of group {self} (its {param})")
        return self.ranks.index(global_rank)

    def global_rank_of(self, group_rank: int) -> int:
        return self.ranks[group_rank]

    def __repr__(self) -> str:
        return f"<ProcessGroup {self.backend_name} rank {self.rank()} of {self.size()}>"


_WORLD: ProcessGroup | None = None
_GROUPS: list[ProcessGroup] = []


class _WorldMeta(type):
    @property
    def WORLD(cls) -> ProcessGroup | None:
        return _WORLD


class group(metaclass=_WorldMeta):
    """``group.WORLD``: the default group (None before ``init_process_group``)."""


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD`` (the default group) and ``NON_GROUP_MEMBER``, as PyTorch."""

    NON_GROUP_MEMBER = -100


def is_available() -> bool:
    return True


def is_mpi_available() -> bool:
    """True where mpi4py imports (it is not imported here: importing it starts MPI)."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def is_nccl_available() -> bool:
    """True where CuPy's NCCL bindings import."""
    from ..backends.cuda.nccl import nccl_available
    return nccl_available()


def is_gloo_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def under_mpi_launcher() -> bool:
    return any(v in os.environ for v in MPI_LAUNCHER_VARS)


# The node-local rank as launchers set it: torchrun, MPICH's hydra, Open MPI, MVAPICH, Slurm.
LOCAL_RANK_VARS = ("LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
                   "SLURM_LOCALID")


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank among the processes of its machine (the GPU to bind to): ``LOCAL_RANK``, as
    PyTorch, or the MPI launchers' and Slurm's variables; else ``fallback_rank``."""
    for var in LOCAL_RANK_VARS:
        if var in os.environ:
            return int(os.environ[var])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context and "
                       "want the code to run locally instead.")


def is_initialized() -> bool:
    return _WORLD is not None


def default_group() -> ProcessGroup:
    if _WORLD is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _WORLD


def resolve(group: ProcessGroup | None) -> ProcessGroup:
    """The group an operation runs on (None: the default one), checked usable."""
    pg = default_group() if group is None else group
    if not isinstance(pg, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup or None, got {type(pg).__name__}")
    pg.check()
    return pg


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Join the default group. ``"mpi"`` (and ``"gloo"``, ``None``): under ``mpiexec``, which gives rank and
    size (``world_size`` and ``rank`` are ignored, with PyTorch's warning). ``"nccl"``: one GPU per rank,
    rank and size from ``rank``/``world_size`` or ``RANK``/``WORLD_SIZE`` (``init_method`` ``"env://"``,
    the default, or ``"tcp://host:port"``), or from ``mpiexec``. ``timeout`` bounds every wait."""
    global _WORLD
    if _WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    if store is not None:
        raise ValueError("init_process_group: store= is not supported in minitensor; the rendezvous is "
                         "init_method (env:// or tcp://) or mpiexec")
    name = Backend(backend if backend is not None else Backend.MPI)
    pg_timeout = timeout or (default_pg_nccl_timeout if name == Backend.NCCL else default_pg_timeout)
    if name in (Backend.MPI, Backend.GLOO):
        if world_size != -1 or rank != -1:
            warnings.warn(f"For MPI backend, world_size ({world_size}) and rank ({rank}) are ignored since they "
                          "are assigned by the MPI runtime.", stacklevel=2)
        from .mpi import start_mpi
        engine: Engine = start_mpi(name)
    elif name == Backend.NCCL:
        from .nccl import start_nccl
        engine = start_nccl(init_method, world_size, rank, pg_timeout, device_id)
    else:
        raise ValueError(f"Invalid backend: '{backend}' (minitensor runs 'mpi' and 'nccl'; 'gloo' runs on MPI)")
    pg = ProcessGroup(engine, str(name), list(range(engine.size)), engine.rank, pg_timeout)
    _GROUPS.append(pg)
    if engine.size > 1:
        _install_failure_handlers()
    Work(pg, "init_process_group", engine.joined).wait()  # past the timeout: DistBackendError, and the job ends
    if engine.size > 1:
        Work(pg, "init_process_group", engine.locate()).wait()  # MPI: the ranks' (host, pid), for lost_peers
    _WORLD = pg


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave ``group`` (None: the default group and every other group)."""
    global _WORLD
    pg = _WORLD if group is None else group
    if pg is None:
        raise AssertionError("Process group cannot be None")
    if pg not in _GROUPS:
        raise ValueError("Invalid process group specified")
    leaving = list(_GROUPS) if pg is _WORLD else [pg]
    _leave(leaving)
    for g in leaving:
        g.engine.close(failed=g.failure is not None)
        _GROUPS.remove(g)
    if pg is _WORLD:
        _WORLD = None


def get_rank(group: "ProcessGroup | int | None" = None) -> int:
    """This process's rank in ``group`` (None: the default group; -1 outside the group)."""
    if _not_member(group):
        return -1
    return default_group().rank() if group is None else _member(group).rank()


def get_world_size(group: "ProcessGroup | int | None" = None) -> int:
    if _not_member(group):
        return -1
    return default_group().size() if group is None else _member(group).size()


def _not_member(group: object) -> bool:
    return isinstance(group, int) and group == GroupMember.NON_GROUP_MEMBER


def get_backend(group: ProcessGroup | None = None) -> str:
    return (default_group() if group is None else _member(group)).backend_name


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members, in group order."""
    return list((default_group() if group is None else _member(group)).ranks)


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    return _member(group).group_rank(global_rank, "global_rank")


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    pg = _member(group)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg.global_rank_of(group_rank)


def _member(group: "ProcessGroup | int") -> ProcessGroup:
    default_group()
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup or None, got {type(group).__name__}")
    return group


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None, backend: str | None = None,
              pg_options: Any = None, use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: Any = None) -> "ProcessGroup | int":
    """A group of the global ``ranks`` (sorted; None: all), on the default group's engine (MPI only). Every
    rank of the default group must call it; ranks outside ``ranks`` get ``GroupMember.NON_GROUP_MEMBER``."""
    world = resolve(None)
    members = sorted(set(range(world.size()) if ranks is None else ranks))
    for r in members:
        if not isinstance(r, int) or not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is not a rank of the default group (world size {world.size()})")
    if backend is not None and Backend(backend) != world.backend_name:
        raise ValueError(f"new_group: backend '{backend}' differs from the default group's "
                         f"'{world.backend_name}'; minitensor's groups share the default group's engine")
    # checked as a collective: every rank must create the same group, after the same collectives
    Work(world, "new_group", world.gate.submit(signature("NEW_GROUP", extra=f"Ranks={members}"), Done)).wait()
    engine = world.engine.split(members)
    if engine is None:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(engine, world.backend_name, members, world.global_rank, timeout or world.timeout)
    _GROUPS.append(pg)
    return pg


_handlers_installed = False


def _install_failure_handlers() -> None:
    """End the whole job when this rank dies of an uncaught exception, or exits after a failed operation:
    the other ranks would otherwise wait for it (in a collective, or in MPI_Finalize) until their timeout."""
    global _handlers_installed
    if _handlers_installed:
        return
    _handlers_installed = True
    previous = sys.excepthook

    def excepthook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        previous(kind, value, tb)  # the traceback first: it is the error the user reads
        _abort_if_live()

    sys.excepthook = excepthook
    # atexit runs last-registered first: this runs before mpi4py's MPI_Finalize, which would wait for the others
    atexit.register(_at_exit)


def _leave(groups: list[ProcessGroup]) -> None:
    """Every rank of each group must leave it after the same collectives (the leave is checked as one more
    collective, checks.py): a rank still inside or still to call a collective gets the mismatch error at
    once. Raises DistError (the mismatch) or DistBackendError (past the timeout, or a rank's process ended)."""
    works = [Work(g, "destroy_process_group", g.gate.leave()) for g in groups if g.failure is None and g.gate.on]
    for w in works:  # every leave is already issued (or queued): the waits may come in any order
        w.wait()


def _at_exit() -> None:
    """The process ends with the groups still open: check that every rank ends with them (an error ends the
    whole job, with a non-zero status), then let MPI finalize."""
    if not any(g.failure for g in _GROUPS):
        try:
            _leave(list(_GROUPS))
        except DistError as e:
            print(f"minitensor.distributed: rank {_GROUPS[0].global_rank} is exiting, but not every rank of its "
                  f"process groups is: {e}", file=sys.stderr, flush=True)
            _abort_if_live()
    if any(g.failure for g in _GROUPS):
        _abort_if_live()


ABORT_GRACE_SECONDS = 0.5  # for mpiexec's proxy to forward this rank's last output before the abort kills it
PEER_END_GRACE_SECONDS = 5.0  # for the launcher to end the job itself after a rank's process ended


def _abort_if_live() -> None:
    for g in _GROUPS:
        if g.size() > 1:
            sys.stdout.flush()
            sys.stderr.flush()
            # The abort ends every process of the job at once, the I/O forwarders included: without a pause the
            # traceback just printed was sometimes lost (CI: the failing rank's error missing from the output).
            # When a peer's process ended, mpiexec's default cleanup is already ending the job and reports the
            # dead rank's status, the real cause; aborting first would replace it with ours (CI: 1 instead of
            # the dead rank's 3). So wait longer there; the abort is for launchers that leave us running.
            time.sleep(PEER_END_GRACE_SECONDS if any(h.peer_ended for h in _GROUPS) else ABORT_GRACE_SECONDS)
            g.engine.abort_job()
