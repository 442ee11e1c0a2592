"""``Adam`` and ``AdamW`` (Adam with decoupled weight decay), with AMSGrad and maximize."""
from __future__ import annotations

from typing import Any

from .optimizer import (Optimizer, ParamsT, adam_hyperparameters, adam_state, check_hyperparameter,
                        state_buffer)


class Adam(Optimizer):
    """PyTorch's Adam: with g = ±grad (+ weight_decay * param unless decoupled) and t the step,

        m = beta1 m + (1 - beta1) g ;  v = beta2 v + (1 - beta2) g^2 ;  v_max = max(v_max, v) (amsgrad)
        param -= lr / (1 - beta1^t) * m / (sqrt(v or v_max) / sqrt(1 - beta2^t) + eps)

    ``decoupled_weight_decay=True`` (AdamW) shrinks param by (1 - lr * weight_decay) first instead.
    State per parameter: "step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq" (amsgrad)."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, maximize: bool = False,
                 decoupled_weight_decay: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_hyperparameter(0.0 <= lr, f"Invalid learning rate: {lr}")
        check_hyperparameter(0.0 <= eps, f"Invalid epsilon value: {eps}")
        check_hyperparameter(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        check_hyperparameter(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        check_hyperparameter(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, beta1, beta2, eps, weight_decay = adam_hyperparameters(group)
        amsgrad, decoupled, maximize = group["amsgrad"], group["decoupled_weight_decay"], group["maximize"]
        for p, state in self._params_with_grad(group):
            step, exp_avg, exp_avg_sq = adam_state(state, p, "exp_avg_sq")
            max_exp_avg_sq = state_buffer(state, "max_exp_avg_sq", p) if amsgrad else None
            p.device.backend.adam_update(p.array, p.grad.array, exp_avg, exp_avg_sq, max_exp_avg_sq, step,  # type: ignore[arg-type, union-attr]
                                         lr, beta1, beta2, eps, weight_decay, amsgrad, decoupled, maximize)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): param *= 1 - lr * weight_decay before the
    Adam update, the gradient untouched by the decay. PyTorch's default weight_decay is 1e-2."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True, foreach=foreach, capturable=capturable,
                         differentiable=differentiable, fused=fused)
