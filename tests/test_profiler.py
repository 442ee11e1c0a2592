"""minitensor.profiler: what it records (ops, backward nodes, ranges, kernels), the accounting of self and
total times and memory, key_averages and its table, the Chrome trace, and that the hooks are off after."""
from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn, profiler
from minitensor.autograd import function as _function
from minitensor.autograd.function import ArrayFunction
from minitensor.backends import compiled
from minitensor.profiler import ProfilerActivity, profile, record_function

CPU = [ProfilerActivity.CPU]


def small_cnn() -> tuple[nn.Module, mt.optim.Optimizer]:
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 13 * 13, 10))
    return model, mt.optim.SGD(model.parameters(), lr=0.1)


def train_step(model: nn.Module, opt: mt.optim.Optimizer, x: mt.Tensor, y: mt.Tensor) -> None:
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


def by_name(events, name):
    return [e for e in events if e.key == name]


def test_ops_backward_nodes_and_ranges_nest_by_time():
    x = mt.randn(4, 3, requires_grad=True)
    with profile(activities=CPU) as prof:
        with record_function("forward"):
            y = (x * 2).sum()
        y.backward()
    events = prof.events()
    assert [(e.name, e.kind) for e in events] == [("forward", "user_annotation"), ("Mul", "cpu_op"),
                                                  ("Sum", "cpu_op"), ("SumBackward0", "backward"),
                                                  ("MulBackward0", "backward")]
    forward = events[0]
    assert [c.name for c in forward.cpu_children] == ["Mul", "Sum"]
    assert all(c.cpu_parent is forward for c in forward.cpu_children)
    assert events[3].cpu_parent is None
    for child in forward.cpu_children:
        assert forward.start_ns <= child.start_ns <= child.end_ns <= forward.end_ns
    # self = total minus the direct children
    assert forward.self_cpu_time_total == pytest.approx(
        forward.cpu_time_total - sum(c.cpu_time_total for c in forward.cpu_children))
    assert np.allclose(x.grad.numpy(), 2)  # the profiled run computes what an unprofiled one does


def test_table_self_time_accounts_for_the_profiled_step():
    """The self times of all events add up to the step's wall time (the ProfilerStep range holds the time
    between ops): nothing counted twice, nothing lost. Times are compared with each other, not a bound."""
    model, opt = small_cnn()
    x, y = mt.randn(32, 1, 28, 28), mt.randint(0, 10, (32,))
    train_step(model, opt, x, y)
    with profile(activities=CPU, schedule=profiler.schedule(wait=0, warmup=1, active=1)) as prof:
        train_step(model, opt, x, y)
        prof.step()  # -> step 1 records
        start = time.perf_counter_ns()
        train_step(model, opt, x, y)
        wall_us = (time.perf_counter_ns() - start) / 1e3
        prof.step()
    averages = prof.key_averages()
    total_self = sum(a.self_cpu_time_total for a in averages)
    assert total_self == pytest.approx(wall_us, rel=0.10)
    table = averages.table(sort_by="self_cpu_time_total", row_limit=15)
    footer = table.strip().splitlines()[-1]
    assert footer == f"Self CPU time total: {profiler.table.format_time(total_self)}"
    ops = [a for a in averages if a.kind in ("cpu_op", "backward")]
    assert {"Conv2d", "ConvolutionBackward0", "Linear", "AddmmBackward0", "CrossEntropy",
            "NllLossBackward0"} <= {a.key for a in ops}
    assert by_name(averages, "Optimizer.step#SGD.step")[0].count == 1
    assert by_name(averages, "ProfilerStep#1")[0].cpu_time_total >= wall_us  # the range brackets the step


def test_key_averages_sum_the_events_of_a_key_and_group_by_input_shape():
    a, b = mt.randn(2, 3), mt.randn(5)
    with profile(activities=CPU, record_shapes=True) as prof:
        for _ in range(3):
            a * 2
        b * 2
    mul = prof.events()[0]
    assert mul.input_shapes == [[2, 3], []] and mul.input_dtypes == ["float32", "Scalar"]
    (avg,) = prof.key_averages()
    assert avg.key == "Mul" and avg.count == 4
    assert avg.cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in prof.events()))
    assert avg.cpu_time == pytest.approx(avg.cpu_time_total / 4)
    grouped = prof.key_averages(group_by_input_shape=True)
    assert [(g.key, g.count, g.input_shapes) for g in grouped] == [("Mul", 3, [[2, 3], []]), ("Mul", 1, [[5], []])]
    assert "Input Shapes" in grouped.table() and "[[2, 3], []]" in grouped.table()


def test_table_columns_sort_keys_and_an_unknown_key():
    with profile(activities=CPU, profile_memory=True) as prof:
        mt.randn(3) + 1
        mt.randn(3, 3).exp()
    averages = prof.key_averages()
    lines = averages.table(sort_by="cpu_time_total", row_limit=1).splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "CPU", "Mem", "Self", "CPU", "Mem", "#", "of", "Calls"]
    assert len(lines) == 6  # separator, header, separator, one row, separator, footer
    for key in ("self_cpu_time_total", "cpu_time_total", "cuda_time_total", "self_cuda_time_total",
                "device_time_total", "cpu_memory_usage", "self_cpu_memory_usage", "count"):
        rows = averages.table(sort_by=key).splitlines()[3:-2]
        values = [getattr(averages[[a.key for a in averages].index(r.split()[0])], key.replace("cuda", "device"))
                  for r in rows]
        assert values == sorted(values, reverse=True), key
    with pytest.raises(AttributeError, match="'FunctionEventAvg' object has no attribute 'bogus'"):
        averages.table(sort_by="bogus")
    assert profiler.table.format_time(1500) == "1.500ms" and profiler.table.format_memory(-2048) == "-2.00 KB"


def test_profile_memory_charges_an_ops_output_and_its_release():
    x = mt.randn(1000)  # float32: 4000 bytes
    with profile(activities=CPU, profile_memory=True) as prof:
        with record_function("scope"):
            y = x * 2
            del y  # freed while "scope" is the innermost open event
    scope, mul = prof.events()
    assert mul.allocated == 4000 and mul.cpu_memory_usage == 4000 and mul.self_cpu_memory_usage == 4000
    assert scope.self_cpu_memory_usage == -4000 and scope.cpu_memory_usage == 0
    with profile(activities=CPU, profile_memory=True) as prof:
        x.reshape(10, 100)  # a view: no new memory
    assert prof.events()[0].cpu_memory_usage == 0


def test_chrome_trace_is_json_with_nested_forward_and_backward_events(tmp_path):
    model, opt = small_cnn()
    x, y = mt.randn(8, 1, 28, 28), mt.randint(0, 10, (8,))
    with profile(activities=CPU, record_shapes=True) as prof:
        with record_function("step"):
            train_step(model, opt, x, y)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == len(prof.events())
    for e in complete:
        assert e["dur"] >= 0 and isinstance(e["ts"], float) and {"name", "pid", "tid", "cat"} <= set(e)
    by_id = {e["args"]["External id"]: e for e in complete}
    (step,) = [e for e in complete if e["name"] == "step"]
    cats = set()
    for event in prof.events():
        if event.cpu_parent is not None:
            child, parent = by_id[event.id], by_id[event.cpu_parent.id]
            assert parent["ts"] <= child["ts"] and child["ts"] + child["dur"] <= parent["ts"] + parent["dur"] + 1e-3
        cats.add(by_id[event.id]["cat"])
    assert {"cpu_op", "backward", "user_annotation"} <= cats
    backward = [e for e in complete if e["cat"] == "backward"]
    assert backward and all(step["ts"] <= e["ts"] <= step["ts"] + step["dur"] for e in backward)
    conv = next(e for e in complete if e["name"] == "Conv2d")
    assert conv["args"]["Input Dims"] == [[8, 1, 28, 28], [4, 1, 3, 3], [4]]


class Launches(ArrayFunction):
    """An op whose forward launches one compiled kernel (the tiers call ``compiled.run_kernel`` so)."""

    @staticmethod
    def forward(ctx, B, x):
        out = x.copy()
        compiled.run_kernel("double", False, np.multiply, out, 2, out)
        return out


def test_kernel_launches_are_children_of_their_op():
    x = mt.ones(4)
    with profile(activities=CPU) as prof:
        y = Launches.apply(x)
    op, kernel = prof.events()
    assert (op.name, kernel.name, kernel.kind) == ("Launches", "double", "kernel")
    assert kernel.cpu_parent is op and op.cpu_children == [kernel]
    assert np.array_equal(y.numpy(), [2, 2, 2, 2])
    Launches.apply(x)  # off: the kernel runs, nothing records
    assert compiled.launch_hook is None and len(prof.events()) == 2


class FakeEvent:
    """A CUDA event on one stream: waiting for it completes it and everything recorded before it."""

    def __init__(self, runtime: "FakeRuntime") -> None:
        runtime.clock += 1.0
        self.runtime, self.at = runtime, runtime.clock

    def synchronize(self) -> None:
        self.runtime.done = max(self.runtime.done, self.at)


class FakeRuntime:
    """CUDA's clock as a counter: each event recorded 1 ms after the previous."""

    def __init__(self) -> None:
        self.clock, self.done, self.used = 0.0, 0.0, 0

    def is_available(self) -> bool:
        return True

    def timing_event(self) -> FakeEvent:
        return FakeEvent(self)

    def elapsed_ms(self, start: FakeEvent, end: FakeEvent) -> float:
        assert max(start.at, end.at) <= self.done, "read an event before waiting for it"
        return end.at - start.at

    def memory_allocated(self) -> int:
        return self.used


def test_device_times_come_from_events_read_at_the_end(monkeypatch):
    """A kernel's device time is its event pair's; the op's covers its kernels, and its self time is the
    rest. (Runs without a GPU through a fake clock: the real one is read the same way.)"""
    fake = FakeRuntime()
    monkeypatch.setattr(profiler.recorder, "_cuda", lambda: fake)

    class OnDevice(ArrayFunction):
        @staticmethod
        def forward(ctx, B, x):
            compiled.run_kernel("k", True, lambda: None)
            fake.used += 64
            return x + 1

    x = mt.ones(2)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True) as prof:
        recorder = _function.profiler
        recorder.kernel("launch", True, lambda: None, ())  # outside an op: timed on its own
        op = recorder.open("Op", "cpu_op")
        recorder._start_device(op, True)  # the op's start event, as ``op`` records it on a CUDA tensor
        OnDevice.apply(x)  # a CPU tensor: no events of its own
        recorder._end_device(op)
        recorder.close(op)
    events = {e.name: e for e in prof.events()}
    assert events["launch"].device_time_total == pytest.approx(1e3)  # one tick = 1 ms = 1000 us
    assert events["k"].device_type == "CUDA" and events["k"].device_time_total == pytest.approx(1e3)
    assert events["Op"].device_time_total == pytest.approx(3e3)  # its start, k's two events, its end
    assert events["Op"].self_device_time_total == pytest.approx(2e3)  # less its kernel's tick
    assert events["Op"].device_memory_usage == 64
    assert (events["OnDevice"].device_time_total, events["OnDevice"].self_device_time_total) == (1e3, 0)
    assert "Self CUDA time total: 4.000ms" in prof.key_averages().table()  # Op + launch, not k again


def test_hooks_are_none_after_the_profile_even_when_it_raises():
    with pytest.raises(ValueError):
        with profile(activities=CPU):
            assert _function.profiler is not None and compiled.launch_hook is not None
            raise ValueError
    assert _function.profiler is None and compiled.launch_hook is None
    with profile(activities=CPU) as prof:
        pass
    assert _function.profiler is None and prof.events() == []


def test_only_the_profiling_thread_is_recorded():
    x = mt.ones(3)
    with profile(activities=CPU) as prof:
        worker = threading.Thread(target=lambda: (x * 3).exp())
        worker.start()
        worker.join()
        x + 1
    assert [e.name for e in prof.events()] == ["Add"]


def test_data_loader_and_optimizer_steps_are_named_as_pytorch():
    data = mt.utils.data.TensorDataset(mt.randn(8, 2), mt.randn(8, 1))
    model = nn.Linear(2, 1)
    opt = mt.optim.Adam(model.parameters())
    with profile(activities=CPU) as prof:
        for xb, yb in mt.utils.data.DataLoader(data, batch_size=4):
            nn.functional.mse_loss(model(xb), yb).backward()
            opt.step()
    names = [e.name for e in prof.events()]
    assert names.count("enumerate(DataLoader)#_DataLoaderIter.__next__") == 3  # two batches, then the end
    assert names.count("Optimizer.step#Adam.step") == 2


def test_record_function_as_a_decorator_and_with_stack():
    @record_function("helper")
    def helper(t):
        return t.exp()

    with profile(activities=CPU, with_stack=True) as prof:
        helper(mt.ones(2))
    outer, exp = prof.events()
    assert outer.name == "helper" and exp.cpu_parent is outer
    ours = [frame for frame in exp.stack if "test_profiler.py" in frame]  # innermost first, as PyTorch's
    assert ours[0].endswith(": helper") and ours[1].endswith(": test_record_function_as_a_decorator_and_with_stack")


def test_the_raw_kernel_tiers_launches_report_to_the_hook(monkeypatch):
    """rawmodule.launch goes through compiled.run_kernel: with a fake kernel object in place of the compiled
    one (no GPU), each launch is one kernel event of its op."""
    from minitensor.backends.cuda import rawmodule

    calls = []
    monkeypatch.setattr(rawmodule, "check_arguments", lambda *a: None)
    monkeypatch.setattr(rawmodule, "_current_device", lambda: 0)
    monkeypatch.setattr(rawmodule, "_kernel", lambda template, dtype, device: lambda *a: calls.append(a))

    class RawLaunch(ArrayFunction):
        @staticmethod
        def forward(ctx, B, x):
            rawmodule.launch("im2col", np.float32, 1000, ("args",))
            return x

    with profile(activities=CPU) as prof:
        RawLaunch.apply(mt.ones(1))
    op, raw = prof.events()
    assert (raw.name, raw.kind, raw.cpu_parent) == ("im2col", "kernel", op)
    assert calls == [((4,), (rawmodule.THREADS,), ("args",))]  # 1000 items in blocks of 256


def test_the_numba_cuda_tiers_launches_report_to_the_hook(monkeypatch):
    """launch_1d (Numba CUDA kernels) goes through compiled.run_kernel, named after the kernel's function."""
    pytest.importorskip("numba")  # launch.py imports it (MINITENSOR_TEST_WITHOUT_NUMBA runs skip this)
    from minitensor.backends.cuda.numba_kernels import launch

    calls = []
    monkeypatch.setattr(launch, "current_stream", lambda: "stream")

    class NumbaKernel:
        __name__ = "scale_kernel"

        def __getitem__(self, config):
            return lambda *args: calls.append((config, args))

    class NumbaLaunch(ArrayFunction):
        @staticmethod
        def forward(ctx, B, x):
            launch.launch_1d(NumbaKernel(), 10, "array")
            return x

    with profile(activities=CPU) as prof:
        NumbaLaunch.apply(mt.ones(1))
    op, kernel = prof.events()
    assert (kernel.name, kernel.kind, kernel.cpu_parent) == ("scale_kernel", "kernel", op)
    assert calls == [((1, launch.THREADS_PER_BLOCK, "stream"), ("array",))]


def test_an_op_that_raises_closes_its_event_and_the_next_ops_nest_as_before():
    with profile(activities=CPU) as prof:
        with pytest.raises(RuntimeError):
            mt.ones(2) + mt.ones(3)
        with record_function("after"):
            mt.ones(2).exp()
    add, after, exp = prof.events()
    assert add.name == "Add" and add.cpu_parent is None and add.end_ns >= add.start_ns
    assert after.cpu_parent is None and exp.cpu_parent is after


def test_an_output_saved_for_backward_is_charged_once_and_a_private_saved_array_too():
    x = mt.randn(100, requires_grad=True)  # 400 bytes
    with profile(activities=CPU, profile_memory=True) as prof:
        x.exp()  # saves its output
        nn.functional.dropout(x, 0.5)  # saves a mask of its own
    exp, dropout = prof.events()
    assert exp.allocated == 400
    assert dropout.allocated == 400 + 100  # the output and the boolean mask it made and saved


def test_bandwidth_columns_count_the_bytes_each_event_moves(monkeypatch):
    """bytes_moved: an op's inputs and outputs, a node's gradient in, saved arrays and gradients out; the
    table's GB/s is bytes over CPU total, SLOW under half the memcpy rate from a MiB a call on."""
    x = mt.randn(1000, requires_grad=True)  # float32: 4000 bytes
    with profile(activities=CPU) as prof:
        (x * x).sum().backward()
    events = {e.name: e for e in prof.events()}
    assert events["Mul"].bytes_moved == 3 * 4000  # two inputs, one output
    assert events["MulBackward0"].bytes_moved == 4000 + 2 * 4000 + 2 * 4000  # gy, x saved twice, gx twice
    assert events["Sum"].bytes_moved == 4000 + 4
    assert 1 < profiler.table.memcpy_gbps.__wrapped__(2 ** 20) < 1e4  # the real measurement, in GB/s
    monkeypatch.setattr(profiler.table, "memcpy_gbps", lambda: 1e9)  # everything is slow against this
    lines = prof.key_averages().table(sort_by="cpu_time_total", bandwidth=True).splitlines()
    assert lines[1].split()[-6:] == ["GB/s", "<", "memcpy/2", "#", "of", "Calls"]
    assert lines[-1] == "memcpy: 1000000000.00 GB/s (SLOW: a memory-bound op under half of it)"
    rows = {r.split()[0]: r for r in lines[3:-3]}
    assert "SLOW" not in rows["Mul"]  # under a MiB a call: the rate is the op's fixed cost
    big = mt.randn(2 ** 19)  # 2 MiB
    with profile(activities=CPU) as prof:
        big * 2.0
    row = prof.key_averages().table(bandwidth=True).splitlines()[3]
    mul = prof.events()[0]
    assert f"{mul.bytes_moved / mul.cpu_time_total / 1e3:.2f}" in row and "SLOW" in row
