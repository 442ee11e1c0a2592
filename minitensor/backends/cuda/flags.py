"""PyTorch's ``torch.backends.cuda`` switches (``matmul.allow_tf32``...) and ``torch.cuda.is_bf16_supported``.

TF32 is honoured: float32 GEMMs on the GPU are CuPy's cuBLAS calls, whose compute type CuPy keeps per dtype
(``cupy._core._routines_linalg.set_compute_type``; its ``CUPY_TF32=1`` environment variable sets the same
thing). ``matmul.allow_tf32`` is ``get_float32_matmul_precision() != "highest"``, as in PyTorch, and
setting either one sets CuPy's float32 compute type, now if a CUDA backend exists and otherwise when the first
one is made; a program that never sets them keeps CuPy's own default. Nothing here imports CuPy at import.
"""
from __future__ import annotations

import importlib
import warnings
from typing import Any

from ... import deterministic

_set_by_program = [False]  # CUPY_TF32 stays in charge until the program sets a flag


class CuBLASModule:
    """``backends.cuda.matmul``: ``allow_tf32`` (honoured), ``allow_fp16_reduced_precision_reduction`` and
    ``allow_bf16_reduced_precision_reduction`` (kept only: our half GEMMs always accumulate in float32)."""

    _STORED = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
               "allow_fp16_accumulation")

    def __init__(self) -> None:
        object.__setattr__(self, "_values", {"allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True,
                                             "allow_fp16_accumulation": False})

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return deterministic.get_float32_matmul_precision() != "highest"
        if name in self._STORED:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            deterministic.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._STORED:
            self._values[name] = bool(value)
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = CuBLASModule()


def _cupy_linalg() -> Any:
    """CuPy's GEMM module, which holds the compute type per dtype (imported only when a GPU is in use)."""
    importlib.import_module("cupy")
    return importlib.import_module("cupy._core._routines_linalg")


def _cuda_backend_exists() -> bool:
    from .. import loaded_backends
    return any(type(b).__module__.startswith("minitensor.backends.cuda") for b in loaded_backends())


def apply_tf32(creating_backend: bool = False) -> None:
    """Give CuPy's float32 GEMMs the compute type the flags ask for (TF32 or full float32), when a CUDA
    backend exists (or is being made) and the program has set a flag. GPUs before Ampere have no TF32:
    CuPy keeps float32 there (its warning is silenced; PyTorch ignores the flag there too)."""
    if not _set_by_program[0] or not (creating_backend or _cuda_backend_exists()):
        return
    linalg = _cupy_linalg()
    kind = linalg.COMPUTE_TYPE_TF32 if matmul.allow_tf32 else linalg.COMPUTE_TYPE_DEFAULT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linalg.set_compute_type("float32", kind)


def precision_changed() -> None:
    """Called by ``set_float32_matmul_precision`` (and so by ``matmul.allow_tf32 = ...``)."""
    _set_by_program[0] = True
    apply_tf32()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True on GPUs with native bfloat16 (compute capability 8.0 and up); on older ones ``including_emulation``
    (our bfloat16 kernels convert through float there); False without a GPU, as PyTorch."""
    from .runtime import is_available
    if not is_available():
        return False
    import cupy
    return int(cupy.cuda.Device().compute_capability) >= 80 or including_emulation
