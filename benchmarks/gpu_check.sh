#!/usr/bin/env bash
# Everything a GPU at hand should be used for, in order of value, into one folder docs/perf/<date>-<gpu>/:
#
#   env            nvidia-smi, the driver, CUDA, CuPy, Numba, numba-cuda, PyTorch, NumPy versions
#   pytest-gpu     python -m pytest -m gpu: every GPU case, JUnit XML
#   examples-mlp   each example on cuda and on cpu from the same seed, a few hundred steps on the MNIST
#   examples-cnn     test split: their loss per epoch side by side (summary.md) and their metrics.json
#   examples-gan
#   speedup        examples/speedup.py --sweep-batch: the three models on cpu and cuda, and the crossover
#   compare        benchmarks/compare.py --device cuda: the training-step workloads beside PyTorch eager
#                  when it imports
#   amp            issue #15: compare.py --amp at batch 256 on MLP-L and the CNN (float32 and AMP of both
#                  frameworks side by side, amp.md), and examples/speedup.py --amp
#   profile        issue #16: examples/cnn.py --profile 5 on cuda (profile-cnn/: profile.txt with device
#                  times, trace.json, profile.png) and on cpu (profile-cnn-cpu/) for comparison
#   distributed    issue #17: what is there (CuPy's NCCL, mpi4py, mpiexec), pytest -m gpu tests/distributed
#                  (NCCL at world size 1), the MPI tests and a CUDA-aware MPI transfer check where mpiexec
#                  is there; each thing that could not be tested says so ("not tested: ...") in its log
#   asv            the asv suite (--quick, this Python), its cuda benchmarks among the rest
#
# --quick runs benchmarks/gpu_quick.sh instead: an 8-minute check for a short lease, into at most 7 files
# (bash benchmarks/gpu_check.sh --quick --help). What follows is the full mode, for a longer lease.
#
# Usage: bash benchmarks/gpu_check.sh [--steps a,b] [--out DIR] [--data-dir DIR] [--python PY]
#                                     [--wheels DIR] [--step-timeout S] [--redo] [--dry-run]
#
# Each step runs under `timeout` (--step-timeout, 540 s by default, so that one step fits a 10-minute
# call) and writes status/<step>.txt. A step that finished is skipped by the next run into the same folder
# (--redo runs it again), so a run cut short resumes where it stopped: call it again with the same --out
# (or on the same day), with --steps to do a few per call. summary.md is rewritten at the end of every run.
# --dry-run needs no GPU: it writes the folder with every step marked not run, and why.
#
# Works offline with what the machine has: minitensor is taken from this checkout (PYTHONPATH), not
# installed; --wheels DIR installs carried wheels first (pip --no-index). The MNIST files come from
# --data-dir, else $MINITENSOR_MNIST_DIR, else ../shared/data/mnist; without them the examples fall back
# to the bundled digits, and say so.
set -uo pipefail

for arg in "$@"; do
    if [[ "$arg" == --quick ]]; then
        rest=()
        for other in "$@"; do [[ "$other" == --quick ]] || rest+=("$other"); done
        exec bash "$(dirname "${BASH_SOURCE[0]}")/gpu_quick.sh" "${rest[@]}"
    fi
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ALL_STEPS=(env pytest-gpu examples-mlp examples-cnn examples-gan speedup compare amp profile distributed asv)
STEPS=""
OUT=""
DATA_DIR="${MINITENSOR_MNIST_DIR:-}"
PY="${PYTHON:-python3}"
WHEELS=""
STEP_TIMEOUT=540
REDO=0
DRY_RUN=0
FAKE="${GPU_CHECK_FAKE:-0}"  # tests only: every heavy command is echoed instead of run (the plumbing),
FAKE_SECONDS="${GPU_CHECK_FAKE_SECONDS:-0}"  # and takes this long
EXAMPLE_STEPS=300  # --limit-steps of each example run
PROFILE_STEPS=40   # --limit-steps of the profiled CNN runs: 3 skipped, 5 profiled, the rest timed as usual
AMP_BATCH=256      # issue #15's batch for the AMP comparison

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "gpu_check: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --steps) STEPS="${2:?--steps needs a list}"; shift 2 ;;
        --out) OUT="${2:?--out needs a folder}"; shift 2 ;;
        --data-dir) DATA_DIR="${2:?--data-dir needs a folder}"; shift 2 ;;
        --python) PY="${2:?--python needs an interpreter}"; shift 2 ;;
        --wheels) WHEELS="${2:?--wheels needs a folder}"; shift 2 ;;
        --step-timeout) STEP_TIMEOUT="${2:?--step-timeout needs seconds}"; shift 2 ;;
        --redo) REDO=1; shift ;;
        --dry-run) DRY_RUN=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done

SELECTED=()
if [[ -z "$STEPS" ]]; then
    SELECTED=("${ALL_STEPS[@]}")
else
    IFS=',' read -ra asked <<< "$STEPS"
    for step in "${asked[@]}"; do
        [[ " ${ALL_STEPS[*]} " == *" $step "* ]] || die "unknown step '$step'; the steps: ${ALL_STEPS[*]}"
        SELECTED+=("$step")
    done
fi
[[ "$STEP_TIMEOUT" =~ ^[0-9]+$ && "$STEP_TIMEOUT" -gt 0 ]] || die "--step-timeout must be a positive number"
if [[ -z "$DATA_DIR" && -d "$ROOT/../shared/data/mnist" ]]; then
    DATA_DIR="$ROOT/../shared/data/mnist"
fi

# ----------------------------------------------------------------------------------------- the folder
gpu_name() {
    if [[ "$DRY_RUN" == 1 ]]; then echo "dry-run"; return; fi
    if [[ "$FAKE" == 1 ]]; then echo "fake-gpu"; return; fi
    command -v nvidia-smi >/dev/null || die "no nvidia-smi here: this needs an NVIDIA GPU (--dry-run does not)"
    local name
    name="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
    [[ -n "$name" ]] || die "nvidia-smi lists no GPU"
    echo "$name" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//'
}
[[ -n "$OUT" ]] || OUT="$ROOT/docs/perf/$(date -u +%Y-%m-%d)-$(gpu_name)"
mkdir -p "$OUT/status" || die "cannot create $OUT"
OUT="$(cd "$OUT" && pwd)"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
cd "$ROOT" || exit 2

run() {  # a heavy command: run, or only echoed under GPU_CHECK_FAKE=1
    if [[ "$FAKE" == 1 ]]; then echo "[fake] $*"; sleep "$FAKE_SECONDS"; else "$@"; fi
}
data_args() {
    echo "--dataset mnist-test-split${DATA_DIR:+ --data-dir $DATA_DIR}"
}

# ------------------------------------------------------------------------------------------ the steps
describe() {
    case "$1" in
        env) echo "nvidia-smi and the versions of the driver, CUDA, CuPy, Numba, numba-cuda, PyTorch" ;;
        pytest-gpu) echo "$PY -m pytest -m gpu --junitxml pytest-gpu.xml" ;;
        examples-*) echo "examples/${1#examples-}.py on cuda and cpu, seed 0, $EXAMPLE_STEPS steps, $(data_args)" ;;
        speedup) echo "$PY examples/speedup.py --sweep-batch --steps 20 --warmup 3" ;;
        compare) echo "$PY benchmarks/compare.py --device cuda (PyTorch beside it when it imports)" ;;
        amp) echo "$PY benchmarks/compare.py --device cuda --amp --workloads mlp-l,cnn --batch-size $AMP_BATCH;" \
                  "$PY examples/speedup.py --amp" ;;
        profile) echo "examples/cnn.py --profile 5 on cuda and cpu, $PROFILE_STEPS steps, $(data_args)" ;;
        distributed) echo "$PY -m pytest -m gpu tests/distributed (NCCL at world size 1); with mpiexec the MPI" \
                          "tests and tests/distributed/worker_cuda_aware.py (MINITENSOR_CUDA_AWARE_MPI=1)" ;;
        asv) echo "asv run --python=same --quick (the suite's cuda benchmarks among the rest)" ;;
    esac
}

step_env() {
    if [[ -n "$WHEELS" ]]; then
        run "$PY" -m pip install --no-index --find-links "$WHEELS" "$WHEELS"/*.whl \
            || echo "installing the wheels failed"
    fi
    run nvidia-smi
    run nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
    command -v nvcc >/dev/null && run nvcc --version
    run "$PY" - <<'PYTHON'
import importlib, importlib.metadata as md, platform, sys
print("python", sys.version.split()[0], platform.platform())
for dist in ("numpy", "cupy-cuda13x", "cupy-cuda12x", "numba", "numba-cuda", "torch", "pytest", "hypothesis",
             "asv"):
    try:
        print(f"{dist} {md.version(dist)}")
    except md.PackageNotFoundError:
        print(f"{dist} (not installed)")
try:
    import cupy
    rt = cupy.cuda.runtime
    print("cuda runtime", rt.runtimeGetVersion(), "driver", rt.driverGetVersion(), "devices", rt.getDeviceCount())
except Exception as e:
    print("cupy unusable:", repr(e))
try:
    import torch
    print("torch cuda", torch.version.cuda, "available", torch.cuda.is_available())
except Exception as e:
    print("torch unusable:", repr(e))
import minitensor as mt
print("minitensor cuda available:", mt.cuda.is_available())
try:
    mt.zeros(1, device="cuda")
except RuntimeError as e:
    print("  why not:", e)
PYTHON
}

step_pytest-gpu() {
    run "$PY" -m pytest -m gpu -p no:cacheprovider -q -rfEs --junitxml "$OUT/pytest-gpu.xml"
}

example() {  # example() NAME: on cuda, then on cpu, same seed and steps
    local name="$1" device rc=0
    for device in cuda cpu; do
        echo "== $name on $device"
        # shellcheck disable=SC2046
        run "$PY" "examples/$name.py" --device "$device" --seed 0 $(data_args) --limit-steps "$EXAMPLE_STEPS" \
            --no-progress --out "$OUT/examples/$name-$device" || rc=$?
    done
    return $rc
}
step_examples-mlp() { example mlp; }
step_examples-cnn() { example cnn; }
step_examples-gan() { example gan; }

step_speedup() {  # fewer timed steps than its default, so that the sweep fits one step's timeout
    run "$PY" examples/speedup.py --sweep-batch --steps 20 --warmup 3 --out "$OUT/speedup"
}

step_compare() {
    run "$PY" benchmarks/compare.py --device cuda --json "$OUT/compare.json" --markdown "$OUT/compare.md"
}

step_amp() {  # float32 and AMP of both frameworks, alternated in one run: the #15 targets read from one table
    local rc=0
    run "$PY" benchmarks/compare.py --device cuda --amp --workloads mlp-l,cnn --batch-size "$AMP_BATCH" \
        --json "$OUT/amp.json" --markdown "$OUT/amp.md" || rc=$?
    run "$PY" examples/speedup.py --amp --steps 20 --warmup 3 --out "$OUT/speedup-amp" || rc=$?
    return $rc
}

step_profile() {  # cuda into profile-cnn/, cpu into profile-cnn-cpu/
    local device folder rc=0
    for device in cuda cpu; do
        echo "== cnn --profile on $device"
        folder="$OUT/profile-cnn"
        [[ "$device" == cpu ]] && folder+="-cpu"
        # shellcheck disable=SC2046
        run "$PY" examples/cnn.py --device "$device" --seed 0 $(data_args) --limit-steps "$PROFILE_STEPS" \
            --profile 5 --no-progress --out "$folder" || rc=$?
    done
    return $rc
}

step_distributed() {  # one GPU holds one NCCL rank; MPI ranks may share it
    local mpiexec rc=0
    mpiexec="$(dirname "$("$PY" -c 'import sys; print(sys.executable)')")/mpiexec"
    run "$PY" - <<'PYTHON'
import sys
from pathlib import Path

def say(what, ok, why=""):
    print(f"available: {what}" if ok else f"not tested: {what}" + (f" ({why})" if why else ""))

try:
    from minitensor.backends.cuda.nccl import nccl_available
    say("backend 'nccl' (CuPy's NCCL)", nccl_available(), "CuPy has no NCCL here")
except Exception as e:
    say("backend 'nccl' (CuPy's NCCL)", False, repr(e))
try:
    from mpi4py import MPI
    print("MPI library:", MPI.Get_library_version().splitlines()[0])
    query = getattr(MPI, "Query_cuda_support", None)  # MPI 4.1 / MPIX: what the library says of itself
    print("the MPI says CUDA-aware:", query() if query else "(this mpi4py cannot ask)")
except Exception as e:
    say("backend 'mpi' (mpi4py with an MPI library)", False, repr(e))
mpiexec = Path(sys.executable).parent / "mpiexec"
say(f"{mpiexec}", mpiexec.exists(), "no mpiexec next to the Python: the mpich wheel of the distributed extra gives one")
print("not tested: NCCL at world size 2 or more (one GPU holds only one NCCL rank)")
PYTHON
    run "$PY" -m pytest -m gpu tests/distributed -p no:cacheprovider -q -rfEs \
        --junitxml "$OUT/distributed-gpu.xml" || rc=$?
    if [[ "$FAKE" == 1 || -x "$mpiexec" ]]; then
        run "$PY" -m pytest tests/distributed -m "not gpu" -p no:cacheprovider -q -rfEs \
            --junitxml "$OUT/distributed-mpi.xml" || rc=$?
        echo "== CUDA-aware transfer: 2 MPI ranks on the GPU, MINITENSOR_CUDA_AWARE_MPI=1"
        if ! run env MINITENSOR_CUDA_AWARE_MPI=1 OMP_NUM_THREADS=1 timeout 120 "$mpiexec" -n 2 "$PY" \
            tests/distributed/worker_cuda_aware.py; then
            echo "not tested: CUDA tensors over MPI failed (exit above): this MPI is not CUDA-aware"
        fi
    else
        echo "not tested: the MPI tests and the CUDA-aware transfer (no mpiexec at $mpiexec)"
    fi
    return $rc
}

step_asv() { run "$PY" -m asv run --python=same --quick --show-stderr --set-commit-hash "$(git rev-parse HEAD)"; }

export -f run data_args example describe step_env step_pytest-gpu step_examples-mlp step_examples-cnn \
    step_examples-gan step_speedup step_compare step_amp step_profile step_distributed step_asv
export OUT PY WHEELS DATA_DIR FAKE FAKE_SECONDS EXAMPLE_STEPS PROFILE_STEPS AMP_BATCH

# ----------------------------------------------------------------------------------------- the runner
for step in "${SELECTED[@]}"; do
    status="$OUT/status/$step.txt"
    if [[ "$DRY_RUN" == 1 ]]; then
        echo "not run: --dry-run (no GPU needed for it); would run: $(describe "$step")" > "$status"
        continue
    fi
    if [[ "$REDO" == 0 && -f "$status" ]] && grep -q '^done' "$status"; then
        echo "== $step: already done ($(head -n 1 "$status")), skipped (--redo runs it again)"
        continue
    fi
    echo "== $step: $(describe "$step")"
    start=$SECONDS
    timeout --signal=INT --kill-after=20 "$STEP_TIMEOUT" bash -c "step_$step" > "$OUT/$step.log" 2>&1
    rc=$?
    took=$((SECONDS - start))
    if [[ $rc == 124 || $rc == 137 ]]; then
        echo "cut: timed out after ${took}s (--step-timeout $STEP_TIMEOUT); the next run does it again" > "$status"
    else
        echo "done rc=$rc in ${took}s" > "$status"
    fi
    echo "   $(cat "$status")"
done

# ---------------------------------------------------------------------------------------- the summary
"$PY" - "$OUT" "${ALL_STEPS[@]}" <<'PYTHON' || echo "gpu_check: writing summary.md failed" >&2
import json, sys
import xml.etree.ElementTree as ET
from pathlib import Path

out, steps = Path(sys.argv[1]), sys.argv[2:]
lines = [f"# GPU check: {out.name}", "", "Written by `benchmarks/gpu_check.sh`; raw outputs beside this file "
         "(`<step>.log`, `status/`).", "", "| step | status |", "| --- | --- |"]
for step in steps:
    status = out / "status" / f"{step}.txt"
    lines.append(f"| {step} | {status.read_text().strip() if status.exists() else 'not run: not selected yet'} |")

def junit(path):
    """A JUnit XML's counts and failed cases as Markdown lines (none when the file is absent)."""
    if not path.exists():
        return []
    try:
        suites = ET.parse(path).getroot()
    except ET.ParseError as e:
        return ["", f"{path.name} unreadable: {e}"]
    suite = suites if suites.tag == "testsuite" else suites.find("testsuite")
    counts = {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped", "time")}
    failed = [f"{case.get('classname')}::{case.get('name')}" for case in suite.iter("testcase")
              if case.find("failure") is not None or case.find("error") is not None]
    return ["", f"`{path.name}`: " + ", ".join(f"{k} {v}" for k, v in counts.items())] + [
        f"- FAILED {name}" for name in failed[:50]]

if (tests := junit(out / "pytest-gpu.xml")):
    lines += ["", "## pytest -m gpu"] + tests

def epochs(path):
    try:
        return json.loads(path.read_text()).get("epochs", [])
    except (OSError, ValueError):
        return []

for name in ("mlp", "cnn", "gan"):
    runs = {device: epochs(out / "examples" / f"{name}-{device}" / "metrics.json") for device in ("cuda", "cpu")}
    if not any(runs.values()):
        continue
    keys = [k for k in dict.fromkeys(k for e in runs["cuda"] + runs["cpu"] for k in e)
            if "loss" in k or "accuracy" in k or k == "ms_per_step"]
    lines += ["", f"## examples/{name}.py: cuda beside cpu (seed 0, the same steps)", "",
              "| epoch | step | " + " | ".join(f"{k} {d}" for k in keys for d in ("cuda", "cpu")) + " |",
              "| --- " * (2 + 2 * len(keys)) + "|"]
    for i in range(max(len(runs["cuda"]), len(runs["cpu"]))):
        row = [runs[d][i] if i < len(runs[d]) else {} for d in ("cuda", "cpu")]
        cells = [f"{r[k]:.5g}" if isinstance(r.get(k), (int, float)) else "-" for k in keys for r in row]
        first = row[0] or row[1]
        lines.append(f"| {first.get('epoch', i + 1)} | {first.get('step', '-')} | " + " | ".join(cells) + " |")

for title, path in (("speedup", out / "speedup" / "speedup.json"), ("compare", out / "compare.md"),
                    ("amp: float32 beside AMP, batch 256 (issue #15)", out / "amp.md"),
                    ("amp: examples/speedup.py --amp", out / "speedup-amp" / "speedup.json")):
    if path.exists():
        lines += ["", f"## {title}", "", f"See `{path.relative_to(out)}`."]
        if path.suffix == ".md":
            lines += ["", path.read_text().strip()]

profiles = [out / folder / "profile.txt" for folder in ("profile-cnn", "profile-cnn-cpu")]
if any(p.exists() for p in profiles):
    lines += ["", "## profile: examples/cnn.py --profile 5 (issue #16)", ""]
    lines += [f"- {p.parent.name}: `{p.relative_to(out)}`, `trace.json` and `profile.png` beside it"
              for p in profiles if p.exists()]

log = out / "distributed.log"
if log.exists():
    said = [line for line in log.read_text().splitlines()
            if line.startswith(("available:", "not tested:", "MPI library:", "the MPI says", "ok ", "WRONG "))]
    lines += ["", "## distributed (issue #17)", "", "From `distributed.log`:", ""] + [f"- {line}" for line in said]
    lines += junit(out / "distributed-gpu.xml") + junit(out / "distributed-mpi.xml")
(out / "summary.md").write_text("\n".join(lines) + "\n")
print(f"gpu_check: {out / 'summary.md'}")
PYTHON
