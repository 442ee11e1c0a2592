"""``parameters_to_vector`` and ``vector_to_parameters``."""
from __future__ import annotations

from typing import Iterable

from ...autograd import no_grad
from ...functional import cat
from ...tensor import Tensor


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into the parameters, in place."""
    if not isinstance(vec, Tensor) or vec.dim() != 1:
        raise TypeError(f"expected vec to be a 1-D Tensor, but got {type(vec).__name__}"
                        + (f" of {vec.dim()} dims" if isinstance(vec, Tensor) else ""))
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if total != vec.numel():
        raise RuntimeError(f"vector_to_parameters: vec has {vec.numel()} elements, the parameters {total}")
    start = 0
    with no_grad():
        for p in params:
            p.copy_(vec[start:start + p.numel()].reshape(p.shape))
            start += p.numel()
