"""``state_dict`` and ``load_state_dict`` with PyTorch's semantics, as ``Module``'s base class: keys are the
dotted paths through ``_modules`` to each parameter and persistent buffer (``"features.1.running_mean"``)."""
from __future__ import annotations

import functools
import itertools
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Mapping, TypeVar

from ...autograd import no_grad
from ...tensor import Tensor
from ..parameter import Parameter

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"
_NEVER = ("Reached a code path in Module.{}() that should never be called. Please file an issue at "
          "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to report this bug.")


def _hooks(module: Any, name: str) -> dict[int, Callable]:
    """One of a module's state_dict hook registries, made at its first hook (no cost to modules without)."""
    return module.__dict__.setdefault(name, {})


def _add(module: Any, name: str, hook: Callable) -> Any:
    from .module_hooks import add_hook  # module_hooks builds on backward_hooks, not on this file
    return add_hook(_hooks(module, name), hook)


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
    _version: int = 1  # saved as local_metadata["version"], for _load_from_state_dict to convert old layouts
    T_destination = TypeVar("T_destination", bound=dict[str, Any])

    def get_extra_state(self) -> Any:
        """Override (with ``set_extra_state``) to save a picklable object as ``state_dict``'s
        ``<prefix>_extra_state`` entry."""
        raise RuntimeError(_NEVER.format("get_extra_state"))

    def set_extra_state(self, state: Any) -> None:
        """Override (with ``get_extra_state``) to restore the ``_extra_state`` entry on load."""
        raise RuntimeError(_NEVER.format("set_extra_state"))

    def _has_extra_state(self, method: str) -> bool:
        return getattr(type(self), method) is not getattr(StateDictMixin, method)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """Every parameter and persistent buffer by dotted name, as tensors detached from the graph that
        share the module's memory (``keep_vars=True`` gives the Parameters themselves)."""
        if destination is None:
            destination = OrderedDict()
        for hook in list(self.__dict__.get("_state_dict_pre_hooks", {}).values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        local_metadata = {"version": self._version}
        for hook in list(self.__dict__.get("_state_dict_hooks", {}).values()):
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:  # the private hook's returned dict replaces it (PyTorch's old behaviour)
                destination = result
        return destination  # type: ignore[return-value]

    def register_state_dict_pre_hook(self, hook: Callable[..., None]) -> Any:
        """``hook(module, prefix, keep_vars)`` runs before this module's ``state_dict`` collects its entries."""
        return _add(self, "_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook: Callable[..., None]) -> Any:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after this module's entries (and its
        children's) are in ``state_dict``; it may change ``state_dict`` in place and must return None."""
        hook._from_public_api = True  # type: ignore[attr-defined]
        return _add(self, "_state_dict_hooks", hook)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> Any:
        """As ``register_state_dict_post_hook``, but a returned dict replaces the state_dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        return _add(self, "_state_dict_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., None]) -> Any:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` runs before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable[..., None]) -> Any:
        """``hook(module, incompatible_keys)`` runs after this module and its children are loaded; it may
        edit ``incompatible_keys``' lists in place (which decides what strict loading raises)."""
        return _add(self, "_load_state_dict_post_hooks", hook)

    def _register_load_state_dict_pre_hook(self, hook: Any, with_module: bool = False) -> Any:
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`` (after
        ``module`` when ``with_module``) runs before this module loads its entries and may rename keys in
        ``state_dict`` (a copy of the caller's), e.g. old checkpoints' names; returns a RemovableHandle."""
        # partial: a deepcopy of the module gets hooks bound to the copy
        return _add(self, "_load_state_dict_pre_hooks", functools.partial(hook, self) if with_module else hook)

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: dict[str, Any],
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Copy this module's own entries of ``state_dict`` in place (or, with
        ``local_metadata["assign_to_params_buffers"]``, make them the module's), recording what does not fit."""
        for hook in list(self.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        assign = local_metadata.get("assign_to_params_buffers", False)
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
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} "
                                  f"from checkpoint, the shape in current model is {target.shape}.")
            elif assign:  # PyTorch's: the checkpoint's tensor itself, a Parameter where the module had one
                if isinstance(target, Parameter):
                    if isinstance(value, Parameter):
                        value.requires_grad_(target.requires_grad)
                    else:
                        value = Parameter(value, requires_grad=target.requires_grad)
                setattr(self, name, value)
            else:
                with no_grad():
                    target.copy_(value)
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state("set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or (key == extra_key and self._has_extra_state("set_extra_state")):
                    continue
                head, *rest = key[len(prefix):].split(".", 1)
                if (rest and head not in self._modules) or (not rest and head not in local_state):
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy ``state_dict``'s values into this module's parameters and buffers (in place, so optimizers
        keep working). ``strict``: every key must match; shape mismatches are errors either way. ``assign``:
        the module takes the state_dict's tensors themselves (wrapped as Parameters where it had Parameters,
        keeping their ``requires_grad``), so an optimizer made before holds the old ones. Raises one
        RuntimeError listing every problem; returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []

        metadata = getattr(state_dict, "_metadata", None)  # per-module {"version": ...}, where PyTorch saved it

        def load(module: StateDictMixin, local: Mapping[str, Any], prefix: str) -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            # Always collect missing/unexpected keys (strict=True here, as PyTorch); only raising depends on strict.
            module._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)}, child_prefix)
            for hook in list(module.__dict__.get("_load_state_dict_post_hooks", {}).values()):
                if hook(module, _IncompatibleKeys(missing, unexpected)) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, "
                                         "it should be done inplace.")

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
