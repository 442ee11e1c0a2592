"""``OneCycleLR``, ``SequentialLR``, ``ChainedScheduler`` and ``ReduceLROnPlateau``: the schedulers that follow a
whole-run shape, drive other schedulers or follow a metric (``lr_scheduler`` re-exports them; the others and
the base are there)."""
from __future__ import annotations

import math
import warnings
from bisect import bisect_right
from typing import Any, Sequence

from .lr_scheduler import EPOCH_DEPRECATION_WARNING, LRScheduler, _check_optimizer, _per_group
from .lr_scheduler_cyclic import MomentumCycler
from .optimizer import Optimizer


class OneCycleLR(MomentumCycler, LRScheduler):
    """The 1cycle policy (Smith & Topin), stepped once per batch for ``total_steps`` (or
    ``epochs * steps_per_epoch``) steps: lr rises from max_lr / div_factor to max_lr over the first
    ``pct_start`` of the steps, then falls to max_lr / (div_factor * final_div_factor), each phase annealed by
    cosine or linearly; momentum (SGD's momentum or Adam's beta1) cycles the opposite way between
    ``max_momentum`` and ``base_momentum``. ``three_phase`` goes back down to the initial lr symmetrically
    before the final annihilation phase."""

    def __init__(self, optimizer: Optimizer, max_lr: float | Sequence[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.85, max_momentum: float | Sequence[float] = 0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        self._schedule_phases = self._phases(float(pct_start * self.total_steps), three_phase)
        if last_epoch == -1:
            for max_lr_i, group in zip(_per_group("max_lr", optimizer, max_lr), optimizer.param_groups):
                group["initial_lr"] = max_lr_i / div_factor
                group["max_lr"] = max_lr_i
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._init_momentum(optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _phases(self, warmup_steps: float, three_phase: bool) -> list[dict[str, Any]]:
        """Each phase: the step it ends on, and the group keys its lr and momentum go from and to."""
        def phase(end_step: float, start_lr: str, end_lr: str, start_momentum: str,
                  end_momentum: str) -> dict[str, Any]:
            return dict(end_step=end_step, start_lr=start_lr, end_lr=end_lr, start_momentum=start_momentum,
                        end_momentum=end_momentum)

        last = self.total_steps - 1
        if three_phase:
            return [phase(warmup_steps - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                    phase(2 * warmup_steps - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                    phase(last, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        return [phase(warmup_steps - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                phase(last, "max_lr", "min_lr", "base_momentum", "max_momentum")]

    def _anneal(self, start: float, end: float, pct: float) -> float:
        """From ``start`` (pct 0) to ``end`` (pct 1), along half a cosine or a line."""
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[phase["start_momentum"]],
                                                               group[phase["end_momentum"]], pct))
                    break
                start_step = end_step
        return lrs


def _total_steps(total_steps: int | None, epochs: int | None, steps_per_epoch: int | None) -> int:
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
    if not isinstance(epochs, int) or epochs <= 0:
        raise ValueError(f"Expected positive integer epochs, but got {epochs}")
    if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
        raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
    return epochs * steps_per_epoch


class _Composite(LRScheduler):
    """A scheduler that drives others on one optimizer; its state dict holds each one's."""
    _schedulers: list[LRScheduler]

    def _set_schedulers(self, optimizer: Optimizer | None, schedulers: Sequence[LRScheduler], empty: str) -> None:
        """Check ``schedulers`` all drive ``optimizer`` (by default the first one's) and keep them."""
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler{empty}, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{type(self).__name__} at index {i} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{type(self).__name__} does not support `ReduceLROnPlateau` scheduler as "
                                 "it requires additional kwargs to be specified when calling `step`, but got "
                                 f"one at index {i} in the given schedulers sequence.")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{type(self).__name__} expects all schedulers to belong to the same "
                                 f"optimizer, but got scheduler {type(scheduler).__name__} at index {i} with "
                                 "a different one")
        self.optimizer = optimizer
        self._schedulers = list(schedulers)

    def state_dict(self) -> dict[str, Any]:
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for scheduler, saved in zip(self._schedulers, state_dict["_schedulers"]):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite):
    """Runs ``schedulers[i]`` between ``milestones[i - 1]`` and ``milestones[i]``; each later scheduler starts
    from its epoch 0 (closed form) at its milestone."""

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self._set_schedulers(optimizer, schedulers, "")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more "
                             "than the number of milestone points, but got number of schedulers "
                             f"{len(schedulers)} and the number of milestones to be equal to "
                             f"{len(milestones)}")
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:  # undo what constructing the schedulers did to the lrs
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            scheduler.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._jump_to(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Steps every one of ``schedulers`` at each ``step()``, in order, so that their (chainable) updates
    compose on the one optimizer."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        self._set_schedulers(optimizer, schedulers, " to be chained")
        self._last_lr = self._group_lrs()

    def step(self) -> None:  # type: ignore[override]
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._group_lrs()


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lrs by ``factor`` (not below ``min_lr``) once the metric passed to ``step(metrics)`` has
    not improved for more than ``patience`` epochs, then wait ``cooldown`` epochs before counting again.

    Improvement in mode 'min' means a < best * (1 - threshold) ('rel') or a < best - threshold ('abs');
    'max' mirrors it. A reduction smaller than ``eps`` is skipped."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | Sequence[float] = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        _check_optimizer(optimizer)
        self._init_is_better(mode, threshold, threshold_mode)
        self.optimizer = optimizer
        self.factor = factor
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else min_lr  # for groups added later
        self.min_lrs = _per_group("min_lr", optimizer, min_lr)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = self._group_lrs()
        self._reset()

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        """Check and keep what ``is_better`` compares by, and the worst metric of the mode (PyTorch's)."""
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        relative = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if relative else a < best - self.threshold
        return a > best * (1.0 + self.threshold) if relative else a > best + self.threshold

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record this epoch's metric (a number or a one-element tensor) and reduce the lrs on a plateau."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._group_lrs()

    def _reduce_lr(self) -> None:
        if len(self.min_lrs) != len(self.optimizer.param_groups):
            if self.default_min_lr is None:
                n_groups = len(self.optimizer.param_groups)
                raise RuntimeError(f"The number of param groups in the optimizer ({n_groups}) differs from "
                                   f"when ReduceLROnPlateau was initialized ({len(self.min_lrs)}), usually "
                                   "due to a new param group being added to the optimizer. Please modify the "
                                   "`min_lrs` field to match the length of the optimizer param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr
