"""``Adadelta``: step sizes from the ratio of running RMS of updates and of gradients (Zeiler, 2012)."""
from __future__ import annotations

from typing import Any

from .optimizer import Optimizer, ParamsT, advance_step, check_hyperparameter, state_buffer


class Adadelta(Optimizer):
    """PyTorch's Adadelta: with g = ±grad + weight_decay * param,

        v = rho v + (1 - rho) g^2 ;  delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho u + (1 - rho) delta^2 ;  param -= lr delta

    State per parameter: "step", "square_avg" (v), "acc_delta" (u)."""

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_hyperparameter(0.0 <= lr, f"Invalid learning rate: {lr}")
        check_hyperparameter(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        check_hyperparameter(0.0 <= eps, f"Invalid epsilon value: {eps}")
        check_hyperparameter(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, rho, eps = float(group["lr"]), float(group["rho"]), float(group["eps"])
        weight_decay, maximize = float(group["weight_decay"]), group["maximize"]
        for p, state in self._params_with_grad(group):
            advance_step(state)
            square_avg = state_buffer(state, "square_avg", p)
            acc_delta = state_buffer(state, "acc_delta", p)
            p.device.backend.adadelta_update(p.array, p.grad.array, square_avg, acc_delta, lr, rho, eps,  # type: ignore[union-attr]
                                             weight_decay, maximize)
