"""--profile in the examples (examples/profiling.py): a few steps after warm-up are profiled, the top-15 table
is printed, and profile.txt, trace.json and (with matplotlib) profile.png are written into the run folder."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import minitensor as mt
from minitensor import nn
from minitensor.profiler import ProfilerActivity, profile, record_function

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import cnn  # noqa: E402
import gan  # noqa: E402
import image_grid  # noqa: E402
import mlp  # noqa: E402
import profiling  # noqa: E402

QUIET = ["--dataset", "digits", "--no-progress", "--epochs", "1"]


@pytest.mark.parametrize("example", [mlp, cnn, gan], ids=["mlp", "cnn", "gan"])
def test_profile_prints_the_table_and_writes_the_trace_and_chart(example, tmp_path, capsys):
    out = tmp_path / "out"
    log = example.main([*QUIET, "--batch-size", "64", "--limit-steps", "7", "--profile", "2", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "profile of 2 training steps (after 3), top 15 by self time:" in printed
    table = (out / "profile.txt").read_text()
    assert table in printed
    lines = table.strip().splitlines()
    rows = lines[3:-3]  # between the header's separator and the last one; then the two footer lines
    assert 1 <= len(rows) <= 15 and lines[-2].startswith("Self CPU time total: ")
    assert "GB/s" in lines[1] and lines[-1].startswith("memcpy: ")  # the CPU's bandwidth columns
    trace = json.loads((out / "trace.json").read_text())
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"ProfilerStep#3", "ProfilerStep#4", "Linear", "AddmmBackward0"} <= names
    assert "ProfilerStep#5" not in names and "ProfilerStep#2" not in names  # only the two steps after warm-up
    assert any(n.startswith("Optimizer.step#Adam.step") for n in names)
    chart = out / "profile.png"
    assert chart.exists() == image_grid.png_available()
    assert log["profile"] == {k: str(out / f) for k, f in
                              (("table", "profile.txt"), ("trace", "trace.json"), ("chart", "profile.png"))
                              if k != "chart" or chart.exists()}
    assert mt.autograd.function.profiler is None  # the hooks are off after the profiled steps


def test_a_run_too_short_to_profile_says_so(tmp_path, capsys):
    log = cnn.main([*QUIET, "--limit-steps", "3", "--profile", "--out", str(tmp_path / "out")])
    assert "the run ended before a step was recorded" in capsys.readouterr().out
    assert log["profile"] == {} and not (tmp_path / "out" / "trace.json").exists()


def test_profile_needs_at_least_one_step(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cnn.main([*QUIET, "--profile", "0", "--out", str(tmp_path / "out")])
    assert "--profile must be at least 1, got 0" in capsys.readouterr().err


def test_each_event_is_charged_to_its_part_of_the_step():
    model = nn.Linear(3, 2)
    opt = mt.optim.Adam(model.parameters())
    data = mt.utils.data.DataLoader(mt.utils.data.TensorDataset(mt.randn(4, 3)), batch_size=4)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("ProfilerStep#0"):
            (x,) = next(iter(data))
            model(x).sum().backward()
            opt.step()
    parts = {e.name: profiling.part_of_step(e) for e in prof.events()}
    assert parts["ProfilerStep#0"] == "between ops"
    assert parts["enumerate(DataLoader)#_DataLoaderIter.__next__"] == "data"
    assert parts["Linear"] == parts["Sum"] == "forward"
    assert parts["AddmmBackward0"] == parts["SumBackward0"] == "backward"
    assert parts["Optimizer.step#Adam.step"] == "optimizer"
    times = profiling.self_time_by_part(prof.events(), steps=1)
    assert sum(times.values()) == pytest.approx(prof.events()[0].cpu_time_total / 1e3)  # the whole step
    assert ("between ops", "Python between ops") in times
