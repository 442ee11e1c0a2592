"""``minitensor.backends.cudnn``: PyTorch's ``torch.backends.cudnn`` switches, so scripts that set them run.

minitensor does not use cuDNN: its CUDA convolutions are CuPy/cuBLAS GEMMs and our own kernels, with one
algorithm each. The flags are plain attributes that keep what a script assigns and change nothing
(docs/differences.md says why each is safe to ignore):

- ``benchmark``: there are no alternative algorithms to time and choose among.
- ``deterministic``: no autotuning, so nothing to pin down; repeatability is as documented in docs/cuda.md.
- ``enabled``: there is no cuDNN path to switch off.
- ``allow_tf32``: our convolutions' GEMMs are CuPy's float32 GEMMs, whose TF32 switch is
  ``backends.cuda.matmul.allow_tf32`` (``backends/cuda/flags.py``): one compute type for both.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

enabled: bool = True
benchmark: bool = False
benchmark_limit: int = 10
deterministic: bool = False
allow_tf32: bool = True

_FLAGS = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")


def is_available() -> bool:
    """False: minitensor is not built on cuDNN (the CUDA backend needs only CuPy)."""
    return False


def version() -> int | None:
    """None, as PyTorch answers when cuDNN is not available."""
    return None


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True) -> Iterator[None]:
    """Set the flags inside the block and restore the previous values after (PyTorch's ``cudnn.flags``)."""
    module = globals()
    saved = {name: module[name] for name in _FLAGS}
    module.update(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                  deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        module.update(saved)
