"""Each line of specs.txt in each of its dtypes: hypothesis draws the arguments (0-d, empty and broadcast
shapes, nan, +-inf, -0.0, huge and tiny values), minitensor and PyTorch run them, and every difference is
reported (see compare.py). MINITENSOR_FUZZ_EXAMPLES raises the examples per case (default 4)."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz.compare import run_example
from tests.fuzz.spec import draw_call, parse

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

DEFAULT = 4
EXAMPLES = int(os.environ.get("MINITENSOR_FUZZ_EXAMPLES", DEFAULT))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                phases=[Phase.explicit, Phase.generate],  # no shrinking: the first failing draw is reported
                suppress_health_check=list(HealthCheck))


def cases():
    specs, _ = parse()
    for spec in specs:
        for dtype in spec.dtypes:
            reason = spec.xfail.get(dtype, spec.xfail.get(""))
            known = spec.known.get(dtype, spec.known.get(""))
            # strict at CI's count only: other counts draw other examples, which may miss the difference
            marks = [pytest.mark.xfail(strict=EXAMPLES == DEFAULT, reason=reason)] if reason else \
                [pytest.mark.xfail(strict=False, reason=known)] if known else []
            yield pytest.param(spec, dtype, id=f"{spec.id}-{dtype}", marks=marks)


@pytest.mark.parametrize("spec, dtype", list(cases()))
def test_op_matches_pytorch(spec, dtype):
    found: list[str] = []

    # The first difference is kept and the rest of the examples are skipped, rather than raised inside
    # hypothesis: its failure path nests settings, and a few hundred failing cases exhaust the recursion limit.
    @FUZZ
    @given(data=st.data())
    def fuzz(data):
        args, kwargs = draw_call(data, spec, dtype)
        rng = np.random.default_rng(data.draw(st.integers(0, 2**31), label="cotangent seed"))
        if found:  # after the draws: hypothesis checks that a replayed choice sequence draws the same
            return
        bad = run_example(spec, dtype, args, kwargs, rng)
        if bad:
            found.append("\n".join(bad) + f"\nargs={args!r}\nkwargs={kwargs!r}")

    fuzz()
    if found and os.environ.get("MINITENSOR_FUZZ_REPORT"):  # a file that collects every difference of a run
        with open(os.environ["MINITENSOR_FUZZ_REPORT"], "a") as f:
            f.write(f"== {spec.id}-{dtype}: {found[0]}\n")
    assert not found, found[0]
