"""``minitensor.jit``: PyTorch's TorchScript names, so that code written for TorchScript runs eagerly.

``script`` and ``trace`` return the function or module they are given (``trace`` after running it once on the
example inputs, as PyTorch's trace does); the decorators (``ignore``, ``unused``, ``export``...) return what
they decorate; ``fork`` runs the call at once. There is no TorchScript IR, so ``save`` / ``load`` raise
NotImplementedError pointing to ``minitensor.save`` (docs/differences.md). The DeprecationWarnings are
PyTorch 2.13's: TorchScript is deprecated there in favour of ``torch.compile``.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Final, TypeVar

from .nn.modules.module import Module
from .tensor import Tensor

__all__ = ["Attribute", "Error", "Final", "Future", "ScriptFunction", "ScriptModule", "annotate", "export", "fork",
           "freeze", "ignore", "interface", "is_scripting", "is_tracing", "load", "optimize_for_inference", "save",
           "script", "script_if_tracing", "script_method", "trace", "trace_module", "unused", "wait"]

_T = TypeVar("_T")
Error = RuntimeError  # torch.jit.Error: what a TorchScript ``raise`` turns into; eager code raises its own


def _deprecated(name: str) -> None:
    warnings.warn(f"`minitensor.jit.{name}` is deprecated. Please switch to `minitensor.compile`.",
                  DeprecationWarning, stacklevel=3)


class ScriptModule(Module):
    """PyTorch's base of compiled modules; here a plain ``Module`` (old code subclasses it with
    ``@script_method`` forwards). ``script`` does not return one: scripted modules stay what they were."""


class ScriptFunction:
    """PyTorch's type of scripted functions; ``script`` returns the function itself, never one of these."""


def script(obj: Any = None, optimize: None = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """``obj`` unchanged (a function, a Module, a class): it runs eagerly. ``script()`` with no object gives
    a decorator."""
    _deprecated("script")
    if obj is None:
        return lambda fn: fn
    return obj


def script_method(fn: _T) -> _T:
    _deprecated("script_method")
    return fn


def script_if_tracing(fn: _T) -> _T:
    return fn


def _call(fn: Callable[..., Any], inputs: Any, as_kwargs: bool) -> Any:
    if as_kwargs:
        if not isinstance(inputs, dict):
            raise RuntimeError("example_kwarg_inputs should be a dict")
        return fn(**inputs)
    if isinstance(inputs, (Tensor, dict)):  # one argument; any other iterable is the arguments (make_tuple)
        return fn(inputs)
    return fn(*tuple(inputs))


def trace(func: Any, example_inputs: Any = None, optimize: None = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
          _force_outplace: bool = False, _module_class: Any = None, _compilation_unit: Any = None,
          example_kwarg_inputs: Any = None, _store_inputs: bool = True) -> Any:
    """``func`` (a function or Module) itself, after calling it once on ``example_inputs`` (a tuple of
    arguments or one tensor) or ``example_kwarg_inputs`` (a dict), as tracing runs it: errors surface here."""
    _deprecated("trace")
    if isinstance(getattr(func, "__self__", None), Module) and func.__name__ == "forward":
        func = func.__self__  # a module's bound forward traces the module
    if isinstance(func, Module):
        return trace_module(func, {"forward": example_inputs if example_inputs is not None else
                                   example_kwarg_inputs},
                            example_inputs_is_kwarg=example_inputs is None)
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("trace: give example_inputs or example_kwarg_inputs to run the function on")
    _call(func, example_inputs if example_inputs is not None else example_kwarg_inputs, example_inputs is None)
    return func


def trace_module(mod: Any, inputs: Any, optimize: None = None, check_trace: bool = True, check_inputs: Any = None,
                 check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
                 _module_class: Any = None, _compilation_unit: Any = None, example_inputs_is_kwarg: bool = False,
                 _store_inputs: bool = True) -> Any:
    """``mod`` itself, after calling each named method on its example inputs ({method name: inputs})."""
    if not isinstance(mod, Module):
        raise AttributeError("expected minitensor.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        _call(mod if name == "forward" else getattr(mod, name), example, example_inputs_is_kwarg)
    return mod


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@ignore`` or ``@ignore(drop=True)``: the function, unchanged (TorchScript leaves it to Python)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: _T) -> _T:
    return fn


def export(fn: _T) -> _T:
    return fn


def interface(obj: _T) -> _T:
    _deprecated("interface")
    return obj


def is_scripting() -> bool:
    """False: nothing is ever compiled by TorchScript here."""
    return False


def is_tracing() -> bool:
    """False: ``trace`` runs the code as it is, not under a tracer."""
    return False


def Attribute(value: _T, type: Any) -> _T:  # noqa: N802  (PyTorch's name)
    return value


def annotate(the_type: Any, the_value: _T) -> _T:
    return the_value


class Future:
    """What ``fork`` returns: the call has already run; ``wait()`` gives its value (or raises its error)."""

    def __init__(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        self._error: BaseException | None = None
        try:
            self._value = fn(*args, **kwargs)
        except Exception as error:  # raised at wait(), where PyTorch's asynchronous call reports it
            self._error, self._value = error, None

    def done(self) -> bool:
        return True

    def wait(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value

    value = wait


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    _deprecated("fork")
    return Future(func, args, kwargs)


def wait(future: Future) -> Any:
    _deprecated("wait")
    return future.wait()


def freeze(mod: Any, preserved_attrs: list[str] | None = None, optimize_numerics: bool = True) -> Any:
    """``mod`` itself; as PyTorch's, only a module in eval mode can be frozen."""
    _deprecated("freeze")
    if not isinstance(mod, Module):
        raise RuntimeError("Freezing expects a Module as input.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() on "
                           "your module before freezing.")
    return mod


def optimize_for_inference(mod: Any, other_methods: list[str] | None = None) -> Any:
    """``mod`` itself (in eval mode, as PyTorch freezes it): minitensor has no graph to optimize."""
    _deprecated("optimize_for_inference")
    if not isinstance(mod, Module):
        raise RuntimeError("optimize_for_inference expects a Module as input.")
    return mod.eval()


_NO_ARCHIVES = ("TorchScript archives are not supported (minitensor runs scripted code eagerly and has no "
                "TorchScript program to store); save the model's state_dict() with minitensor.save and load it "
                "into the module built in Python")


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    raise NotImplementedError(f"minitensor.jit.save: {_NO_ARCHIVES}")


def load(f: Any, map_location: Any = None, _extra_files: Any = None, _restore_shapes: bool = False) -> Any:
    raise NotImplementedError(f"minitensor.jit.load: {_NO_ARCHIVES}")


