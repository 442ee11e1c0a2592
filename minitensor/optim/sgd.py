"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay."""
from __future__ import annotations

from typing import Any

from .optimizer import (Optimizer, ParamsT, check_hyperparameter,
                        state_buffer)


class SGD(Optimizer):
    """PyTorch's SGD: with g = ±grad + weight_decay * param,

        b = g (first step) or momentum * b + (1 - dampening) * g ;  g = g + momentum * b (nesterov) or b
        param -= lr * g

    State per parameter: "momentum_buffer" (when momentum != 0)."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        check_hyperparameter(lr >= 0.0, f"Invalid learning rate: {lr}")
        check_hyperparameter(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        check_hyperparameter(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        check_hyperparameter(not nesterov or (momentum > 0 and dampening == 0),
                             "Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                                      foreach=foreach, differentiable=differentiable, fused=fused))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, momentum, dampening = float(group["lr"]), float(group["momentum"]), float(group["dampening"])
        weight_decay, nesterov, maximize = float(group["weight_decay"]), group["nesterov"], group["maximize"]
        for p, state in self._params_with_grad(group):
            first_step, buffer = False, None
            if momentum != 0:
                first_step = state.get("momentum_buffer") is None
                buffer = state_buffer(state, "momentum_buffer", p)
            p.device.backend.sgd_update(p.array, p.grad.array, buffer, lr, momentum, dampening, nesterov,  # type: ignore[union-attr]
                                        weight_decay, maximize, first_step)

