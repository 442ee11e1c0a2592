"""Module hooks: the handle, the global hooks of ``torch.nn.modules.module`` (``register_module_*``, applied
to every module before its own hooks) and ``Module.__call__``'s path when some hook is registered."""
from __future__ import annotations

import itertools
import warnings
from typing import Any, Callable

from ...tensor import Tensor
from .backward_hooks import BackwardHook

_MIXED = "Cannot use both regular backward hooks and full backward hooks {}. Please use only one of them."


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` unregisters the hook (from ``extra_dict``
    too: the per-hook flags such as with_kwargs)."""

    _next_id = itertools.count()

    def __init__(self, hooks: dict[int, Callable], *, extra_dict: Any = None) -> None:
        self._hooks = hooks
        self._extra = [] if extra_dict is None else extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)
        for d in self._extra:
            d.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def add_hook(hooks: dict[int, Callable], hook: Callable, prepend: bool = False,
             extra_dict: Any = None) -> RemovableHandle:
    """Register ``hook`` in ``hooks`` (first when ``prepend``) and return its handle."""
    handle = RemovableHandle(hooks, extra_dict=extra_dict)
    hooks[handle.id] = hook
    if prepend:  # a dict keeps insertion order: rebuild it with the new hook first
        rest = [(k, v) for k, v in hooks.items() if k != handle.id]
        hooks.clear()
        hooks.update([(handle.id, hook), *rest])
    return handle


# The global hooks; _global_any holds the id of every forward and backward one, so Module.__call__'s fast path
# tests one dict for all of them.
_global_any: dict[int, bool] = {}
_global_forward_pre_hooks: dict[int, Callable] = {}
_global_forward_hooks: dict[int, Callable] = {}
_global_forward_hooks_with_kwargs: dict[int, bool] = {}
_global_forward_hooks_always_called: dict[int, bool] = {}
_global_backward_pre_hooks: dict[int, Callable] = {}
_global_backward_hooks: dict[int, Callable] = {}
_global_is_full_backward_hook: list[bool | None] = [None]  # a list: set from functions without `global`
_global_buffer_registration_hooks: dict[int, Callable] = {}
_global_module_registration_hooks: dict[int, Callable] = {}
_global_parameter_registration_hooks: dict[int, Callable] = {}


def _add_global(hooks: dict[int, Callable], hook: Callable, extra: list[dict] | None = None) -> RemovableHandle:
    handle = add_hook(hooks, hook, extra_dict=[_global_any, *(extra or [])])
    _global_any[handle.id] = True
    return handle


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward (before the module's own pre-hooks)."""
    return _add_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args, kwargs, output)``) after every module's
    forward; ``always_call``: also when forward raises."""
    handle = _add_global(_global_forward_hooks, hook,
                         [_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def _set_global_full(full: bool) -> None:
    if _global_is_full_backward_hook[0] is (not full):
        raise RuntimeError(_MIXED.format("as a global Module hook"))
    _global_is_full_backward_hook[0] = full


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_output)`` for every module, as ``Module.register_full_backward_pre_hook``."""
    return _add_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` for every module, as ``Module.register_full_backward_hook``."""
    _set_global_full(True)
    return _add_global(_global_backward_hooks, hook)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Deprecated: as ``register_module_full_backward_hook`` (see docs/differences.md)."""
    _set_global_full(False)
    return _add_global(_global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, buffer)`` at every ``register_buffer``; a non-None result is registered instead."""
    return add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, submodule)`` at every ``register_module``; a non-None result is registered instead."""
    return add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, param)`` at every ``register_parameter``; a non-None result is registered instead."""
    return add_hook(_global_parameter_registration_hooks, hook)


def run_registration_hooks(hooks: dict[int, Callable], module: Any, name: str, value: Any) -> Any:
    for hook in list(hooks.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


def _backward_hooks(module: Any) -> tuple[list[Callable], list[Callable]]:
    """The backward pre-hooks and hooks of one call: the global ones first. The deprecated (non-full) hooks
    run as full ones (see docs/differences.md)."""
    pre = [*_global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()]
    return [*_global_backward_hooks.values(), *module._backward_hooks.values()], pre


def _run_pre_hooks(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple, dict]:
    with_kwargs = module._forward_pre_hooks_with_kwargs
    for hook_id, hook in (*_global_forward_pre_hooks.items(), *module._forward_pre_hooks.items()):
        if hook_id in with_kwargs:
            new = hook(module, args, kwargs)
            if new is not None:
                if not (isinstance(new, tuple) and len(new) == 2):
                    raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but "
                                       f"got {new}.")
                args, kwargs = new
        else:
            new = hook(module, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
    return args, kwargs


def _forward_hooks(module: Any) -> tuple[tuple[int, Callable], ...]:
    return (*_global_forward_hooks.items(), *module._forward_hooks.items())


def _with_kwargs(module: Any, hook_id: int) -> bool:
    return hook_id in module._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs


def call_with_hooks(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``module(*args, **kwargs)`` with its forward pre-hooks, forward hooks and backward hooks, global first."""
    called: set[int] = set()
    result = None
    try:
        full, pre = _backward_hooks(module)
        args, kwargs = _run_pre_hooks(module, args, kwargs)
        bw_hook = None
        if full or pre:
            bw_hook = BackwardHook(module, full, pre)
            args = bw_hook.setup_input_hook(args)
        result = module.forward(*args, **kwargs)
        for hook_id, hook in _forward_hooks(module):
            called.add(hook_id)
            new_result = hook(module, args, kwargs, result) if _with_kwargs(module, hook_id) else \
                hook(module, args, result)
            if new_result is not None:
                result = new_result
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(result)}", stacklevel=3)
            result = bw_hook.setup_output_hook(result)
        return result
    except Exception:
        # the always_call hooks not run yet run now (the global ones without kwargs, as PyTorch's)
        for hook_id, hook in _forward_hooks(module):
            is_global = hook_id in _global_forward_hooks
            if hook_id in called or hook_id not in (_global_forward_hooks_always_called if is_global
                                                    else module._forward_hooks_always_called):
                continue
            try:
                with_kwargs = not is_global and hook_id in module._forward_hooks_with_kwargs
                new_result = hook(module, args, kwargs, result) if with_kwargs else hook(module, args, result)
                if new_result is not None:
                    result = new_result
            except Exception as e:
                warnings.warn(f"{'global ' if is_global else ''}module forward hook with ``always_call=True`` "
                              f"raised an exception that was silenced as another error was raised in forward: {e}",
                              stacklevel=3)
        raise


class HooksMixin:
    """``Module``'s hook registration methods (``Module.__call__`` runs the hooks)."""

    _forward_pre_hooks: dict[int, Callable]
    _forward_hooks: dict[int, Callable]
    _forward_pre_hooks_with_kwargs: dict[int, bool]
    _forward_hooks_with_kwargs: dict[int, bool]
    _forward_hooks_always_called: dict[int, bool]
    _backward_pre_hooks: dict[int, Callable]
    _backward_hooks: dict[int, Callable]
    _is_full_backward_hook: bool | None
    _backward_hook_ids: dict[int, bool]  # the ids in both backward registries: Module.__call__ tests this one

    def _add_backward(self, hooks: dict[int, Callable], hook: Callable, prepend: bool = False) -> RemovableHandle:
        handle = add_hook(hooks, hook, prepend, extra_dict=self._backward_hook_ids)
        self._backward_hook_ids[handle.id] = True
        return handle

    def __setstate__(self, state: dict[str, Any]) -> None:
        # a module pickled before some registry existed gets it empty (Module.__call__ reads them all)
        self.__dict__.update(state)
        for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks",
                     "_backward_hook_ids", "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called"):
            self.__dict__.setdefault(name, {})
        self.__dict__.setdefault("_is_full_backward_hook", None)

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-None result replaces ``args``. ``with_kwargs``:
        ``hook(module, args, kwargs)``, returning None or ``(args, kwargs)``."""
        handle = add_hook(self._forward_pre_hooks, hook, prepend, extra_dict=self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args, kwargs, output)``) runs after
        ``forward``; a non-None result replaces the output. ``always_call``: also when forward raises."""
        handle = add_hook(self._forward_hooks, hook, prepend,
                          extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients w.r.t. the module's outputs are known; a
        non-None result (a tuple, one entry per output) replaces ``grad_output``."""
        return self._add_backward(self._backward_pre_hooks, hook, prepend)

    def _get_backward_hooks(self) -> tuple[list[Callable], list[Callable]]:
        """(full hooks, non-full hooks) of this module, global ones first, as PyTorch's."""
        full = [*(_global_backward_hooks.values() if _global_is_full_backward_hook[0] else ()),
                *(self._backward_hooks.values() if self._is_full_backward_hook else ())]
        non_full = [*(_global_backward_hooks.values() if _global_is_full_backward_hook[0] is False else ()),
                    *(self._backward_hooks.values() if self._is_full_backward_hook is False else ())]
        return full, non_full

    def _get_backward_pre_hooks(self) -> list[Callable]:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _set_full(self, full: bool) -> None:
        if self._is_full_backward_hook is (not full):
            raise RuntimeError(_MIXED.format("on a single Module"))
        object.__setattr__(self, "_is_full_backward_hook", full)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs once per backward through the module, when the
        gradients w.r.t. its positional tensor inputs are computed (or, when no input requires grad, with
        grad_input all None as soon as grad_output is known); a non-None result replaces ``grad_input``."""
        self._set_full(True)
        return self._add_backward(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated: runs as ``register_full_backward_hook`` (see docs/differences.md)."""
        self._set_full(False)
        return self._add_backward(self._backward_hooks, hook)
