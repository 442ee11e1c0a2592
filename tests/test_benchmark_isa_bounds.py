"""Issue #28's measuring side: the language-model workloads' shapes, compare.py --isa (the workers'
environment, the probe of the kernels that ran, the refusal of a run whose kernels differ) and the bounds
(FLOPs checked against PyTorch's FlopCounterMode, parameters against the models, the target's arithmetic)."""
from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import bounds, compare, compare_worker, isa, lm_workloads, torch_workloads, workloads  # noqa: E402


# ------------------------------------------------------------------------------------- the new workloads
def test_gpt_workload_is_nanogpt_scaled_down():
    run = workloads.build("gpt", "cpu")
    model = run.modules["model"]
    d, vocab, block = 128, 65, 64
    layer = 2 * d + 3 * d * d + d * d + 2 * d * 4 * d  # two bias-free LayerNorms, attention, MLP; no biases
    assert sum(p.numel() for p in model.parameters()) == vocab * d + block * d + 4 * layer + d
    assert model.lm_head.weight is model.wte.weight  # tied
    assert len(model.h) == 4 and model.h[0].attn.n_head == 4
    x, y = run.batch
    assert tuple(x.shape) == (12, 64) and tuple(y.shape) == (12 * 64,)
    assert (x.numpy()[:, 1:] == y.numpy().reshape(12, 64)[:, :-1]).all()  # next characters


def test_gpt_optimizer_decays_only_the_matrices():
    model = lm_workloads.GPTLM(lm_workloads.VOCAB, **lm_workloads.GPT)
    decay, no_decay = lm_workloads.gpt_param_groups(model, 0.1)
    assert all(p.dim() == 2 for p in decay["params"]) and all(p.dim() == 1 for p in no_decay["params"])
    assert (decay["weight_decay"], no_decay["weight_decay"]) == (0.1, 0.0)
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))


def test_lstm_workload_shapes():
    run = workloads.build("lstm", "cpu")
    model = run.modules["model"]
    h, e = 256, 128
    lstm = 4 * h * (e + h + 2) + 4 * h * (h + h + 2)
    assert sum(p.numel() for p in model.parameters()) == 65 * e + lstm + h * 65 + 65
    x, y = run.batch
    assert tuple(x.shape) == (64, 16) and tuple(y.shape) == (64 * 16,)


# ------------------------------------------------------------------------------------------------ --isa
def test_isa_environments():
    avx2 = isa.environment("avx2")
    assert avx2["OPENBLAS_CORETYPE"] == "Haswell" and avx2["NUMBA_CPU_NAME"] == "haswell"
    assert avx2["NUMBA_CPU_FEATURES"] == "-avx512f"  # the name alone keeps the host's AVX-512 features
    assert avx2["ATEN_CPU_CAPABILITY"] == "avx2" and avx2["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert avx2["OPENBLAS_L2_SIZE"] is None  # removed, as for native
    native = isa.environment("native")
    assert set(native) == set(avx2) and all(v is None for v in native.values())
    assert isa.environment(None) == {}
    with pytest.raises(ValueError, match="avx2, native"):
        isa.environment("sse2")


def test_scoped_environ_sets_removes_and_restores(monkeypatch):
    monkeypatch.setenv("MT_TEST_A", "1")
    monkeypatch.delenv("MT_TEST_B", raising=False)
    with isa.scoped_environ({"MT_TEST_A": None, "MT_TEST_B": "2"}):
        assert "MT_TEST_A" not in os.environ and os.environ["MT_TEST_B"] == "2"
    assert os.environ["MT_TEST_A"] == "1" and "MT_TEST_B" not in os.environ


def test_host_has_avx512_reads_the_flag():
    assert isa.host_has_avx512("flags\t: fpu avx2 avx512f avx512dq\n")
    assert not isa.host_has_avx512("flags\t: fpu avx2 fma\n")


AVX2_FOUND = {"openblas": "Haswell", "numba_cpu": "haswell", "numba_zmm": False, "aten": "AVX2",
              "onednn": "Intel AVX2", "mkl": "oneMKL 2024.0 ... Intel(R) Architecture processors, Lnx"}
AVX512_FOUND = {"openblas": "SkylakeX", "numba_cpu": "znver5", "numba_zmm": True, "aten": "AVX512",
                "onednn": "Intel AVX-512 with Intel DL Boost and bfloat16 support", "mkl": AVX2_FOUND["mkl"]}


def test_mismatch_accepts_the_isa_asked_for_and_names_what_differs():
    assert isa.mismatch("avx2", AVX2_FOUND, avx512_cpu=True) is None
    assert isa.mismatch("native", AVX512_FOUND, avx512_cpu=True) is None
    assert isa.mismatch("native", AVX2_FOUND, avx512_cpu=False) is None  # an AVX2 machine's native is AVX2
    bad = isa.mismatch("avx2", {**AVX2_FOUND, "numba_zmm": True, "aten": "AVX512"}, avx512_cpu=True)
    assert bad is not None and "Numba's loops is avx512" in bad and "ATen capability is avx512" in bad
    assert "OpenBLAS" not in bad
    assert "OpenBLAS core type is avx2" in isa.mismatch("native", {**AVX512_FOUND, "openblas": "Haswell"}, True)
    # an MKL banner that names AVX-512 counts; one that names no ISA (AMD CPUs) does not
    assert "MKL is avx512" in isa.mismatch("avx2", {**AVX2_FOUND, "mkl": "oneMKL ... Intel(R) AVX-512 ..."}, True)
    # minitensor's workers have no PyTorch keys; a missing Numba is not checked
    assert isa.mismatch("avx2", {"openblas": "Haswell", "numba_cpu": None, "numba_zmm": None}, True) is None


def test_level_reads_the_libraries_names():
    assert [isa.level(n) for n in ("SkylakeX", "Cooperlake", "Haswell", "Zen", "AVX512", "Intel AVX2", None)] \
        == ["avx512", "avx512", "avx2", "avx2", "avx512", "avx2", None]


def test_avx2_worker_runs_haswell_kernels_without_avx512_registers():
    """A real worker started under --isa avx2's environment: its OpenBLAS and Numba run AVX2 code."""
    worker = compare_worker.Worker(compare_worker.MINITENSOR, "mlp-s", "cpu", 0, 1, None, False, 4,
                                   env=isa.environment("avx2"))
    try:
        found = worker.call("kernels")
    finally:
        worker.close()
    assert found["openblas"] == "Haswell"
    assert found["numba_zmm"] in (False, None)  # None: Numba is not installed here
    assert isa.mismatch("avx2", found, isa.host_has_avx512()) is None


@pytest.mark.torch
def test_avx2_pytorch_worker_runs_avx2_aten_and_onednn():
    pytest.importorskip("torch")
    snapshot = workloads.build("mlp-s", "cpu", batch_size=4).snapshot()
    worker = compare_worker.Worker(compare_worker.PYTORCH, "mlp-s", "cpu", 0, 1, snapshot, False, 4,
                                   env=isa.environment("avx2"))
    try:
        found = worker.call("kernels")
    finally:
        worker.close()
    assert found["aten"] == "AVX2" and "AVX2" in found["onednn"] and found["mkl"].startswith("oneMKL")
    assert isa.mismatch("avx2", found, isa.host_has_avx512()) is None


def test_compare_refuses_to_time_a_workload_whose_kernels_differ(tmp_path, monkeypatch, capsys):
    """--isa native on an (assumed) AVX-512 CPU whose workers were given avx2's environment: not timed."""
    monkeypatch.setattr(compare.torch_workloads, "available", lambda device: False)
    monkeypatch.setattr(isa, "host_has_avx512", lambda: True)
    avx2 = isa.environment("avx2")
    monkeypatch.setattr(isa, "environment", lambda name: avx2)
    out = tmp_path / "r.json"
    status = compare.main(["--isa", "native", "--workloads", "mlp-s", "--batch-size", "4", "--repeats", "1",
                           "--steps", "1", "--warmup", "0", "--no-memory", "--json", str(out)])
    assert status == 1
    (row,) = json.loads(out.read_text())["results"]
    assert "not the ones asked for" in row["error"] and "OpenBLAS core type is avx2" in row["error"]
    assert "minitensor_ms" not in row and row["kernels"]["minitensor"]["openblas"] == "Haswell"
    assert "was not timed" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------ bounds
def test_count_of_mlp_s_by_hand():
    step = bounds.count("mlp-s", 100)
    assert step.flops == 2 * 100 * 784 * 128 * 2 + 2 * 100 * 128 * 10 * 3  # no input gradient for the images
    params = 784 * 128 + 128 + 128 * 10 + 10
    assert step.parameters == params
    assert step.bytes == 4 * (bounds.ELEMENTWISE_PASSES * 100 * 128 + bounds.OPTIMIZER_PASSES * params)


@pytest.mark.parametrize("name", workloads.WORKLOADS)
def test_count_updates_every_parameter_of_the_model(name):
    run = workloads.build(name, "cpu", batch_size=2)
    assert bounds.count(name, 2).parameters == sum(p.numel() for m in run.modules.values() for p in m.parameters())


@pytest.mark.torch
@pytest.mark.parametrize("name", ["mlp-l", "cnn", "gan", "transformer", "gpt"])
def test_gemm_flops_agree_with_pytorchs_flop_counter(name):
    """PyTorch counts each matrix product of the twin's step (forward and backward) but not its CPU attention
    kernel: ours is its count plus attention's six T×T products per layer (12·B·h·T²·dₕ)."""
    pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode
    batch = 4
    twin = torch_workloads.build(workloads.build(name, "cpu", batch_size=batch).snapshot(), "cpu")
    with FlopCounterMode(display=False) as counter:
        twin.step()
    shapes = {"transformer": (workloads.TRANSFORMER["nhead"], workloads.SEQ_LEN, 64, 2),
              "gpt": (4, 64, 32, 4)}
    heads, seq, head_dim, layers = shapes.get(name, (0, 0, 0, 0))
    attention = 12 * batch * heads * seq ** 2 * head_dim * layers
    assert bounds.count(name, batch).flops == counter.get_total_flops() + attention


def test_lstm_flops_by_hand():
    rows, h = 64 * 16, 256
    gates = 2 * rows * 4 * h * (128 + h) * 3 + 2 * rows * 4 * h * (h + h) * 3
    assert bounds.count("lstm", 16).flops == gates + 2 * rows * h * 65 * 3


def test_bound_and_target():
    rates = {"sgemm_gflops": 100.0, "memcpy_gbps": 10.0}
    step = bounds.count("cnn", 64)
    b = bounds.bound("cnn", 64, rates, {"minitensor_ms": 50.0, "pytorch_ms": 20.0})
    expected = 1e3 * (step.flops / 100e9 + step.bytes / 10e9)
    assert b["bound_ms"] == pytest.approx(expected)
    assert b["target_ms"] == pytest.approx(max(2 * expected, 12.0))  # the CNN: 2 x its bound
    assert b["minitensor_over_bound"] == pytest.approx(50.0 / expected)
    assert b["meets_target"] == (50.0 <= b["target_ms"])
    slow_torch = bounds.bound("mlp-s", 100, rates, {"minitensor_ms": 1.0, "pytorch_ms": 100.0})
    assert slow_torch["target_ms"] == pytest.approx(60.0) and slow_torch["meets_target"] is True
    alone = bounds.bound("mlp-s", 100, rates)
    assert alone["target_ms"] == pytest.approx(1.15 * alone["bound_ms"]) and alone["meets_target"] is None


def test_combine_takes_the_median_of_all_samples():
    first = {"sgemm_gflops_samples": [1.0, 5.0], "memcpy_gbps_samples": [2.0], "threads": 2, "openblas": "Haswell"}
    last = {"sgemm_gflops_samples": [3.0], "memcpy_gbps_samples": [4.0, 9.0], "threads": 2, "openblas": "Haswell"}
    rates = bounds.combine(first, last)
    assert rates["sgemm_gflops"] == 3.0 and rates["memcpy_gbps"] == 4.0 and rates["openblas"] == "Haswell"
    assert rates["sgemm_gflops_samples"] == [1.0, 5.0, 3.0]


def test_rates_are_measured_under_the_isa_environment():
    rates = bounds.measure_rates(1, isa.environment("avx2"))
    assert rates["openblas"] == "Haswell" and rates["threads"] == 1
    assert len(rates["sgemm_gflops_samples"]) == bounds.RATE_REPEATS
    assert all(math.isfinite(x) and x > 0 for x in rates["sgemm_gflops_samples"] + rates["memcpy_gbps_samples"])


def test_bound_markdown_has_a_row_per_workload():
    info = {"rates": {"sgemm_gflops": 100.0, "memcpy_gbps": 10.0, "threads": 2, "blas": "openblas",
                      "openblas": "Haswell"}}
    rows = [{"workload": "gpt", "batch": 12, "minitensor_ms": 30.0, "pytorch_ms": 40.0, "ratio": 0.75},
            {"workload": "cnn", "batch": 64, "error": "..."}]
    rows[0]["bound"] = bounds.bound("gpt", 12, info["rates"], rows[0])
    lines = [line for line in bounds.markdown(rows, info).splitlines() if line.startswith("|")]
    gpt = [c.strip() for c in lines[2].strip("|").split("|")]
    assert gpt[0] == "gpt" and gpt[6] == "0.75" and gpt[-1] in ("yes", "no")
    assert len(gpt) == len(lines[0].strip("|").split("|")) == 11
    assert lines[3].count("| -") == 10
    assert "100.0 GFLOP/s" in bounds.markdown(rows, info)


def test_plot_bounds_draws_one_panel_per_report(tmp_path):
    pytest.importorskip("matplotlib")
    from benchmarks import plot_bounds
    rates = {"sgemm_gflops": 100.0, "memcpy_gbps": 10.0, "openblas": "Haswell"}
    machine = {"isa": "avx2", "threads": 2, "loadavg_start": "0.5 0.4 0.3", "rates": rates}
    rows = [{"workload": "gpt", "batch": 12, "minitensor_ms": 30.0, "pytorch_ms": 40.0, "ratio": 0.75},
            {"workload": "cnn", "batch": 64, "error": "not timed"}]
    rows[0]["bound"] = bounds.bound("gpt", 12, rates, rows[0])
    paths = []
    for i in range(2):
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(json.dumps({"machine": machine, "results": rows}))
    out = plot_bounds.main([*map(str, paths), "--out", str(tmp_path / "b.png")])
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (1200, 450)
    assert plot_bounds.panel_title(machine).startswith("--isa avx2, 2 threads; sgemm 100 GFLOP/s (Haswell)")
