"""``TensorExtraMethods``: PyTorch's rarer ``Tensor`` methods that real programs still call: the legacy
``new(...)``, ``map_`` / ``apply_`` (a Python callable per element, CPU only, as PyTorch), ``dist``,
``fill_diagonal_``, ``nonzero_static``, ``narrow_copy``, the ``unsafe_`` splits, ``new_empty_strided``, and
the queries ``dim_order``, ``output_nr``, ``is_set_to``, ``is_inference``, ``const_data_ptr``,
``as_subclass``, ``record_stream``. ``_F`` and ``_L`` are bound by ``tensor.py``."""
from __future__ import annotations

import warnings
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

    def map2_(self, x: "Tensor", y: "Tensor", callable: Callable[[Any, Any, Any], Any]) -> "Tensor":
        """Each element becomes ``callable(element, x's, y's)``, ``x`` and ``y`` broadcast to this shape."""
        a = self._per_element("map2_")
        if x._device.type != "cpu" or y._device.type != "cpu":
            raise TypeError("map2_ is only implemented on CPU tensors")
        xs, ys = (_F.expand(t.detach(), tuple(a.shape)).array.reshape(-1).tolist() for t in (x, y))
        return self._write_elements([callable(*v) for v in zip(a.reshape(-1).tolist(), xs, ys)])

    # ------------------------------------------------------------------ legacy memory operations
    def set_(self, source: "Tensor | None" = None, storage_offset: int = 0, size: Any = None,
             stride: Any = None) -> "Tensor":
        """This tensor becomes a view of ``source``'s memory (all of it, or ``size`` / ``stride`` from
        ``storage_offset`` in elements, as ``as_strided``), or empty (shape (0,)) with no source. Tensors only:
        minitensor has no storage objects."""
        from .functional.inplace import check_writable
        from .tensor import Tensor, _bump_version, _counter
        t: Any = self
        check_writable(t)
        if source is None:
            new = np.empty(0, self.array.dtype) if self._device.type == "cpu" else self._device.backend.empty(
                (0,), self.array.dtype)
            vc = None
        elif not isinstance(source, Tensor):
            raise TypeError(f"set_(): expected a Tensor source (minitensor has no storages), got "
                            f"{type(source).__name__}")
        else:
            if source.array.dtype != self.array.dtype:
                raise RuntimeError(f"Expected object of scalar type {self.dtype} but got scalar type "  # type: ignore[attr-defined]
                                   f"{source.dtype} for argument 'source'")
            view = source.detach() if size is None else _F.as_strided(source.detach(), size, stride, storage_offset)
            new, vc = view.array, _counter(source)
        t.array, t._device, t.grad_fn = new, source._device if source is not None else self._device, None
        if vc is not None:
            t._vc = vc
        _bump_version(t)
        return t

    def resize(self, *sizes: Any) -> "Tensor":
        """Deprecated: ``self`` viewed as ``sizes`` (the same number of elements), with the gradient."""
        warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
        shape = tuple(sizes)  # ints only: PyTorch's resize((2, 3)) takes the tuple as one size and raises
        ok = all(isinstance(s, int) and s >= 0 for s in shape)  # no -1: sizes, not a reshape
        n = int(np.prod(shape)) if ok else None
        if n != self.array.size:
            raise RuntimeError(f"requested resize to {'x'.join(map(str, shape))} ({n if n is not None else shape} "
                               f"elements in total), but the given tensor has a size of "
                               f"{'x'.join(map(str, self.array.shape))} ({self.array.size} elements). autograd's "
                               "resize can only change the shape of a given tensor, while preserving the number of "
                               "elements.")
        return _F.reshape(self, shape)

    def resize_as(self, tensor: "Tensor") -> "Tensor":
        warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
        return _F.reshape(self, tuple(tensor.shape))

    def module_load(self, other: "Tensor", assign: bool = False) -> "Tensor":
        """What ``load_state_dict`` loads into this parameter or buffer: ``other`` detached (``assign``), else
        this tensor after copying ``other`` in, detached."""
        if assign:
            return other.detach()
        return _F.copy_(self, other).detach()

    # ------------------------------------------------------------------ removed methods
    def eig(self, eigenvectors: bool = False) -> Any:
        _removed("eig")

    def symeig(self, eigenvectors: bool = False, upper: bool = True) -> Any:
        _removed("symeig")

    def solve(self, A: "Tensor") -> Any:
        _removed("solve")

    def lstsq(self, A: "Tensor") -> Any:
        _removed("lstsq")

    def triangular_solve(self, A: "Tensor", upper: bool = True, transpose: bool = False,
                         unitriangular: bool = False) -> Any:
        from ._linalg_removed import triangular_solve
        return triangular_solve(self, A, upper, transpose, unitriangular)  # type: ignore[arg-type]

    def reinforce(self, reward: Any) -> None:
        raise RuntimeError(REINFORCE_REMOVED)

    # ------------------------------------------------------------------ queries
    @property
    def volatile(self) -> bool:
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @property
    def name(self) -> None:
        """None: minitensor has no named tensors (nor does PyTorch's autograd give names)."""
        return None

    def is_distributed(self) -> bool:
        return False

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


def _removed(name: str) -> Any:
    from ._linalg_removed import MESSAGES
    raise RuntimeError(MESSAGES[name])


REINFORCE_REMOVED = """reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""


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
