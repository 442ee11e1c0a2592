"""Which vector instructions the benchmarked kernels may use: ``compare.py --isa avx2|native``.

An AVX-512 machine can stand in for an AVX2-only one, since every library here can be held back by an
environment variable read when it loads, so that both machine kinds are measured on one CPU:

========== ============================================ ====================================================
library    avx2                                          how the kernels that ran are checked (``probe``)
========== ============================================ ====================================================
OpenBLAS   ``OPENBLAS_CORETYPE=Haswell``                 threadpoolctl's ``architecture`` of NumPy's OpenBLAS
Numba      ``NUMBA_CPU_NAME=haswell`` and                a compiled float32 loop's assembly: zmm registers
           ``NUMBA_CPU_FEATURES=-avx512f`` (the name      (AVX-512) or not; the codegen's target CPU name
           alone keeps the host's +avx512f features)
PyTorch    ``ATEN_CPU_CAPABILITY=avx2``,                  ``torch.backends.cpu.get_cpu_capability()``;
           ``ONEDNN_MAX_CPU_ISA=AVX2``,                   oneDNN's verbose "isa:" line; MKL's verbose banner
           ``MKL_ENABLE_INSTRUCTIONS=AVX2``               (on AMD CPUs it names no ISA: recorded, not checked)
========== ============================================ ====================================================

``native`` removes every one of these variables from the workers' environment, OPENBLAS_L2_SIZE with
OPENBLAS_CORETYPE (some machines set both for old OpenBLAS builds; see docs/performance.md), so that each
library picks the CPU's best kernels (minitensor's own choice, ``backends/blas.py``, then applies). The
workers are spawned processes: the variables are set in the environment they start with (``scoped_environ``),
before anything in them imports a library.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
import tempfile
from typing import Any, Iterator, Mapping

ISAS = ("avx2", "native")
AVX2_ENV: dict[str, str] = {
    "OPENBLAS_CORETYPE": "Haswell", "NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "-avx512f",
    "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
}
CLEARED = (*AVX2_ENV, "OPENBLAS_L2_SIZE", "MINITENSOR_BLAS_TUNING")
AVX512_CORETYPES = frozenset({"skylakex", "cooperlake", "sapphirerapids", "zen5"})  # lower-cased


def environment(isa: str | None) -> dict[str, str | None]:
    """The changes to a worker's environment for ``isa`` (None: the parent's, unchanged); a None value
    removes the variable."""
    if isa is None:
        return {}
    if isa == "avx2":
        return {**dict.fromkeys(CLEARED), **AVX2_ENV}
    if isa == "native":
        return dict.fromkeys(CLEARED)
    raise ValueError(f"unknown ISA {isa!r}; choose one of {', '.join(ISAS)}")


@contextlib.contextmanager
def scoped_environ(changes: Mapping[str, str | None]) -> Iterator[None]:
    """Apply ``changes`` to os.environ (None removes), and restore the previous values on exit: a process
    started inside inherits them."""
    saved = {k: os.environ.get(k) for k in changes}
    try:
        _apply(changes)
        yield
    finally:
        _apply(saved)


def _apply(changes: Mapping[str, str | None]) -> None:
    for key, value in changes.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def host_has_avx512(cpuinfo: str | None = None) -> bool:
    """Whether the CPU has AVX-512 Foundation (/proc/cpuinfo's avx512f flag)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read(65536)
        except OSError:
            return False
    return re.search(r"\bavx512f\b", cpuinfo) is not None


# --------------------------------------------------------------------------------- inside a worker
def probe(with_torch: bool) -> dict[str, Any]:
    """What the libraries loaded in this process run: OpenBLAS's core type, Numba's target and whether its
    float32 loops use AVX-512 registers, and (``with_torch``) PyTorch's ATen capability, oneDNN's ISA and
    MKL's banner. Call it before the workload runs: oneDNN prints its ISA once, at its first verbose call."""
    import numpy  # noqa: F401  (loads OpenBLAS)
    from threadpoolctl import threadpool_info  # type: ignore[import-untyped]

    found: dict[str, Any] = {"openblas": next((lib.get("architecture") for lib in threadpool_info()
                                               if lib.get("internal_api") == "openblas"), None)}
    found.update(_numba_probe())
    if with_torch:
        found.update(_torch_probe())
    return found


def _numba_probe() -> dict[str, Any]:
    try:
        import numba
        import numpy as np
        from numba.core.registry import cpu_target
    except ImportError:
        return {"numba_cpu": None, "numba_zmm": None}

    @numba.njit(cache=False)
    def axpy(a: Any, x: Any, y: Any) -> None:
        for i in range(x.shape[0]):
            y[i] += a * x[i]

    x = np.ones(1024, np.float32)
    axpy(np.float32(2), x, x.copy())
    asm = "".join(axpy.inspect_asm().values())
    return {"numba_cpu": cpu_target.target_context.codegen()._get_host_cpu_name(),
            "numba_zmm": re.search(r"\bzmm\d+", asm) is not None}


def _torch_probe() -> dict[str, Any]:
    import torch
    conv, image = torch.nn.Conv2d(32, 64, 3), torch.ones(8, 32, 28, 28)  # big enough for oneDNN (not ATen's own)
    with _captured_stdout() as out:
        with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
            conv(image)
        with torch.backends.mkl.verbose(torch.backends.mkl.VERBOSE_ON):
            torch.ones(8, 8) @ torch.ones(8, 8)
    text = "".join(out)
    onednn = re.search(r"onednn_verbose,(?:v\d+,)?info,cpu,isa:([^\n]*)", text)
    mkl = re.search(r"MKL_VERBOSE (oneMKL[^\n]*)", text)
    return {"aten": torch.backends.cpu.get_cpu_capability(), "onednn": onednn and onednn.group(1).strip(),
            "mkl": mkl and mkl.group(1).strip()}


@contextlib.contextmanager
def _captured_stdout() -> Iterator[list[str]]:
    """What the C libraries print to file descriptor 1 inside the block, in the list yielded (filled on exit)."""
    text: list[str] = []
    sys.stdout.flush()
    with tempfile.TemporaryFile("w+") as sink:
        saved = os.dup(1)
        try:
            os.dup2(sink.fileno(), 1)
            yield text
        finally:
            ctypes.CDLL(None).fflush(None)  # C's stdout buffers a file: empty it into the sink first
            os.dup2(saved, 1)
            os.close(saved)
            sink.seek(0)
            text.append(sink.read())


# ------------------------------------------------------------------------------------------- checks
def level(name: str | None) -> str | None:
    """"avx512", "avx2" or None (unknown) for a library's description of its kernels."""
    if not name:
        return None
    text = name.lower().replace("-", "").replace(" ", "")
    if text in AVX512_CORETYPES or "avx512" in text:
        return "avx512"
    if text in {"haswell", "zen", "avx2"} or "avx2" in text:
        return "avx2"
    return None


def mismatch(isa: str, found: Mapping[str, Any], avx512_cpu: bool) -> str | None:
    """None when every probed library ran ``isa``'s kernels (``found`` from ``probe``), else what did not.
    avx2: nothing may be AVX-512. native on an AVX-512 CPU: every checkable library must be AVX-512; MKL's
    banner counts only where it names an ISA."""
    want = "avx512" if isa == "native" and avx512_cpu else "avx2"
    seen: dict[str, str | None] = {}
    if found.get("openblas") is not None:  # absent: NumPy runs another BLAS, nothing to hold back
        seen["OpenBLAS core type"] = level(found["openblas"])
    if found.get("numba_zmm") is not None:  # absent: Numba is not installed
        seen["Numba's loops"] = "avx512" if found["numba_zmm"] else "avx2"
    if "aten" in found:
        seen.update({"ATen capability": level(found["aten"]), "oneDNN ISA": level(found.get("onednn"))})
        if level(found.get("mkl")) is not None:
            seen["MKL"] = level(found.get("mkl"))
    bad = [f"{lib} is {got or 'unknown'}" for lib, got in seen.items() if got != want]
    return f"asked for {isa} ({want} kernels), but " + ", ".join(bad) if bad else None
