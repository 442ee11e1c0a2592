"""Householder reflectors, as ``torch.linalg.householder_product`` (``torch.orgqr``) and ``torch.geqrf``.

householder_product(A (*, m, n), tau (*, k)), m >= n >= k: the first n columns of H_1 H_2 ... H_k, with
H_i = I - tau_i v_i v_i^T and v_i = (0, ..., 0, 1, A[i+1:, i]) (LAPACK's orgqr). It is built of tensor ops
(k rank-1 updates, each over the batch), so its gradients to A's strictly lower part and to tau, of every
order, are those of the composition (PyTorch's formula gives the same first derivative).
"""
from __future__ import annotations

from typing import Any

from .. import return_types
from .. import dtypes as _dt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..creation import eye
from ..tensor import Tensor
from ..amp.autocast_mode import cast_early
from ..amp.policy import Linalg
from ._util import torch_dtype_name
from .triangular import tril

__all__ = ["householder_product", "orgqr", "geqrf"]



def _check(A: Any, tau: Any) -> None:
    """PyTorch's checks of householder_product's arguments, in its order and words."""
    name = "torch.linalg.householder_product"
    if not isinstance(A, Tensor) or not isinstance(tau, Tensor):
        raise TypeError("linalg.householder_product(): arguments 'input' and 'tau' must be Tensors")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {A.ndim}")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau dtype {torch_dtype_name(tau.dtype)} does not match input dtype "
                           f"{torch_dtype_name(A.dtype)}")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.householder_product: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype}")


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """Q (*, m, n): the first n columns of H_1 ... H_k for A (*, m, n) holding the v_i below its diagonal
    (``geqrf``'s form) and tau (*, k)."""
    A, tau = cast_early(Linalg, A, tau)  # float32 under CPU autocast, as PyTorch's
    _check(A, tau)
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    V = tril(A[..., :, :k], -1) + eye(m, k, dtype=A.dtype, device=A.device)  # (*, m, k), v_i its columns
    Q = eye(m, n, dtype=A.dtype, device=A.device).expand(tuple(A.shape)) if k else None
    for i in reversed(range(k)):  # Q <- H_i Q, the last reflector first; a step per reflector, not per item
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mT @ Q))
    return Q if Q is not None else eye(m, n, dtype=A.dtype, device=A.device).expand(tuple(A.shape)).clone()


def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """``torch.orgqr``: ``linalg.householder_product``."""
    return householder_product(input, input2)


class Geqrf(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any) -> Any:
        return B.geqrf(a)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def geqrf(input: Tensor) -> Any:
    """(a (*, m, n), tau (*, min(m, n))): LAPACK's QR in Householder form, R on and above a's diagonal and the
    reflectors' vectors below it; ``householder_product(a, tau)`` is the reduced Q (m >= n). No gradient,
    as PyTorch's."""
    if not isinstance(input, Tensor):
        raise TypeError(f"geqrf(): argument 'input' must be Tensor, not {type(input).__name__}")
    input, = cast_early(Linalg, input)
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not input.dtype.is_floating_point or input.dtype in (_dt.float16, _dt.bfloat16):
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{torch_dtype_name(input.dtype)}'")
    a, tau = Geqrf.apply(input)
    return return_types.geqrf((a, tau))
