#!/usr/bin/env bash
# shellcheck disable=SC2329  # the step_* functions run indirectly: bash -c "step_$step"
# gpu_check.sh --quick: what a short GPU lease is for, in 8 minutes, into at most 7 files directly under --out.
#
#   env       nvidia-smi, the machine, every installed distribution's version            -> env.txt
#   smoke     benchmarks/gpu_smoke.py: the CUDA stack, one PASS/FAIL/SKIP line a check     -> smoke.txt
#   examples  benchmarks/gpu_examples.py: examples/mlp.py and cnn.py on cuda only, their
#             per-step losses against the committed CPU ones (gpu_reference/cpu_losses.json) -> examples.json
#   pytest    python -m pytest -m gpu (-n 8 with pytest-xdist, --timeout 120 with
#             pytest-timeout): a line per test as it ends, then the JUnit XML               -> pytest.log, junit.xml
#   compare   benchmarks/compare.py --device cuda on MLP-S and the CNN, 3 rounds            -> compare.txt
#   summary   each step's time and exit, the counts, the failures, the comparisons         -> summary.md
#
# Usage: bash benchmarks/gpu_check.sh --quick [--out DIR] [--only STEP[,STEP]] [--data-dir DIR]
#                                             [--python PY] [--budget STEP=SECONDS] [--dry-run]
#
# Steps run in that order (evidence per second). Each runs under its own hard limit (its budget, see
# --dry-run): SIGINT at the budget less GRACE seconds, so that pytest still writes its report, SIGKILL at
# the budget. A step that fails or is cut is recorded and the next one runs; the summary is always written.
# --only reruns a few steps (the summary comes with them); --budget changes a step's limit (repeatable: a
# longer lease can give pytest more). --out defaults to runs/gpu-quick. The examples'
# MNIST files: --data-dir, else .gpu-data/mnist, $MINITENSOR_MNIST_DIR or ../shared/data/mnist, the
# first that holds them; without any, the examples train on the bundled digits (referenced too).
# Exit status: 0 when every step ran to its end with status 0, 1 otherwise, 2 for bad usage.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STEPS=(env smoke examples pytest compare summary)
declare -A BUDGET=([env]=10 [smoke]=75 [examples]=90 [pytest]=200 [compare]=60 [summary]=10)
MARGIN=35  # seconds left of the 480 for what the budgets do not bound (bash, starting each timeout)
GRACE=8    # seconds between a step's SIGINT and its SIGKILL
FILES=(summary.md env.txt smoke.txt examples.json pytest.log junit.xml compare.txt)
OUT_DIR="runs/gpu-quick"
ONLY=""
DATA_DIR=""
PY="${PYTHON:-python3}"
DRY_RUN=0

usage() { sed -n '3,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "gpu_check --quick: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --out) OUT_DIR="${2:?--out needs a folder}"; shift 2 ;;
        --only) ONLY="${2:?--only needs a list}"; shift 2 ;;
        --data-dir) DATA_DIR="${2:?--data-dir needs a folder}"; shift 2 ;;
        --python) PY="${2:?--python needs an interpreter}"; shift 2 ;;
        --budget)
            [[ "${2:-}" =~ ^([a-z]+)=([0-9]+)$ && -n "${BUDGET[${BASH_REMATCH[1]}]:-}" ]] \
                || die "--budget needs STEP=SECONDS, a step of: ${STEPS[*]}"
            (( BASH_REMATCH[2] > GRACE )) || die "--budget: a limit must be over the ${GRACE}s grace"
            BUDGET[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}; shift 2 ;;
        --dry-run) DRY_RUN=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done

SELECTED=("${STEPS[@]}")
if [[ -n "$ONLY" ]]; then
    SELECTED=()
    IFS=',' read -ra asked <<< "$ONLY"
    for step in "${STEPS[@]}"; do  # in the steps' order, whatever the order asked
        [[ ",$ONLY," == *",$step,"* || "$step" == summary ]] && SELECTED+=("$step")
    done
    for step in "${asked[@]}"; do
        [[ " ${STEPS[*]} " == *" $step "* ]] || die "unknown step '$step'; the steps: ${STEPS[*]}"
    done
fi

describe() {
    case "$1" in
        env) echo "nvidia-smi, the machine, the installed distributions -> env.txt" ;;
        smoke) echo "$PY benchmarks/gpu_smoke.py -> smoke.txt" ;;
        examples) echo "$PY benchmarks/gpu_examples.py --device cuda (mlp, cnn; vs CPU losses) -> examples.json" ;;
        pytest) echo "$PY -m pytest -m gpu -n 8 [--timeout 120] -v -> pytest.log, junit.xml" ;;
        compare) echo "$PY benchmarks/compare.py --device cuda --workloads mlp-s,cnn --repeats 3 -> compare.txt" ;;
        summary) echo "$PY benchmarks/gpu_summary.py -> summary.md" ;;
    esac
}

if [[ "$DRY_RUN" == 1 ]]; then
    total=0
    echo "gpu_check --quick --out $OUT_DIR: the steps, each under its hard limit"
    for step in "${SELECTED[@]}"; do
        printf '%-9s %4d s  %s\n' "$step" "${BUDGET[$step]}" "$(describe "$step")"
        total=$((total + BUDGET[$step]))
    done
    printf '%-9s %4d s  %s\n' margin "$MARGIN" "slack for what the limits do not bound (bash, each timeout's start)"
    printf '%-9s %4d s  %s\n' total "$((total + MARGIN))" "(a device run call: timeout_s $((total + MARGIN + 60)))"
    echo "files: ${FILES[*]} (${#FILES[@]}, directly under $OUT_DIR)"
    exit 0
fi

if [[ -n "$DATA_DIR" ]]; then  # absolute, before the cd below
    DATA_DIR="$(cd "$DATA_DIR" 2>/dev/null && pwd)" || die "--data-dir: no folder $DATA_DIR"
fi
mkdir -p "$OUT_DIR" || die "cannot create $OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
WORK="$(mktemp -d)"  # what the summary reads but does not bring back: step statuses, the examples' log
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT" || exit 2
if [[ -z "$DATA_DIR" ]]; then
    for dir in .gpu-data/mnist "${MINITENSOR_MNIST_DIR:-}" ../shared/data/mnist; do
        if [[ -n "$dir" ]] && compgen -G "$dir/t10k-images-idx3-ubyte*" >/dev/null; then DATA_DIR="$dir"; break; fi
    done
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 MPLBACKEND=Agg
export NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0
if [[ -z "${CUDA_HOME:-}" && -d /usr/local/cuda ]]; then export CUDA_HOME=/usr/local/cuda; fi
export OUT_DIR WORK DATA_DIR PY

step_env() {
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo "(no git here)"
    nvidia-smi || echo "nvidia-smi failed"
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm,power.limit --format=csv
    echo "nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo); $(free -g | sed -n 2p)"
    ls -d /usr/local/cuda* 2>/dev/null; command -v nvcc mpiexec || true
    env | grep -E '^(CUDA|CUPY|NUMBA|NCCL|NVIDIA|LD_LIBRARY_PATH|PATH|PYTHONPATH)' | sort
    "$PY" -c 'import importlib.metadata as m, sys; print(sys.version)
print("\n".join(sorted(str(d.metadata["Name"]) + "==" + str(d.version) for d in m.distributions())))'
}
step_smoke() { "$PY" benchmarks/gpu_smoke.py; }
step_examples() {
    local data=(--dataset digits)
    [[ -n "$DATA_DIR" ]] && data=(--dataset mnist-test-split --data-dir "$DATA_DIR")
    "$PY" benchmarks/gpu_examples.py --device cuda "${data[@]}" --timeout 60 --json "$OUT_DIR/examples.json"
}
step_pytest() {
    local extra=()
    "$PY" -c "import xdist" 2>/dev/null && extra+=(-n 8)
    "$PY" -c "import pytest_timeout" 2>/dev/null && extra+=(--timeout 120)
    "$PY" -m pytest -m gpu "${extra[@]}" -p no:cacheprovider -v -rfEs --durations 15 \
        --junitxml "$OUT_DIR/junit.xml"
}
step_compare() {
    "$PY" benchmarks/compare.py --device cuda --workloads mlp-s,cnn --repeats 3 --warmup 2 \
        --markdown "$WORK/compare.md"
    local rc=$?
    [[ -f "$WORK/compare.md" ]] && { echo; cat "$WORK/compare.md"; }
    return "$rc"
}
step_summary() { "$PY" benchmarks/gpu_summary.py "$OUT_DIR" "$WORK/status.tsv" "$WORK/examples.log"; }
export -f step_env step_smoke step_examples step_pytest step_compare step_summary

log_of() {
    case "$1" in
        env) echo "$OUT_DIR/env.txt" ;; smoke) echo "$OUT_DIR/smoke.txt" ;; pytest) echo "$OUT_DIR/pytest.log" ;;
        compare) echo "$OUT_DIR/compare.txt" ;; examples|summary) echo "$WORK/$1.log" ;;
    esac
}

failed=0
for step in "${SELECTED[@]}"; do
    budget=${BUDGET[$step]}
    echo "== $step (at most ${budget}s): $(describe "$step")"
    start=$SECONDS
    timeout -s INT -k "$GRACE" "$((budget - GRACE))" bash -c "step_$step" > "$(log_of "$step")" 2>&1
    rc=$?
    took=$((SECONDS - start))
    case $rc in
        0) outcome="done" ;;
        124|137) outcome="cut at its limit"; failed=1 ;;
        *) outcome="exit $rc"; failed=1 ;;
    esac
    printf '%s\t%s\t%s\t%s\t%s\n' "$step" "$budget" "$took" "$rc" "$outcome" >> "$WORK/status.tsv"
    echo "   $outcome after ${took}s"
done
if [[ ! -s "$OUT_DIR/summary.md" ]]; then  # the summary step failed: the statuses and why, at least
    { echo "# GPU check, quick: gpu_summary.py failed"; echo; cat "$WORK/status.tsv" "$WORK/summary.log"; } \
        > "$OUT_DIR/summary.md" 2>/dev/null
fi
cat "$OUT_DIR/summary.md"
exit $failed
