"""``RAdam``: Adam whose adaptive step is rectified while the second moment is still unreliable (Liu et al.)."""
from __future__ import annotations

from typing import Any

from .optimizer import Optimizer, ParamsT, adam_hyperparameters, adam_state, check_adam_hyperparameters


class RAdam(Optimizer):
    """PyTorch's RAdam: with g = ±grad (+ weight_decay * param unless decoupled), t the step,
    rho_inf = 2 / (1 - beta2) - 1 and rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t),

        m, v as Adam's ;  m^ = m / (1 - beta1^t)
        rho_t > 5: param -= lr m^ r sqrt(1 - beta2^t) / (sqrt(v) + eps), r the variance rectification
        else:      param -= lr m^

    ``decoupled_weight_decay=True`` shrinks param by (1 - lr * weight_decay) first instead.
    State per parameter: "step", "exp_avg", "exp_avg_sq"."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, beta1, beta2, eps, weight_decay = adam_hyperparameters(group)
        for p, state in self._params_with_grad(group):
            step, exp_avg, exp_avg_sq = adam_state(state, p, "exp_avg_sq")
            p.device.backend.radam_update(p.array, p.grad.array, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps,  # type: ignore[arg-type, union-attr]
                                          weight_decay, group["decoupled_weight_decay"], group["maximize"])
