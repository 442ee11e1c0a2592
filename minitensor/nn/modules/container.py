"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``, ``ParameterDict``.

Children are registered under their position ("0", "1", ...) or their key, so ``state_dict`` keys read
``"0.weight"`` or ``"encoder.fc.bias"`` as in PyTorch.
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from typing import Any, Generic, Iterable, Iterator, Mapping, TypeVar

from ...tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent

V = TypeVar("V")


def _abs_index(idx: Any, size: int) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


class Container(Module):
    """PyTorch's old base of containers: a Module whose keyword arguments become its children."""

    def __init__(self, **kwargs: Module) -> None:
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class _IndexedModules(Module):
    """Shared by Sequential and ModuleList: children keyed by position, renumbered after deletions."""

    def _from_modules(self, items: list[tuple[str, Module]]) -> "_IndexedModules":
        raise NotImplementedError

    def _key_at(self, idx: int) -> str:
        return list(self._modules)[_abs_index(idx, len(self._modules))]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self._from_modules(list(self._modules.items())[idx])
        return self._modules[self._key_at(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key_at(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key_at(idx)]
        for key in keys:
            delattr(self, key)
        # Renumber so that positions and keys agree again ("0", "1", ... with no gap), as PyTorch does.
        self._modules = dict(zip(map(str, range(len(self._modules))), self._modules.values()))

    def append(self, module: Module) -> "_IndexedModules":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "_IndexedModules":
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def pop(self, idx: int = -1) -> Module:
        module = self[idx]
        del self[idx]
        return module


class Sequential(_IndexedModules):
    """Runs its modules in order, each on the previous one's output.

    ``Sequential(m0, m1, ...)`` names children "0", "1", ...; ``Sequential(OrderedDict(name=module))`` keeps
    the given names. Indexing, slicing (a new Sequential sharing the modules), ``len``, iteration and
    ``append`` work as in PyTorch.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _from_modules(self, items: list[tuple[str, Module]]) -> "Sequential":
        return type(self)(OrderedDict(items))

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other).__name__} is given.")
        return Sequential(*self, *other)

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(_IndexedModules):
    """A list of modules, registered so their parameters are found; it has no forward of its own."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _from_modules(self, items: list[tuple[str, Module]]) -> "ModuleList":
        return type(self)([m for _, m in items])

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)  # type: ignore[return-value]

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        return ModuleList(list(self) + list(other))

    def __repr__(self) -> str:
        """PyTorch's: runs of modules with one repr are shown once, as ``(first-last): n x repr``."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list[list[Any]] = []  # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2) for a, b, r in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class _Registry(Module, Generic[V]):
    """The mapping protocol of ModuleDict and ParameterDict: the keys are the names in one of Module's
    registries (``_registry``: "_modules" or "_parameters"); subclasses say how a value is stored."""

    _registry: str

    def __init__(self, entries: Mapping[str, V] | Iterable[tuple[str, V]] | None) -> None:
        super().__init__()
        if entries is not None:
            self.update(entries)

    def update(self, entries: Mapping[str, V] | Iterable[tuple[str, V]]) -> None:
        raise NotImplementedError

    def _entries(self) -> dict[str, V]:
        return self.__dict__[self._registry]

    def __getitem__(self, key: str) -> V:
        return self._entries()[key]

    def __delitem__(self, key: str) -> None:
        del self._entries()[key]

    def __len__(self) -> int:
        return len(self._entries())

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries())

    def __contains__(self, key: str) -> bool:
        return key in self._entries()

    def keys(self) -> Iterable[str]:
        return self._entries().keys()

    def items(self) -> Iterable[tuple[str, V]]:
        return self._entries().items()

    def values(self) -> Iterable[V]:
        return self._entries().values()

    def pop(self, key: str) -> V:
        value = self[key]
        del self[key]
        return value


class ModuleDict(_Registry[Module]):
    """An ordered dict of modules, registered under their keys."""

    _registry = "_modules"

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__(modules)

    __setitem__ = Module.add_module  # d[key] = module registers a child, as setattr does

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for j, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]


def _as_parameter(value: Any) -> Any:
    """Tensors put into a ParameterList/Dict become Parameters (sharing memory), as in PyTorch."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value.detach(), requires_grad=value.requires_grad)
    return value


def _describe(key: Any, value: Any) -> str:
    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    device = "" if value.device.type == "cpu" else f" ({str(value.device).upper()})"
    return f"  ({key}): {kind} containing: [{value.dtype} of size {'x'.join(map(str, value.shape))}{device}]"


class ParameterList(Module):
    """A list of Parameters registered under "0", "1", ..."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Any]:
        return (getattr(self, str(i)) for i in range(len(self)))

    def __getitem__(self, idx: int) -> Any:
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx: int, value: Any) -> None:
        setattr(self, str(_abs_index(idx, len(self))), _as_parameter(value))

    def append(self, value: Any) -> "ParameterList":
        setattr(self, str(len(self)), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_describe(k, v) for k, v in enumerate(self))


class ParameterDict(_Registry[Any]):
    """An ordered dict of Parameters registered under their keys."""

    _registry = "_parameters"

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        super().__init__(parameters)

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, _as_parameter(value))

    def update(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        for key, value in (parameters.items() if isinstance(parameters, Mapping) else parameters):
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_describe(k, v) for k, v in self.items())
