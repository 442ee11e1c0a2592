"""``NAdam``: Adam with Nesterov momentum and a momentum schedule (Dozat, 2016)."""
from __future__ import annotations

from typing import Any

from .optimizer import (Optimizer, ParamsT, adam_hyperparameters, advance_step, check_adam_hyperparameters,
                        check_hyperparameter, scalar_state, state_buffer)


class NAdam(Optimizer):
    """PyTorch's NAdam: with g = ±grad (+ weight_decay * param unless decoupled), t the step and
    mu_t = beta1 (1 - 0.5 * 0.96^(t * momentum_decay)),

        m = beta1 m + (1 - beta1) g ;  v = beta2 v + (1 - beta2) g^2 ;  d = sqrt(v / (1 - beta2^t)) + eps
        param -= lr (1 - mu_t) / (1 - prod_{i<=t} mu_i) * g / d + lr mu_{t+1} / (1 - prod_{i<=t+1} mu_i) * m / d

    ``decoupled_weight_decay=True`` (NAdamW) shrinks param by (1 - lr * weight_decay) first instead.
    State per parameter: "step", "mu_product" (a 0-d CPU tensor, rounded to its dtype at each step as
    PyTorch's is), "exp_avg", "exp_avg_sq"."""

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        check_hyperparameter(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize,
                                      foreach=foreach, capturable=capturable, differentiable=differentiable))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, beta1, beta2, eps, weight_decay = adam_hyperparameters(group)
        momentum_decay = float(group["momentum_decay"])
        for p, state in self._params_with_grad(group):
            step = advance_step(state)
            product = scalar_state(state, "mu_product", 1.0).array
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
            product *= mu
            exp_avg = state_buffer(state, "exp_avg", p)
            exp_avg_sq = state_buffer(state, "exp_avg_sq", p)
            p.device.backend.nadam_update(p.array, p.grad.array, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps,  # type: ignore[arg-type, union-attr]
                                          weight_decay, mu, mu_next, product.item(),
                                          group["decoupled_weight_decay"], group["maximize"])
