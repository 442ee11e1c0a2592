"""PyTorch's structural transforms: ``ReshapeTransform`` (the event's shape), ``IndependentTransform`` (more
event dims), ``CatTransform`` / ``StackTransform`` (one transform per slice / index along a dim; a loop over
the transforms, not the elements)."""
from __future__ import annotations

from typing import Sequence

from ..functional import cat, stack
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .transforms import Transform
from .utils import sum_rightmost

__all__ = ["CatTransform", "IndependentTransform", "ReshapeTransform", "StackTransform"]


class ReshapeTransform(Transform):
    """The rightmost ``in_shape`` dims reshaped to ``out_shape`` (log-det 0)."""
    bijective = True

    def __init__(self, in_shape: Sequence[int], out_shape: Sequence[int], cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x: Tensor) -> Tensor:
        return x.reshape(*x.shape[:x.dim() - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.reshape(*y.shape[:y.dim() - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    @staticmethod
    def _swap(shape: Sequence[int], old: Size, new: Size) -> tuple[int, ...]:
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {old}")
        return tuple(shape[:cut]) + tuple(new)

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._swap(shape, self.out_shape, self.in_shape)


class IndependentTransform(Transform):
    """``base_transform`` over events of ``reinterpreted_batch_ndims`` more dims: its log-det summed there."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> int:
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class CatTransform(Transform):
    """``tseq[i]`` on consecutive slices of ``lengths[i]`` along ``dim`` (a loop over the transforms)."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, lengths: Sequence[int] | None = None,
                 cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def _slices(self, z: Tensor, name: str) -> list[Tensor]:
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(f"dim {self.dim} out of range for tensor with {z.dim()} dimensions")
        if z.size(self.dim) != self.length:
            raise AssertionError(f"{name}.size({self.dim}) = {z.size(self.dim)} must equal length {self.length}")
        starts = [sum(self.lengths[:i]) for i in range(len(self.lengths))]
        return [z.narrow(self.dim, s, n) for s, n in zip(starts, self.lengths)]

    def _call(self, x: Tensor) -> Tensor:
        return cat([t(s) for t, s in zip(self.transforms, self._slices(x, "x"))], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y, "y"))], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        parts = []
        for t, xs, ys in zip(self.transforms, self._slices(x, "x"), self._slices(y, "y")):
            parts.append(sum_rightmost(t.log_abs_det_jacobian(xs, ys), self.event_dim - t.event_dim))
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return cat(parts, dim)
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return total


class StackTransform(Transform):
    """``tseq[i]`` on index i along ``dim`` (a loop over the transforms)."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)
        self.dim = dim

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def _slices(self, z: Tensor, name: str) -> list[Tensor]:
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(f"dim {self.dim} out of range for tensor with {z.dim()} dimensions")
        if z.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {z.size(self.dim)} must equal len(transforms) "
                                 f"{len(self.transforms)}")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x: Tensor) -> Tensor:
        return stack([t(s) for t, s in zip(self.transforms, self._slices(x, "x"))], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y, "y"))], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        pairs = zip(self.transforms, self._slices(x, "x"), self._slices(y, "y"))
        return stack([t.log_abs_det_jacobian(xs, ys) for t, xs, ys in pairs], self.dim)
