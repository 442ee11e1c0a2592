"""``state_dict`` and ``load_state_dict`` with PyTorch's semantics, as ``Module``'s base class: keys are the
dotted paths through ``_modules`` to each parameter and persistent buffer (``"features.1.running_mean"``)."""
from __future__ import annotations

import functools
import itertools
from collections import OrderedDict, namedtuple
from typing import Any, Mapping

from ...autograd import no_grad
from ...tensor import Tensor


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: keys the module wanted but did not get, and keys it did not know."""
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


class StateDictMixin:
    """Saving and loading of a module's parameters and persistent buffers (``Module`` keeps the registries)."""

    _parameters: dict[str, Any]
    _buffers: dict[str, Any]
    _modules: dict[str, Any]
    _non_persistent_buffers_set: set[str]

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """Every parameter and persistent buffer by dotted name, as tensors detached from the graph that
        share the module's memory (``keep_vars=True`` gives the Parameters themselves)."""
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination  # type: ignore[return-value]

    def _register_load_state_dict_pre_hook(self, hook: Any, with_module: bool = False) -> Any:
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`` (after
        ``module`` when ``with_module``) runs before this module loads its entries and may rename keys in
        ``state_dict`` (a copy of the caller's), e.g. old checkpoints' names; returns a RemovableHandle."""
        from .module import RemovableHandle  # module.py builds on this file
        hooks = self.__dict__.setdefault("_load_state_dict_pre_hooks", {})
        handle = RemovableHandle(hooks)
        hooks[handle.id] = functools.partial(hook, self) if with_module else hook  # partial: deepcopy follows
        return handle

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Copy this module's own entries of ``state_dict`` in place, recording what does not fit."""
        for hook in list(self.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            hook(state_dict, prefix, {}, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                       if v is not None}
        for name, target in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected Tensor from checkpoint '
                                  f"but received {type(value).__name__}")
            elif tuple(value.shape) != tuple(target.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} "
                                  f"from checkpoint, the shape in current model is {tuple(target.shape)}.")
            else:
                with no_grad():
                    target.copy_(value)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix):
                    continue
                head, *rest = key[len(prefix):].split(".", 1)
                if (rest and head not in self._modules) or (not rest and head not in local_state):
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> _IncompatibleKeys:
        """Copy ``state_dict``'s values into this module's parameters and buffers (in place, so optimizers
        keep working). ``strict``: every key must match; shape mismatches are errors either way. Raises
        one RuntimeError listing every problem; returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []

        def load(module: StateDictMixin, local: Mapping[str, Any], prefix: str) -> None:
            # Always collect missing/unexpected keys (strict=True here, as PyTorch); only raising depends on strict.
            module._load_from_state_dict(local, prefix, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)}, child_prefix)

        load(self, dict(state_dict), "")  # a copy: pre-hooks may rename keys
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected)
                              + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)
