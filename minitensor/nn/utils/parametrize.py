"""``nn.utils.parametrize``: a parameter or buffer computed on access from unconstrained originals,
as PyTorch does it.

``register_parametrization(m, "weight", P)`` moves ``m.weight`` into ``m.parametrizations.weight.original``
(or ``original0``, ``original1``... when ``P.right_inverse`` returns several tensors), swaps ``m``'s class for
a subclass ``Parametrized<Cls>`` that carries a property ``weight``, and from then on ``m.weight`` is
``P_k(...P_2(P_1(original)))``, recomputed at each access (or once per ``cached()`` block). Assigning
``m.weight = X`` runs the ``right_inverse`` chain backwards and stores the result in the originals.
``state_dict`` keys follow: ``parametrizations.weight.original``; ``parameters()`` yields the originals.
"""
from __future__ import annotations

import copy
import copyreg
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any, Iterator

from ...autograd import no_grad
from ...tensor import Tensor, _bump_version
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_enabled = 0  # nesting depth of cached() blocks
_cache: dict[tuple[int, str], Tensor] = {}  # (id(module), tensor name) -> value, while a block is open


@contextmanager
def cached() -> Iterator[None]:
    """Inside the block each parametrized tensor is computed once, on first access, and reused (e.g. an RNN's
    recurrent weight read at every step); the values are dropped when the outermost block exits."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """PyTorch's ``dest.set_(src)``: ``dest`` (the same object, so optimizers holding it keep working) now
    holds ``src``'s memory. A write to ``dest``: its version moves, so a graph that saved it refuses to
    backpropagate through the old value, as PyTorch's."""
    dest.data = src
    _bump_version(dest)


def _check_same(what: str, got: Tensor, dtype: Any, shape: Any, hint: str) -> None:
    if got.dtype != dtype:
        raise ValueError(f"{what} may not change the dtype of the tensor, unless the `unsafe` flag is enabled.\n"
                         f"{hint} dtype: {dtype}\nparametrized dtype: {got.dtype}")
    if tuple(got.shape) != tuple(shape):
        raise ValueError(f"{what} may not change the shape of the tensor, unless the `unsafe` flag is enabled.\n"
                         f"{hint} shape: {tuple(shape)}\nparametrized shape: {tuple(got.shape)}")


class ParametrizationList(ModuleList):
    """``module.parametrizations[name]``: the chain of parametrizations of one tensor and its originals.

    ``original`` when the first parametrization's ``right_inverse`` returns one tensor (or there is none: the
    identity), ``original0``, ``original1``... when it returns a sequence. ``forward()`` is the tensor's value.
    Built by ``register_parametrization``, not by users.
    """

    unsafe: bool
    is_tensor: bool
    ntensors: int

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # no inverse: the original is kept as it is
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if isinstance(new, Tensor):
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            if original.device != new.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the device.\n"
                                 f"original.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            with no_grad():
                _maybe_set(original, new)  # the same object: an optimizer built on it still updates it
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                                     f"tuple...). Got element {i} of the sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            value = self()
            if not isinstance(value, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
            _check_same("Registering a parametrization", value, original_dtype, original_shape, "unparametrized")

    def right_inverse(self, value: Tensor) -> None:
        """Run the parametrizations' ``right_inverse`` last to first on ``value`` and store the result in the
        originals, in place (what ``module.weight = value`` does)."""
        with no_grad():
            result: Any = value
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                result = module.right_inverse(result)
            if self.is_tensor:
                if not isinstance(result, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(result).__name__}")
                if result.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {result.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _maybe_set(self.original, result)
                return
            if not isinstance(result, Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(result).__name__}.")
            if len(result) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(result)}.")
            for i, tensor in enumerate(result):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors. "
                                     f"Got element {i} of type {type(tensor).__name__}.")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} while "
                                     f"`original{i}` has dtype {original_i.dtype}")
                _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:
        first, *rest = list(self)
        if self.is_tensor:
            x = first(self.original)
        else:
            x = first(*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in rest:
            x = module(x)
        return x


def _default_deepcopy(self: Module, memo: dict) -> Module:
    """deepcopy of a parametrized module: its ``__dict__`` (and slots) copied, the class kept (pickling is
    refused by ``__getstate__``, so the default deepcopy through ``__reduce_ex__`` would fail)."""
    found = memo.get(id(self))
    if found is not None:
        return found
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _getstate(self: Module) -> Any:
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module: Module) -> None:
    """Swap ``module``'s class for a fresh subclass ``Parametrized<Cls>``: the properties go on that class,
    so other instances of ``Cls`` are untouched (removing the last parametrization swaps the class back)."""
    cls = module.__class__
    namespace: dict[str, Any] = {"__getstate__": _getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    """The property ``tensor_name`` on the module's (already swapped) class: get = the chain's value (cached
    inside ``cached()``), set = the chain's ``right_inverse``."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Parametrize the parameter or buffer ``tensor_name`` of ``module``: ``module.<tensor_name>`` becomes
    ``parametrization(original)`` (appended to the chain when already parametrized). ``parametrization``
    may define ``right_inverse(X) -> Tensor | Sequence[Tensor]``: the originals are then initialised to
    ``right_inverse(current value)``. ``unsafe=True`` skips the checks that dtype and shape are kept."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            value = parametrization(current)
            if not isinstance(value, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
            _check_same("Registering a parametrization", value, current.dtype, current.shape,
                        f"module.{tensor_name}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    inverse = parametrization.right_inverse(value)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(inverse, Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(inverse).__name__}")
                    _check_same("parametrization.right_inverse", inverse, current.dtype, current.shape,
                                f"module.{tensor_name}")
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        chain = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = chain
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (``tensor_name=None``) or one on ``tensor_name``."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo the parametrizations of ``tensor_name``: it becomes a plain parameter/buffer again, holding the
    parametrized value (``leave_parametrized=True``, in the original tensor object when there is one) or the
    original (``False``; only for a single original). The class is swapped back when none is left."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                _maybe_set(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before parametrizations swapped it (its own class when not parametrized)."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register ``from_module``'s parametrizations (of ``tensor_name``, or all) on ``to_module`` too, sharing
    the parametrization modules and the original tensors (the tensor is created on ``to_module`` if absent)."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
