"""``Adagrad``: per-element learning rates from the running sum of squared gradients."""
from __future__ import annotations

from typing import Any

from .optimizer import (Optimizer, ParamsT, advance_step, check_hyperparameter,
                        new_step_counter, state_buffer)


class Adagrad(Optimizer):
    """PyTorch's Adagrad: with g = ±grad + weight_decay * param and t the step,

        s += g^2 ;  param -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)

    State per parameter, created with the group (as PyTorch does): "step" and "sum", which starts at
    ``initial_accumulator_value``."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        check_hyperparameter(0.0 <= lr, f"Invalid learning rate: {lr}")
        check_hyperparameter(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        check_hyperparameter(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        check_hyperparameter(0.0 <= initial_accumulator_value,
                             f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        check_hyperparameter(0.0 <= eps, f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        for p in group["params"]:
            self._init_state(p, group)

    def _init_state(self, p: Any, group: dict[str, Any]) -> Any:
        """Create p's "step" and "sum" when missing; returns the raw "sum" array."""
        state = self.state[p]
        if "step" not in state:
            state["step"] = new_step_counter()
        return state_buffer(state, "sum", p, fill=float(group["initial_accumulator_value"]))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, lr_decay, eps = float(group["lr"]), float(group["lr_decay"]), float(group["eps"])
        weight_decay, maximize = float(group["weight_decay"]), group["maximize"]
        for p, state in self._params_with_grad(group):
            state_sum = self._init_state(p, group)  # already there unless a loaded state dict lacked it
            p.device.backend.adagrad_update(p.array, p.grad.array, state_sum, advance_step(state), lr,  # type: ignore[arg-type, union-attr]
                                            lr_decay, weight_decay, eps, maximize)
