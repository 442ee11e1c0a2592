"""``Module``'s look-ups by dotted path (``"features.1.weight"``), with PyTorch's errors."""
from __future__ import annotations

from typing import Any


class PathsMixin:
    """get_submodule, set_submodule, get_parameter and get_buffer (``Module`` keeps the registries)."""

    _modules: dict[str, Any]
    _buffers: dict[str, Any]

    def _get_name(self) -> str:
        return type(self).__name__

    def get_submodule(self, target: str) -> Any:
        """The module at dotted path ``target`` ("" is this module)."""
        from .module import Module
        module: Any = self
        for item in target.split(".") if target else []:
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: Any, strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target``, replacing the submodule there or (unless ``strict``)
        adding it to an existing parent."""
        from .module import Module
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Any:
        """The Parameter at dotted path ``target``."""
        from ..parameter import Parameter
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Any:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(module, name)
