"""minitensor.profiler's schedule and the profile's life cycle: PyTorch's action sequence, on_trace_ready at
each RECORD_AND_SAVE with that cycle's steps, ProfilerStep ranges, one profile at a time."""
from __future__ import annotations

import itertools
import json
import warnings

import pytest

import minitensor as mt
from minitensor.autograd import function as _function
from minitensor.profiler import (ProfilerAction, ProfilerActivity, profile, schedule,
                                 tensorboard_trace_handler)

N, W, R, S = ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE
CPU = [ProfilerActivity.CPU]


@pytest.mark.parametrize("kwargs, expected", [
    (dict(wait=1, warmup=1, active=2, repeat=1, skip_first=1), [N, N, W, R, S, N, N, N, N, N]),
    (dict(wait=0, warmup=1, active=1), [W, S, W, S, W, S, W, S, W, S]),
    (dict(wait=2, warmup=1, active=2, repeat=2, skip_first=1, skip_first_wait=1), [N, W, R, S, N, N, W, R, S, N]),
    (dict(wait=1, warmup=0, active=3, repeat=1), [N, R, R, S, N, N, N, N, N, N]),
])
def test_schedule_gives_pytorchs_actions(kwargs, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warmup=0 warns, checked below
        fn = schedule(**kwargs)
    assert [fn(step) for step in range(10)] == expected


def test_schedule_refuses_bad_arguments_and_warns_without_warmup():
    with pytest.raises(AssertionError, match="active=0 \\(need > 0\\)"):
        schedule(wait=0, warmup=0, active=0)
    with pytest.raises(AssertionError, match="wait=-1"):
        schedule(wait=-1, warmup=1, active=1)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        schedule(wait=0, warmup=0, active=1)
    with pytest.raises(AssertionError, match="non-negative"):
        schedule(wait=0, warmup=1, active=1)(-1)


@pytest.mark.torch
def test_schedule_equals_torchs():
    torch_profiler = pytest.importorskip("torch.profiler")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for wait, warmup, active, repeat, skip_first, skip_first_wait in itertools.product(
                (0, 1, 3), (0, 2), (1, 2), (0, 1, 3), (0, 2), (0, 1)):
            kwargs = dict(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first,
                          skip_first_wait=skip_first_wait)
            ours, theirs = schedule(**kwargs), torch_profiler.schedule(**kwargs)
            assert [ours(s).name for s in range(25)] == [theirs(s).name for s in range(25)], kwargs


def test_on_trace_ready_sees_each_cycles_recorded_steps():
    seen = []

    def ready(prof):
        steps = [e.name for e in prof.events() if e.name.startswith("ProfilerStep")]
        seen.append((prof.step_num, steps, sum(e.name == "Exp" for e in prof.events())))

    x = mt.ones(3)
    with profile(activities=CPU, schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=ready) as prof:
        for _ in range(10):
            x.exp()
            prof.step()
    assert seen == [(4, ["ProfilerStep#2", "ProfilerStep#3"], 2), (8, ["ProfilerStep#6", "ProfilerStep#7"], 2)]
    assert _function.profiler is None


def test_the_profile_ends_mid_cycle_and_hands_what_it_recorded():
    ready = []
    x = mt.ones(3)
    with profile(activities=CPU, schedule=schedule(wait=0, warmup=1, active=3), on_trace_ready=ready.append) as prof:
        x.exp()
        prof.step()
        x.exp()  # step 1 records, then the profile exits
    assert ready == [prof]
    assert [e.name for e in prof.events()] == ["ProfilerStep#1", "Exp"]


def test_a_schedule_that_stops_recording_early_warns_as_pytorch():
    actions = [R, N, N]
    with pytest.warns(UserWarning, match="Incorrect schedule: RECORD followed by NONE"):
        with profile(activities=CPU, schedule=lambda step: actions[step]) as prof:
            mt.ones(2).exp()
            prof.step()
    assert [e.name for e in prof.events()] == ["ProfilerStep#0", "Exp"]


def test_one_profile_at_a_time_and_results_only_after_recording():
    outer = profile(activities=CPU)
    with outer:
        with pytest.raises(RuntimeError, match="already enabled"):
            with profile(activities=CPU):
                pass
        assert _function.profiler is not None  # the running one is untouched
    with pytest.raises(RuntimeError, match="not running"):
        outer.stop()
    with pytest.raises(AssertionError, match="no results yet"):
        profile(activities=CPU).key_averages()
    with pytest.raises(ValueError, match="ProfilerActivity"):
        profile(activities=["CPU"])


def test_tensorboard_trace_handler_writes_one_trace_per_cycle(tmp_path):
    with profile(activities=CPU, schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")) as prof:
        for _ in range(5):
            mt.ones(2).exp()
            prof.step()
    files = sorted((tmp_path / "tb").glob("w.*.pt.trace.json"))
    assert len(files) == 2
    names = [e["name"] for e in json.loads(files[0].read_text())["traceEvents"] if e["ph"] == "X"]
    assert names == ["ProfilerStep#1", "Exp"]
