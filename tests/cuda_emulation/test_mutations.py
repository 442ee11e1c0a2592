"""The emulation tier catches characteristic kernel bugs: each mutant of ``mutants.MUTANTS`` (an off-by-one
in a bound, a shuffle in lane-divergent code, a dropped __syncthreads) makes its check fail, and every check
passes on the real sources. The races (a plain += where a scatter needs an atomicAdd) are caught by the
ThreadSanitizer build: test_races.py, its own CI step."""
from __future__ import annotations

import pytest

from . import available
from .mutants import MUTANTS, applied

pytestmark = pytest.mark.skipif(not available(), reason="the CUDA emulation needs g++")
DETERMINISTIC = [name for name, mutant in MUTANTS.items() if not mutant.race]


def test_every_check_passes_on_the_real_sources():
    with applied(None) as run:
        for mutant in MUTANTS.values():
            run(mutant.check)


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_mutant_is_caught(name):
    with applied(name) as run, pytest.raises((AssertionError, RuntimeError)):
        run()
