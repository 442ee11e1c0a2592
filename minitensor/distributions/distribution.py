"""``Distribution``, the base class (PyTorch's ``torch.distributions.Distribution``): shapes, argument and
sample validation, ``sample`` as ``rsample`` without a graph, ``expand`` over the parameters, the repr."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

from ..autograd import no_grad
from ..size import Size
from ..tensor import Tensor
from .constraints import Constraint
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """A batch of distributions of shape ``batch_shape``, each over events of shape ``event_shape``: a sample
    of ``sample_shape`` has shape ``sample_shape + batch_shape + event_shape``."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution built afterwards (default: on, as
        Python's ``assert``: off under ``python -O``)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Sequence[int] = Size(), event_shape: Sequence[int] = Size(),
                 validate_args: bool | None = None) -> None:
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if not self._validate_args:
            return
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
        for param, constraint in arg_constraints.items():
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # a parameter the user did not give (probs of Bernoulli(logits=...))
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                 f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                 f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, Constraint]:
        """{parameter name: the constraint it must satisfy}."""
        raise NotImplementedError

    @property
    def support(self) -> Constraint:
        """The constraint every value of ``log_prob`` must satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        """A new distribution of ``batch_shape`` whose parameters are expanded views of these (no copy, no
        validation)."""
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        for name in self.arg_constraints:
            if name in self.__dict__:
                param = self.__dict__[name]
                setattr(new, name, param.expand(batch_shape + param.shape[len(self._batch_shape):]))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete support along dim 0: (cardinality, *batch_shape, *event_shape)."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Sequence[int] = Size()) -> Size:
        return Size(sample_shape) + self._batch_shape + self._event_shape

    def _checked(self, value: Tensor) -> Tensor:
        """``value``, validated first when validation is on."""
        if self._validate_args:
            self._validate_sample(value)
        return value

    def _validate_sample(self, value: Any) -> None:
        """PyTorch's checks of a value given to log_prob / cdf: a tensor, whose rightmost dims are the event
        shape and broadcast with the batch shape, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if value.shape[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.shape} vs "
                             f"{self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        if any(i != 1 and j != 1 and i != j for i, j in zip(reversed(value.shape), reversed(expected))):
            raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {value.shape} vs "
                             f"{expected}.")
        support = self.support
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                             f"to be within the support ({support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self) -> str:
        params = [name for name in self.arg_constraints if name in self.__dict__]
        args = ", ".join(f"{name}: {v if v.numel() == 1 else v.size()}"
                         for name, v in ((n, self.__dict__[n]) for n in params))
        return f"{type(self).__name__}({args})"


class _Located(Distribution):
    """A distribution whose mean and mode are its ``loc`` parameter (symmetric and unimodal about it)."""
    loc: Tensor

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc
