"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad``, ``step`` and PyTorch's state_dict.

A subclass fills in ``defaults`` and ``_step_group(group)``, which reads the group's hyper-parameters once
and calls one in-place backend method (``sgd_update``, ``adam_update``, ...) per parameter that has a
gradient. State tensors live in ``self.state[param]`` (a dict per parameter) on the parameter's device.

``state["step"]`` is, as in PyTorch, a 0-d float tensor on the CPU (float32, or float64 under a float64
default dtype): reading it costs no device sync, and it round-trips through ``state_dict`` unchanged.
"""
from __future__ import annotations

import warnings
from collections import defaultdict
from typing import Any, Callable, Iterable, Iterator

from .. import dtypes as _dt
from ..autograd import enable_grad, zero_grads
from ..backends.ieee_errors import IGNORE, restore, silence
from ..tensor import Tensor, _bump_version
from ..creation import tensor, zeros_like
from ..profiler.profile import record_function

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]


def check_hyperparameter(valid: bool, message: str) -> None:
    """Raise PyTorch's ValueError (e.g. "Invalid learning rate: -1") when ``valid`` is false."""
    if not valid:
        raise ValueError(message)


def _step_dtype() -> _dt.dtype:
    """PyTorch's dtype for step counters: float64 under a float64 default dtype, else float32."""
    return _dt.float64 if _dt.get_default_dtype() is _dt.float64 else _dt.float32


def new_step_counter() -> Tensor:
    """A 0-d CPU tensor counting steps from 0."""
    return tensor(0.0, dtype=_step_dtype())


def advance_step(state: dict[str, Any]) -> float:
    """state["step"] += 1 in place (a new counter when missing); returns the new count (1 at first)."""
    if "step" not in state:
        state["step"] = new_step_counter()
    counter = state["step"].array
    step = counter.item() + 1  # exact in a double, then rounded to the counter's dtype as ``counter += 1`` is
    counter[()] = step  # (a 0-d ufunc add costs ~0.9 us a parameter; this ~0.07)
    return counter.item()


# Per-parameter scalars PyTorch keeps as 0-d tensors beside "step" (NAdam's "mu_product", ASGD's "eta" and
# "mu"): CPU tensors of the step dtype, like "step", so that reading them costs no device sync.
SCALAR_STATE = frozenset({"step", "mu_product", "eta", "mu"})


def scalar_state(state: dict[str, Any], key: str, initial: float) -> Tensor:
    """``state[key]``, a 0-d CPU tensor of the step dtype, made holding ``initial`` when missing."""
    value = state.get(key)
    if value is None:
        value = state[key] = tensor(float(initial), dtype=_step_dtype())
    return value


def state_buffer(state: dict[str, Any], key: str, param: Tensor, fill: float = 0.0) -> Any:
    """The raw array of ``state[key]``, made (a tensor like ``param``, filled with ``fill``) when missing."""
    buffer = state.get(key)
    if buffer is None:
        buffer = state[key] = zeros_like(param)
        if fill != 0:
            buffer.array[...] = fill
    return buffer.array


def check_adam_hyperparameters(lr: float, eps: float, betas: tuple[float, float], weight_decay: float) -> None:
    """PyTorch's checks of the Adam family's hyper-parameters, in its order: lr, eps, each beta in [0, 1),
    weight_decay."""
    check_hyperparameter(0.0 <= lr, f"Invalid learning rate: {lr}")
    check_hyperparameter(0.0 <= eps, f"Invalid epsilon value: {eps}")
    for i, beta in enumerate(betas):
        check_hyperparameter(0.0 <= beta < 1.0, f"Invalid beta parameter at index {i}: {beta}")
    check_hyperparameter(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")


def adam_hyperparameters(group: dict[str, Any]) -> tuple[float, float, float, float, float]:
    """A param group's (lr, beta1, beta2, eps, weight_decay) as floats, read once per step."""
    lr, eps, weight_decay = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
    beta1, beta2 = (float(b) for b in group["betas"])
    return lr, beta1, beta2, eps, weight_decay


def adam_state(state: dict[str, Any], param: Tensor, second: str) -> tuple[float, Any, Any]:
    """A parameter's step, advanced, and the raw arrays of its first moment ("exp_avg") and of its second
    (``second``: "exp_avg_sq", or Adamax's "exp_inf"), made when missing, in PyTorch's state order."""
    step = advance_step(state)
    return step, state_buffer(state, "exp_avg", param), state_buffer(state, second, param)


class Optimizer:
    """Base class of every optimizer: ``param_groups``, ``state``, ``zero_grad``, ``step``, state_dict."""

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        if defaults.get("differentiable"):  # a silently non-differentiable step would give wrong meta-gradients
            raise NotImplementedError(f"{type(self).__name__}(differentiable=True): minitensor's optimizer steps "
                                      "update in place outside autograd; write the update with tensor ops instead")
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or "
                            f"dicts, but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)  # type: ignore[arg-type]

    # ---------------------------------------------------------------------------------- groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group: a dict with "params" and any hyper-parameters overriding ``defaults``, which (as in
        PyTorch) becomes the group itself, its params listed and the defaults filled in."""
        if not isinstance(param_group, dict):
            raise TypeError(f"a parameter group must be a dict, got {type(param_group).__name__}")
        group = param_group
        group["params"], names = _split_params(group["params"])
        if names is not None:
            group["param_names"] = names
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        params = group["params"]
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this "
                          "will cause an error", stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        if self.param_groups and ("param_names" in group) != ("param_names" in self.param_groups[0]):
            raise ValueError("all optimizer param groups should be with/without names")
        self.param_groups.append(group)

    # ------------------------------------------------------------------------------------ step
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's ``.grad`` (set_to_none=True) or zero it in place."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()`` (re-evaluated with grad
        enabled before the update) or None."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with record_function(f"Optimizer.step#{type(self).__name__}.step"):  # PyTorch's name for it
            quiet = silence(IGNORE)  # an inf or nan update computes silently, as PyTorch's (backends/ieee_errors.py)
            try:
                for group in self.param_groups:
                    self._step_group(group)
            finally:
                restore(quiet)
        return loss

    def _step_group(self, group: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not define _step_group")

    def _params_with_grad(self, group: dict[str, Any]) -> Iterator[tuple[Tensor, dict[str, Any]]]:
        """(param, its state dict) for each parameter of ``group`` whose ``.grad`` is set."""
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if grad.array.shape != p.array.shape:
                raise RuntimeError(f"a parameter of shape {tuple(p.shape)} has a gradient of shape "
                                   f"{tuple(grad.shape)}")
            _bump_version(p)  # the step writes into p: graphs that saved p must not backward through it
            yield p, self.state[p]

    # ------------------------------------------------------------------------------ state dict
    def state_dict(self) -> dict[str, Any]:
        """PyTorch's format: {"state": {index: {name: tensor or step}}, "param_groups": [{hyper-parameters,
        "params": [indices]}]}, parameters numbered in group order. The tensors are the live state (as in
        PyTorch): deep-copy or save the dict to keep a snapshot."""
        index_of: dict[int, int] = {}
        packed_groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            packed_groups.append(packed)
        packed_state = {index_of[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index_of}
        return {"state": packed_state, "param_groups": packed_groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore groups' hyper-parameters and per-parameter state saved by ``state_dict``.

        The saved groups must match this optimizer's in number and size. State tensors are copied to their
        parameter's device and (floating) dtype; "step" stays a CPU tensor."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups: "
                             f"{len(saved_groups)} saved, {len(self.param_groups)} in this optimizer")
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(f"loaded state dict contains a parameter group that doesn't match the size "
                                 f"of optimizer's group: group {i} has {len(saved['params'])} saved "
                                 f"parameters and {len(group['params'])} in this optimizer")
        param_of = {index: p for group, saved in zip(self.param_groups, saved_groups)
                    for index, p in zip(saved["params"], group["params"])}
        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for index, saved_state in state_dict["state"].items():
            if index not in param_of:
                raise ValueError(f"loaded state dict has state for parameter {index}, which no saved group "
                                 "lists")
            param = param_of[index]
            state[param] = {key: self._loaded_state_value(param, key, value)
                            for key, value in saved_state.items()}
        self.param_groups = [self._restored_group(group, saved)
                             for group, saved in zip(self.param_groups, saved_groups)]
        self.state = state

    def _loaded_state_value(self, param: Tensor, key: str, value: Any) -> Any:
        """A loaded state entry of ``param``, copied to where this optimizer keeps it."""
        return _state_value_for(param, key, value)

    def _restored_group(self, group: dict[str, Any], saved: dict[str, Any]) -> dict[str, Any]:
        """The saved hyper-parameters on this group's parameters (defaults fill keys the save lacks)."""
        restored = {k: v for k, v in saved.items() if k != "params"}
        restored["params"] = group["params"]
        if "param_names" in group:
            restored.setdefault("param_names", group["param_names"])
        for name, default in self.defaults.items():
            restored.setdefault(name, default)
        return restored

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"


def _split_params(params: Any) -> tuple[list[Tensor], list[str] | None]:
    """A group's parameters as a list, and their names when given as (name, tensor) pairs."""
    if isinstance(params, Tensor):
        params = [params]
    elif isinstance(params, set):
        raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                        "of tensors in sets will change between runs. Please use a list instead.")
    else:
        params = list(params)
    named = [isinstance(p, tuple) for p in params]
    if any(named) and not all(named):
        raise ValueError("all optimizer params should be with/without names. Some param names are missing")
    names = [name for name, _ in params] if params and all(named) else None
    tensors = [p for _, p in params] if names is not None else params
    for p in tensors:
        if not isinstance(p, Tensor):
            raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                            f"{type(p).__name__}")
        if not p.is_leaf:
            raise ValueError("can't optimize a non-leaf Tensor (it was computed from other tensors: optimize "
                             "the leaves it came from, or detach() it and set requires_grad=True)")
    return tensors, names


def _state_value_for(param: Tensor, key: str, value: Any) -> Any:
    """A loaded state entry, copied: "step" and the other scalars as CPU tensors, other tensors on ``param``'s
    device and dtype."""
    if key in SCALAR_STATE and (not isinstance(value, Tensor) or value.ndim == 0):
        if isinstance(value, Tensor):
            return tensor(value, device="cpu")
        return tensor(float(value), dtype=_step_dtype())  # a plain number, as older checkpoints hold
    if not isinstance(value, Tensor):
        return value
    if value.shape != param.shape:
        raise ValueError(f"loaded state {key!r} has shape {tuple(value.shape)} but its parameter has shape "
                         f"{tuple(param.shape)}")
    return tensor(value, dtype=param.dtype if param.is_floating_point() else value.dtype, device=param.device)
