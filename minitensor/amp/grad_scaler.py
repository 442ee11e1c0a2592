"""``GradScaler``: loss scaling for float16 training, PyTorch's ``torch.amp.GradScaler``.

The loss is multiplied by ``scale`` before backward, so small float16 gradients do not flush to zero;
``unscale_`` divides the gradients back (one backend call per device and dtype,
``amp_unscale_and_check_inf``) and notes whether any is inf/NaN; ``step`` skips the optimizer step when one
is (the only host sync); ``update`` halves the scale after such a step and doubles it after
``growth_interval`` clean steps in a row.
"""
from __future__ import annotations

import warnings
from typing import Any

from ..creation import full
from ..tensor import Tensor

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("minitensor.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                              "Disabling.", UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": []})

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or nested lists/tuples of them) times the scale, as float32 0-d tensor
        products (a float16 loss gives a float32 scaled loss, as in PyTorch)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * full((), self._scale, device=outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place, once per step, noting inf/NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        groups: dict[tuple[Any, Any], list[Any]] = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.dtype.itemsize == 2 and p.grad.is_floating_point():
                    raise ValueError("Attempting to unscale FP16 gradients.")
                groups.setdefault((p.grad.device, p.grad.dtype), []).append(p.grad.array)
        inv_scale = 1.0 / self._scale
        state["found_inf"] = [dev.backend.amp_unscale_and_check_inf(grads, inv_scale)
                              for (dev, _), grads in groups.items()]
        state["stage"] = _UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)`` unless a gradient is inf/NaN (then the step is skipped and the
        optimizer's state is untouched); unscales first if ``unscale_`` was not called."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        if not state["found_inf"] and not any(p.grad is not None for g in optimizer.param_groups
                                              for p in g["params"]):
            raise AssertionError("No inf checks were recorded for this optimizer.")
        found = sum(float(f) for f in state["found_inf"])  # the one host sync of the step
        state["stage"] = _STEPPED
        return None if found else optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """After every optimizer's step: a new scale from ``new_scale``, or backoff (a skipped step) /
        growth (``growth_interval`` clean steps in a row)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        else:
            founds = [f for s in self._per_optimizer.values() for f in s["found_inf"]]
            if not founds:
                raise AssertionError("No inf checks were recorded prior to update.")
            if sum(float(f) for f in founds):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer.clear()

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's keys; empty when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
