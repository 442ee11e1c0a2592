"""Gradient clipping: ``clip_grad_norm_`` (= ``get_total_norm`` then ``clip_grads_with_norm_``),
``clip_grad_value_``, and the deprecated ``clip_grad_norm``. ``foreach`` is accepted for PyTorch's signature:
the per-tensor loop is the only implementation."""
from __future__ import annotations

import functools
import warnings
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


def get_total_norm(tensors: _Parameters, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` as if concatenated into one vector (the norm of their norms;
    for inf the max of maxes), on the first tensor's device; 0 for none."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    device = tensors[0].device
    with no_grad():
        norms = [t.norm(norm_type).to(device) for t in tensors]
        dtype = functools.reduce(_dt.promote_types, (n.dtype for n in norms))
        total = stack([n.to(dtype) for n in norms]).norm(norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                           "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: _Parameters, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale every gradient in place by min(1, max_norm / (total_norm + 1e-6)), the total norm given."""
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters: _Parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale all gradients together so that their joint ``norm_type``-norm is at most ``max_norm``; returns
    the total norm before clipping."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)  # an iterator is read once
    grads = _grads(params)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: _Parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated: ``clip_grad_norm_``."""
    warnings.warn("`minitensor.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`minitensor.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _Parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
