"""minitensor.utils.benchmark against PyTorch's torch.utils.benchmark: the timers' protocol (blocks, warm-up,
threads, callbacks), the Measurement's statistics against float64 NumPy, and, where PyTorch is installed,
the same Measurements' repr and Compare tables character for character."""
from __future__ import annotations

import pickle
import re
import time

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import minitensor as mt
from minitensor.utils import benchmark

FIELDS = dict(stmt="f(x)", setup="from __main__ import f", global_setup="", label="Batched dot", sub_label=None,
              description=None, env=None, num_threads=1)


def measurement(lib, raw_times, number=10, **fields):
    spec = lib.TaskSpec(**{**FIELDS, **fields})
    return lib.Measurement(number_per_run=number, raw_times=list(raw_times), task_spec=spec)


def test_timeit_runs_the_statement_with_its_setup_and_globals():
    calls = []
    m = benchmark.Timer("calls.append(torch.zeros(1) + y)", setup="y = 2", globals={"calls": calls}).timeit(50)
    assert len(calls) == 50 + 2  # a warm-up of max(number // 100, 2) runs first
    assert isinstance(calls[0], mt.Tensor) and calls[0].item() == 2.0  # torch is this library
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.times == [m.raw_times[0] / 50]
    assert m.stmt == "calls.append(torch.zeros(1) + y)" and m.setup == "y = 2" and m.title == m.stmt


def test_blocked_autorange_times_blocks_of_a_power_of_ten_until_the_minimum_time():
    blocks = []
    m = benchmark.Timer("time.sleep(1e-4)", globals={"time": time}).blocked_autorange(
        callback=lambda number, t: blocks.append((number, t)), min_run_time=0.05)
    assert blocks and [n for n, _ in blocks] == [m.number_per_run] * len(m.raw_times)
    assert m.raw_times == [t for _, t in blocks] and sum(m.raw_times) >= 0.05
    assert str(m.number_per_run) == "1" + "0" * (len(str(m.number_per_run)) - 1)
    assert 1e-4 <= m.median < 5e-3  # a run sleeps at least 0.1 ms


def test_adaptive_autorange_stops_at_its_maximum_time_when_the_spread_stays_wide():
    draws = iter(np.random.default_rng(0).uniform(0, 2e-3, 10_000))
    m = benchmark.Timer("time.sleep(next(draws))", globals={"time": time, "draws": draws}).adaptive_autorange(
        threshold=1e-6, min_run_time=0.01, max_run_time=0.15)
    assert 0.15 < sum(m.raw_times) < 0.15 + 0.2  # one block past the maximum, then it stops
    assert not m.meets_confidence(1e-6)


def test_the_thread_pool_is_held_at_num_threads_while_timing_and_restored():
    before, seen = mt.get_num_threads(), []
    benchmark.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen}, num_threads=1).timeit(3)
    assert set(seen) == {1} and mt.get_num_threads() == before


def test_measurement_statistics_match_float64_numpy():
    raw = np.random.default_rng(1).lognormal(-9, 0.3, 37)
    m = measurement(benchmark, raw, number=7)
    times = raw / 7
    assert m.median == pytest.approx(np.median(times), rel=1e-12)
    assert m.mean == pytest.approx(times.mean(), rel=1e-12)
    assert m.iqr == pytest.approx(np.quantile(times, 0.75) - np.quantile(times, 0.25), rel=1e-12)
    assert m.has_warnings == (m.iqr / m.median >= 0.1)


def test_merge_pools_replicates_of_one_task_per_run():
    a, b = measurement(benchmark, [1.0, 2.0], number=10), measurement(benchmark, [3.0], number=100)
    other = measurement(benchmark, [5.0], label="other")
    merged = benchmark.Measurement.merge([a, b, other])
    assert [m.times for m in merged] == [[0.1, 0.2, 0.03], [5.0 / 10]]
    assert all(m.number_per_run == 1 and m.metadata is None for m in merged)


def test_bad_arguments_are_refused_with_pytorchs_errors():
    with pytest.raises(ValueError, match="only a `str` stmt"):
        benchmark.Timer(lambda: 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer("1", global_setup="#include <x>")
    with pytest.raises(NotImplementedError, match="no C\\+\\+ API"):
        benchmark.Timer("1", language="cpp")
    with pytest.raises(ValueError, match="Invalid language"):
        benchmark.Timer("1", language="rust")
    for method in ("repeat", "autorange"):
        with pytest.raises(NotImplementedError, match="blocked_autorange"):
            getattr(benchmark.Timer("1"), method)()
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        benchmark.Compare([1.0])  # type: ignore[list-item]


def test_a_column_without_description_gets_an_empty_header():
    table = str(benchmark.Compare([measurement(benchmark, [1e-5, 1.1e-5])]))
    assert table.splitlines()[1].strip().startswith("|") and "Times are in microseconds (us)." in table


# ---- against PyTorch

def _strip_address(text: str) -> str:
    return re.sub(r"<[\w.]+ object at 0x[0-9a-f]+>", "<Measurement>", text)


def _both(raw_times, number=10, **fields):
    torch_benchmark = pytest.importorskip("torch.utils.benchmark")
    return tuple(measurement(lib, raw_times, number, **fields) for lib in (benchmark, torch_benchmark))


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@example([1.0], 1000, {})
@example([1e-3, 1e-3, 2e-3, 3e-3], 1, {})
@given(st.lists(st.floats(1e-8, 10.0), min_size=1, max_size=12), st.sampled_from([1, 10, 1000]),
       st.sampled_from([dict(), dict(label=None, stmt="a\nb", sub_label="s"), dict(setup="x = 1\ny = 2",
                                                                                description="d", num_threads=4)]))
def test_measurement_repr_and_statistics_match_pytorch(raw, number, fields):
    ours, theirs = _both(raw, number, **fields)
    assert _strip_address(repr(ours)) == _strip_address(repr(theirs))
    assert (ours.significant_figures, ours.has_warnings, ours.title, ours.as_row_name, ours.env) == (
        theirs.significant_figures, theirs.has_warnings, theirs.title, theirs.as_row_name, theirs.env)
    assert ours.median == pytest.approx(theirs.median, rel=1e-12) and ours.iqr == pytest.approx(theirs.iqr, abs=1e-15)


@pytest.mark.torch
@settings(max_examples=100, deadline=None)
@given(st.floats(1e-10, 1e4), st.integers(1, 4))
@example(1e-3, 1)
@example(1e-6, 2)
@example(1e-9, 3)
@example(1.0, 4)
@example(1000.0, 1)
@example(0.000999999, 2)
def test_units_and_significant_figure_trimming_match_pytorch(t, n):
    common = pytest.importorskip("torch.utils.benchmark.utils.common")
    assert benchmark.select_unit(t) == common.select_unit(t)
    assert benchmark.trim_sigfig(t, n) == common.trim_sigfig(t, n)


def _grid(lib, seed):
    """The recipe's table shape: sizes as rows, two statements as columns, two thread counts, replicates."""
    rng = np.random.default_rng(seed)
    out = []
    for threads in (1, 4):
        for size in ("[1, 64]", "[64, 1024]", "[1024, 10000]"):
            for description, scale in (("mul/sum", 1e-5), ("bmm", 3e-5)):
                for _ in range(2):  # replicates, merged by Compare
                    out.append(measurement(lib, scale * rng.lognormal(0, rng.uniform(0.01, 0.4), 8), number=100,
                                           sub_label=size, description=description, num_threads=threads))
    out.append(measurement(lib, [2e-3, 2.1e-3], label="Other", sub_label="x", description="mul/sum"))
    return out


@pytest.mark.torch
@pytest.mark.parametrize("options", [(), ("trim",), ("trim", "colorize"), ("colorize_rows",), ("warnings",),
                                     ("trim", "warnings", "colorize")])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compare_tables_match_pytorch(options, seed):
    torch_benchmark = pytest.importorskip("torch.utils.benchmark")
    tables = []
    for lib in (benchmark, torch_benchmark):
        compare = lib.Compare(_grid(lib, seed))
        if "trim" in options:
            compare.trim_significant_figures()
        if "colorize" in options or "colorize_rows" in options:
            compare.colorize(rowwise="colorize_rows" in options)
        if "warnings" in options:
            compare.highlight_warnings()
        tables.append(str(compare))
    assert tables[0] == tables[1]


@pytest.mark.torch
def test_compare_tables_with_environments_and_missing_cells_match_pytorch():
    torch_benchmark = pytest.importorskip("torch.utils.benchmark")
    specs = [dict(env="environment A: mul/sum", description="[1, 1]"), dict(env="environment A: mul/sum",
             description="[1024, 10000]"), dict(env="environment B: bmm", description="[1, 1]")]
    tables = [str(lib.Compare([measurement(lib, [1e-6 * (i + 1), 1.2e-6 * (i + 1)], **spec)
                               for i, spec in enumerate(specs)])) for lib in (benchmark, torch_benchmark)]
    assert tables[0] == tables[1]


def test_measurements_pickle_and_their_tables_survive_the_round_trip():
    results = _grid(benchmark, 3)
    assert str(benchmark.Compare(results)) == str(benchmark.Compare(pickle.loads(pickle.dumps(results))))
