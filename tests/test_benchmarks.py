"""The benchmark harness (benchmarks/): the four workloads against issue #6's definitions, their PyTorch
twins against them, compare.py's timing logic on fake timers and clocks, its Markdown table, one small end
to end run, and the asv suite's CUDA benchmarks skipping themselves without a GPU."""
from __future__ import annotations

import itertools
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import bench_ops, bench_training, compare, plot_compare, torch_workloads, workloads  # noqa: E402
from benchmarks import bench_checkpoint, memory  # noqa: E402
from benchmarks import compare_worker  # noqa: E402

# Issue #6's workloads: layer widths (inputs 28 x 28 = 784), batch sizes.
LINEAR = lambda i, o: i * o + o  # noqa: E731  (weights and biases of a Linear)
CONV3 = lambda i, o: i * o * 9 + o  # noqa: E731  (a 3x3 Conv2d)
PARAMETERS = {
    "mlp-s": {"model": LINEAR(784, 128) + LINEAR(128, 10)},
    "mlp-l": {"model": LINEAR(784, 1024) + LINEAR(1024, 1024) + LINEAR(1024, 10)},
    "cnn": {"model": CONV3(1, 32) + CONV3(32, 64) + LINEAR(64 * 7 * 7, 128) + LINEAR(128, 10)},
    "gan": {"generator": LINEAR(100, 256) + LINEAR(256, 784), "discriminator": LINEAR(784, 256) + LINEAR(256, 1)},
}
BATCH = {"mlp-s": 100, "mlp-l": 512, "cnn": 64, "gan": 64}
# Untrained: a classifier's cross-entropy on 10 classes is about ln 10; a GAN's D says about 1/2 to
# everything, so loss_D = 2 ln 2 and loss_G = ln 2. The Transformer's decoder sees LayerNorm's unit-variance
# features through U(-1/sqrt(512), 1/sqrt(512)) weights: logits of variance 1/3, so about ln V + 1/6.
UNTRAINED_LOSS = {"loss": math.log(10), "loss_D": 2 * math.log(2), "loss_G": math.log(2)}
TRANSFORMER_UNTRAINED_LOSS = math.log(1000) + 1 / 6
# The language models start near-uniform over their 65 characters: nanoGPT's 0.02-std weights, and the LSTM's
# U(-1/16, 1/16) decoder on hidden states below 1, give logits of well under 0.1.
UNTRAINED_LOSS_BY_WORKLOAD = {"transformer": TRANSFORMER_UNTRAINED_LOSS, "gpt": math.log(65), "lstm": math.log(65)}


def host(losses: dict[str, mt.Tensor]) -> dict[str, float]:
    return {k: v.item() for k, v in losses.items()}


# ------------------------------------------------------------------------------------------- workloads
@pytest.mark.parametrize("name", workloads.IMAGE_WORKLOADS)
def test_workload_is_the_issues_definition(name):
    run = workloads.build(name, "cpu")
    sizes = {k: sum(p.numel() for p in m.parameters()) for k, m in run.modules.items()}
    assert sizes == PARAMETERS[name]
    x, y = run.batch
    assert tuple(x.shape) == (BATCH[name], 1, 28, 28) and x.dtype == mt.float32
    assert tuple(y.shape) == (BATCH[name],)
    assert all(p.dtype == mt.float32 for m in run.modules.values() for p in m.parameters())


def test_transformer_workload_is_pytorchs_default_encoder():
    run = workloads.build("transformer", "cpu")
    model = run.modules["model"]
    d, ff, vocab = 512, 2048, 1000
    layer = (3 * d * d + 3 * d) + (d * d + d) + (d * ff + ff) + (ff * d + d) + 4 * d
    assert sum(p.numel() for p in model.parameters()) == vocab * d + 2 * layer + LINEAR(d, vocab)
    layers = model.encoder.layers
    assert len(layers) == 2 and layers[0].self_attn.num_heads == 8 and layers[0].dropout.p == 0
    x, y = run.batch
    assert tuple(x.shape) == (128, 32) and x.dtype == mt.int64 and tuple(y.shape) == (128 * 32,)
    np.testing.assert_array_equal(x.numpy()[1:], y.numpy().reshape(128, 32)[:-1])  # next-token targets
    assert all(p.dtype == mt.float32 for p in model.parameters())


@pytest.mark.parametrize("name", workloads.WORKLOADS)
def test_workload_step_gives_the_untrained_loss_and_is_reproducible(name):
    first = host(workloads.build(name, "cpu", seed=3).step())
    assert set(first) == ({"loss_D", "loss_G"} if name == "gan" else {"loss"})
    for key, value in first.items():
        expected = UNTRAINED_LOSS_BY_WORKLOAD.get(name, UNTRAINED_LOSS[key])
        assert math.isfinite(value) and value == pytest.approx(expected, abs=0.1)
    assert host(workloads.build(name, "cpu", seed=3).step()) == first


@pytest.mark.parametrize("name", ["mlp-s", "cnn"])
def test_classifier_workload_learns_its_fixed_batch(name):
    run = workloads.build(name, "cpu")
    losses = [run.step()["loss"].item() for _ in range(4)]
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0] - 0.05


def test_gan_snapshot_holds_the_noise_of_the_first_step(monkeypatch):
    run = workloads.build("gan", "cpu")
    snapshot = run.snapshot()
    drawn = []
    randn = mt.randn
    monkeypatch.setattr(mt, "randn", lambda *a, **k: drawn.append(randn(*a, **k)) or drawn[-1])
    run.step()
    assert len(drawn) == 1  # gan_step draws its noise once a step
    np.testing.assert_array_equal(drawn[0].numpy(), snapshot.first_noise)


def test_unknown_workload_is_refused():
    with pytest.raises(ValueError, match="mlp-s"):
        workloads.build("resnet", "cpu")


def test_workload_batch_size_and_amp():
    """--batch-size sets the batch; --amp's step (the examples' autocast in bfloat16 on the CPU, with a
    GradScaler) starts from the float32 loss up to bfloat16's rounding."""
    fp32 = workloads.build("cnn", "cpu", seed=1, batch_size=8)
    amp = workloads.build("cnn", "cpu", seed=1, batch_size=8, amp=True)
    assert tuple(amp.batch[0].shape) == (8, 1, 28, 28) and tuple(amp.batch[1].shape) == (8,)
    np.testing.assert_array_equal(amp.batch[0].numpy(), fp32.batch[0].numpy())
    first, first_amp = fp32.step()["loss"].item(), amp.step()["loss"].item()
    assert first_amp != first and first_amp == pytest.approx(first, rel=compare.AMP_RTOL)
    assert all(p.dtype == mt.float32 for p in amp.modules["model"].parameters())  # master weights stay float32
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        workloads.build("mlp-s", "cpu", batch_size=0)


# --------------------------------------------------------------------------------------- PyTorch twins
@pytest.mark.torch
@pytest.mark.parametrize("name", workloads.WORKLOADS)
def test_torch_twin_agrees_with_minitensor_from_the_same_weights(name):
    pytest.importorskip("torch")
    ours = workloads.build(name, "cpu")
    twin = torch_workloads.build(ours.snapshot(), "cpu")
    steps = 1 if name == "gan" else 2  # later GAN steps draw fresh noise in each framework
    for _ in range(steps):
        mine, theirs = host(ours.step()), host(twin.step())
        assert compare.losses_disagree(mine, theirs, rtol=1e-4) is None, (mine, theirs)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["mlp-l", "cnn"])
def test_torch_amp_twin_agrees_with_minitensor_amp(name):
    """Both under mixed precision (bfloat16 on the CPU) from the same weights: the first two losses agree
    within AMP_RTOL, and differ from float32's (autocast is on)."""
    pytest.importorskip("torch")
    ours = workloads.build(name, "cpu", batch_size=16, amp=True)
    snapshot = ours.snapshot()
    twin, fp32 = torch_workloads.build(snapshot, "cpu", amp=True), torch_workloads.build(snapshot, "cpu")
    for i in range(2):
        mine, theirs, plain = host(ours.step()), host(twin.step()), host(fp32.step())
        assert compare.losses_disagree(mine, theirs, rtol=compare.AMP_RTOL) is None, (mine, theirs)
        if i == 0:
            assert theirs != plain


@pytest.mark.torch
def test_torch_gan_has_no_amp_twin():
    pytest.importorskip("torch")
    with pytest.raises(ValueError, match="the GAN has no AMP twin"):
        torch_workloads.build(workloads.build("gan", "cpu").snapshot(), "cpu", amp=True)


# ----------------------------------------------------------------------------------- compare's logic
def test_alternate_runs_the_frameworks_in_turn_and_keeps_rounds_apart():
    calls = []
    values = {"minitensor": iter([3.0, 1.0, 2.0]), "PyTorch": iter([10.0, 30.0, 20.0])}

    def chunk(name):
        return lambda: calls.append(name) or next(values[name])

    samples = compare.alternate({"minitensor": chunk("minitensor"), "PyTorch": chunk("PyTorch")}, repeats=3,
                                settle=0.0)
    assert calls == ["minitensor", "PyTorch"] * 3
    assert samples == {"minitensor": [3.0, 1.0, 2.0], "PyTorch": [10.0, 30.0, 20.0]}


def test_alternate_leaves_each_chunk_a_quiet_start(monkeypatch):
    events = []
    monkeypatch.setattr(compare.time, "sleep", lambda s: events.append(("sleep", s)))
    compare.alternate({"a": lambda: events.append("a") or 1.0, "b": lambda: events.append("b") or 2.0}, repeats=2)
    pause = ("sleep", compare.SETTLE_SECONDS)
    assert events == [pause, "a", pause, "b"] * 2 and compare.SETTLE_SECONDS > 0


def test_step_ab_runs_every_tree_with_every_environment(capsys):
    from benchmarks import step_ab
    args = step_ab.parse_args(["mlp-s", "--tree", ".", "--env", "A=1", "--env", "A=2"])
    labels = [label for label, _, _ in step_ab.variants(args)]
    assert len(labels) == 2 and labels[0].endswith("A=1") and labels[1].endswith("A=2")
    assert step_ab.main(["mlp-s", "--rounds", "1", "--chunks", "1", "--steps", "1", "--warmup", "1"]) == 0
    out = capsys.readouterr().out
    assert "mlp-s" in out and "x1.000" in out


def test_summarize_takes_medians_in_ms_and_their_ratio():
    summary = compare.summarize({"minitensor": [0.003, 0.001, 0.002, 0.100], "PyTorch": [0.004, 0.005, 0.006]})
    assert summary["minitensor_ms"] == pytest.approx(2.5)  # median of an even count: the mean of the middle two
    assert summary["pytorch_ms"] == pytest.approx(5.0)
    assert summary["ratio"] == pytest.approx(0.5)


def test_summarize_without_pytorch_has_no_ratio():
    summary = compare.summarize({"minitensor": [0.002]})
    assert summary == {"minitensor_ms": pytest.approx(2.0), "pytorch_ms": None, "ratio": None}


def test_seconds_per_step_times_between_two_synchronisations():
    events = []
    clock = itertools.count(start=100.0, step=5.0)  # each reading 5 s after the previous

    def tick():
        events.append("clock")
        return next(clock)

    per_step = compare_worker.seconds_per_step(lambda: events.append("step"), lambda: events.append("sync"), 4,
                                               clock=tick)
    assert events == ["sync", "clock"] + ["step"] * 4 + ["sync", "clock"]
    assert per_step == pytest.approx(5.0 / 4)


def test_auto_steps_fills_a_chunk():
    assert compare.auto_steps(0.001, target=0.25) == 250
    assert compare.auto_steps(0.3, target=0.25) == 3  # never fewer than 3
    assert compare.auto_steps(0.0) == 3


def test_losses_disagree_names_the_loss_beyond_the_tolerance():
    assert compare.losses_disagree({"loss": 1.0}, {"loss": 1.00005}, rtol=1e-4) is None
    message = compare.losses_disagree({"loss_D": 1.0, "loss_G": 2.0}, {"loss_D": 1.0, "loss_G": 2.1}, rtol=1e-4)
    assert "loss_G" in message and "loss_D" not in message


def test_variants_are_each_framework_in_float32_then_under_amp():
    assert compare.variants(True, False) == {"minitensor": ("minitensor", False), "PyTorch": ("PyTorch", False)}
    assert list(compare.variants(True, True).items()) == [
        ("minitensor", ("minitensor", False)), ("PyTorch", ("PyTorch", False)),
        ("minitensor AMP", ("minitensor", True)), ("PyTorch AMP", ("PyTorch", True))]
    assert compare.variants(False, True) == {"minitensor": ("minitensor", False),
                                             "minitensor AMP": ("minitensor", True)}


def test_amp_summary_gives_each_frameworks_speedup_and_the_amp_ratio():
    samples = {"minitensor": [0.004], "PyTorch": [0.006], "minitensor AMP": [0.002, 0.003, 0.001],
               "PyTorch AMP": [0.0025]}
    fp32 = compare.summarize({k: v for k, v in samples.items() if "AMP" not in k})
    amp = compare.amp_summary(samples, fp32)
    assert amp["minitensor_ms"] == pytest.approx(2.0) and amp["pytorch_ms"] == pytest.approx(2.5)
    assert amp["ratio"] == pytest.approx(0.8)
    assert amp["minitensor_speedup"] == pytest.approx(2.0) and amp["pytorch_speedup"] == pytest.approx(2.4)
    alone = compare.amp_summary({"minitensor": [0.004], "minitensor AMP": [0.005]}, {"minitensor_ms": 4.0,
                                                                                     "pytorch_ms": None})
    assert alone["minitensor_speedup"] == pytest.approx(0.8) and alone["pytorch_speedup"] is None
    assert alone["ratio"] is None


def test_first_losses_of_amp_are_held_to_the_amp_tolerance():
    close = {"minitensor": {"loss": 2.0}, "PyTorch": {"loss": 2.0001},
             "minitensor AMP": {"loss": 2.0}, "PyTorch AMP": {"loss": 2.0 * (1 + compare.AMP_RTOL / 2)}}
    assert compare.first_losses_mismatch(close, rtol=1e-4) is None
    far = {**close, "PyTorch AMP": {"loss": 2.0 * (1 + 2 * compare.AMP_RTOL)}}
    message = compare.first_losses_mismatch(far, rtol=1e-4)
    assert message.startswith(f"AMP beyond rtol {compare.AMP_RTOL:g}: loss: minitensor 2") and "float32" not in message
    assert "float32 beyond rtol 0.0001" in compare.first_losses_mismatch({**close, "PyTorch": {"loss": 2.1}}, 1e-4)
    assert compare.first_losses_mismatch({"minitensor": {"loss": 2.0}, "minitensor AMP": {"loss": 9.0}}, 1e-4) is None


# --------------------------------------------------------------------------------------------- Markdown
INFO = {"date": "2026-01-02 03:04 UTC", "device": "cpu", "cpu": "Some CPU", "cores": 2, "threads": 2,
        "loadavg_start": "0.10 0.20 0.30", "loadavg_end": "0.40 0.50 0.60", "minitensor": "0.1.0",
        "python": "3.11.7", "numpy": "2.4.6", "torch": "2.13.0", "OPENBLAS_CORETYPE": None,
        "cpu_info": {"cpu": "Some CPU", "blas": "openblas 0.3.31", "coretype": "SkylakeX", "threads": 2,
                     "best_coretype": "SkylakeX", "chosen_by": "openblas", "missed": None, "numba": "0.68.1"}}


def table_rows(text: str) -> list[list[str]]:
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def test_markdown_table_has_one_row_per_workload_with_ratios():
    rows = [
        {"workload": "mlp-s", "batch": 100, "minitensor_ms": 0.5, "pytorch_ms": 0.625, "ratio": 0.8,
         "minitensor_peak_mib": 2.0, "pytorch_peak_mib": 4.0},
        {"workload": "gan", "batch": 64, "error": "first losses disagree beyond rtol 0.0001 (loss_D: ...)"},
    ]
    text = compare.markdown(rows, INFO)
    header, separator, mlp_s, gan = table_rows(text)
    assert header[:5] == ["workload", "batch", "minitensor ms/step", "PyTorch ms/step", "minitensor / PyTorch"]
    assert len(header) == len(separator) == len(mlp_s) == len(gan) == 8
    assert all(re.fullmatch(r"-{3,}:?", cell) for cell in separator)
    assert mlp_s == ["MLP-S", "100", "0.50", "0.62", "0.80", "2.0", "4.0", "0.50"]
    assert gan == ["GAN", "64"] + ["-"] * 6
    assert "GAN: first losses disagree" in text  # the reason, under the table
    assert "load average (1, 5, 15 min) 0.10 0.20 0.30 at the start, 0.40 0.50 0.60 at the end" in text
    assert "PyTorch 2.13.0" in text and "threads: 2" in text
    assert "openblas 0.3.31, SkylakeX kernels chosen by openblas, Numba 0.68.1" in text
    assert "Slower BLAS kernels" not in text


def test_markdown_says_when_faster_blas_kernels_were_missed():
    info = {**INFO, "OPENBLAS_CORETYPE": "Haswell",
            "cpu_info": {**INFO["cpu_info"], "coretype": "Haswell", "chosen_by": "user",
                         "missed": "the CPU runs SkylakeX kernels, but OPENBLAS_CORETYPE=Haswell is set"}}
    text = compare.markdown([], info)
    assert "Haswell kernels chosen by user" in text
    assert "Slower BLAS kernels than this CPU allows: the CPU runs SkylakeX kernels, but" in text


def test_markdown_without_pytorch_leaves_its_columns_empty():
    info = {k: v for k, v in INFO.items() if k != "torch"}
    rows = [{"workload": "cnn", "batch": 64, "minitensor_ms": 12.345, "pytorch_ms": None, "ratio": None,
             "minitensor_peak_mib": 40.25, "pytorch_peak_mib": None}]
    (cnn,) = table_rows(compare.markdown(rows, info))[2:]
    assert cnn == ["CNN", "64", "12.35", "-", "-", "40.2", "-", "-"]


def test_command_line_refuses_bad_values(capsys):
    for argv in (["--workloads", "mlp-s,resnet"], ["--repeats", "0"], ["--threads", "0"], ["--rtol", "0"]):
        with pytest.raises(SystemExit):
            compare.parse_args(argv)
    assert "resnet" in capsys.readouterr().err
    if not mt.cuda.is_available():
        with pytest.raises(SystemExit):
            compare.parse_args(["--device", "cuda"])


def test_markdown_amp_table_puts_float32_and_amp_side_by_side():
    rows = [{"workload": "mlp-l", "batch": 256, "minitensor_ms": 3.0, "pytorch_ms": 4.0, "ratio": 0.75,
             "amp": {"minitensor_ms": 1.5, "pytorch_ms": 1.0, "ratio": 1.5, "minitensor_speedup": 2.0,
                     "pytorch_speedup": 4.0, "minitensor_peak_mib": 10.0, "pytorch_peak_mib": 8.0}},
            {"workload": "cnn", "batch": 256, "error": "first losses disagree (AMP beyond rtol 0.03: ...)"}]
    text = compare.markdown(rows, {**INFO, "device": "cuda", "gpu": "Some GPU"})
    _, _, mlp_l, cnn, amp_header, amp_separator, amp_mlp_l, amp_cnn = table_rows(text)
    assert amp_header[2:] == ["minitensor fp32 ms/step", "minitensor AMP ms/step", "minitensor AMP speedup",
                              "PyTorch fp32 ms/step", "PyTorch AMP ms/step", "PyTorch AMP speedup",
                              "minitensor AMP / PyTorch AMP", "minitensor AMP peak MiB", "PyTorch AMP peak MiB"]
    assert len(amp_separator) == len(amp_header) == len(amp_mlp_l) == len(amp_cnn) == 11
    assert amp_mlp_l == ["MLP-L", "256", "3.00", "1.50", "2.00", "4.00", "1.00", "4.00", "1.50", "10.0", "8.0"]
    assert amp_cnn == ["CNN", "256"] + ["-"] * 9
    assert "autocast in float16" in text and text.index("CNN: first losses disagree") > text.index("MLP-L | 256 | 3.00")
    float32_only = compare.markdown([{k: v for k, v in rows[0].items() if k != "amp"}], INFO)
    assert "Mixed precision" not in float32_only and "minitensor fp32 ms/step" not in float32_only


def test_command_line_amp_leaves_the_gan_out_and_checks_the_batch_size(capsys):
    assert compare.parse_args(["--amp"]).workloads == ("mlp-s", "mlp-l", "cnn", "transformer")
    assert compare.parse_args([]).workloads == workloads.WORKLOADS
    assert compare.parse_args(["--amp", "--workloads", "cnn", "--batch-size", "256"]).batch_size == 256
    for argv in (["--amp", "--workloads", "cnn,gan"], ["--batch-size", "0"]):
        with pytest.raises(SystemExit):
            compare.parse_args(argv)
    err = capsys.readouterr().err
    assert "--amp: the GAN has no PyTorch twin" in err and "--batch-size must be at least 1, got 0" in err


def test_end_to_end_amp_run_of_minitensor_alone(tmp_path, monkeypatch, capsys):
    """--amp without PyTorch (whether or not it is installed): two minitensor workers, float32 and AMP,
    alternated; the JSON's speedup is float32's median over AMP's, and the tables and the printout agree."""
    monkeypatch.setattr(compare.torch_workloads, "available", lambda device: False)
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    status = compare.main(["--amp", "--workloads", "mlp-s", "--batch-size", "8", "--repeats", "2", "--steps", "2",
                           "--warmup", "0", "--json", str(out_json), "--markdown", str(out_md)])
    assert status == 0
    report = json.loads(out_json.read_text())
    (row,) = report["results"]
    assert report["machine"]["amp"] is True and row["batch"] == 8 and row["pytorch_ms"] is None
    assert sorted(row["samples_ms"]) == ["minitensor", "minitensor AMP"]
    assert all(len(v) == 2 for v in row["samples_ms"].values())
    amp = row["amp"]
    assert amp["minitensor_ms"] == pytest.approx(np.median(row["samples_ms"]["minitensor AMP"]))
    assert amp["minitensor_speedup"] == pytest.approx(row["minitensor_ms"] / amp["minitensor_ms"])
    assert amp["pytorch_ms"] is None and amp["ratio"] is None and amp["pytorch_speedup"] is None
    first = row["first_losses"]
    assert first["minitensor AMP"]["loss"] == pytest.approx(first["minitensor"]["loss"], rel=compare.AMP_RTOL)
    assert amp["minitensor_peak_mib"] == row["memory"]["minitensor AMP"]["peak_mib"] > 0
    amp_row = table_rows(out_md.read_text())[-1]
    assert amp_row[:5] == ["MLP-S", "8", f"{row['minitensor_ms']:.2f}", f"{amp['minitensor_ms']:.2f}",
                           f"{amp['minitensor_speedup']:.2f}"] and amp_row[5:9] == ["-"] * 4
    assert f"AMP: minitensor {amp['minitensor_ms']:8.3f} ms/step" in capsys.readouterr().out


@pytest.mark.torch
def test_end_to_end_run_writes_consistent_json_and_markdown(tmp_path, capsys):
    """Two worker processes on MLP-S, two short rounds: the printed line, the JSON and the table agree."""
    pytest.importorskip("torch")
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    status = compare.main(["--workloads", "mlp-s", "--repeats", "2", "--steps", "2", "--warmup", "0",
                           "--threads", "1", "--json", str(out_json), "--markdown", str(out_md)])
    assert status == 0
    (row,) = json.loads(out_json.read_text())["results"]
    assert row["workload"] == "mlp-s" and row["steps"] == 2 and row["repeats"] == 2
    assert len(row["samples_ms"]["minitensor"]) == len(row["samples_ms"]["PyTorch"]) == 2
    assert row["ratio"] == pytest.approx(row["minitensor_ms"] / row["pytorch_ms"])
    assert compare.losses_disagree(*row["first_losses"].values(), rtol=1e-4) is None
    assert row["threads"]["minitensor"]["openblas"] == 1 and row["threads"]["PyTorch"]["torch"] == 1
    # Peak memory: at least the weights, gradients and Adam's two moments (4 float32 copies of the parameters).
    state_mib = 4 * 4 * PARAMETERS["mlp-s"]["model"] / 2 ** 20
    assert row["minitensor_peak_mib"] >= state_mib and row["pytorch_peak_mib"] >= state_mib
    (md_row,) = table_rows(out_md.read_text())[2:]
    assert md_row[2] == f"{row['minitensor_ms']:.2f}" and md_row[4] == f"{row['ratio']:.2f}"
    assert f"minitensor {row['minitensor_ms']:8.3f} ms/step" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------- asv suite
def asv_classes():
    for module in (bench_ops, bench_training, bench_checkpoint):
        for name in dir(module):
            cls = getattr(module, name)
            if isinstance(cls, type) and hasattr(cls, "params") and cls.__module__ == module.__name__:
                yield cls


def first_params(cls, device):
    """The first value of every parameter, with ``device`` for the device parameter."""
    return [device if name == "device" else values[0] for name, values in zip(cls.param_names, cls.params)]


def test_every_asv_benchmark_runs_on_both_devices():
    for cls in asv_classes():
        assert "device" in cls.param_names or cls is bench_training.GpuSpeedup, cls.__name__
        if "device" in cls.param_names:
            assert cls.params[cls.param_names.index("device")] == ["cpu", "cuda"], cls.__name__


@pytest.mark.skipif(mt.cuda.is_available(), reason="a GPU is present: the CUDA benchmarks run")
@pytest.mark.parametrize("cls", list(asv_classes()), ids=lambda c: c.__name__)
def test_cuda_benchmarks_skip_themselves_without_a_gpu(cls):
    params = first_params(cls, "cuda") if "device" in cls.param_names else first_params(cls, None)
    with pytest.raises(NotImplementedError):
        cls().setup(*params)


def slow_on_cpu(cls):
    """bench_checkpoint's steps train a 32-layer, 1024-wide MLP: seconds each on a loaded CPU."""
    return pytest.param(cls, marks=pytest.mark.slow) if cls.__module__ == bench_checkpoint.__name__ else cls


@pytest.mark.parametrize("cls", [slow_on_cpu(c) for c in asv_classes()], ids=lambda c: c.__name__)
def test_cpu_benchmarks_run(cls):
    """setup and every benchmark method once, at the first (smallest) parameters."""
    if "device" not in cls.param_names:
        pytest.skip("needs a GPU")
    params = first_params(cls, "cpu")
    bench = cls()
    bench.setup(*params)
    for name in dir(bench):
        if name.startswith(("time_", "track_")):
            result = getattr(bench, name)(*params)
            if name.startswith("track_"):
                assert math.isfinite(result) and result > 0


def test_cpu_peak_memory_counts_the_state_of_a_step():
    """MLP-S: at least weights, gradients and Adam's two moments (4 float32 copies of the parameters) and
    the batch; not more than a few times that."""
    floor = (4 * 4 * PARAMETERS["mlp-s"]["model"] + 4 * 100 * 784) / 2 ** 20
    peak = bench_training.PeakMemory().track_peak_memory("mlp-s", "cpu")
    assert floor <= peak <= 3 * floor


def test_plot_compare_draws_one_panel_per_report(tmp_path):
    pytest.importorskip("matplotlib")
    machine = {"device": "cpu", "threads": 2, "loadavg_start": "0.5 0.4 0.3", "date": "2026-11-22"}
    rows = [{"workload": w, "batch": 64, "minitensor_ms": m, "pytorch_ms": p, "ratio": m / p}
            for w, m, p in (("MLP-S", 0.5, 0.6), ("CNN", 20.0, 13.0))]
    report = {"machine": machine, "results": rows}
    path = tmp_path / "perf.png"
    assert plot_compare.main([*(str(_write(tmp_path / f"r{i}.json", report)) for i in range(2)),
                              "--out", str(path)]) == path
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(path.read_bytes()[16:20], "big"), int.from_bytes(path.read_bytes()[20:24], "big")
    assert (width, height) == (1000, 400)  # two 5x4-inch panels at 100 dpi
    assert plot_compare.panel_title(machine) == "cpu, 2 thread(s); load 0.5; 2026-11-22"


def _write(path: Path, obj: dict) -> Path:
    path.write_text(json.dumps(obj))
    return path


def test_peak_above_start_counts_what_the_call_allocates():
    def call():
        a = np.ones(2 ** 20)  # 8 MiB, freed before the call returns
        return float(a.sum())
    assert 8 * 2 ** 20 <= memory.peak_above_start(call) <= 9 * 2 ** 20


def test_checkpoint_benchmark_is_the_issues_mlp_and_meets_the_memory_target():
    """32 x (Linear 1024 -> 1024, ReLU), batch 256. The plain step keeps one ReLU output per layer (1 MiB
    each); checkpoint_sequential(segments=4) keeps 3 segment inputs and the last segment's 8 layers, and
    recomputes one segment at a time in backward: at most 0.4 x the plain peak (issue #16)."""
    step = bench_checkpoint.Step("cpu")
    linears = [m for m in step.model if isinstance(m, mt.nn.Linear)]
    assert len(linears) == 32 and all(tuple(m.weight.shape) == (1024, 1024) for m in linears)
    assert tuple(step.x.shape) == (256, 1024)
    act = 256 * 1024 * 4
    peaks = bench_checkpoint.activation_peaks("cpu")
    assert peaks["plain"] >= 32 * act
    assert 11 * act <= peaks["checkpoint"] <= 0.4 * peaks["plain"]


def test_step_gemms_lists_each_product_of_the_step_with_its_layout(capsys):
    """MLP-S (784-128-10, batch 100): per step the two forward products x W1^T and h W2^T, the weight
    gradients g2^T h and g1^T x, and the hidden layer's input gradient g2 W2 (the input's is not needed)."""
    from benchmarks import step_gemms
    step_gemms.main(["mlp-s", "--steps", "2", "--threads", "1"])
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.lstrip().startswith("(")]
    layouts = {" ".join(r[:8]): int(r[8]) for r in rows}
    assert layouts == {
        "(100, 784) (3136, 4) (784, 128) (4, 3136)": 1,  # x @ W1.T: W1 (128, 784) read transposed
        "(100, 128) (512, 4) (128, 10) (4, 512)": 1,  # h @ W2.T
        "(10, 100) (4, 40) (100, 128) (512, 4)": 1,  # g2.T @ h
        "(100, 10) (40, 4) (10, 128) (512, 4)": 1,  # g2 @ W2
        "(128, 100) (4, 512) (100, 784) (3136, 4)": 1,  # g1.T @ x
    }, layouts
    assert all(float(t) > 0 for r in rows for t in r[9:12])


def test_step_gemms_operands_keep_the_recorded_strides():
    from benchmarks import step_gemms
    a = step_gemms.operands((784, 256), (4, 3136), np.dtype(np.float32))
    assert a.shape == (784, 256) and a.strides == (4, 3136)
    b = step_gemms.operands((2, 3, 4), (48, 4, 12), np.dtype(np.float64))
    assert b.shape == (2, 3, 4) and b.strides == (96, 8, 24)


@pytest.mark.torch
def test_step_gemms_times_each_product_through_pytorch_too(capsys):
    pytest.importorskip("torch")
    from benchmarks import step_gemms
    step_gemms.main(["mlp-s", "--steps", "1", "--threads", "1", "--torch"])
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.lstrip().startswith("(")]
    assert "PyTorch" in out and len(rows) == 5 and all(len(r) == 13 and float(r[12]) > 0 for r in rows)


def test_step_ops_times_the_backend_calls_of_a_step_and_restores_the_backend(capsys):
    """MLP-S's step calls matmul five times (two forward products, two weight gradients, one input
    gradient) and Adam once per parameter (four); the backend's methods are its own again afterwards."""
    from benchmarks import step_ops
    from minitensor.backends.cpu.backend import NumpyBackend
    before = {name: getattr(NumpyBackend, name) for name in ("matmul", "adam_update", "relu")}
    step_ms, seconds, calls = step_ops.measure("mlp-s", 2, 1)
    assert calls["matmul"] == 10 and calls["adam_update"] == 8
    assert 0 < sum(seconds.values()) < step_ms * 2 / 1e3
    assert {name: getattr(NumpyBackend, name) for name in before} == before
    step_ops.main(["mlp-s", "--steps", "1", "--threads", "1", "--top", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("mlp-s:") and lines[2].split()[0] == "matmul" and len(lines) == 4
