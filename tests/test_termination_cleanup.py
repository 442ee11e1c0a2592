"""SIGTERM and SIGHUP (whose default action skips atexit and finally blocks) still remove what minitensor
made: shared-memory blocks in /dev/shm and a save's temporary file (issue 25, item 12). The process still
ends by that signal, and a handler the program installed first keeps deciding."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from test_checkpoint_files import CHILD  # a save that hangs after writing its archive, before the rename

pytestmark = pytest.mark.skipif(not Path("/dev/shm").is_dir() or os.name != "posix",
                                reason="POSIX signals and /dev/shm")

SHARE = """
import signal, sys, time
import minitensor as mt
if sys.argv[1] == "handler":
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(7))
t = mt.ones(1000).share_memory_()
from minitensor.multiprocessing.sharing import block_of
print(block_of(t.array).name, flush=True)
time.sleep(60)
"""

def _run_until_ready(code: str, *args: str) -> tuple[subprocess.Popen, str]:
    child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    return child, child.stdout.readline().strip()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_shared_memory_is_unlinked_on_termination(signum):
    child, name = _run_until_ready(SHARE, "default")
    assert (Path("/dev/shm") / name.lstrip("/")).exists()
    child.send_signal(signum)
    assert child.wait(30) == -signum  # still ended by the signal
    assert not (Path("/dev/shm") / name.lstrip("/")).exists()


def test_a_programs_own_handler_still_decides():
    child, name = _run_until_ready(SHARE, "handler")
    child.send_signal(signal.SIGTERM)
    assert child.wait(30) == 7  # its handler's sys.exit(7); atexit then unlinks the block
    assert not (Path("/dev/shm") / name.lstrip("/")).exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_save_ended_by_a_signal_removes_its_temporary(tmp_path, signum):
    child, said = _run_until_ready(CHILD, str(tmp_path / "never-again.mt"))
    assert said == "written" and any(p.name.endswith(".mt-tmp") for p in tmp_path.iterdir())
    child.send_signal(signum)
    assert child.wait(30) == -signum
    assert list(tmp_path.iterdir()) == []
