"""``gumbel_softmax``: a differentiable sample of a categorical distribution (Jang et al., Maddison et al.)."""
from __future__ import annotations

from ..creation import empty_like, zeros_like
from ..tensor import Tensor
from .activation import softmax

__all__ = ["gumbel_softmax"]


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) along ``dim`` with g = -log(E), E ~ Exponential(1) (Gumbel noise from
    minitensor's generator). ``hard``: the one-hot of its argmax in the forward, the soft sample's gradient in
    the backward (straight through: y_hard - y_soft.detach() + y_soft). ``eps`` is unused, as in PyTorch."""
    gumbels = -empty_like(logits).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
