"""The emulated RawKernels under ThreadSanitizer, each run in a process started with libtsan preloaded: the
parity cases of tests/cuda/test_cuda_raw_ops.py at one launch geometry (two warps a block, two blocks: every
grid-stride loop wraps), in float32, report no race; the race mutants' checks pass on the real sources;
and each race mutant (a plain += where a scatter needs an atomicAdd, a dropped __syncthreads) is caught.

Slower than the rest of the suite, so collected only with MINITENSOR_RACE_CHECK=1, as .ci/run does:
``MINITENSOR_RACE_CHECK=1 python -m pytest tests/cuda_emulation/test_races.py``.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from . import available
from .mutants import MUTANTS, RACE_EXIT, race_env

pytestmark = pytest.mark.skipif(not available(), reason="the CUDA emulation needs g++")
RACES = [name for name, mutant in MUTANTS.items() if mutant.race]
ROOT = Path(__file__).resolve().parents[2]


def run_sanitized(*args: str) -> subprocess.CompletedProcess:
    """``python *args`` with ThreadSanitizer preloaded and the emulation built with it."""
    env = race_env()
    if env is None:
        pytest.skip("ThreadSanitizer's runtime (libtsan) is missing")
    return subprocess.run([sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=600)


def test_parity_cases_report_no_race():
    done = run_sanitized("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/cuda/test_cuda_raw_ops.py",
                         "-k", "emulated-64x2 and not float64")  # a race does not depend on the dtype
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert " passed" in done.stdout and " failed" not in done.stdout


def test_race_checks_pass_on_the_real_sources():
    done = run_sanitized("-m", "cuda_emulation.mutants", "--controls", *RACES)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("name", RACES)
def test_race_mutant_is_reported(name):
    """Reported by ThreadSanitizer, or (a dropped __syncthreads, which TSan's bounded history of each
    location sometimes misses) by its check's wrong result."""
    done = run_sanitized("-m", "cuda_emulation.mutants", name)
    reported = done.returncode == RACE_EXIT and "ThreadSanitizer: data race" in done.stderr
    wrong = done.returncode == 1 and done.stdout.startswith("caught: ") and name == "dropped_syncthreads"
    assert reported or wrong, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
