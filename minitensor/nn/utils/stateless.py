"""``nn.utils.stateless.functional_call``: PyTorch's pre-2.0 name for ``minitensor.func.functional_call``
(one dict only), kept as PyTorch keeps it: deprecated, with a FutureWarning."""
from __future__ import annotations

import warnings
from typing import Any

from ...func.functional_call import _functional_call


def functional_call(module: Any, parameters_and_buffers: dict[str, Any], args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with ``parameters_and_buffers`` in place of its own tensors."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights, strict)


__all__ = ["functional_call"]
