"""examples/speedup.py, the speedup report: its table, JSON and charts agree with each other, the timing
rule (warm-up excluded, median chunk), the batch-size sweep and its crossover rule, --threads, and the
command line's errors. A few steps on the 8x8 digits, so each test takes a second or two."""
from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import pytest

import minitensor as mt

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import speedup  # noqa: E402

FAST = ["--dataset", "digits", "--steps", "3", "--warmup", "1"]
CHART_SHAPE = (400, 900)  # the charts are 9 x 4 inches at 100 dpi


def run(tmp_path: Path, *argv: str) -> dict:
    return speedup.main([*FAST, "--out", str(tmp_path), *argv])


def printed_rows(text: str) -> dict[tuple[str, str, int], list[str]]:
    """The table rows in ``text``, by (model, device, batch size)."""
    rows = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 10 and words[0] in speedup.MODELS and words[1] in speedup.DEVICES:
            rows[(words[0], words[1], int(words[2]))] = words
    return rows


def png_shape(path: Path) -> tuple[int, int]:
    from matplotlib.image import imread
    return imread(path).shape[:2]


def devices_here() -> list[str]:
    return ["cpu", "cuda"] if mt.cuda.is_available() else ["cpu"]


def test_table_json_and_chart_agree(tmp_path, capsys):
    report = run(tmp_path, "--batch-size", "32")
    out = capsys.readouterr().out
    assert json.loads((tmp_path / "speedup.json").read_text()) == report

    # a row per model and device, each printed as the JSON has it
    results = report["results"]
    assert {(r["model"], r["device"]) for r in results} == {(m, d) for m in speedup.MODELS for d in devices_here()}
    printed = printed_rows(out)
    assert len(printed) == len(results)
    cpu_ms = {r["model"]: r["ms_per_step"] for r in results if r["device"] == "cpu"}
    for r in results:
        words = printed[(r["model"], r["device"], r["batch_size"])]
        assert int(words[3]) == r["steps"] == 3
        assert float(words[4]) == pytest.approx(r["ms_per_step"], abs=1e-3)
        assert float(words[5]) == pytest.approx(r["samples_per_s"], abs=0.1)
        assert r["batch_size"] == 32 and r["ms_per_step"] > 0
        assert r["samples_per_s"] == pytest.approx(32 * 1000 / r["ms_per_step"], rel=1e-3)
        assert r["speedup"] == pytest.approx(cpu_ms[r["model"]] / r["ms_per_step"], rel=1e-3)
        if r["device"] == "cpu":
            assert r["speedup"] == 1.0 and words[6] == "1.00x" and r["agrees"] is None and words[9] == "-"
        names = ["loss_D", "loss_G"] if r["model"] == "gan" else ["loss"]
        assert list(r["loss_start"]) == list(r["loss_end"]) == names
        assert words[7] == speedup.loss_text(r["loss_start"]) and words[8] == speedup.loss_text(r["loss_end"])
        assert all(math.isfinite(v) for v in [*r["loss_start"].values(), *r["loss_end"].values()])

    machine = report["machine"]
    assert machine["cpu_info"] == mt.backends.cpu_info().as_dict()
    assert f"CPU: {mt.backends.cpu_info()}" in out  # the BLAS kernels and Numba, said with the figures
    assert machine["cpu_count"] >= 1 and machine["minitensor"] == mt.__version__ and machine["numpy"]
    assert ("gpu" in machine) == mt.cuda.is_available()
    assert report["settings"]["steps"] == 3 and report["sweep"] is None
    if not mt.cuda.is_available():
        assert "Only the CPU was measured" in out and report["note"].startswith("Only the CPU was measured")
    assert png_shape(tmp_path / "speedup.png") == CHART_SHAPE
    assert not (tmp_path / "speedup_sweep.png").exists()


def test_amp_table_times_each_row_again_against_its_float32_step(tmp_path, capsys):
    report = run(tmp_path, "--amp", "--models", "mlp,gan", "--batch-size", "32")
    out = capsys.readouterr().out
    assert "Mixed precision (--amp" in out and "vs fp32" in out
    fp32 = {(r["model"], r["device"]): r for r in report["results"]}
    amp = report["amp"]
    assert {(r["model"], r["device"]) for r in amp} == set(fp32)
    for r in amp:
        base = fp32[(r["model"], r["device"])]
        assert r["batch_size"] == base["batch_size"] == 32 and r["steps"] == 3
        assert r["speedup"] == pytest.approx(base["ms_per_step"] / r["ms_per_step"], rel=1e-3)
        assert r["agrees"] is True  # AMP trains like float32: its losses stay within AMP_LOSS_RTOL
        assert list(r["loss_start"]) == list(base["loss_start"])
    assert json.loads((tmp_path / "speedup.json").read_text())["amp"] == amp
    assert run(tmp_path, "--models", "mlp")["amp"] is None


def test_each_model_defaults_to_its_examples_batch_size(tmp_path):
    report = run(tmp_path, "--devices", "cpu", "--models", "mlp,cnn")
    assert {r["model"]: r["batch_size"] for r in report["results"]} == {"mlp": 100, "cnn": 64}


def test_sweep_on_the_cpu_alone_reports_no_crossover(tmp_path, capsys):
    report = run(tmp_path, "--devices", "cpu", "--models", "mlp,gan", "--sweep-batch", "--batch-sizes", "32,8")
    out = capsys.readouterr().out
    sweep = report["sweep"]
    assert sweep["batch_sizes"] == [8, 32]
    assert {(r["model"], r["batch_size"]) for r in sweep["results"]} == {(m, b) for m in ("mlp", "gan")
                                                                         for b in (8, 32)}
    for r in sweep["results"]:
        assert r["device"] == "cpu" and r["speedup"] == 1.0 and r["steps"] == 3
        assert r["samples_per_s"] == pytest.approx(r["batch_size"] * 1000 / r["ms_per_step"], rel=1e-3)
    assert sweep["crossover"] is None
    assert "not measured: only the CPU was measured" in out
    assert "the GPU beats the CPU" not in out
    assert report["note"].startswith("Only the CPU was measured")
    assert png_shape(tmp_path / "speedup_sweep.png") == CHART_SHAPE


@pytest.mark.parametrize("count, batch_size, least, expected", [
    (40, 16, 5, 40), (40, 64, 5, 40), (40, 256, 5, 10), (40, 1024, 5, 5),  # timed steps, default sizes
    (5, 128, 1, 2), (5, 1024, 1, 1), (0, 1024, 0, 0),                      # warm-up steps
])
def test_the_sweep_runs_fewer_steps_at_large_batches(count, batch_size, least, expected):
    assert speedup.sweep_steps(count, batch_size, least) == expected


def test_batch_sizes_alone_imply_the_sweep():
    args = speedup.parse_args(["--batch-sizes", "64,16,64"])
    assert args.sweep_batch and args.batch_sizes == (16, 64)
    assert speedup.parse_args([]).batch_sizes == speedup.SWEEP_BATCH_SIZES


@pytest.mark.parametrize("cpu, gpu, expected", [
    ({16: 1, 32: 2, 64: 4, 128: 8}, {16: 3, 32: 3, 64: 3, 128: 3}, 64),    # faster from 64 up
    ({32: 4, 64: 4, 128: 8}, {32: 3, 64: 5, 128: 3}, 128),                  # 32 is a lucky size: 64 is slower
    ({16: 1, 64: 2}, {16: 5, 64: 3}, None),                                 # never
    ({16: 5, 64: 2}, {16: 1, 64: 3}, None),                                 # faster only at the small end
    ({16: 2, 64: 4}, {16: 3, 64: 4}, None),                                 # a tie is not faster
    ({16: 9, 32: 9, 64: 9}, {16: 1, 64: 1}, 16),                            # only sizes measured on both
    ({16: 1, 64: 2}, {}, None),                                             # no GPU figures
])
def test_crossover_is_where_the_gpu_stays_faster(cpu, gpu, expected):
    assert speedup.crossover(cpu, gpu) == expected


def test_crossover_lines_say_what_was_found():
    assert speedup.crossover_line("cnn", 64, (16, 1024)) == "cnn: the GPU beats the CPU from batch 64 up"
    assert "no crossover in the range" in speedup.crossover_line("mlp", None, (16, 1024))
    assert "(16 to 1024)" in speedup.crossover_line("mlp", None, (16, 1024))


@pytest.mark.parametrize("steps", [1, 3, 5, 12, 40])
def test_chunks_cover_the_steps_evenly(steps):
    sizes = speedup.chunk_sizes(steps)
    assert sum(sizes) == steps and len(sizes) == min(steps, speedup.CHUNKS)
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def test_timing_excludes_the_warmup_and_reports_the_median_chunk():
    # 2 warm-up steps and one of the 5 timed chunks (steps 5-6) sleep 50 ms a step; the rest are instant.
    # The mean over the timed steps would be >= 10 ms; the median chunk is that of an instant one.
    calls = []

    def step(x, y):
        calls.append(x.shape[0])
        if len(calls) <= 2 or len(calls) in (7, 8):
            time.sleep(0.05)
        return {}

    batches = speedup.host_batches(speedup.load_images("digits", None).train, 4, 3)
    ms = speedup.time_step(step, batches, mt.device("cpu"), warmup=2, steps=10).ms_per_step
    assert len(calls) == 12 and ms < 5


def test_host_batches_wrap_round_the_dataset():
    data = speedup.load_images("digits", None).train
    batches = speedup.host_batches(data, 500, 10)
    assert len(batches) == 3  # ceil(1437 / 500): the steps cycle through them
    images, labels = data.tensors
    x, y = batches[2]
    assert x.shape == (500, 1, 8, 8) and x.device.type == "cpu"
    assert y.tolist() == labels[1000:].tolist() + labels[:63].tolist()
    assert x[:437].tolist() == images[1000:].tolist()


def test_threads_limits_the_blas_for_the_run_only(tmp_path):
    before = mt.get_num_threads()
    report = run(tmp_path, "--devices", "cpu", "--models", "mlp", "--threads", "1")
    assert report["settings"]["threads"] == 1
    assert report["machine"]["cpu_info"]["threads"] == 1
    assert mt.get_num_threads() == before


def test_losses_are_those_of_the_first_and_last_timed_steps():
    """Warm-up steps are not the start; the last step of the last chunk is the end."""
    calls = []

    def step(x, y):
        calls.append(len(calls))
        return {"loss": mt.tensor(float(len(calls)))}

    batches = [(mt.zeros(2, 3), mt.zeros(2))]
    t = speedup.time_step(step, batches, mt.device("cpu"), warmup=3, steps=7)
    assert len(calls) == 10 and t.loss_start == {"loss": 4.0} and t.loss_end == {"loss": 10.0}
    assert t.ms_per_step > 0


def row(start, end):
    return speedup.Measurement("gan", "cpu", 64, 5, 1.0, 64e3, 1.0, start, end, None)


@pytest.mark.parametrize("start, end, agrees", [
    ({"loss_D": 1.0, "loss_G": 2.0}, {"loss_D": 0.5, "loss_G": 3.0}, True),               # the same
    ({"loss_D": 1.0005, "loss_G": 2.0}, {"loss_D": 0.505, "loss_G": 3.03}, True),        # within both
    ({"loss_D": 1.002, "loss_G": 2.0}, {"loss_D": 0.5, "loss_G": 3.0}, False),            # start beyond 1e-3
    ({"loss_D": 1.0, "loss_G": 2.0}, {"loss_D": 0.5, "loss_G": 3.1}, False),              # end beyond 2e-2
    ({"loss_D": 1.0}, {"loss_D": 0.5}, False),                                            # a loss missing
])
def test_a_devices_losses_must_agree_with_the_cpus(start, end, agrees):
    cpu = row({"loss_D": 1.0, "loss_G": 2.0}, {"loss_D": 0.5, "loss_G": 3.0})
    assert speedup.losses_agree(cpu, row(start, end)) is agrees


@pytest.mark.parametrize("argv, message", [
    (["--models", "mlp,resnet"], "--models: unknown name(s) 'resnet'; choose from mlp, cnn, gan"),
    (["--models", ","], "--models: unknown name(s) (none given)"),
    (["--devices", "tpu"], "--devices: unknown name(s) 'tpu'; choose from cpu, cuda"),
    (["--batch-sizes", "8,x"], "--batch-sizes: expected comma-separated integers"),
    (["--batch-sizes", "0,8"], "--batch-sizes: expected positive integers"),
    (["--steps", "0"], "--steps must be at least 1"),
    (["--warmup", "-1"], "--warmup must be at least 0"),
])
def test_bad_arguments_are_refused_clearly(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        speedup.parse_args(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.skipif(mt.cuda.is_available(), reason="needs a machine without a GPU")
def test_asking_for_cuda_without_a_gpu_exits_with_the_reason():
    with pytest.raises(SystemExit, match="--device cuda"):
        speedup.pick_devices(["cpu", "cuda"])
