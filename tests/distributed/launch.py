"""Run a worker script of this folder under ``mpiexec -n N`` (the MPI next to the test's Python, from the
``distributed`` extra), or skip with the reason where mpi4py or mpiexec is missing."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
MPIEXEC = Path(sys.executable).parent / "mpiexec"


def require_mpi() -> None:
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not installed (pip install -e '.[distributed]')")
    if not MPIEXEC.exists():
        pytest.skip(f"no mpiexec next to {sys.executable} (the mpich wheel of the distributed extra gives one)")


def run_mpi(worker: str, *args: str, n: int = 2, timeout: float = 300,
            extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """``mpiexec -n n python tests/distributed/<worker> args``; raises TimeoutExpired past ``timeout``."""
    require_mpi()
    env = dict(os.environ, PYTHONPATH=str(HERE.parent.parent), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    command = [str(MPIEXEC), *extra, "-n", str(n), sys.executable, str(HERE / worker), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def assert_ranks_ok(done: subprocess.CompletedProcess, n: int = 2) -> None:
    """Every rank printed its ``ok <rank>`` line and the job exited 0."""
    report = f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert done.returncode == 0, report
    # the ranks share one stdout: their lines may interleave ("ok 0ok 1"), so look for the words, not for whole
    # lines, and not for a word boundary (a digit may run into the next "ok")
    assert sorted(int(r) for r in re.findall(r"(?<![A-Za-z])ok (\d+)", done.stdout)) == list(range(n)), report
