"""benchmarks/gpu_check.sh --quick without a GPU: the plan fits the lease (steps, budgets, files), a step that
hangs is cut and the rest still runs, the smoke script reports instead of crashing, the summary reads what
the steps leave (even a pytest killed before its JUnit XML), and the committed CPU losses are what the
examples produce."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import minitensor as mt

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / "benchmarks" / "gpu_quick.sh"
STEPS = ["env", "smoke", "examples", "pytest", "compare", "summary"]
sys.path.insert(0, str(ROOT / "benchmarks"))
import gpu_examples  # noqa: E402
import gpu_smoke  # noqa: E402
import gpu_summary  # noqa: E402

needs_bash = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None,
                                reason="needs bash and coreutils' timeout")


def quick(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), "--quick", *args],
                          capture_output=True, text=True, check=False, timeout=timeout)


def plan(stdout: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+) s ", stdout, re.M)}


# ------------------------------------------------------------------------------------------- the plan
@needs_bash
def test_dry_run_lists_the_steps_in_budget_and_at_most_seven_files(tmp_path):
    done = quick("--dry-run", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    budgets = plan(done.stdout)
    assert list(budgets) == [*STEPS, "margin", "total"]
    assert budgets["total"] == sum(budgets[s] for s in STEPS) + budgets["margin"] <= 480
    assert budgets["margin"] >= 20
    files = re.search(r"^files: (.*) \((\d+), directly under", done.stdout, re.M)
    names = files.group(1).split()
    assert len(names) == int(files.group(2)) <= 7 and all("/" not in n for n in names)
    assert {"summary.md", "junit.xml", "smoke.txt", "examples.json"} <= set(names)
    assert not (tmp_path / "out").exists()  # a dry run writes nothing


@needs_bash
def test_only_keeps_the_step_order_and_the_summary_and_budget_changes_a_limit():
    done = quick("--dry-run", "--only", "pytest,smoke", "--budget", "pytest=300")
    budgets = plan(done.stdout)
    assert list(budgets) == ["smoke", "pytest", "summary", "margin", "total"] and budgets["pytest"] == 300
    assert "timeout_s 480" in done.stdout  # the total (75 + 300 + 10 + 35) and a minute for the machine
    for bad, message in ((("--only", "env,nope"), "unknown step 'nope'"), (("--budget", "pytest=3"), "grace"),
                         (("--budget", "nope=30"), "STEP=SECONDS")):
        refused = quick("--dry-run", *bad)
        assert refused.returncode == 2 and message in refused.stderr


@needs_bash
@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_the_scripts_are_shellcheck_clean():
    done = subprocess.run(["shellcheck", str(QUICK), str(ROOT / "benchmarks" / "gpu_check.sh")],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stdout


@needs_bash
def test_a_hanging_step_is_cut_and_the_others_still_run(tmp_path):
    """A fake interpreter: the smoke script hangs, the others fail at once, the summary is the real one."""
    fake = tmp_path / "python"
    fake.write_text(f"#!/usr/bin/env bash\ncase \"$1\" in\n  benchmarks/gpu_smoke.py) sleep 60 ;;\n"
                    f"  benchmarks/gpu_summary.py) exec {sys.executable} \"$@\" ;;\n  *) echo \"fake $*\"; exit 3 ;;\n"
                    "esac\n")
    fake.chmod(0o755)
    out = tmp_path / "out"
    done = quick("--out", str(out), "--python", str(fake), "--only", "smoke,examples,compare",
                 "--budget", "smoke=12", timeout=90)
    assert done.returncode == 1, done.stderr
    summary = (out / "summary.md").read_text()
    cut = re.search(r"\| smoke \| 12 \| (\d+) \| 124 \| cut at its limit \|", summary)
    assert cut and 4 <= int(cut.group(1)) <= 13, summary  # SIGINT at the limit less the 8 s grace
    assert "| examples | 90 | " in summary and "| 3 | exit 3 |" in summary
    assert "fake benchmarks/compare.py --device cuda --workloads mlp-s,cnn" in (out / "compare.txt").read_text()
    assert "smoke.txt has no check lines" in summary and "fake benchmarks/gpu_examples.py" in summary


# ---------------------------------------------------------------------------------------------- smoke
@pytest.mark.skipif(mt.cuda.is_available(), reason="checks the report of a machine without a GPU")
def test_smoke_without_a_gpu_reports_fail_and_skip_lines_and_exits_1():
    env = {k: v for k, v in os.environ.items() if k != "CUDA_HOME"}
    done = subprocess.run([sys.executable, "benchmarks/gpu_smoke.py"], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=120, env={**env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    checks = dict(re.match(r"^(PASS|FAIL|SKIP) ([^:]+): .* \(\d+\.\d\d s\)$", line).group(2, 1) for line in lines[:-1])
    assert checks["gpu"] == "FAIL" and checks["versions"] == "PASS" and checks["environment"] == "PASS"
    gated = ["round trip", "rawkernel launch", "numba update", "fp16 gemm", "torch cuda", "nccl"]
    assert all(checks[name] == "SKIP" for name in gated) and sum(n.startswith("rawkernels ") for n in checks) == 6
    assert re.fullmatch(r"smoke: \d+ PASS, [1-9]\d* FAIL, \d+ SKIP", lines[-1])
    assert "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0" in done.stdout
    if Path("/usr/local/cuda").is_dir():
        assert "CUDA_HOME=/usr/local/cuda," in done.stdout


def test_smoke_gpu_checks_refuse_a_cpu_stand_in(lend_backend):
    """Run on a cuda device lent the CPU's backend, the round trip passes, and the kernel checks fail: they
    ask that the RawKernel and the Numba kernel ran on the device, not only that the numbers agree."""
    lend_backend(mt.device("cuda"), mt.device("cpu").backend)
    assert gpu_smoke.run(gpu_smoke.round_trip)[0] == "PASS"
    for check in (gpu_smoke.rawkernel_launch, gpu_smoke.numba_update):
        status, detail = gpu_smoke.run(check)
        assert status == "FAIL" and "did not run" in detail, detail
    assert gpu_smoke.run(gpu_smoke.fp16_gemm)[0] == "FAIL"


# -------------------------------------------------------------------------------------------- summary
def test_summary_counts_from_pytest_log_when_junit_is_missing(tmp_path):
    (tmp_path / "smoke.txt").write_text("PASS gpu: NVIDIA H200, compute capability 90 (0.10 s)\n"
                                        "FAIL numba update: AssertionError: boom (1.00 s)\nsmoke: 1 PASS, 1 FAIL\n")
    (tmp_path / "pytest.log").write_text(
        "[gw0] [ 10%] PASSED tests/a.py::test_x[cuda]\n[gw1] [ 20%] FAILED tests/a.py::test_y[cuda]\n"
        "[gw0] [ 30%] SKIPPED tests/b.py::test_z[cuda]\nFAILED tests/a.py::test_y[cuda] - assert 1 == 2\n"
        "!!!!!!!! KeyboardInterrupt !!!!!!!!\n")
    (tmp_path / "compare.txt").write_text("device cuda\n| workload | minitensor ms |\n| MLP-S | 0.5 |\n")
    status = tmp_path / "status.tsv"
    status.write_text("smoke\t75\t12\t1\texit 1\npytest\t200\t200\t124\tcut at its limit\n")
    log = tmp_path / "examples.log"
    log.write_text("PASS mlp on cuda (mnist-test-split, 200 steps, 9.1 s): max rel diff 1.00e-04 at step 150\n")
    assert gpu_summary.main([str(tmp_path), str(status), str(log)]) == 0
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("# GPU check, quick: NVIDIA H200, ")
    assert "| pytest | 200 | 200 | 124 | cut at its limit |" in summary
    assert "1 PASS, 1 FAIL, 0 SKIP; not PASS:" in summary and "- FAIL numba update: AssertionError" in summary
    assert "From pytest.log's per-test lines (junit.xml absent or unreadable): failed 1, passed 1, skipped 1" in summary
    assert "- FAILED tests/a.py::test_y[cuda] FAILED" in summary and "printed no final line" in summary
    assert "- PASS mlp on cuda (mnist-test-split" in summary and "| MLP-S | 0.5 |" in summary


def test_summary_prefers_the_junit_xml(tmp_path):
    (tmp_path / "junit.xml").write_text(
        '<testsuites><testsuite><testcase classname="tests.a" name="t1"/><testcase classname="tests.a" name="t2">'
        '<failure message="assert 0.5 == 0.25&#10;more">x</failure></testcase>'
        '<testcase classname="tests.b" name="t3"><skipped/></testcase></testsuite></testsuites>')
    (tmp_path / "pytest.log").write_text("=== 1 failed, 1 passed, 1 skipped in 3.0s ===\n")
    gpu_summary.main([str(tmp_path), str(tmp_path / "none.tsv")])
    summary = (tmp_path / "summary.md").read_text()
    assert "From junit.xml: failed 1, passed 1, skipped 1" in summary
    assert "- FAILED tests.a::t2: assert 0.5 == 0.25" in summary and "more" not in summary
    assert "pytest's last word: `1 failed, 1 passed, 1 skipped in 3.0s`" in summary
    assert "# GPU check, quick: no GPU found" in summary and "no table" in summary


# ------------------------------------------------------------------------------------- the CPU losses
def test_comparison_holds_the_first_step_tightly_and_the_curve_loosely():
    ref = [2.0, 1.5, 1.0]
    assert gpu_examples.compare([2.0, 1.5 * 1.01, 1.0 * 0.97], ref)["verdict"] == "PASS"
    first = gpu_examples.compare([2.0 * (1 + 1e-3), 1.5, 1.0], ref)
    assert first["verdict"] == "FAIL" and first["first_rel_diff"] == pytest.approx(1e-3)
    drifted = gpu_examples.compare([2.0, 1.5, 1.2], ref)
    assert drifted["verdict"] == "FAIL" and drifted["max_at_step"] == 3
    assert gpu_examples.compare([2.0, 1.5], ref)["verdict"] == "FAIL"


@pytest.mark.parametrize("dataset", ["mnist-test-split", "digits"])
def test_the_committed_cpu_losses_are_what_the_examples_give(dataset, tmp_path):
    """The examples on the CPU, with the committed seed and steps, reproduce the reference curve: its
    first loss to the last bits, the rest within the comparison's tolerance (another CPU's BLAS may sum in
    another order)."""
    mnist = ROOT.parent / "shared" / "data" / "mnist"
    if dataset == "digits":
        pytest.importorskip("sklearn", reason="the digits need scikit-learn")
    elif not any(mnist.glob("t10k-images-idx3-ubyte*")):
        pytest.skip(f"no MNIST test split at {mnist}")
    data = ["--dataset", dataset] + (["--data-dir", str(mnist)] if dataset != "digits" else [])
    out = tmp_path / "examples.json"
    done = subprocess.run([sys.executable, "benchmarks/gpu_examples.py", "--device", "cpu", *data, "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, check=False, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    runs = json.loads(out.read_text())["runs"]
    assert [r["example"] for r in runs] == ["mlp", "cnn"]
    for r in runs:
        assert r["dataset"] == dataset and len(r["losses"]) == gpu_examples.STEPS[r["example"]]
        assert r["comparison"]["first_rel_diff"] <= 1e-6 and r["comparison"]["verdict"] == "PASS"
