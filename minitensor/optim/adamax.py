"""``Adamax``: Adam with the infinity norm of past gradients in place of their RMS (Kingma & Ba, section 7)."""
from __future__ import annotations

from typing import Any

from .optimizer import Optimizer, ParamsT, adam_hyperparameters, adam_state, check_adam_hyperparameters


class Adamax(Optimizer):
    """PyTorch's Adamax: with g = ±grad + weight_decay * param and t the step,

        m = beta1 m + (1 - beta1) g ;  u = max(beta2 u, |g| + eps) ;  param -= lr / (1 - beta1^t) * m / u

    State per parameter: "step", "exp_avg" (m), "exp_inf" (u)."""

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, beta1, beta2, eps, weight_decay = adam_hyperparameters(group)
        for p, state in self._params_with_grad(group):
            step, exp_avg, exp_inf = adam_state(state, p, "exp_inf")
            p.device.backend.adamax_update(p.array, p.grad.array, exp_avg, exp_inf, step, lr, beta1, beta2, eps,  # type: ignore[arg-type, union-attr]
                                           weight_decay, group["maximize"])
