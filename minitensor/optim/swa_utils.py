"""``minitensor.optim.swa_utils``: PyTorch's stochastic weight averaging (SWA) and exponential moving average
(EMA) of a model's weights, ``SWALR`` and ``update_bn``.

SWA after n models: W <- W + (W_model - W) / (n + 1), the running mean. EMA: W <- decay W + (1 - decay)
W_model. The first ``update_parameters`` copies the model's weights; buffers (BatchNorm's statistics) are
copied each time unless ``use_buffers`` averages them too. ``update_bn`` recomputes BatchNorm statistics for
averaged weights with one pass over the data (cumulative averages: momentum None).
"""
from __future__ import annotations

import itertools
import math
from copy import deepcopy
from typing import Any, Callable, Iterable, Sequence

from ..autograd import no_grad
from ..creation import tensor
from .. import dtypes as _dt
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.instancenorm import _InstanceNorm
from ..nn.modules.module import Module
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _check_optimizer, _per_group
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], Any], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _lerp_all(averaged: Sequence[Tensor], current: Sequence[Tensor], weight: float) -> None:
    """averaged += weight (current - averaged) in place (integer tensors through a cast back)."""
    for a, c in zip(averaged, current, strict=True):
        if a.is_floating_point():
            a.add_(c - a, alpha=weight)  # lerp_, as PyTorch's foreach lerp for weight < 1/2
        else:
            a.copy_(a * (1 - weight) + c * weight)


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """EMA in place over lists of tensors: W <- W + (1 - decay) (W_model - W)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: Sequence[Tensor], current_param_list: Sequence[Tensor], _: Any) -> None:
        _lerp_all(ema_param_list, current_param_list, 1 - decay)
    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """The running mean in place over lists of tensors: W <- W + (W_model - W) / (n + 1)."""
    @no_grad()
    def swa_update(averaged_param_list: Sequence[Tensor], current_param_list: Sequence[Tensor],
                   num_averaged: Any) -> None:
        _lerp_all(averaged_param_list, current_param_list, float(1 / (num_averaged + 1)))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """EMA of one tensor: decay W + (1 - decay) W_model (a new tensor)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """The running mean of one tensor: W + (W_model - W) / (n + 1) (a new tensor)."""
    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (on ``device``) whose weights ``update_parameters(model)`` averages: SWA's running
    mean by default, or ``avg_fn`` (one tensor at a time, returns the new value) or ``multi_avg_fn`` (lists
    of tensors of one device and dtype, in place). ``n_averaged`` (a buffer) counts the models averaged."""

    def __init__(self, model: Module, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_dt.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s parameters (and buffers with ``use_buffers``) into this copy's."""
        ours: Iterable[Tensor] = itertools.chain(self.module.parameters(), self.module.buffers()) \
            if self.use_buffers else self.parameters()
        theirs: Iterable[Tensor] = itertools.chain(model.parameters(), model.buffers()) \
            if self.use_buffers else model.parameters()
        pairs = [(a.detach(), m.detach().to(a.device)) for a, m in zip(ours, theirs)]
        n = self.n_averaged
        if int(n.item()) == 0:
            for a, m in pairs:
                a.copy_(m)
        elif self.avg_fn is not None:
            for a, m in pairs:
                a.copy_(self.avg_fn(a, m, n.to(a.device)))
        else:
            groups: dict[tuple[Any, Any], list[tuple[Tensor, Tensor]]] = {}
            for a, m in pairs:
                groups.setdefault((a.device, a.dtype), []).append((a, m))
            for (device, _), group in groups.items():
                averaged, current = [a for a, _ in group], [m for _, m in group]
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(averaged, current, n.to(device))
                elif device.type == "cuda":  # PyTorch's foreach devices: the lerp form
                    get_swa_multi_avg_fn()(averaged, current, n.to(device))
                else:  # the CPU: W + (W_model - W) / (n + 1), tensor by tensor, as PyTorch's
                    swa = get_swa_avg_fn()
                    for a, m in group:
                        a.copy_(swa(a, m, n.to(device)))
        if not self.use_buffers:  # buffers follow the source model
            for b_ours, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_ours.detach().copy_(b_model.detach().to(b_ours.device))
        self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers with one pass over ``loader`` (each
    batch a tensor, or a list/tuple whose first item is the input), as cumulative averages."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):  # PyTorch's _BatchNorm
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to ``swa_lr`` (one value, or one per group) over ``anneal_epochs`` steps, by
    a cosine (alpha = (1 - cos(pi t)) / 2) or linearly (alpha = t), t = step / anneal_epochs; then holds it.
    Chainable as PyTorch's: the lr before annealing is recovered from the current one at each step."""

    def __init__(self, optimizer: Optimizer, swa_lr: Any, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and the annealing function (restored from its name)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
