"""``minitensor.nn``: ``Module`` and the layers, ``Parameter``, ``init``, ``functional``, ``utils`` and
``parallel``, with PyTorch's names, defaults and ``state_dict`` keys."""
from __future__ import annotations

from . import functional  # first: the layers call into it
from . import grad, init, parallel, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["functional", "grad", "init", "utils", "parallel", "Parameter", "Buffer", "UninitializedParameter",
           "UninitializedBuffer", "DataParallel"] + list(_modules_all)

from . import attention  # noqa: E402  (torch.nn.attention: SDPBackend, sdpa_kernel)
__all__ += ["attention"]
