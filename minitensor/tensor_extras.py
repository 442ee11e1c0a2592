"""``TensorExtraMethods``: PyTorch's rarer ``Tensor`` methods that real programs still call: the legacy
``new(...)``, ``map_`` / ``apply_`` (a Python callable per element, CPU only, as PyTorch), ``dist``,
``fill_diagonal_``, ``nonzero_static``, ``narrow_copy``, the ``unsafe_`` splits, ``new_empty_strided``, and
the queries ``dim_order``, ``output_nr``, ``is_set_to``, ``is_inference``, ``const_data_ptr``,
``as_subclass``, ``record_stream``. ``_F`` and ``_L`` are bound by ``tensor.py``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from . import dtypes as _dt
from .size import Size

if TYPE_CHECKING:
    from .device import device
    from .tensor import Tensor

_F: Any = None  # minitensor.functional, bound by tensor.py
_L: Any = None  # minitensor.legacy (Tensor.new), bound by tensor.py


class TensorExtraMethods:
    __slots__ = ()
    array: Any
    _device: "device"

    def dist(self, other: "Tensor", p: float = 2) -> "Tensor":
        return _F.dist(self, other, p)

    def fill_diagonal_(self, fill_value: Any, wrap: bool = False) -> "Tensor":
        """Writes ``fill_value`` on the main diagonal (``wrap``: a tall matrix's restarts, see
        ``functional.triangular.fill_diagonal``)."""
        return _F.inplace(self, _F.triangular.fill_diagonal, fill_value, wrap)

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> "Tensor":
        return _F.nonzero_static(self, size=size, fill_value=fill_value)

    def narrow_copy(self, dim: int, start: int, length: int) -> "Tensor":
        return _F.narrow_copy(self, dim, start, length)

    def unsafe_chunk(self, chunks: int, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.unsafe_chunk(self, chunks, dim)

    def unsafe_split(self, split_size: int, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.unsafe_split(self, split_size, dim)

    def unsafe_split_with_sizes(self, split_sizes: Any, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.unsafe_split_with_sizes(self, split_sizes, dim)

    # ------------------------------------------------------------------ construction
    def new(self, *args: Any, device: Any = None) -> "Tensor":
        """The legacy constructor in this tensor's dtype and device: ``new()`` (shape (0,)), ``new(2, 3)`` or
        ``new(Size)`` (uninitialised), ``new(data)`` (a copy; a tensor of the same dtype: itself, shared)."""
        from .tensor import Tensor
        dev, dtype = self._device if device is None else device, _dt.from_numpy_dtype(self.array.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            src = args[0]
            if src.array.dtype != self.array.dtype or (device is not None and src.device != device):
                raise TypeError(f"new(): expected a tensor of dtype {dtype} on {dev}, got {src.dtype} on {src.device}")
            return src.detach()
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        return _L.legacy_new(args, dtype, dev)

    def new_empty_strided(self, size: Any, stride: Any, *, dtype: Any = None, device: Any = None,
                          requires_grad: bool = False) -> "Tensor":
        """Uninitialised memory with the given strides, in this tensor's dtype and device unless given."""
        from .creation_interop import empty_strided
        own = _dt.from_numpy_dtype(self.array.dtype)
        return empty_strided(size, stride, dtype=own if dtype is None else dtype,
                             device=self._device if device is None else device, requires_grad=requires_grad)

    # ------------------------------------------------------------------ a Python callable per element
    def _per_element(self, name: str) -> np.ndarray:
        if self._device.type != "cpu":
            raise TypeError(f"{name} is only implemented on CPU tensors")
        if getattr(self, "requires_grad", False):
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                               "instead.")
        return self.array

    def _write_elements(self, values: list) -> "Tensor":
        from .tensor import _bump_version
        a = self.array
        a[...] = np.asarray(values, dtype=object).reshape(a.shape).astype(a.dtype)
        _bump_version(self)  # type: ignore[arg-type]
        return self  # type: ignore[return-value]

    def apply_(self, callable: Callable[[Any], Any]) -> "Tensor":
        """Each element becomes ``callable(element)`` (a Python number in and out; slow: for tests and small
        tensors, as PyTorch warns)."""
        a = self._per_element("apply_")
        return self._write_elements([callable(v) for v in a.reshape(-1).tolist()])

    def map_(self, tensor: "Tensor", callable: Callable[[Any, Any], Any]) -> "Tensor":
        """Each element becomes ``callable(element, other)``, ``tensor`` broadcast to this tensor's shape."""
        a = self._per_element("map_")
        if tensor._device.type != "cpu":
            raise TypeError("map_ is only implemented on CPU tensors")
        other = _F.expand(tensor.detach(), tuple(a.shape)).array  # PyTorch's expand error when it cannot
        return self._write_elements([callable(x, y) for x, y in zip(a.reshape(-1).tolist(),
                                                                    other.reshape(-1).tolist())])

    # ------------------------------------------------------------------ queries
    def is_inference(self) -> bool:
        """False: minitensor has no inference tensors (see ``minitensor.is_inference``)."""
        return False

    @property
    def output_nr(self) -> int:
        """The index of this tensor among its ``grad_fn``'s outputs: 0, as each minitensor node has one."""
        return 0

    def is_set_to(self, tensor: "Tensor") -> bool:
        """True when both tensors view the same memory with the same offset, sizes and strides."""
        a, b = self.array, tensor.array
        return (self._device is tensor._device and a.dtype == b.dtype and a.shape == b.shape
                and a.strides == b.strides and self.data_ptr() == tensor.data_ptr()  # type: ignore[attr-defined]
                and _root(a) is _root(b))

    def const_data_ptr(self) -> int:
        """``data_ptr()`` (for read-only use)."""
        return self.data_ptr()  # type: ignore[attr-defined]

    def as_subclass(self, cls: type) -> Any:
        """This tensor's memory, outside the graph, as an instance of ``cls`` (a subclass of Tensor)."""
        from .tensor import Tensor, _wrap
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                            "possible. Make sure your class inherits from Tensor.")
        t = _wrap(self.array, self._device)
        if cls is not Tensor:
            t = object.__new__(cls)
            t.array, t._device, t._requires_grad = self.array, self._device, False
            t.grad = t.grad_fn = t._vc = t._hv = None
        return t

    def record_stream(self, stream: Any) -> None:
        """A no-op: CuPy's memory pool keeps a block for the stream that allocated it (and the CPU has no
        streams); ``stream`` must be a stream, as PyTorch checks."""
        from .backends.cuda.streams import Stream
        if not isinstance(stream, Stream):
            raise RuntimeError("unknown parameter type")

    def dim_order(self, *, ambiguity_check: Any = False) -> tuple[int, ...]:
        """The dims from outermost to innermost in memory (PyTorch's logical-to-physical permutation: dims
        by decreasing stride; size-1 and zero-stride dims keep their place). ``ambiguity_check``: True, or a
        list of memory formats of which exactly one must fit, raises where the order is not unique."""
        from . import memory_formats as _mf
        if not isinstance(ambiguity_check, bool) and not (
                isinstance(ambiguity_check, list) and all(isinstance(m, _mf.memory_format) for m in ambiguity_check)):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
        shape, strides = tuple(self.array.shape), self.stride()  # type: ignore[attr-defined]
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        check = ambiguity_check if isinstance(ambiguity_check, bool) else True
        several = any(s == t for s, t in zip(strides, strides[1:])) or 1 in shape
        if check and several and sum(bool(self.is_contiguous(m)) for m in formats) != 1:  # type: ignore[attr-defined]
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the "
                               "given memory formats.")
        return _logical_to_physical(self, shape, strides)


def _root(a: Any) -> Any:
    while getattr(a, "base", None) is not None:
        a = a.base
    return a


def _logical_to_physical(t: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's ``compute_elementwise_output_logical_to_physical_perm`` for one tensor (an insertion sort of
    the dims; over dims, not elements)."""
    from . import memory_formats as _mf
    n = len(shape)
    if n <= 1:
        return tuple(range(n))
    contiguous, channels_last = t.is_contiguous(), n == 4 and t.is_contiguous(_mf.channels_last)
    if contiguous and not channels_last:
        return tuple(range(n))
    if channels_last and not contiguous:
        return (0, *range(2, n), 1)

    def ge(a: int, b: int) -> bool:
        return True if b == 0 else False if a == 0 else a >= b or a % b == 0

    def should_swap(i: int, j: int) -> int:
        si, sj = strides[i], strides[j]
        if si == 0 or sj == 0:
            return 0
        if si == sj:
            return 0 if ge(shape[j], shape[i]) else 1
        return -1 if ge(sj, si) else 1 if ge(si, sj) else 0

    perm = list(reversed(range(n)))
    for i in range(1, n):
        d1 = i
        for d0 in reversed(range(i)):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return tuple(reversed(perm))
