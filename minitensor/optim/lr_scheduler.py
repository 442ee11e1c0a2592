"""Learning-rate schedulers with PyTorch's names, defaults and update rules.

A scheduler rewrites ``group["lr"]`` of its optimizer's groups each ``step()``. Most use PyTorch's
chainable (recursive) forms, new lr = f(old lr), so that several schedulers can act on one optimizer;
``step(epoch)`` (deprecated in PyTorch too) jumps with the closed form where one exists. The schedulers
that drive others or follow a metric (``OneCycleLR``, ``SequentialLR``, ``ChainedScheduler``,
``ReduceLROnPlateau``) are in ``lr_scheduler_extra.py``; those that cycle (``CyclicLR``,
``CosineAnnealingWarmRestarts``) in ``lr_scheduler_cyclic.py``.
"""
from __future__ import annotations

import math
import types
import warnings
from collections import Counter
from typing import Any, Callable, Sequence

from .optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available."
)


def _check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """``value`` repeated for each param group, or a list/tuple checked to have one entry per group."""
    n_groups = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n_groups:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has "
                             f"{len(value)} values, param_groups has {n_groups}.")
        return list(value)
    return [value] * n_groups


class LRScheduler:
    """Base class: ``base_lrs`` (each group's "initial_lr"), ``last_epoch`` (steps taken, -1 before the first
    one that construction makes), ``step()``, ``get_last_lr()``, ``state_dict()`` / ``load_state_dict()``.

    Subclasses define ``get_lr()`` (the lrs for ``last_epoch``, usually from the groups' current lrs) and
    optionally ``_get_closed_form_lr()``."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                                   "an optimizer")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True  # PyTorch's flag, set while get_lr() runs for construction's step
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr")

    def _get_closed_form_lr(self) -> list[float] | None:
        """The lrs at ``last_epoch`` from ``base_lrs`` alone; None when the scheduler has no closed form."""
        return None

    def get_last_lr(self) -> list[float]:
        """The lrs the last ``step()`` set, one per group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or batch) and write the new lrs into the optimizer's groups."""
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
            self._jump_to(epoch)
            return
        self._step_count += 1
        self.last_epoch += 1
        self._set_lrs(self.get_lr())

    def _jump_to(self, epoch: int) -> None:
        """Set ``last_epoch = epoch`` and its lrs, by the closed form where there is one."""
        self._step_count += 1
        self.last_epoch = epoch
        lrs = self._get_closed_form_lr()
        self._set_lrs(self.get_lr() if lrs is None else lrs)

    def _set_lrs(self, lrs: Sequence[float]) -> None:
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def _group_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler  # PyTorch's older name, still used by custom schedulers


class _LambdaState:
    """``state_dict`` of the schedulers built on functions: each lambda stored as None (plain functions) or its
    object's ``__dict__``, restored into the functions the scheduler was constructed with."""
    lr_lambdas: list[Callable[[int], float]]

    def state_dict(self) -> dict[str, Any]:
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "lr_lambdas"})
        for fn, saved in zip(self.lr_lambdas, state_dict["lr_lambdas"]):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaState, LRScheduler):
    """lr = base_lr * lr_lambda(epoch), one function for all groups or one per group."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.lr_lambdas = _per_group("lr_lambda", optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """lr_epoch = lr_{epoch - 1} * lr_lambda(epoch) (the construction step leaves the lrs as they are)."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        n_groups = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)) and len(lr_lambda) != n_groups:
            raise ValueError(f"Expected {n_groups} lr_lambdas, but got {len(lr_lambda)}")
        self.lr_lambdas = _per_group("lr_lambda", optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._group_lrs()
        return [lr * lmbda(self.last_epoch) for lmbda, lr in zip(self.lr_lambdas, self._group_lrs())]


class StepLR(LRScheduler):
    """lr multiplied by ``gamma`` every ``step_size`` epochs: base_lr * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr multiplied by ``gamma`` at each milestone epoch (a repeated milestone multiplies repeatedly)."""

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        # a plain dict after a checkpoint round trip, so no Counter methods here
        passed = sum(count for milestone, count in self.milestones.items() if milestone <= self.last_epoch)
        return [base_lr * self.gamma ** passed for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr multiplied by ``gamma`` every epoch: base_lr * gamma ** epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from base_lr to ``eta_min`` over ``T_max`` epochs (SGDR without restarts):

        lr_t = eta_min + (base_lr - eta_min) (1 + cos(pi t / T_max)) / 2

    stepped with PyTorch's recursive form, which gives these values when nothing else changes the lr and
    keeps cycling (back up to base_lr over the next T_max epochs) past T_max."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if t == 0:
            return self._group_lrs()
        if self._step_count == 1 and t > 0:  # constructed with last_epoch > -1: resume from the closed form
            return self._get_closed_form_lr()
        if (t - 1 - t_max) % (2 * t_max) == 0:  # the bottom of a cycle, where the ratio below is 0 / 0
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base_lr, lr in zip(self.base_lrs, self._group_lrs())]
        ratio = (1 + math.cos(math.pi * t / t_max)) / (1 + math.cos(math.pi * (t - 1) / t_max))
        return [ratio * (lr - eta_min) + eta_min for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        cosine = math.cos(math.pi * self.last_epoch / self.T_max)
        return [self.eta_min + (base_lr - self.eta_min) * (1 + cosine) / 2 for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """lr scaled by a factor going linearly from ``start_factor`` to ``end_factor`` over ``total_iters``
    epochs, then constant: base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters)."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal "
                             "to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._group_lrs()]
        if self.last_epoch > self.total_iters:
            return self._group_lrs()
        span = self.end_factor - self.start_factor
        factor = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [lr * factor for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)
                for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = base_lr * ``factor`` for the first ``total_iters`` epochs, then base_lr."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The recursive form: times ``factor`` at epoch 0, divided by it at ``total_iters``."""
        if self.last_epoch == 0:
            scale = self.factor
        elif self.last_epoch == self.total_iters:
            scale = 1.0 / self.factor
        else:
            scale = 1.0
        return [lr * scale for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power: polynomial decay to 0 in
    ``total_iters`` epochs (stepped recursively, as PyTorch does)."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        decay = ((1.0 - self.last_epoch / self.total_iters) /
                 (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * decay for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


from .lr_scheduler_extra import OneCycleLR, ReduceLROnPlateau, SequentialLR  # noqa: E402 (they build on LRScheduler)

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LinearLR", "OneCycleLR", "SequentialLR", "ReduceLROnPlateau"]

from .lr_scheduler_cyclic import CosineAnnealingWarmRestarts, CyclicLR  # noqa: E402
from .lr_scheduler_extra import ChainedScheduler  # noqa: E402

__all__ += ["MultiplicativeLR", "ConstantLR", "PolynomialLR", "ChainedScheduler", "CyclicLR",
            "CosineAnnealingWarmRestarts"]
