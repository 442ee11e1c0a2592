"""summary.md of a ``gpu_check.sh --quick`` run: each step's limit, time and outcome, then what each step's
file says in a few lines (smoke failures, the examples against the CPU, the test counts and failures, the
comparison table), so that the one file tells whether the lease went well and what to rerun.

    python benchmarks/gpu_summary.py OUT STATUS_TSV [EXAMPLES_LOG]

STATUS_TSV: one line a step, "step<TAB>limit s<TAB>took s<TAB>exit<TAB>outcome" (written by gpu_quick.sh).
Each part reads its file defensively: a step cut short or never run leaves a partial file or none, and the
summary says so instead of failing. When junit.xml is missing or unreadable (pytest killed before it wrote
it), the test counts come from pytest.log's per-test lines.
"""
from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

OUTCOMES = ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS")
# pytest -v lines: "[gw3] [ 12%] PASSED tests/a.py::t" under xdist, "tests/a.py::t PASSED [ 12%]" without
_XDIST_LINE = re.compile(rf"^\[gw\d+\] \[\s*\d+%\] ({'|'.join(OUTCOMES)}) (\S+::\S+)")
_PLAIN_LINE = re.compile(rf"^(\S+::\S+) ({'|'.join(OUTCOMES)})\b")
MAX_LISTED = 40


def read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def steps(status_tsv: Path) -> list[str]:
    rows = [line.split("\t") for line in read(status_tsv).splitlines() if line.count("\t") == 4]
    return ["| step | limit (s) | took (s) | exit | outcome |", "| --- | --- | --- | --- | --- |"] + [
        "| " + " | ".join(row) + " |" for row in rows]


def smoke(out: Path) -> list[str]:
    lines = read(out / "smoke.txt").splitlines()
    checks = [line for line in lines if line.startswith(("PASS ", "FAIL ", "SKIP "))]
    if not checks:
        return ["smoke.txt has no check lines (the step did not run, or failed at its start):", ""] + \
            [f"    {line}" for line in lines[-15:]]
    counts = Counter(line.split()[0] for line in checks)
    head = ", ".join(f"{counts[s]} {s}" for s in ("PASS", "FAIL", "SKIP"))
    return [f"{head}; not PASS:", ""] + [f"- {line}" for line in checks if not line.startswith("PASS ")]


def examples(out: Path, log: Path | None) -> list[str]:
    verdicts = [line for line in read(log).splitlines() if line.startswith(("PASS ", "FAIL "))] if log else []
    if verdicts:
        return [f"- {line}" for line in verdicts]
    try:
        runs = json.loads(read(out / "examples.json"))["runs"]
    except (ValueError, KeyError):
        tail = read(log).splitlines()[-15:] if log else []
        return ["no verdicts (the step did not run or was cut); its output's end:", ""] + [f"    {t}" for t in tail]
    return [f"- {r['comparison']['verdict']} {r['example']}: {r['comparison']}" for r in runs]


def _junit(path: Path) -> tuple[Counter, list[str]] | None:
    """(counts, failed cases with their message) of a JUnit XML, None when it is absent or unreadable."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    counts: Counter = Counter()
    failed = []
    for case in root.iter("testcase"):
        bad = case.find("failure")
        bad = bad if bad is not None else case.find("error")
        if bad is not None:
            counts["failed" if bad.tag == "failure" else "errors"] += 1
            message = (bad.get("message") or "").splitlines()[:1]
            failed.append(f"{case.get('classname')}::{case.get('name')}" + (f": {message[0][:200]}" if message else ""))
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, failed


def _log_counts(text: str) -> tuple[Counter, list[str]]:
    """Outcomes from pytest -v's per-test lines (a test may have two: a failing teardown after a pass)."""
    counts: Counter = Counter()
    failed = []
    for line in text.splitlines():
        m = _XDIST_LINE.match(line)
        outcome, node = (m.group(1), m.group(2)) if m else (None, None)
        if m is None and (m := _PLAIN_LINE.match(line)):
            node, outcome = m.group(1), m.group(2)
        if outcome:
            counts[outcome.lower()] += 1
            if outcome in ("FAILED", "ERROR"):
                failed.append(f"{node} {outcome}")
    return counts, failed


def pytest_part(out: Path) -> list[str]:
    log = read(out / "pytest.log")
    found = _junit(out / "junit.xml")
    source = "junit.xml"
    if found is None:
        found, source = _log_counts(log), "pytest.log's per-test lines (junit.xml absent or unreadable)"
    counts, failed = found
    lines = [f"From {source}: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no test ran")]
    lines += [""] + [f"- FAILED {name}" for name in failed[:MAX_LISTED]]
    if len(failed) > MAX_LISTED:
        lines.append(f"- ... and {len(failed) - MAX_LISTED} more (pytest.log)")
    last = [line for line in log.splitlines() if line.startswith("=")][-1:]
    lines += [f"pytest's last word: `{last[0].strip('= ')}`" if last else "pytest printed no final line (cut?)"]
    durations = re.search(r"=+ slowest \d+ durations =+\n(.*?)(?:\n=|\Z)", log, re.S)
    if durations:
        lines += ["", "The slowest (for sizing the next lease):", "", "```", durations.group(1).strip(), "```"]
    return lines


def compare(out: Path) -> list[str]:
    text = read(out / "compare.txt").splitlines()
    table = [line for line in text if line.startswith("|")]
    return table or ["no table (the step did not finish); compare.txt's end:", ""] + [f"    {t}" for t in text[-10:]]


def main(argv: list[str]) -> int:
    out, status = Path(argv[0]), Path(argv[1])
    log = Path(argv[2]) if len(argv) > 2 else None
    gpu = next((line.split(": ", 1)[1].split(",")[0] for line in read(out / "smoke.txt").splitlines()
                if line.startswith("PASS gpu: ")), "no GPU found")
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# GPU check, quick: {gpu}, {when}", "",
             "Written by `bash benchmarks/gpu_check.sh --quick`; beside it: env.txt, smoke.txt, examples.json, "
             "pytest.log, junit.xml, compare.txt.", "", "## Steps", "", *steps(status),
             "", "## smoke (smoke.txt)", "", *smoke(out),
             "", "## examples on cuda against the CPU's losses (examples.json)", "", *examples(out, log),
             "", "## pytest -m gpu (junit.xml, pytest.log)", "", *pytest_part(out),
             "", "## compare.py --device cuda (compare.txt)", "", *compare(out)]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
