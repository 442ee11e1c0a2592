"""examples/mlp.py and examples/cnn.py on one device, their per-step losses against the CPU's, committed.

    # on a GPU (gpu_check.sh --quick): the cuda runs only, against the committed CPU losses
    python benchmarks/gpu_examples.py --device cuda --data-dir .gpu-data/mnist --json OUT/examples.json
    # here, once, whenever the examples, the models or STEPS change (what the reference file records)
    python benchmarks/gpu_examples.py --device cpu --data-dir ../shared/data/mnist --write-reference

Each example runs as its own process (``--seed 0 --epochs 100 --limit-steps N --step-losses --no-progress``:
the step limit ends every run, even on the small digits), so that a crash or a hang (``--timeout``) costs
that example only. The reference holds the CPU's loss at every step for each dataset: ``mnist-test-split``
where the MNIST files are, and ``digits``, the examples' own fall-back when they are not, so that a run
whose data went missing is still compared with the right curve.

Why the tolerances: both devices start from the same weights (made on the CPU) and see the same batches,
in float32. The first step's loss differs only by the order of the sums (cuBLAS, our kernels): within
FIRST_RTOL. After it, Adam amplifies such differences (a 3e-7 change of the CNN's weights moves its loss
at step 60 by 1.5e-3 on the CPU alone), so every step is held to STEPS_RTOL: a wrong kernel moves the
curve by far more. Exit status: 0 every example agrees, 1 one does not or failed to run, 2 bad usage.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "benchmarks" / "gpu_reference" / "cpu_losses.json"
STEPS = {"mlp": 200, "cnn": 60}  # --limit-steps of each example: seconds on a GPU, ~15 s on two CPU cores
SEED = 0
FIRST_RTOL = 1e-4
STEPS_RTOL = 5e-2
DATASET_KEYS = {"MNIST test split": "mnist-test-split", "digits": "digits"}  # metrics.json's name -> --dataset


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=("cpu", "cuda"), help="where the examples run")
    p.add_argument("--examples", default=",".join(STEPS), help=f"comma-separated, from {','.join(STEPS)}")
    p.add_argument("--dataset", default="mnist-test-split", choices=("mnist-test-split", "digits"),
                   help="the data to train on (mnist-test-split falls back to digits without its files)")
    p.add_argument("--data-dir", default=None, help="the folder of the MNIST test split's IDX files")
    p.add_argument("--reference", type=Path, default=REFERENCE, help="the committed CPU losses")
    p.add_argument("--write-reference", action="store_true",
                   help="write the runs' losses into --reference (under their dataset) instead of comparing")
    p.add_argument("--json", type=Path, default=None, help="write the runs and the comparison here")
    p.add_argument("--timeout", type=float, default=120, help="seconds each example may take (default: 120)")
    args = p.parse_args(argv)
    args.examples = [n.strip() for n in args.examples.split(",") if n.strip()]
    if not args.examples or any(n not in STEPS for n in args.examples):
        p.error(f"--examples: choose from {', '.join(STEPS)}")
    if args.write_reference and args.device != "cpu":
        p.error("--write-reference: the reference is the CPU's (--device cpu)")
    return args


def command(name: str, device: str, dataset: str, data_dir: str | None, out: Path) -> list[str]:
    """The example's command line: seed, steps and the per-step losses fixed here, for both devices."""
    data = ["--dataset", dataset] + (["--data-dir", data_dir] if data_dir else [])
    return [sys.executable, f"examples/{name}.py", "--device", device, "--seed", str(SEED), *data,
            "--epochs", "100", "--limit-steps", str(STEPS[name]), "--step-losses", "--no-progress", "--out", str(out)]


def run_example(name: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Run one example; its losses, test accuracy and dataset from metrics.json, or why there are none."""
    cmd = command(name, args.device, args.dataset, args.data_dir, folder / name)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    start = time.perf_counter()
    result: dict[str, Any] = {"example": name, "device": args.device, "seed": SEED, "steps": STEPS[name],
                              "command": "python " + " ".join(cmd[1:-2])}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env, check=False,
                              cwd=ROOT)
        output, result["returncode"] = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as e:
        output = "".join(part.decode() if isinstance(part, bytes) else part or "" for part in (e.stdout, e.stderr))
        result["returncode"], result["error"] = None, f"timed out after {args.timeout:g} s"
    result["seconds"] = round(time.perf_counter() - start, 2)
    result["output_tail"] = output[-2000:]
    last = output.strip().splitlines()[-1:] or ["no output"]
    try:
        metrics = json.loads((folder / name / "metrics.json").read_text())
    except (OSError, ValueError) as e:
        result.setdefault("error", f"no metrics.json ({e.__class__.__name__}); exit {result['returncode']}: {last[0]}")
        return result
    result["dataset"] = next((key for prefix, key in DATASET_KEYS.items() if metrics["dataset"].startswith(prefix)),
                             metrics["dataset"])
    result["losses"] = metrics.get("step_losses", {}).get("loss", [])
    result["test_accuracy"] = metrics.get("final", {}).get("test_accuracy")
    result["ms_per_step"] = [e.get("ms_per_step") for e in metrics.get("epochs", [])]
    if result["returncode"] != 0:
        result["error"] = f"exit {result['returncode']}: {last[0]}"
    return result


def compare(losses: Sequence[float], reference: Sequence[float]) -> dict[str, Any]:
    """Relative differences of a loss curve from the reference: the first step's, the largest and where,
    and the verdict under FIRST_RTOL and STEPS_RTOL."""
    if not losses or len(losses) != len(reference):
        return {"verdict": "FAIL", "why": f"{len(losses)} losses for {len(reference)} reference steps"}
    rel = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, reference)]
    worst = max(range(len(rel)), key=rel.__getitem__)
    ok = rel[0] <= FIRST_RTOL and rel[worst] <= STEPS_RTOL
    return {"verdict": "PASS" if ok else "FAIL", "first_rel_diff": rel[0], "max_rel_diff": rel[worst],
            "max_at_step": worst + 1, "first_rtol": FIRST_RTOL, "steps_rtol": STEPS_RTOL}


def check(r: dict[str, Any], reference: dict[str, Any]) -> bool:
    """Add a run's comparison with the reference curve of its dataset; print its line; whether it agrees."""
    ref = reference.get("datasets", {}).get(r.get("dataset", ""), {}).get(r["example"])
    if "error" in r or ref is None:
        r["comparison"] = {"verdict": "FAIL", "why": r.get("error") or f"no reference for dataset {r.get('dataset')!r}"}
    else:
        r["comparison"] = compare(r["losses"], ref["losses"])
        r["reference_test_accuracy"] = ref.get("test_accuracy")
    c = r["comparison"]
    detail = (f"max rel diff {c['max_rel_diff']:.2e} at step {c['max_at_step']}, "
              f"first step {c['first_rel_diff']:.2e} (rtol {STEPS_RTOL:g}, first {FIRST_RTOL:g}); "
              f"test accuracy {r['test_accuracy']} vs cpu {r['reference_test_accuracy']}"
              if "max_rel_diff" in c else c["why"])
    print(f"{c['verdict']} {r['example']} on {r['device']} ({r.get('dataset', '?')}, {r['steps']} steps, "
          f"{r['seconds']} s): {detail}", flush=True)
    return c["verdict"] == "PASS"


def write_reference(results: list[dict[str, Any]], path: Path, argv: Sequence[str]) -> bool:
    """Merge the runs into the reference file, under their dataset (the other datasets kept)."""
    failed = [r for r in results if "error" in r]
    for r in failed:
        print(f"FAIL {r['example']}: {r['error']}\n{r['output_tail']}", file=sys.stderr)
    if failed:
        return False
    reference = json.loads(path.read_text()) if path.exists() else {}
    reference.update(seed=SEED, steps=STEPS)
    for r in results:
        reference.setdefault("datasets", {}).setdefault(r["dataset"], {})[r["example"]] = {
            "written_by": "python benchmarks/gpu_examples.py " + " ".join(argv), "command": r["command"],
            "test_accuracy": r["test_accuracy"], "losses": r["losses"]}
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(reference, indent=1)  # then each list of losses on one line, for readable diffs
    path.write_text(re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text) + "\n")
    print(f"wrote {path}: {', '.join(r['example'] + ' on ' + r['dataset'] for r in results)}")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    reference = json.loads(args.reference.read_text()) if args.reference.exists() else {}
    results, ok = [], True
    with tempfile.TemporaryDirectory(prefix="gpu-examples-") as tmp:
        for name in args.examples:  # each one's verdict and the JSON so far as soon as it ends (a cut loses less)
            results.append(run_example(name, args, Path(tmp)))
            if not args.write_reference:
                ok &= check(results[-1], reference)
            if args.json:
                args.json.write_text(json.dumps({"reference": str(args.reference), "runs": results}, indent=1))
    if args.write_reference:
        return 0 if write_reference(results, args.reference, argv) else 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
