"""benchmarks/gpu_check.sh without a GPU: the dry run writes the folder with every step marked not run, and
the plumbing (step selection, status files, resuming after a cut, the summary) works with the GPU commands
faked (GPU_CHECK_FAKE=1 echoes them instead of running them)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"
STEPS = ["env", "pytest-gpu", "examples-mlp", "examples-cnn", "examples-gan", "speedup", "compare", "amp", "profile",
         "distributed", "asv"]

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None,
                                reason="needs bash and coreutils' timeout")


def gpu_check(out: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), "--out", str(out), "--python", sys.executable, *args],
                          capture_output=True, text=True, check=False, timeout=120, env={**os.environ, **env})


def statuses(out: Path) -> dict[str, str]:
    return {p.stem: p.read_text().strip() for p in (out / "status").glob("*.txt")}


def test_dry_run_marks_every_step_not_run_and_why(tmp_path):
    done = gpu_check(tmp_path, "--dry-run", "--data-dir", "/data/mnist")
    assert done.returncode == 0, done.stderr
    found = statuses(tmp_path)
    assert sorted(found) == sorted(STEPS)
    assert all(s.startswith("not run: --dry-run") and "would run: " in s for s in found.values())
    assert "--data-dir /data/mnist" in found["examples-cnn"] and "--data-dir /data/mnist" in found["profile"]
    assert "--amp --workloads mlp-l,cnn --batch-size 256" in found["amp"]
    summary = (tmp_path / "summary.md").read_text()
    assert all(f"| {step} | not run: --dry-run" in summary for step in STEPS)


def test_selected_steps_run_and_a_second_run_resumes(tmp_path):
    first = gpu_check(tmp_path, "--steps", "env,examples-cnn", GPU_CHECK_FAKE="1")
    assert first.returncode == 0, first.stderr
    assert sorted(statuses(tmp_path)) == ["env", "examples-cnn"]
    assert all(s.startswith("done rc=0") for s in statuses(tmp_path).values())
    log = (tmp_path / "examples-cnn.log").read_text()
    assert "examples/cnn.py --device cuda --seed 0" in log and "examples/cnn.py --device cpu --seed 0" in log
    assert "| speedup | not run: not selected yet |" in (tmp_path / "summary.md").read_text()

    second = gpu_check(tmp_path, GPU_CHECK_FAKE="1")
    assert second.returncode == 0, second.stderr
    assert "== env: already done" in second.stdout and "== examples-cnn: already done" in second.stdout
    assert "== asv: asv run" in second.stdout
    assert sorted(statuses(tmp_path)) == sorted(STEPS)


def test_amp_profile_and_distributed_steps_run_their_commands(tmp_path):
    done = gpu_check(tmp_path, "--steps", "amp,profile,distributed", "--data-dir", "/data/mnist", GPU_CHECK_FAKE="1")
    assert done.returncode == 0, done.stderr
    assert sorted(statuses(tmp_path)) == ["amp", "distributed", "profile"]
    assert all(s.startswith("done rc=0") for s in statuses(tmp_path).values())
    py = sys.executable
    amp = (tmp_path / "amp.log").read_text()
    assert (f"[fake] {py} benchmarks/compare.py --device cuda --amp --workloads mlp-l,cnn --batch-size 256 "
            f"--json {tmp_path}/amp.json --markdown {tmp_path}/amp.md") in amp
    assert f"[fake] {py} examples/speedup.py --amp --steps 20 --warmup 3 --out {tmp_path}/speedup-amp" in amp
    profile = (tmp_path / "profile.log").read_text()
    for device, folder in (("cuda", "profile-cnn"), ("cpu", "profile-cnn-cpu")):
        assert (f"[fake] {py} examples/cnn.py --device {device} --seed 0 --dataset mnist-test-split --data-dir "
                f"/data/mnist --limit-steps 40 --profile 5 --no-progress --out {tmp_path}/{folder}") in profile
    distributed = (tmp_path / "distributed.log").read_text()
    assert f"[fake] {py} -m pytest -m gpu tests/distributed " in distributed
    assert f"--junitxml {tmp_path}/distributed-gpu.xml" in distributed
    assert f'[fake] {py} -m pytest tests/distributed -m not gpu ' in distributed  # the MPI tests (faked: always)
    mpiexec = Path(py).parent / "mpiexec"
    assert (f"[fake] env MINITENSOR_CUDA_AWARE_MPI=1 OMP_NUM_THREADS=1 timeout 120 {mpiexec} -n 2 {py} "
            "tests/distributed/worker_cuda_aware.py") in distributed


def test_summary_points_at_the_amp_profile_and_distributed_outputs(tmp_path):
    (tmp_path / "amp.md").write_text("| workload | batch |\n| MLP-L | 256 |\n")
    for folder in ("profile-cnn", "profile-cnn-cpu"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "profile.txt").write_text("Self CUDA time total: 1ms\n")
    (tmp_path / "distributed.log").write_text(
        "available: backend 'nccl' (CuPy's NCCL)\nsome pytest noise\n"
        "not tested: the MPI tests and the CUDA-aware transfer (no mpiexec at /x/mpiexec)\n")
    (tmp_path / "distributed-gpu.xml").write_text('<testsuite tests="2" failures="0" errors="0" skipped="0" '
                                                  'time="1.5"><testcase classname="t" name="a"/></testsuite>')
    done = gpu_check(tmp_path, "--steps", "env", GPU_CHECK_FAKE="1")
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "summary.md").read_text()
    assert "## amp: float32 beside AMP, batch 256 (issue #15)" in summary and "| MLP-L | 256 |" in summary
    assert "- profile-cnn: `profile-cnn/profile.txt`" in summary and "- profile-cnn-cpu: `profile-cnn-cpu/" in summary
    distributed = summary[summary.index("## distributed (issue #17)"):]
    assert "- available: backend 'nccl' (CuPy's NCCL)" in distributed and "noise" not in distributed
    assert "- not tested: the MPI tests and the CUDA-aware transfer (no mpiexec at /x/mpiexec)" in distributed
    assert "`distributed-gpu.xml`: tests 2, failures 0, errors 0, skipped 0" in distributed


def test_a_step_cut_by_its_timeout_runs_again(tmp_path):
    cut = gpu_check(tmp_path, "--steps", "compare", "--step-timeout", "1", GPU_CHECK_FAKE="1",
                    GPU_CHECK_FAKE_SECONDS="30")
    assert cut.returncode == 0, cut.stderr
    assert statuses(tmp_path)["compare"].startswith("cut: timed out")
    again = gpu_check(tmp_path, "--steps", "compare", GPU_CHECK_FAKE="1")
    assert "== compare: " in again.stdout and statuses(tmp_path)["compare"].startswith("done rc=0")


def test_unknown_step_is_refused(tmp_path):
    done = gpu_check(tmp_path, "--steps", "env,nope", "--dry-run")
    assert done.returncode == 2 and "unknown step 'nope'" in done.stderr


def test_summary_reads_the_junit_xml_and_puts_the_loss_curves_side_by_side(tmp_path):
    for device, loss in (("cuda", 0.5), ("cpu", 0.625)):
        run = tmp_path / "examples" / f"mlp-{device}"
        run.mkdir(parents=True)
        (run / "metrics.json").write_text(json.dumps({"epochs": [{"epoch": 1, "step": 80, "loss": loss}]}))
    (tmp_path / "pytest-gpu.xml").write_text(
        '<testsuites><testsuite tests="3" failures="1" errors="0" skipped="1" time="2.5">'
        '<testcase classname="tests.test_x" name="test_a"><failure message="boom"/></testcase>'
        '<testcase classname="tests.test_x" name="test_b"/></testsuite></testsuites>')
    done = gpu_check(tmp_path, "--steps", "env", GPU_CHECK_FAKE="1")
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "summary.md").read_text()
    assert "| 1 | 80 | 0.5 | 0.625 |" in summary
    assert "tests 3, failures 1, errors 0, skipped 1" in summary
    assert "- FAILED tests.test_x::test_a" in summary
