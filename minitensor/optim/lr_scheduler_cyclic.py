"""The schedulers that cycle: ``CyclicLR`` (triangular waves, with momentum the opposite way) and
``CosineAnnealingWarmRestarts`` (SGDR), and the momentum cycling they share with ``OneCycleLR``
(``lr_scheduler`` re-exports them; the base is there)."""
from __future__ import annotations

import math
import types
from functools import partial
from typing import Any, Callable, Sequence

from .lr_scheduler import LRScheduler, _check_optimizer, _per_group
from .optimizer import Optimizer


class MomentumCycler:
    """Writes a momentum into SGD's ``momentum`` or Adam's beta1, whichever the optimizer has."""
    use_beta1: bool

    def _init_momentum(self, optimizer: Optimizer, base_momentum: Any, max_momentum: Any,
                       last_epoch: int) -> None:
        """Check the optimizer has a momentum; on a fresh start set it to ``max_momentum`` and record both
        bounds in each group ("max_momentum", "base_momentum")."""
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
        self.use_beta1 = "betas" in optimizer.defaults
        if last_epoch != -1:
            return
        for max_m, base_m, group in zip(_per_group("max_momentum", optimizer, max_momentum),
                                        _per_group("base_momentum", optimizer, base_momentum),
                                        optimizer.param_groups):
            self._set_momentum(group, max_m)
            group["max_momentum"] = max_m
            group["base_momentum"] = base_m

    def _set_momentum(self, group: dict[str, Any], momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum


class CyclicLR(MomentumCycler, LRScheduler):
    """Cyclical learning rates (Smith, 2017), stepped once per batch: lr rises linearly from ``base_lr`` to
    ``max_lr`` over ``step_size_up`` steps and falls back over ``step_size_down``; the wave's height is
    scaled by scale_fn(cycle) ('triangular': 1, 'triangular2': 1 / 2^(cycle - 1)) or scale_fn(step)
    ('exp_range': gamma^step). Momentum moves the opposite way between ``max_momentum`` and
    ``base_momentum``."""

    def __init__(self, optimizer: Optimizer, base_lr: float | Sequence[float], max_lr: float | Sequence[float],
                 step_size_up: int = 2000, step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True, base_momentum: float = 0.8,
                 max_momentum: float = 0.9, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._init_momentum(optimizer, base_momentum, max_momentum, last_epoch)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        """The built-in modes' scale function and the quantity it takes (a mode fixes scale_mode)."""
        if self._scale_fn_custom is not None:
            return
        fns: dict[str, tuple[Callable[[float], float], str]] = {
            "triangular": (_one, "cycle"), "triangular2": (_halving, "cycle"),
            "exp_range": (partial(_power, self.gamma), "iterations")}
        self._scale_fn_ref, self.scale_mode = fns[self.mode]

    def scale_fn(self, x: float) -> float:
        return (self._scale_fn_ref if self._scale_fn_custom is None else self._scale_fn_custom)(x)

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # position in the cycle, in [0, 1)
        rise = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        if self.cycle_momentum:
            for group, base_m, max_m in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(group, max_m - (max_m - base_m) * rise * scale)
        return [base_lr + (max_lr - base_lr) * rise * scale for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """As the base, without the built-in scale function and with a custom one as its object's
        ``__dict__`` (None for plain functions)."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved = state_dict["_scale_fn_custom"]
        super().load_state_dict({k: v for k, v in state_dict.items() if k != "_scale_fn_custom"})
        if saved is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(saved)
        self._init_scale_fn()


def _one(x: float) -> float:
    return 1.0


def _halving(x: float) -> float:
    return 1 / (2.0 ** (x - 1))


def _power(gamma: float, x: float) -> float:
    return gamma ** x


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter): cosine annealing that restarts at base_lr every T_i epochs, with
    T_0 the first period and T_{i+1} = T_mult T_i:

        lr = eta_min + (base_lr - eta_min) (1 + cos(pi T_cur / T_i)) / 2

    ``step(epoch)`` takes a fractional epoch (e.g. ``epoch + batch / batches``) and finds its period in
    closed form; ``step()`` advances T_cur by one."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        cosine = math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base_lr - self.eta_min) * (1 + cosine) / 2 for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to ``epoch`` (>= 0, fractional allowed) without a deprecation warning."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # the restarts before period n sum to T_0 (T_mult^n - 1) / (T_mult - 1)
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._set_lrs(self.get_lr())
