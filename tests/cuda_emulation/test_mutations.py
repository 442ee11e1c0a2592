"""The emulation tier catches characteristic kernel bugs: each mutant of ``mutants.MUTANTS`` (an off-by-one
in a bound, a shuffle in lane-divergent code, a dropped __syncthreads, a plain += where a scatter needs an
atomicAdd) makes its check fail, and every check passes on the real sources. Races are caught by the
ThreadSanitizer build, in a process of their own."""
from __future__ import annotations

import subprocess
import sys

import pytest

from . import available
from .mutants import MUTANTS, RACE_EXIT, applied, race_env

pytestmark = pytest.mark.skipif(not available(), reason="the CUDA emulation needs g++")
DETERMINISTIC = [name for name, mutant in MUTANTS.items() if not mutant.race]
RACES = [name for name, mutant in MUTANTS.items() if mutant.race]


def run_mutants(*args: str) -> subprocess.CompletedProcess:
    env = race_env()
    if env is None:
        pytest.skip("ThreadSanitizer's runtime (libtsan) is missing")
    return subprocess.run([sys.executable, "-m", "cuda_emulation.mutants", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_every_check_passes_on_the_real_sources():
    with applied(None) as run:
        for mutant in MUTANTS.values():
            run(mutant.check)


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_mutant_is_caught(name):
    with applied(name) as run, pytest.raises((AssertionError, RuntimeError)):
        run()


def test_race_checks_pass_on_the_real_sources_under_thread_sanitizer():
    done = run_mutants("--controls", *RACES)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("name", RACES)
def test_race_mutant_is_caught_by_thread_sanitizer(name):
    done = run_mutants(name)
    assert done.returncode == RACE_EXIT, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "ThreadSanitizer: data race" in done.stderr
