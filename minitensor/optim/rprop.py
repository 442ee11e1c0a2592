"""``Rprop``: resilient backpropagation (Riedmiller & Braun), a per-element step size driven by gradient signs."""
from __future__ import annotations

from typing import Any

from .optimizer import Optimizer, ParamsT, advance_step, check_hyperparameter, state_buffer


class Rprop(Optimizer):
    """PyTorch's Rprop: with g = ±grad, t the step and each element's step size starting at lr,

        s = sign(g * prev) ;  step_size = clip(step_size * (etaplus if s > 0, etaminus if s < 0, else 1),
                                               *step_sizes)
        g = 0 where s < 0 ;  param -= sign(g) * step_size ;  prev = g

    No weight decay (PyTorch has none). State per parameter: "step", "prev", "step_size"."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        check_hyperparameter(0.0 <= lr, f"Invalid learning rate: {lr}")
        check_hyperparameter(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _step_group(self, group: dict[str, Any]) -> None:
        etaminus, etaplus = (float(e) for e in group["etas"])
        step_size_min, step_size_max = (float(s) for s in group["step_sizes"])
        for p, state in self._params_with_grad(group):
            advance_step(state)
            prev = state_buffer(state, "prev", p)
            step_size = state_buffer(state, "step_size", p, fill=float(group["lr"]))
            p.device.backend.rprop_update(p.array, p.grad.array, prev, step_size, etaminus, etaplus,  # type: ignore[union-attr]
                                          step_size_min, step_size_max, group["maximize"])
