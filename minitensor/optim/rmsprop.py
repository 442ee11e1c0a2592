"""``RMSprop``: gradients scaled by a running root mean square, optionally centered and with momentum."""
from __future__ import annotations

from typing import Any

from .optimizer import (Optimizer, ParamsT, advance_step, check_hyperparameter,
                        state_buffer)


class RMSprop(Optimizer):
    """PyTorch's RMSprop: with g = ±grad + weight_decay * param,

        v = alpha v + (1 - alpha) g^2 ;  gbar = alpha gbar + (1 - alpha) g and v~ = v - gbar^2 (centered)
        d = g / (sqrt(v~ or v) + eps) ;  b = momentum b + d and param -= lr b (momentum > 0), else lr d

    State per parameter: "step", "square_avg", "momentum_buffer" (momentum > 0), "grad_avg" (centered)."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, *,
                 maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False) -> None:
        check_hyperparameter(0.0 <= lr, f"Invalid learning rate: {lr}")
        check_hyperparameter(0.0 <= eps, f"Invalid epsilon value: {eps}")
        check_hyperparameter(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        check_hyperparameter(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        check_hyperparameter(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, alpha, eps = float(group["lr"]), float(group["alpha"]), float(group["eps"])
        weight_decay, momentum = float(group["weight_decay"]), float(group["momentum"])
        centered, maximize = group["centered"], group["maximize"]
        for p, state in self._params_with_grad(group):
            advance_step(state)
            square_avg = state_buffer(state, "square_avg", p)
            momentum_buffer = state_buffer(state, "momentum_buffer", p) if momentum > 0 else None
            grad_avg = state_buffer(state, "grad_avg", p) if centered else None
            p.device.backend.rmsprop_update(p.array, p.grad.array, square_avg, momentum_buffer, grad_avg, lr,  # type: ignore[union-attr]
                                            alpha, eps, weight_decay, momentum, centered, maximize)
