"""Launch a worker script of this folder on 2 ranks with the venv's ``mpiexec``; skip when mpi4py or mpiexec
is missing (the ``distributed`` extra installs both)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TIMEOUT_S = 300  # a 2-core machine shared by other jobs: generous, and still no hang forever


def mpiexec() -> str:
    pytest.importorskip("mpi4py", reason="the multi-rank tests need mpi4py (pip install -e '.[distributed]')")
    found = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")
    if found is None:
        pytest.skip("the multi-rank tests need mpiexec (pip install -e '.[distributed]' installs mpich's)")
    return found


def run_two_ranks(script: str, *args: str, timeout: float = TIMEOUT_S, ok_lines: bool = True) -> str:
    """Run ``script args`` on 2 ranks (a path relative to this folder, or absolute); fail with both ranks'
    output unless it exits with 0 and (``ok_lines``) each rank printed "ok <rank>"."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([mpiexec(), "-n", "2", sys.executable, str(HERE / script), *args], env=env,
                          capture_output=True, text=True, timeout=timeout)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and (not ok_lines or "ok 0" in out and "ok 1" in out), out
    return out
