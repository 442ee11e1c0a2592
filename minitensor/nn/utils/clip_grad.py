"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_``."""
from __future__ import annotations

import functools
from typing import Iterable

from ... import dtypes as _dt
from ...autograd import no_grad
from ...functional import stack
from ...tensor import Tensor
from ...creation import tensor

_Parameters = Tensor | Iterable[Tensor]


def _grads(parameters: _Parameters) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in params if p.grad is not None]


def clip_grad_norm_(parameters: _Parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> Tensor:
    """Scale all gradients together so that their joint ``norm_type``-norm (as if concatenated into one
    vector) is at most ``max_norm``: g *= min(1, max_norm / (total + 1e-6)). Returns the total norm before
    clipping. One norm per parameter, then the norm of those norms (max of maxes for inf)."""
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return tensor(0.0)
    device = grads[0].device
    with no_grad():
        norms = [g.norm(norm_type).to(device) for g in grads]
        dtype = functools.reduce(_dt.promote_types, (n.dtype for n in norms))
        total = stack([n.to(dtype) for n in norms]).norm(norm_type)
        if error_if_nonfinite and not bool(total.isfinite()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                               "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                               "by the non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))
    return total


def clip_grad_value_(parameters: _Parameters, clip_value: float) -> None:
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
