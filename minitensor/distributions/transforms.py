"""Bijections for ``TransformedDistribution`` (PyTorch's ``torch.distributions.transforms``): ``t(x)``, the
inverse ``t.inv(y)`` and ``log_abs_det_jacobian(x, y)`` = log |dy/dx|, summed over the transform's event dims.

``cache_size=1`` keeps the last (x, y) pair, so that ``t.inv(t(x))`` returns x itself (exact, and with x's
graph) where the inverse would round (tanh near +-1, sigmoid near 0 and 1), as PyTorch's cache."""
from __future__ import annotations

import copy
import math
from typing import Any, Sequence

from ..functional import atanh, broadcast_shapes
from ..nn.functional import softplus
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .utils import clamp_probs, sum_rightmost

__all__ = ["AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform", "SigmoidTransform",
           "TanhTransform", "Transform"]


class Transform:
    """An invertible map y = t(x) from ``domain`` to ``codomain``; ``sign`` is +1 or -1 for a monotone map of
    the reals. Subclasses define ``_call``, ``_inverse`` and ``log_abs_det_jacobian``."""
    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y: tuple[Any, Any] = (None, None)
        self._inv: Transform | None = None

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform, t.inv(y) = x (one object per transform, so its cache is shared)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self) -> int:
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with another cache size (a shallow copy with an empty cache; self when the same)."""
        if self._cache_size == cache_size:
            return self
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        new = copy.copy(self)
        new._cache_size, new._cached_x_y, new._inv = cache_size, (None, None), None
        return new

    def __call__(self, x: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(shape)

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """t.inv: the calls of ``t`` swapped; log|dx/dy| = -log|dy/dx|."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform
        self.bijective = transform.bijective

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain  # type: ignore[union-attr]

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain  # type: ignore[union-attr]

    @property
    def sign(self) -> int:
        return self._inv.sign  # type: ignore[union-attr]

    @property
    def inv(self) -> Transform:
        return self._inv  # type: ignore[return-value]

    def __call__(self, x: Tensor) -> Tensor:
        return self._inv._inv_call(x)  # type: ignore[union-attr]

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)  # type: ignore[union-attr]

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._inv.inverse_shape(shape)  # type: ignore[union-attr]

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._inv.forward_shape(shape)  # type: ignore[union-attr]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"


class ComposeTransform(Transform):
    """parts[-1](... parts[0](x)); the log-det-Jacobian is the sum of the parts' at the intermediate values,
    each summed over the event dims it lacks."""

    def __init__(self, parts: Sequence[Transform], cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)
        self.bijective = all(p.bijective for p in self.parts)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        return constraints.independent(domain, event_dim - domain.event_dim) if event_dim > domain.event_dim \
            else domain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        return constraints.independent(codomain, event_dim - codomain.event_dim) \
            if event_dim > codomain.event_dim else codomain

    @property
    def sign(self) -> int:
        return math.prod(p.sign for p in self.parts)

    @property
    def inv(self) -> Transform:
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def _call(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y: Tensor) -> Tensor:
        return self.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return x.new_zeros(x.shape)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total: Any = 0.0
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            total = total + sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


class ExpTransform(Transform):
    """y = exp(x); log|dy/dx| = x."""
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class PowerTransform(Transform):
    """y = x^exponent on x > 0; log|dy/dx| = log|exponent y / x|."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Tensor | float, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    @property
    def sign(self) -> Any:
        return self.exponent.sign() if isinstance(self.exponent, Tensor) else math.copysign(1, self.exponent)

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(broadcast_shapes(shape, getattr(self.exponent, "shape", ())))

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    """y = sigmoid(x), clamped into [eps, 1 - eps] so that its inverse stays finite; log|dy/dx| =
    -softplus(-x) - softplus(x)."""
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _call(self, x: Tensor) -> Tensor:
        return clamp_probs(x.sigmoid())

    def _inverse(self, y: Tensor) -> Tensor:
        info = finfo(y.dtype)
        y = y.clamp(min=float(info.tiny), max=1 - float(info.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """y = tanh(x); log|dy/dx| = 2 (log 2 - x - softplus(-2 x)), the stable form of log(1 - tanh(x)^2)."""
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return atanh(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale x, over events of ``event_dim`` dims; log|dy/dx| = log|scale|, summed over them."""
    bijective = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                     self._event_dim)

    codomain = domain

    @property
    def sign(self) -> Any:
        return self.scale.sign() if isinstance(self.scale, Tensor) else math.copysign(1, self.scale)

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        scale, shape = self.scale, tuple(x.shape)
        result = scale.abs().log() if isinstance(scale, Tensor) else x.new_full(shape, math.log(abs(scale)))
        if self._event_dim:  # PyTorch's: the entries of log|scale| over its event dims summed, as given
            result = result.reshape(*result.shape[:-self._event_dim], -1).sum(-1)
            shape = shape[:-self._event_dim]
        return result.expand(*shape)

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


# The rest of PyTorch's transforms live in transforms_more.py and transforms_structural.py; exported here too,
# as torch's one module does.
from .transforms_more import *  # noqa: E402,F401,F403
from .transforms_more import __all__ as _more  # noqa: E402
from .transforms_structural import *  # noqa: E402,F401,F403
from .transforms_structural import __all__ as _structural  # noqa: E402

__all__ += _more + _structural
