"""``torch.autograd.profiler``: the legacy profiler API (pytorch/tutorials' introyt/autogradyt_tutorial.py:
``with torch.autograd.profiler.profile(use_cuda=False) as prf: ...; prf.key_averages().table(...)``)."""
from __future__ import annotations

import pytest

import minitensor as mt


def test_profile_records_the_ops_of_its_block():
    x, y = mt.randn(2, 3, requires_grad=True), mt.rand(2, 3, requires_grad=True)
    z = mt.ones(2, 3, requires_grad=True)
    with mt.autograd.profiler.profile(use_cuda=False) as prf:
        for _ in range(10):
            z = (z / x) * y
    averages = prf.key_averages()
    counts = {e.key: e.count for e in averages}
    assert counts.get("Div") == 10 and counts.get("Mul") == 10, counts
    table = prf.key_averages().table(sort_by="self_cpu_time_total")
    assert "Div" in table and "Mul" in table and "# of Calls" in table
    assert len(prf.function_events) == 20 and prf.self_cpu_time_total > 0
    z.sum()  # after the block nothing more is recorded
    assert len(prf.function_events) == 20


def test_disabled_profile_and_results_before_the_end():
    with mt.autograd.profiler.profile(enabled=False) as prf:
        mt.ones(2) * 2
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prf.key_averages()
    with mt.autograd.profiler.profile() as prf:
        with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
            prf.table()
    with mt.autograd.profiler.record_function("label"):  # the same record_function as minitensor.profiler's
        pass


@pytest.mark.torch
def test_same_calls_counted_as_pytorch():
    torch = pytest.importorskip("torch")

    def calls(lib, div, mul):
        x, y = lib.randn(2, 3, requires_grad=True), lib.rand(2, 3, requires_grad=True)
        z = lib.ones(2, 3, requires_grad=True)
        with lib.autograd.profiler.profile(use_cuda=False) as prf:
            for _ in range(7):
                z = (z / x) * y
        counts = {e.key: e.count for e in prf.key_averages()}
        return counts[div], counts[mul]
    assert calls(mt, "Div", "Mul") == calls(torch, "aten::div", "aten::mul") == (7, 7)
