"""``ExponentialFamily`` (PyTorch's base of the families with density exp(<t(x), theta> - F(theta) + k(x))):
the entropy and the same-family KL from the log-normalizer F alone, through its gradient (autograd)."""
from __future__ import annotations

from typing import Any

from ..autograd import grad
from ..tensor import Tensor
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give ``_natural_params`` (theta), ``_log_normalizer(*theta)`` (F) and
    ``_mean_carrier_measure`` (E[k(x)]); then H = F(theta) - <theta, grad F(theta)> - E[k(x)], the Bregman
    divergence of F (grad F(theta) = E[t(x)])."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def _normalizer_and_grads(self) -> tuple[list[Tensor], Tensor, tuple[Any, ...]]:
        """theta (fresh leaves), F(theta), grad F(theta) recorded (so that the result is differentiable)."""
        theta = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*theta)
        return theta, log_norm, grad(log_norm.sum(), theta, create_graph=True)

    def entropy(self) -> Tensor:
        result: Any = -self._mean_carrier_measure
        theta, log_norm, grads = self._normalizer_and_grads()
        result = result + log_norm
        for p, g in zip(theta, grads):
            result = result - (p * g).reshape(*self._batch_shape, -1).sum(-1)
        return result
