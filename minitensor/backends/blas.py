"""The CPU's matrix-product kernels: which OpenBLAS core type runs them, chosen before NumPy loads it.

NumPy's OpenBLAS picks its kernels from the CPU when it loads; ``OPENBLAS_CORETYPE`` overrides the choice.
OpenBLAS's table of CPUs lags new ones: it had no entry for AMD's Zen 5 (family 26) until September 2026
(OpenBLAS #6029/#6033), and builds whose feature-based fall-back misses it run their Haswell (AVX2)
kernels on a CPU with full AVX-512. Measured on a Zen 5 (2 threads, OpenBLAS 0.3.31): sgemm 2048² at
228 GFLOP/s on the Haswell kernels against 411 on the SkylakeX ones (docs/performance.md).

``choose_openblas_coretype()`` runs when ``minitensor.backends`` is imported, before anything of ours
imports NumPy. It sets the variable only where (1) NumPy has not been imported yet (OpenBLAS reads the
variable once, when it loads), (2) the user has not set ``OPENBLAS_CORETYPE`` (a user's setting always
wins), (3) ``MINITENSOR_BLAS_TUNING`` is not ``0`` (the opt-out), and (4) the CPU is one that OpenBLAS is
known to misdetect (``recommended_coretype``); where OpenBLAS detects it right, the forced value is the one
it would pick. The variable is inherited by child processes, which run on the same CPU. ``cpu_info()``
reports what was loaded and, when the loaded kernels are slower than the CPU allows, why.

``choose_openblas_thread_timeout()`` runs at the same moment, under the same conditions (1)-(3), and sets
``OPENBLAS_THREAD_TIMEOUT`` to 20: OpenBLAS's workers then spin about 2^20 cycles (under a millisecond)
after a GEMM before they sleep, instead of its default 2^28 (about 100 ms of a core here). Back-to-back
GEMMs (an LSTM's steps, tens of microseconds apart) still find them awake, but the threads of the CPU's
own parts (``cpu/parallel.py``: the Winograd convolutions, the GELU and attention kernels) and any other
work no longer share their cores with spinning workers: the CNN's step took 9.9 ms against 13.2 and the
GAN's 1.74 against 2.31 (Zen 5, 2 threads, docs/performance.md), the GPT's and the LSTM's the same.
"""
from __future__ import annotations

import os
import platform
import sys
from dataclasses import asdict, dataclass
from typing import Any

# The AVX-512 subsets OpenBLAS's SkylakeX kernels use.
_SKYLAKEX_FLAGS = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
_AVX512_CORETYPES = frozenset({"skylakex", "cooperlake", "sapphirerapids"})
_FIRST_UNRECOGNISED_AMD_FAMILY = 26  # 0x1A, Zen 5: missing from OpenBLAS's table before September 2026
# what choose_openblas_coretype found: the core type it set, and whether NumPy had been imported before it
_STATE: dict[str, str | bool | None] = {"chosen": None, "numpy_first": False}


@dataclass(frozen=True)
class CpuFeatures:
    """What /proc/cpuinfo says of the first processor (empty on other systems)."""
    vendor: str
    family: int | None
    model_name: str
    flags: frozenset[str]


def read_cpu_features(cpuinfo: str | None = None) -> CpuFeatures:
    """Parse ``cpuinfo`` (default: /proc/cpuinfo where it exists) up to the first blank line."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read(65536)
        except OSError:
            cpuinfo = ""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    family = fields.get("cpu family", "")
    return CpuFeatures(fields.get("vendor_id", ""), int(family) if family.isdigit() else None,
                       fields.get("model name", platform.processor()), frozenset(fields.get("flags", "").split()))


def best_coretype(cpu: CpuFeatures) -> str | None:
    """The fastest OpenBLAS kernel family for minitensor's float32 GEMMs that ``cpu`` can run (SkylakeX
    for AVX-512, Haswell for AVX2 with FMA), or None for other CPUs."""
    if _SKYLAKEX_FLAGS <= cpu.flags:
        return "SkylakeX"
    return "Haswell" if {"avx2", "fma"} <= cpu.flags else None


def recommended_coretype(cpu: CpuFeatures) -> str | None:
    """The OpenBLAS core type to force on ``cpu``, or None where OpenBLAS's own detection is right (or the
    CPU is not x86-64 with AVX-512)."""
    if not _SKYLAKEX_FLAGS <= cpu.flags:
        return None
    if cpu.vendor == "AuthenticAMD" and cpu.family is not None and cpu.family >= _FIRST_UNRECOGNISED_AMD_FAMILY:
        return "SkylakeX"
    return None


def _may_set(environ: Any, name: str) -> bool:
    """Whether minitensor may set OpenBLAS's variable ``name``: OpenBLAS has not loaded yet (NumPy is not
    imported), the user has not set it, and ``MINITENSOR_BLAS_TUNING`` is not ``0``."""
    return not ("numpy" in sys.modules or environ.get(name) or environ.get("MINITENSOR_BLAS_TUNING", "1") == "0")


def choose_openblas_coretype(environ: Any = os.environ, cpuinfo: str | None = None) -> str | None:
    """Set ``OPENBLAS_CORETYPE`` in ``environ`` where the module docstring's four conditions hold; return the
    core type set, or None."""
    if environ is os.environ:
        _STATE["numpy_first"] = "numpy" in sys.modules
    if not _may_set(environ, "OPENBLAS_CORETYPE") or not sys.platform.startswith("linux"):
        return None
    coretype = recommended_coretype(read_cpu_features(cpuinfo))
    if coretype is not None:
        environ["OPENBLAS_CORETYPE"] = coretype
        if environ is os.environ:
            _STATE["chosen"] = coretype
    return coretype


THREAD_TIMEOUT = "20"  # log2 of the cycles OpenBLAS's idle workers spin before sleeping (its default: 28)


def choose_openblas_thread_timeout(environ: Any = os.environ) -> str | None:
    """Set ``OPENBLAS_THREAD_TIMEOUT`` in ``environ`` (see the module's docstring) unless NumPy is loaded,
    the user set it, or ``MINITENSOR_BLAS_TUNING=0``; return the value set, or None."""
    if not _may_set(environ, "OPENBLAS_THREAD_TIMEOUT"):
        return None
    environ["OPENBLAS_THREAD_TIMEOUT"] = THREAD_TIMEOUT
    return THREAD_TIMEOUT


@dataclass(frozen=True)
class CpuInfo:
    """What runs minitensor's CPU work: the processor, the BLAS behind NumPy and its kernels, Numba."""
    cpu: str
    blas: str | None  # e.g. "openblas 0.3.31"
    coretype: str | None  # the kernels OpenBLAS runs (threadpoolctl's "architecture")
    threads: int | None  # the BLAS pool's size
    best_coretype: str | None  # the fastest kernels this CPU can run (``best_coretype``)
    chosen_by: str  # "minitensor", "user" (OPENBLAS_CORETYPE set outside), or "openblas"
    missed: str | None  # why faster kernels than ``coretype`` did not load; None when none were missed
    numba: str | None  # the Numba version whose CPU kernels run, or None (NumPy bodies)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        kernels = f"{self.blas or 'unknown BLAS'}, {self.coretype or '?'} kernels (chosen by {self.chosen_by}), " \
                  f"{self.threads or '?'} threads"
        hint = f"; slower kernels than this CPU allows: {self.missed}" if self.missed else ""
        return f"{self.cpu}: {kernels}; numba {self.numba or 'off'}{hint}"


def cpu_info() -> CpuInfo:
    """Report the CPU, NumPy's BLAS (via threadpoolctl), its core type and threads, who chose the core type,
    and why faster kernels were missed, if they were."""
    import numpy  # noqa: F401  (loads the BLAS that threadpoolctl then finds)
    from threadpoolctl import threadpool_info  # type: ignore[import-untyped]

    import minitensor.backends.cpu.numba_kernels as cpu_loops  # the CPU loops' loader (Numba, if any)

    cpu = read_cpu_features()
    libs = [lib for lib in threadpool_info() if lib.get("user_api") == "blas"]
    lib = libs[0] if libs else {}
    coretype, best = lib.get("architecture"), best_coretype(cpu)
    env = os.environ.get("OPENBLAS_CORETYPE")
    chosen_by = "minitensor" if env and env == _STATE["chosen"] else "user" if env else "openblas"
    missed = None
    if (best == "SkylakeX" and lib.get("internal_api") == "openblas" and coretype
            and coretype.lower() not in _AVX512_CORETYPES):
        why = (f"OPENBLAS_CORETYPE={env} is set in the environment (a user's setting wins)" if chosen_by == "user"
               else "NumPy was imported before minitensor" if _STATE["numpy_first"]
               else "OpenBLAS did not recognise this CPU")
        missed = f"the CPU runs {best} kernels, but {why}; OPENBLAS_CORETYPE={best} set before NumPy loads selects them"
    return CpuInfo(cpu.model_name or platform.machine(),
                   f"{lib['internal_api']} {lib.get('version', '')}".strip() if lib else None,
                   coretype, lib.get("num_threads"), best, chosen_by, missed, cpu_loops.numba_version())


def set_num_threads(n: int) -> None:
    """PyTorch's ``set_num_threads``: the size of the BLAS pool that runs the CPU's matrix products (and so
    the convolutions' GEMMs). minitensor's own CPU kernels are serial, except that a Winograd convolution
    runs one part of its batch per BLAS thread (``cpu/parallel.py``): this is all of its threading."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n!r}")
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n, user_api="blas")


def get_num_threads() -> int:
    """PyTorch's ``get_num_threads``: the BLAS pool's size (1 when no BLAS reports one)."""
    import numpy  # noqa: F401  (loads the BLAS)
    from threadpoolctl import threadpool_info

    return max((lib.get("num_threads") or 1 for lib in threadpool_info() if lib.get("user_api") == "blas"),
               default=1)
