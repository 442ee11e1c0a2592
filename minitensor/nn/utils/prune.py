"""``nn.utils.prune``: masks on a module's tensors, as PyTorch's.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, registers a buffer ``<name>_mask`` and sets
the plain attribute ``<name> = <name>_mask * <name>_orig``, recomputed by a forward pre-hook (the pruning
method itself) before each call. Pruning the same tensor again stacks the methods in a ``PruningContainer``:
the new method sees only what the old mask kept (its entries, or its channels for a structured method).
``remove`` makes the pruned values the parameter again. Masks are chosen by PyTorch's rules (the random
methods by ``topk`` of ``rand_like`` / ``kthvalue`` of ``rand``, from minitensor's generator, whose draws are
not PyTorch's); the number pruned, a fraction of the entries (channels) rounded as Python's ``round``, is.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from ... import creation
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]

T_module = TypeVar("T_module", bound=Module)


class BasePruningMethod(ABC):
    """A way to choose a mask; the instance is also the forward pre-hook that applies it."""

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for ``t``, which ``default_mask`` (the mask so far) already prunes in part."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_mask * <name>_orig`` (a function of the original, so gradients reach it)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, stacked on any pruning it already has;
        ``importance_scores`` (default: the tensor) is what the mask is computed from."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                     f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):  # first pruning: the parameter becomes <name>_orig
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = creation.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):  # undo the move, as PyTorch does
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times its mask (no module involved)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(f"importance_scores should have the same shape as tensor t, got "
                                     f"{importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else creation.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` is a parameter again, holding the pruned values (the
        ``<name>_orig`` parameter object itself, its data replaced), and mask and original are gone."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls: type[BasePruningMethod], module: Module, name: str, *args: Any,
                      **kwargs: Any) -> BasePruningMethod:
    """The new method, or the container that stacks it on the hook already pruning ``name`` (removed from
    the module's pre-hooks: ``apply`` registers the result again, last)."""
    old = [(k, hook) for k, hook in module._forward_pre_hooks.items()
           if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(old) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                             f"{module}. Use a PruningContainer.")
    for k, _ in old:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old:
        old_method = old[0][1]
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            return old_method
        container = PruningContainer(old_method)
        container.add_pruning_method(method)
        return container
    return method


class PruningContainer(BasePruningMethod):
    """The methods applied in turn to one tensor; its mask is the last one's, computed on what the masks
    before it kept."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask over the slice the mask so far keeps: its unpruned entries
        ("unstructured"), its channels along ``method.dim`` with any entry kept ("structured"), or all of
        ``t`` ("global")."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        slc: Any
        if method.PRUNING_TYPE == "unstructured":
            slc = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                                     "`dim` defined.")
            n_dims = t.dim()
            dim = method.dim if method.dim >= 0 else n_dims + method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = tuple(keep_channel if d == dim else slice(None) for d in range(n_dims))
        elif method.PRUNING_TYPE == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (the mask is all ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class _LowestScores(BasePruningMethod):
    """Prunes the ``amount`` entries (a fraction, or a count) of lowest ``_scores(t)``."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def _scores(self, t: Tensor) -> Tensor:
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _compute_nparams_toprune(self.amount, t.nelement())
        _validate_pruning_amount(k, t.nelement())
        mask = default_mask.clone()
        if k != 0:
            mask.view(-1)[self._scores(t).view(-1).topk(k, largest=False).indices] = 0
        return mask


class RandomUnstructured(_LowestScores):
    """Prunes ``amount`` entries (a fraction, or a count) chosen uniformly at random."""

    def _scores(self, t: Tensor) -> Tensor:  # PyTorch's k largest of uniform draws, as the lowest of their negatives
        return -creation.rand_like(t)

    @classmethod
    def apply(cls, module: Module, name: str, amount: float) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(_LowestScores):
    """Prunes the ``amount`` entries of smallest absolute value."""

    def _scores(self, t: Tensor) -> Tensor:
        return t.abs()

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _KeptChannels(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``: all but the ones ``_kept`` names."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def _kept(self, t: Tensor, nchannels: int, k: int) -> Tensor:
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(k, nchannels)
        if k == 0:
            return default_mask
        kept = self._kept(t, nchannels, k)
        mask = creation.zeros_like(t)
        mask[_channels(t, self.dim, kept)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask


class RandomStructured(_KeptChannels):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    def _kept(self, t: Tensor, nchannels: int, k: int) -> Tensor:
        prob = creation.rand(nchannels)  # channels above the k-th smallest draw are kept
        return prob > prob.kthvalue(k).values

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_KeptChannels):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        super().__init__(amount, dim)
        self.n = n

    def _kept(self, t: Tensor, nchannels: int, k: int) -> Tensor:
        return _compute_norm(t, self.n, self.dim).topk(nchannels - k, largest=True).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount: float, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def _channels(t: Tensor, dim: int, index: Tensor) -> tuple[Any, ...]:
    """The index selecting ``index`` (a boolean mask or positions) along ``dim`` of ``t``."""
    return tuple(index if d == dim % t.dim() else slice(None) for d in range(t.dim()))


def identity(module: T_module, name: str) -> T_module:
    Identity.apply(module, name)
    return module


def random_unstructured(module: T_module, name: str, amount: float) -> T_module:
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: T_module, name: str, amount: float,
                    importance_scores: Tensor | None = None) -> T_module:
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: T_module, name: str, amount: float, dim: int) -> T_module:
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: T_module, name: str, amount: float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> T_module:
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: T_module, name: str, mask: Tensor) -> T_module:
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type[BasePruningMethod],
                        importance_scores: dict[tuple[Module, str], Tensor] | None = None,
                        **kwargs: Any) -> None:
    """Prune the (module, name) tensors together: ``pruning_method`` (unstructured) chooses over all their
    entries at once (flattened in order), and each tensor gets its slice of that mask."""
    from .convert_parameters import parameters_to_vector
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    scores = importance_scores if importance_scores is not None else {}
    if not isinstance(scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    relevant = parameters_to_vector([scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", creation.ones_like(getattr(m, n)))
                                         for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + param.numel()].view_as(param))
        pointer += param.numel()


def remove(module: T_module, name: str) -> T_module:
    """Make the pruning of ``module.<name>`` permanent (see ``BasePruningMethod.remove``)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or a submodule has a pruning pre-hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())


def _validate_pruning_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
                         "integer")


def _validate_pruning_amount(amount: int, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor "
                         f"of shape {t.shape} with {len(t.shape)} dims")


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_nparams_toprune(amount: float, tensor_size: int) -> int:
    """A count as given; a fraction of ``tensor_size``, rounded half to even (Python's ``round``)."""
    return int(amount) if isinstance(amount, numbers.Integral) else round(amount * tensor_size)


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    """The L``n`` norm of each channel along ``dim`` (over all the other dimensions)."""
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return t.norm(p=n, dim=dims)
