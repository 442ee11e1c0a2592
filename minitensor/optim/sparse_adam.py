"""``SparseAdam``: Adam for sparse (COO) gradients, e.g. of a large embedding table; entries absent from a
gradient keep their moments and values, unlike Adam's, which decays every moment at every step."""
from __future__ import annotations

from typing import Any

from .optimizer import Optimizer, ParamsT, check_hyperparameter, state_buffer


class SparseAdam(Optimizer):
    """PyTorch's SparseAdam: for the entries i of the coalesced gradient g (±, by maximize), t the step,

        m[i] = beta1 m[i] + (1 - beta1) g ;  v[i] = beta2 v[i] + (1 - beta2) g^2
        param[i] -= lr sqrt(1 - beta2^t) / (1 - beta1^t) * m[i] / (sqrt(v[i]) + eps)

    Parameters must be dense and real, gradients sparse (a dense one raises PyTorch's RuntimeError). State
    per parameter: "step" (a Python int, as PyTorch keeps it here), "exp_avg", "exp_avg_sq"."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        check_hyperparameter(0.0 < lr, f"Invalid learning rate: {lr}")
        check_hyperparameter(0.0 < eps, f"Invalid epsilon value: {eps}")
        check_hyperparameter(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        check_hyperparameter(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        where = [[i, j] for i, group in enumerate(self.param_groups) for j, p in enumerate(group["params"])
                 if p.is_sparse]
        if where:
            raise ValueError(f"Sparse params at indices {where}: SparseAdam requires dense parameter tensors")
        where = [[i, j] for i, group in enumerate(self.param_groups) for j, p in enumerate(group["params"])
                 if p.is_complex()]
        if where:
            raise ValueError(f"Complex params at indices {where}: SparseAdam does not support complex parameters")

    def _step_group(self, group: dict[str, Any]) -> None:
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(b) for b in group["betas"])
        for p, state in self._params_with_grad(group):
            if not p.grad.is_sparse:  # type: ignore[union-attr]
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
            exp_avg, exp_avg_sq = state_buffer(state, "exp_avg", p), state_buffer(state, "exp_avg_sq", p)
            state["step"] = step = state.get("step", 0) + 1  # counted even when the gradient holds nothing
            grad = p.grad.coalesce().array  # type: ignore[union-attr]  # unique indices: the update is not linear
            if grad.nnz == 0:
                continue
            p.device.backend.sparse_adam_update(p.array, grad.indices, grad.values, exp_avg, exp_avg_sq, step, lr,
                                                beta1, beta2, eps, group["maximize"])

    def _loaded_state_value(self, param: Any, key: str, value: Any) -> Any:
        """"step" stays a Python int (the base class would make it a 0-d tensor)."""
        if key == "step":
            return int(value.item() if hasattr(value, "item") else value)
        return super()._loaded_state_value(param, key, value)
