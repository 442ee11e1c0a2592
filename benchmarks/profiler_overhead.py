"""The profiler's cost per op, off and on, from ``benchmarks/overhead.py`` run in fresh processes.

    python benchmarks/profiler_overhead.py --base /path/to/checkout/without/the/hook [--rounds 7]

Each round runs overhead.py three times, in turn: on the ``--base`` tree (PYTHONPATH), on this tree with no
profile, and on this tree with a profile recording (``--profile``). Alternating spreads the machine's
drift over all three. Prints the medians over rounds of the framework overhead per op and the hook's
cost when off as a share of the base's overhead.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def overhead(tree: Path, size: int, repeats: int, profile: bool = False) -> float:
    """us per op of overhead.py (this tree's script) importing minitensor from ``tree``."""
    command = [sys.executable, str(HERE / "overhead.py"), "--json", "--size", str(size), "--repeats", str(repeats)]
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(command + (["--profile"] if profile else []), env=env, check=True, capture_output=True,
                         text=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["overhead_us_per_op"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="a checkout without the profiler's hooks")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    runs: dict[str, list[float]] = {"base": [], "off": [], "on": []}
    for _ in range(args.rounds):
        runs["base"].append(overhead(args.base, args.size, args.repeats))
        runs["off"].append(overhead(ROOT, args.size, args.repeats))
        runs["on"].append(overhead(ROOT, args.size, args.repeats, profile=True))
    base, off, on = (statistics.median(runs[k]) for k in ("base", "off", "on"))
    for k, label in (("base", "base tree"), ("off", "profiler off"), ("on", "profiler on")):
        print(f"{label:>13}: median {statistics.median(runs[k]):.3f} us/op  runs "
              + " ".join(f"{v:.3f}" for v in runs[k]))
    print(f"hook cost when off: {off - base:+.3f} us/op = {100 * (off - base) / base:+.1f}% of the base overhead")
    print(f"profiler on: {on - base:+.3f} us/op over the base ({on / base:.1f}x)")


if __name__ == "__main__":
    main()
