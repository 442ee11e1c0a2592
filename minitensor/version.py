"""``torch.version``: the version strings programs print or compare (llm.c's ``torch.version.__version__``).

minitensor is built without CUDA or ROCm (CuPy is found at run time: ``minitensor.cuda.is_available()`` says
whether a GPU can be used), so ``cuda``, ``hip``, ``rocm`` and ``xpu`` are None, as on PyTorch's CPU build."""
from __future__ import annotations

from typing import Optional

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
debug = False
cuda: Optional[str] = None
git_version = "Unknown"
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
