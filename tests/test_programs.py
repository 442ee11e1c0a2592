"""Small programs written the way PyTorch's examples are (tests/programs/), each run with only the import
changed: ``import minitensor as torch``. Each program asserts what it learned (loss, accuracy, fitted
weights) and exits 0. Where PyTorch is installed, the same text with ``import torch`` runs too, which proves
each program is a PyTorch program and not one bent to minitensor."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.py"))


def _run(source: str, name: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).parent.parent)


def as_pytorch(source: str) -> str:
    """The program with PyTorch imported in minitensor's place (the one line a user changed, undone)."""
    source = source.replace("import minitensor as torch", "import torch")
    return re.sub(r"\bminitensor\.", "torch.", source)


def test_there_are_programs():
    assert len(PROGRAMS) >= 3


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_program_runs_with_the_import_changed(path):
    source = path.read_text()
    assert "import minitensor as torch" in source and "import torch\n" not in source
    done = _run(source, path.name)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.torch
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_program_is_a_pytorch_program(path):
    pytest.importorskip("torch")
    done = _run(as_pytorch(path.read_text()), path.name)
    assert done.returncode == 0, done.stdout + done.stderr
