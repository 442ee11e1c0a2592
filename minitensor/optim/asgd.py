"""``ASGD``: SGD with a decaying step size and a running (Polyak) average of the iterates (Polyak & Juditsky)."""
from __future__ import annotations

from typing import Any

from .optimizer import Optimizer, ParamsT, advance_step, check_hyperparameter, scalar_state, state_buffer


class ASGD(Optimizer):
    """PyTorch's ASGD: with g = ±grad + weight_decay * param, t the step, eta_1 = lr and mu_1 = 1,

        param = param (1 - lambd eta_t) - eta_t g ;  ax += mu_t (param - ax)   (ax = param while mu_t = 1)
        eta_{t+1} = lr / (1 + lambd lr t)^alpha ;  mu_{t+1} = 1 / max(1, t - t0)

    ``ax`` is the averaged parameter (averaging starts after ``t0`` steps); the parameter itself keeps
    the SGD iterate, as in PyTorch. State per parameter: "step", "eta", "mu" (0-d CPU tensors, rounded to
    their dtype as PyTorch's are), "ax"."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_hyperparameter(0.0 <= lr, f"Invalid learning rate: {lr}")
        check_hyperparameter(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, lambd, alpha, t0 = float(group["lr"]), float(group["lambd"]), float(group["alpha"]), float(group["t0"])
        weight_decay, maximize = float(group["weight_decay"]), group["maximize"]
        for p, state in self._params_with_grad(group):
            step = advance_step(state)
            eta = scalar_state(state, "eta", lr).array
            mu = scalar_state(state, "mu", 1.0).array
            ax = state_buffer(state, "ax", p)
            p.device.backend.asgd_update(p.array, p.grad.array, ax, eta.item(), mu.item(), lambd, weight_decay,  # type: ignore[union-attr]
                                         maximize)
            eta[...] = lr / (1 + lambd * lr * step) ** alpha
            mu[...] = 1 / max(1.0, step - t0)
