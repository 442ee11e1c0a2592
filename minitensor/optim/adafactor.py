"""``Adafactor`` (Shazeer & Stern, 2018) as PyTorch 2.5+ implements it (``torch/optim/_adafactor.py``): the
second moment of a matrix's gradient kept as one row vector and one column vector (O(R + C) memory)."""
from __future__ import annotations

from typing import Any

from .. import autograd
from ..creation import tensor, zeros
from ..functional.math import lerp
from ..tensor import Tensor
from ..type_info import finfo
from .optimizer import Optimizer, ParamsT, advance_step, check_hyperparameter


class Adafactor(Optimizer):
    """PyTorch's Adafactor: with g = ±grad, t the step, beta2_t = 1 - t^beta2_decay, rho_t = min(lr, 1/sqrt(t))
    and alpha = max(eps2, RMS(param)) rho_t (the RMS before weight decay):

        param *= 1 - lr weight_decay
        a matrix (..., R, C): r = beta2_t r + (1 - beta2_t) mean_C(g^2) (..., R, 1);
                              c = beta2_t c + (1 - beta2_t) mean_R(g^2) (..., 1, C);
                              v = r c / max(mean_R(r), eps1)
        a vector or scalar:   v = beta2_t v + (1 - beta2_t) g^2
        u = g / sqrt(max(v, eps1^2));  param -= alpha / max(1, RMS(u) / d) u

    eps1 defaults to the parameter dtype's machine epsilon. State per parameter: "step" and "row_var" /
    "col_var" (matrices) or "variance". The last two dims of a parameter with more are its matrix.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        check_hyperparameter(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        check_hyperparameter(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        check_hyperparameter(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        check_hyperparameter(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        check_hyperparameter(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        check_hyperparameter(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, beta2_decay, d = float(group["lr"]), float(group["beta2_decay"]), float(group["d"])
        weight_decay, (eps1, eps2) = float(group["weight_decay"]), group["eps"]
        with autograd.no_grad():
            for p, state in self._params_with_grad(group):
                assert p.grad is not None  # _params_with_grad yields only these
                grad = -p.grad if group["maximize"] else p.grad
                step = advance_step(state)
                if eps1 is None:  # PyTorch's: fixed by the first parameter of the group
                    eps1 = finfo(p.dtype).eps
                one_minus_beta2 = step ** beta2_decay
                rho = min(lr, 1 / step ** 0.5)
                alpha = max(eps2, float(p.norm(2)) / p.numel() ** 0.5) * rho
                if weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)
                if grad.dim() > 1:
                    row_var, col_var = self._factored_state(state, grad)
                    row_var.copy_(lerp(row_var, grad.square().mean(dim=-1, keepdim=True), one_minus_beta2))
                    col_var.copy_(lerp(col_var, grad.square().mean(dim=-2, keepdim=True), one_minus_beta2))
                    var = (row_var @ col_var) / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
                else:
                    if "variance" not in state:
                        state["variance"] = zeros(grad.shape, dtype=grad.dtype, device=grad.device)
                    state["variance"].copy_(lerp(state["variance"], grad * grad, one_minus_beta2))
                    var = state["variance"]
                update = var.clamp(min=eps1 * eps1).rsqrt() * grad
                denom = max(1.0, float(update.norm(2)) / (update.numel() ** 0.5 * d))
                p.add_(update, alpha=-alpha / denom)

    @staticmethod
    def _factored_state(state: dict[str, Any], grad: Tensor) -> tuple[Tensor, Tensor]:
        """(row_var (..., R, 1), col_var (..., 1, C)), made as zeros at the first step."""
        if "row_var" not in state:
            state["row_var"] = zeros((*grad.shape[:-1], 1), dtype=grad.dtype, device=grad.device)
            state["col_var"] = zeros((*grad.shape[:-2], 1, grad.shape[-1]), dtype=grad.dtype, device=grad.device)
        return state["row_var"], state["col_var"]

    def _loaded_state_value(self, param: Tensor, key: str, value: Any) -> Any:
        if key in ("row_var", "col_var") and isinstance(value, Tensor):  # not the parameter's shape
            shape = (*param.shape[:-1], 1) if key == "row_var" else (*param.shape[:-2], 1, param.shape[-1])
            if tuple(value.shape) != shape:
                raise ValueError(f"loaded state {key!r} has shape {tuple(value.shape)}, expected {shape}")
            return tensor(value, dtype=param.dtype, device=param.device)
        return super()._loaded_state_value(param, key, value)
