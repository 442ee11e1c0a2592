"""``Module``: the base class of every layer, with PyTorch's registration, traversal, device/dtype moves
and ``state_dict`` semantics.

A module keeps three ordered registries, filled by ``__setattr__``: ``_parameters`` (``Parameter`` or
None), ``_buffers`` (tensors that are state but not learnable, e.g. BatchNorm's running statistics) and
``_modules`` (child modules). ``state_dict`` keys are the dotted paths through ``_modules`` to each
parameter and persistent buffer: ``"features.1.running_mean"``.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

from ... import dtypes as _dt
from ...autograd import no_grad, zero_grads
from ...creation import empty_like as _empty_like
from ...device import device as _device_type
from ...tensor import Tensor
from ..parameter import Buffer, Parameter
from . import module_hooks as _hooks
from .module_hooks import (RemovableHandle, _global_any, register_module_backward_hook,  # noqa: F401 (re-exported)
                           register_module_buffer_registration_hook, register_module_forward_hook,
                           register_module_forward_pre_hook, register_module_full_backward_hook,
                           register_module_full_backward_pre_hook, register_module_module_registration_hook,
                           register_module_parameter_registration_hook)
from .module_hooks import HooksMixin
from .module_paths import PathsMixin
from .state_dict import StateDictMixin


def _addindent(text: str, spaces: int) -> str:
    """Indent every line of a nested repr but the first."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


def _check_name(kind: str, name: Any, module: "Module", registry: Mapping[str, Any]) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if hasattr(module, name) and name not in registry:
        raise KeyError(f"attribute '{name}' already exists")


def _check_entry(kind: str, name: Any, value: Any, module: "Module", registry: str, cls: type,
                 cls_name: str) -> None:
    """What register_parameter and register_buffer refuse: a call before Module.__init__, a bad name, a
    value that is neither None nor a ``cls``."""
    if registry not in module.__dict__:
        raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
    _check_name(kind, name, module, module.__dict__[registry])
    if value is not None and not isinstance(value, cls):
        raise TypeError(f"cannot assign '{type(value).__name__}' object to {kind} '{name}' "
                        f"({cls_name} or None required)")


def _values(pairs: Iterator[tuple[str, Any]]) -> Iterator[Any]:
    """The values of (name, value) pairs, lazily: parameters() from named_parameters() and so on."""
    return (value for _, value in pairs)


def _floating_dtype(dtype: Any) -> _dt.dtype:
    dt = _dt.as_dtype(dtype)
    if not dt.is_floating_point:
        raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dt}")
    return dt


class Module(StateDictMixin, HooksMixin, PathsMixin):
    """Base class for all neural network modules; subclasses define ``forward`` and assign their
    parameters and submodules as attributes in ``__init__`` (after ``super().__init__()``)."""

    training: bool
    _repr_options: tuple[str, ...] = ()  # the attributes the default extra_repr lists as name=value
    dump_patches: bool = False  # PyTorch's (deprecated) flag; nothing reads it
    call_super_init: bool = False  # True: __init__ passes its arguments on to the next class (cooperative mixins)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were "
                            "given")
        # object.__setattr__: our __setattr__ needs these registries to exist already.
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", {})
        set_(self, "_buffers", {})
        set_(self, "_non_persistent_buffers_set", set())
        set_(self, "_modules", {})
        set_(self, "_forward_pre_hooks", {})
        set_(self, "_forward_hooks", {})
        set_(self, "_forward_pre_hooks_with_kwargs", {})
        set_(self, "_forward_hooks_with_kwargs", {})
        set_(self, "_forward_hooks_always_called", {})
        set_(self, "_backward_pre_hooks", {})
        set_(self, "_backward_hooks", {})
        set_(self, "_is_full_backward_hook", None)
        set_(self, "_backward_hook_ids", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The path without hooks costs one dict test more than forward hooks alone did: one attribute lookup
        # (each self.<attr> goes through __getattr__'s slower slot) and subscripts; _backward_hook_ids holds the
        # ids of both kinds of backward hooks (register_* and the handles keep it), _global_any of the global ones.
        d = self.__dict__
        try:
            hooked = d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hook_ids"] or _global_any
        except KeyError as e:  # a subclass that did not call Module.__init__
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{e.args[0]}'") from None
        if not hooked:
            return self.forward(*args, **kwargs)
        return _hooks.call_with_hooks(self, args, kwargs)

    _call_impl = _wrapped_call_impl = __call__  # PyTorch's names of the same path (some code calls them)
    _compiled_call_impl: Callable | None = None  # compile() keeps the module as it is: never set

    # ------------------------------------------------------------------------------- registration
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` (or a None placeholder, e.g. a disabled bias) under ``name``."""
        _check_entry("parameter", name, param, self, "_parameters", Parameter, "minitensor.nn.Parameter")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly; wrap a detached tensor: Parameter(t.detach())")
        if _hooks._global_parameter_registration_hooks:
            param = _hooks.run_registration_hooks(_hooks._global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a non-learnable state tensor; ``persistent=False`` keeps it out of ``state_dict``."""
        _check_entry("buffer", name, tensor, self, "_buffers", Tensor, "Tensor")
        if _hooks._global_buffer_registration_hooks:
            tensor = _hooks.run_registration_hooks(_hooks._global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module under ``name`` (what ``self.name = module`` does)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name("module", name, self, self._modules)
        if _hooks._global_module_registration_hooks:
            module = _hooks.run_registration_hooks(_hooks._global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params, modules, buffers = d.get("_parameters"), d.get("_modules"), d.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_attribute(name, keep=params)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(minitensor.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_attribute(name, keep=modules)
            if _hooks._global_module_registration_hooks:
                value = _hooks.run_registration_hooks(_hooks._global_module_registration_hooks, self, name, value)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(minitensor.nn.Module or None expected)")
            modules[name] = None
        elif isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if isinstance(value, Buffer):  # nn.Buffer carries its own persistence, as PyTorch's
                if buffers is None:
                    raise AttributeError("cannot assign buffers before Module.__init__() call")
                self.register_buffer(name, value, value.persistent)
                return
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(Tensor or None expected)")
            if _hooks._global_buffer_registration_hooks:
                value = _hooks.run_registration_hooks(_hooks._global_buffer_registration_hooks, self, name, value)
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove_attribute(self, name: str, keep: dict) -> None:
        """Forget ``name`` everywhere but in ``keep``: a name lives in one registry at a time."""
        for registry in (self.__dict__, self._parameters, self._buffers, self._modules):
            if registry is not keep:
                registry.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str) -> Any:
        # Called only when normal lookup fails, i.e. for registered parameters, buffers and modules.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = d.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(super().__dir__()) + list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ----------------------------------------------------------------------------------- traversal
    def _named_members(self, get_members: Callable[["Module"], Any], prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        seen: set[int] = set()
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + "." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs; a parameter shared by two modules is yielded once."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        return _values(self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        return _values(self.named_buffers(recurse=recurse))

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator["Module"]:
        return _values(self.named_children())

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """This module and every descendant, depth first, each once (unless remove_duplicate=False)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        return _values(self.named_modules())

    def apply(self, fn: Callable[["Module"], Any]) -> "Module":
        """Call ``fn`` on every submodule (children first) and then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --------------------------------------------------------------------------------------- modes
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop (default) or zero the gradients of every parameter."""
        zero_grads(self.parameters(), set_to_none)

    # ------------------------------------------------------------------------------- device, dtype
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """Convert every parameter (in place: ``p.data = fn(p)``, so a ``Parameter`` keeps its identity and
        optimizers built earlier still hold it), its gradient, and every buffer (replaced)."""
        for module in self.children() if recurse else ():
            module._apply(fn)
        with no_grad():
            for param in self._parameters.values():
                if param is None:
                    continue
                converted = fn(param)
                if converted is not param:
                    param.data = converted
                if param.grad is not None:
                    grad = fn(param.grad)
                    if grad is not param.grad:
                        param.grad.data = grad
            for name, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[name] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``: move/cast in place and
        return self. Only floating-point parameters and buffers change dtype (counters stay int64);
        ``memory_format=`` lays out the 4-d and 5-d ones."""
        dev, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        fmt = kwargs.pop("memory_format", None)  # applied to 4-d and 5-d tensors only, as PyTorch
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dev, dtype = a.device, a.dtype
            elif isinstance(a, (str, _device_type)):
                dev = a
            elif a is not None and not isinstance(a, bool):  # a bool is non_blocking, as in Tensor.to
                dtype = a
        dt = None if dtype is None else _floating_dtype(dtype)

        def convert(t: Tensor) -> Tensor:
            if fmt is not None and t.dim() in (4, 5):
                return t.to(dev, dt if t.is_floating_point() else None, memory_format=fmt)
            return t.to(dev, dt if t.is_floating_point() else None)
        return self._apply(convert)

    def to_empty(self, *, device: Any, recurse: bool = True) -> "Module":
        """Parameters and buffers replaced by uninitialized ones on ``device`` (e.g. after building on "meta")."""
        return self._apply(lambda t: _empty_like(t, device=device), recurse=recurse)

    def type(self, dst_type: Any) -> "Module":
        """Every parameter and buffer cast to ``dst_type`` (a dtype or a type name), as ``Tensor.type``."""
        return self._apply(lambda t: t.type(dst_type))

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """``torch.nn.Module.compile``, in place: arguments are checked as ``minitensor.compile``'s, and the
        module stays as it is (there is no compiler: minitensor.compile returns the model itself)."""
        from ...compiler import compile as _compile
        _compile(self, *args, **kwargs)

    def _cast_floating(self, dtype: _dt.dtype) -> "Module":
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> "Module":
        return self._cast_floating(_dt.float32)

    def double(self) -> "Module":
        return self._cast_floating(_dt.float64)

    def half(self) -> "Module":
        return self._cast_floating(_dt.float16)

    def bfloat16(self) -> "Module":
        return self._cast_floating(_dt.bfloat16)

    def share_memory(self) -> "Module":
        """Every parameter and buffer moved into shared memory (``Tensor.share_memory_``), for Hogwild training
        with ``minitensor.multiprocessing``."""
        for t in (*self.parameters(), *self.buffers()):
            t.share_memory_()
        return self

    def cpu(self) -> "Module":
        return self._apply(lambda t: t.cpu())

    def cuda(self, device: Any = None) -> "Module":
        return self._apply(lambda t: t.cuda(device))

    # -------------------------------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The text inside this module's parentheses (its configuration): ``name=value`` for each name in
        ``_repr_options`` (none for Module itself); subclasses override it for other layouts."""
        return ", ".join(f"{name}={getattr(self, name)}" for name in self._repr_options)

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"
