"""Helpers shared by the distributions (PyTorch's ``torch.distributions.utils``): parameter broadcasting,
probabilities <-> logits, lazily computed parameters, sums over the rightmost dims."""
from __future__ import annotations

from numbers import Number
from typing import Any, Callable, Generic, TypeVar


from .. import dtypes as _dt
from ..autograd import enable_grad
from ..creation import arange, tensor, zeros
from ..functional import broadcast_tensors
from ..tensor import Tensor
from ..type_info import finfo

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits", "tril_matrix_to_vec",
           "vec_to_tril_matrix"]


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Tensors and numbers broadcast to one shape; numbers become tensors of the first tensor's dtype and
    device (the default dtype when there is none)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, minitensor.Tensor or objects "
                         "implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    options: dict[str, Any] = ({"dtype": like.dtype, "device": like.device} if like is not None
                               else {"dtype": _dt.get_default_dtype()})
    tensors = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    return tuple(broadcast_tensors(*tensors))


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into [eps, 1 - eps] of their dtype, so that their logs are finite."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid(logits) for a binary variable, else softmax over the last dim."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log(p) - log(1 - p) for a binary variable, else log(p) (normalised log-probabilities), on clamped p."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dims."""
    return value if dim == 0 else value.reshape(*value.shape[:-dim], -1).sum(-1)


T = TypeVar("T")
R = TypeVar("R")


class lazy_property(Generic[T, R]):
    """A parameter computed from another on first access (``probs`` from ``logits``...), then stored on the
    instance, so ``"probs" in d.__dict__`` tells which parameter the user gave. Computed with grad enabled, as
    PyTorch, so that a value first read under ``no_grad`` still carries the graph."""

    def __init__(self, wrapped: Callable[[T], R]) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: T | None, owner: Any = None) -> Any:
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.__name__, value)
        return value


def _tril_mask(n: int, diag: int, device: Any) -> Tensor:
    """(n, n) bool: True on and below the diagonal ``diag`` (0: the main one; -1: strictly below)."""
    index = arange(n, device=device)
    return index < index.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """(..., D, D) -> (..., K): the elements on and below the diagonal ``diag``, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """(..., K) -> (..., D, D), zero above the diagonal ``diag``: the inverse of ``tril_matrix_to_vec``; D is
    the positive root of D^2 + (1 + 2 diag) D - |diag| (diag + 1) - 2K = 0."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as the lower "
                         "triangular part of a square D x D matrix.")
    size = round(n)
    mat = zeros(*vec.shape[:-1], size, size, dtype=vec.dtype, device=vec.device)
    mat[..., _tril_mask(size, diag, vec.device)] = vec
    return mat
