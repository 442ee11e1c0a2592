"""compare.py's worker processes: one framework's workload in a spawned process of its own (``Worker``), the
``Session`` that runs it there (build, timed chunks, first losses, peak memory), and the thread and
memory accounting they use (see compare.py's docstring for how the peak is measured)."""
from __future__ import annotations

import ctypes
import gc
import multiprocessing
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import minitensor as mt  # before NumPy (the worker's first import of it: see backends/blas.py)
from benchmarks import isa, torch_workloads, workloads

MINITENSOR, PYTORCH = "minitensor", "PyTorch"
PEAK_STEPS = 3        # steps run after the high-water mark is reset (cpu peak memory)
MIB = 2 ** 20


def seconds_per_step(step: Callable[[], Any], sync: Callable[[], None], steps: int,
                     clock: Callable[[], float] = time.perf_counter) -> float:
    """Mean seconds per step over one chunk of ``steps`` steps, between two device synchronisations."""
    sync()
    start = clock()
    for _ in range(steps):
        step()
    sync()
    return (clock() - start) / steps


def set_threads(threads: int | None) -> Any:
    """Limit NumPy's BLAS and, when imported, PyTorch to ``threads`` (threadpoolctl also reaches the OpenMP
    runtime that PyTorch loads); returns the limiter, which must stay referenced (None for no limit)."""
    if threads is None:
        return None
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        raise SystemExit("--threads needs threadpoolctl (pip install threadpoolctl)") from None
    return threadpool_limits(limits=threads)


# ------------------------------------------------------------------------------------- worker processes
def _proc_status_kib(*fields: str) -> int:
    """The sum of ``fields`` of /proc/self/status, in KiB."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in fields:
            found[key] = int(value.split()[0])
    if len(found) < len(fields):
        raise RuntimeError(f"/proc/self/status lacks {set(fields) - set(found)} (peak memory is measured on Linux)")
    return sum(found.values())


def _reset_high_water_mark() -> bool:
    """Set VmHWM to the current VmRSS (Linux >= 4.0); False where that is not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _return_freed_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim), so that RSS is live memory."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class Session:
    """One framework's workload, inside the worker process that owns it."""

    def __init__(self, framework: str, name: str, device: str, seed: int, threads: int | None,
                 snapshot: workloads.Snapshot | None, amp: bool = False, batch_size: int | None = None) -> None:
        if framework == PYTORCH:
            import torch  # noqa: F401  (before the thread limits, so that they reach its libraries)
        self._kernels = isa.probe(framework == PYTORCH)  # before any workload: oneDNN names its ISA once
        self.limiter = set_threads(threads)
        self.framework, self.device = framework, device
        build = ((lambda: torch_workloads.build(snapshot, device, amp)) if framework == PYTORCH
                 else (lambda: workloads.build(name, device, seed, batch_size, amp)))
        if device == "cpu":
            self.baseline_kib = self._settled_baseline(build)
        self.run = build()
        if threads is not None:  # again: the first steps may have loaded more BLAS libraries (numba loads
            self.limiter = set_threads(threads)  # SciPy's OpenBLAS), whose pools the first limit missed

    @staticmethod
    def _settled_baseline(build: Callable[[], Any]) -> int:
        """Anonymous memory (KiB) once a throw-away copy of the workload has run a few steps and gone: the
        framework's one-off costs (modules imported lazily, e.g. by PyTorch's first optimizer step;
        thread pools; BLAS buffers) are in it, the workload's own memory is not, and code pages never
        are."""
        throwaway = build()
        for _ in range(2):
            throwaway.step()
        del throwaway
        gc.collect()
        _return_freed_memory()
        return _proc_status_kib("RssAnon")

    def first_losses(self) -> dict[str, float]:
        """One step's losses, read back to the host."""
        return {k: v.item() for k, v in self.run.step().items()}

    def seconds_per_step(self, steps: int) -> float:
        return seconds_per_step(self.run.step, self.run.synchronize, steps)

    def peak_memory(self) -> dict[str, Any]:
        """Peak memory of a step in MiB (see the module's docstring), with how it was measured."""
        if self.device == "cuda":
            cuda = sys.modules["torch"].cuda if self.framework == PYTORCH else mt.cuda
            self.run.synchronize()
            cuda.reset_peak_memory_stats()
            self.run.step()
            self.run.synchronize()
            return {"peak_mib": cuda.max_memory_allocated() / MIB, "reserved_mib": cuda.max_memory_reserved() / MIB,
                    "method": "max_memory_allocated over one step"}
        reset = _reset_high_water_mark()
        for _ in range(PEAK_STEPS):
            self.run.step()
        # The peak's anonymous part: VmHWM less the file-backed and shared pages, which are code and
        # stay put once the steps have run.
        peak_anon = _proc_status_kib("VmHWM") - _proc_status_kib("RssFile", "RssShmem")
        return {"peak_mib": (peak_anon - self.baseline_kib) / 1024, "baseline_mib": self.baseline_kib / 1024,
                "method": f"VmHWM - RssFile - RssShmem over {PEAK_STEPS} steps, less RssAnon before the build"
                          + ("" if reset else " (VmHWM could not be reset: the peak since the process started)")}

    def kernels(self) -> dict[str, Any]:
        """The kernels this process's libraries run (``isa.probe``, taken before the workload was built)."""
        return self._kernels

    def threads(self) -> dict[str, Any]:
        """The thread counts in effect here."""
        found: dict[str, Any] = {}
        if self.framework == PYTORCH:
            found["torch"] = sys.modules["torch"].get_num_threads()
        try:
            from threadpoolctl import threadpool_info
            found.update({lib["internal_api"]: lib["num_threads"] for lib in threadpool_info()})
        except ImportError:
            pass
        return found


def _serve(conn: Any, *session_args: Any) -> None:
    """A worker's loop: build the Session, then answer (method, *args) requests until None; an exception
    goes back as a RuntimeError carrying its traceback."""
    try:
        session = Session(*session_args)
        conn.send("ready")
    except Exception:
        conn.send(RuntimeError(traceback.format_exc()))
        return
    while (request := conn.recv()) is not None:
        method, *args = request
        try:
            conn.send(getattr(session, method)(*args))
        except Exception:
            conn.send(RuntimeError(traceback.format_exc()))


class Worker:
    """A Session in a spawned process (nothing inherited but the environment, with ``env``'s changes: see
    ``isa.environment``), called as ``worker.call("method", *args)``."""

    def __init__(self, *session_args: Any, env: dict[str, str | None] | None = None) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, *session_args), daemon=True)
        with isa.scoped_environ(env or {}):
            self.process.start()
        child.close()  # the worker's end: once the worker is gone, recv() raises EOFError instead of waiting
        self._reply()

    def call(self, method: str, *args: Any) -> Any:
        self.conn.send((method, *args))
        return self._reply()

    def _reply(self) -> Any:
        try:
            reply = self.conn.recv()
        except EOFError:
            raise RuntimeError(f"the worker process ended unexpectedly (exit code {self.process.exitcode})"
                               ) from None
        if isinstance(reply, Exception):
            raise reply
        return reply

    def close(self) -> None:
        if self.process.is_alive():
            self.conn.send(None)
        self.process.join(timeout=30)
