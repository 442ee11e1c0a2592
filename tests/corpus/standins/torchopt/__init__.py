"""torchopt stand-in: ``adam`` and ``FuncOptimizer``, the functional (differentiable) optimiser madagra/basic-pinn
trains with, as torchopt 0.7.3 computes them. ``FuncOptimizer.step(loss, params)`` takes the gradients with
``torch.autograd.grad(loss, params, create_graph=True, allow_unused=True)`` and returns new parameter tensors
``params + updates`` (not in place); Adam's updates are, at step t, with moments initialised to zeros,

    mu = b1 mu + (1 - b1) g,    nu = b2 nu + (1 - b2) g^2,
    update = -lr (mu / (1 - b1^t)) / (sqrt(nu / (1 - b2^t) + eps_root) + eps)."""
from __future__ import annotations

import torch


class _Adam:
    def __init__(self, lr, betas, eps, eps_root, weight_decay):
        self.lr, self.betas, self.eps, self.eps_root, self.weight_decay = lr, betas, eps, eps_root, weight_decay

    def init(self, params):
        return {"count": 0, "mu": tuple(torch.zeros_like(p) for p in params),
                "nu": tuple(torch.zeros_like(p) for p in params)}

    def update(self, grads, state, params):
        b1, b2 = self.betas
        count = state["count"] + 1
        grads = tuple(torch.zeros_like(p) if g is None else g for g, p in zip(grads, params))
        if self.weight_decay:
            grads = tuple(g + self.weight_decay * p for g, p in zip(grads, params))
        mu = tuple(b1 * m + (1 - b1) * g for m, g in zip(state["mu"], grads))
        nu = tuple(b2 * n + (1 - b2) * g * g for n, g in zip(state["nu"], grads))
        c1, c2 = 1 - b1 ** count, 1 - b2 ** count
        updates = tuple(-self.lr * (m / c1) / (torch.sqrt(n / c2 + self.eps_root) + self.eps)
                        for m, n in zip(mu, nu))
        return updates, {"count": count, "mu": mu, "nu": nu}


def adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *, eps_root=0.0, moment_requires_grad=False,
         maximize=False, use_accelerated_op=False):
    if maximize:
        raise NotImplementedError("the torchopt stand-in's adam does not maximize")
    return _Adam(lr, betas, eps, eps_root, weight_decay)


class FuncOptimizer:
    def __init__(self, impl, *, inplace=False):
        self.impl, self.inplace, self.optim_state = impl, inplace, None

    def step(self, loss, params, inplace=None):
        params = tuple(params)
        if self.optim_state is None:
            self.optim_state = self.impl.init(params)
        grads = torch.autograd.grad(loss, params, create_graph=True, allow_unused=True)
        updates, self.optim_state = self.impl.update(grads, self.optim_state, params)
        return tuple(p + u for p, u in zip(params, updates))


__all__ = ["adam", "FuncOptimizer"]
