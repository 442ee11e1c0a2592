"""``Size``: PyTorch's ``torch.Size``, the tuple of ints that ``Tensor.shape`` and ``Tensor.size()`` return."""
from __future__ import annotations

import math
import operator
from typing import Any, Iterable, SupportsIndex, overload


class Size(tuple):
    """A tuple of dimension sizes: ``Size([2, 3]) == (2, 3)``, hashes as the tuple, and slicing, ``+`` and ``*``
    keep the type (``Size([2]) + (3,)`` is ``Size([2, 3])``). ``numel()`` = prod(sizes), 1 for ``Size([])``.
    Items are ints: anything with ``__index__`` (NumPy ints, a one-element integer Tensor) is taken, a float
    raises PyTorch's TypeError."""

    __slots__ = ()

    def __new__(cls, sizes: Iterable[Any] = ()) -> Size:
        items = tuple(sizes)
        if all(type(n) is int for n in items):  # the common case: a NumPy/CuPy shape
            return tuple.__new__(cls, items)
        out = []
        for i, n in enumerate(items):
            try:
                out.append(operator.index(n))
            except TypeError:
                raise TypeError(f"minitensor.Size() takes an iterable of 'int' "
                                f"(item {i} is '{type(n).__name__}')") from None
        return tuple.__new__(cls, out)

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        return math.prod(self)

    def __repr__(self) -> str:
        return f"minitensor.Size({list(self)})"

    __str__ = __repr__

    @overload
    def __getitem__(self, index: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> Size: ...

    def __getitem__(self, index: SupportsIndex | slice) -> int | Size:
        if isinstance(index, slice):
            return tuple.__new__(Size, tuple.__getitem__(self, index))
        return tuple.__getitem__(self, index)

    def __add__(self, other: tuple) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: tuple) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, times: SupportsIndex) -> Size:
        return tuple.__new__(Size, tuple.__mul__(self, times))

    __rmul__ = __mul__
