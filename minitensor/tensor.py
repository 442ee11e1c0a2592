"""``Tensor``: a backend array (``.array``), the device it lives on, and its place in the autograd graph.

Every operator and method is a thin call into ``minitensor.functional``, where the differentiable ops
live. ``.array`` is the raw NumPy or CuPy array; ``.data`` is PyTorch's: a Tensor sharing that array,
detached from the graph.
"""
from __future__ import annotations

import operator
import weakref
from typing import Any, Iterator, Sequence

import numpy as np

from . import cuda as _cuda
from . import dtypes as _dt
from .device import as_device, cpu, device

_new = object.__new__


def _wrap(array: Any, dev: device, requires_grad: bool = False) -> "Tensor":
    """A Tensor around ``array`` without copies or checks (the hot path of every op)."""
    t = _new(Tensor)
    t.array = array
    t._device = dev
    t._requires_grad = requires_grad
    t.grad = None
    t.grad_fn = None
    t._vc = None
    t._hv = None
    return t


def _counter(t: "Tensor") -> list[int]:
    """t's version counter: a one-element list shared with its views, made on first use (most tensors are
    never saved for backward, written in place or viewed, so ``_wrap`` does not allocate one)."""
    vc = t._vc
    if vc is None:
        vc = t._vc = [0]
    return vc


def _bump_version(t: "Tensor") -> None:
    """Record an in-place write into t's memory (PyTorch's version counter bump)."""
    vc = t._vc
    if vc is None:
        t._vc = [1]
    else:
        vc[0] += 1
    hv = t._hv
    if hv is not None:  # t's own history now covers the write; other views of the same memory go stale
        hv[0] += 1
        t._gv = hv[0]


def stale_history_error(t: "Tensor") -> RuntimeError:
    return RuntimeError(
        f"a tensor of shape {list(t.shape)} that requires grad was modified in place through a view of the same "
        "memory (or, for a view, through its base) after its gradient history was recorded; minitensor does not "
        "rewrite the history of the other tensors of that memory (PyTorch's CopySlices), so its gradient would "
        "miss the write. Write into the tensor itself (x[idx] = value, x.mul_(...)), or use out-of-place ops "
        "(docs/differences.md).")


class Tensor:
    """An n-dimensional array with autograd, on one device.

    ``Tensor(data)`` makes a float32 tensor from nested sequences or arrays, as ``torch.Tensor`` does;
    prefer ``minitensor.tensor`` (which infers the dtype) and the other creation functions.
    """

    # _vc: the version counter (None until needed, see _counter), shared by views of the same memory.
    # _hv: the history counter, shared by a tensor and its graph views (ViewFunction outputs, not detach);
    # _gv: its value when this tensor's own history was last brought up to date. _hv[0] != _gv means the
    # memory was written through another view, so grad_fn no longer describes the values (see
    # ``ViewFunction`` and ``_bump_version``).
    __slots__ = ("array", "_device", "_requires_grad", "grad", "grad_fn", "_vc", "_hv", "_gv", "__weakref__")
    # NumPy defers to our reflected operators (ndarray + Tensor -> Tensor.__radd__).
    __array_ufunc__ = None

    def __init__(self, data: Any = (), *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> None:
        src = tensor(data, dtype=dtype or _dt.get_default_dtype(), device=device,
                     requires_grad=requires_grad)
        self.array, self._device = src.array, src._device
        self._requires_grad, self.grad, self.grad_fn, self._vc = src._requires_grad, None, None, None
        self._hv = None

    # ----------------------------------------------------------------------------------- attributes
    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    def size(self, dim: int | None = None) -> Any:
        return self.array.shape if dim is None else self.array.shape[dim]

    @property
    def ndim(self) -> int:
        return self.array.ndim

    def dim(self) -> int:
        return self.array.ndim

    def numel(self) -> int:
        return int(self.array.size)

    nelement = numel

    def element_size(self) -> int:
        return self.array.itemsize

    @property
    def dtype(self) -> _dt.dtype:
        return _dt.from_numpy_dtype(self.array.dtype)

    @property
    def device(self) -> device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    # PyTorch's predicates for devices and layouts minitensor has none of: always False here.
    is_xpu = is_mps = is_meta = is_ipu = is_xla = is_maia = is_mtia = is_vulkan = is_mkldnn = \
        is_quantized = is_nested = property(lambda self: False)

    def is_floating_point(self) -> bool:
        return self.array.dtype.kind == "f"

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and self.grad_fn is None and self.array.dtype.kind != "f":
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients "
                               f"(this one is {self.dtype})")
        if not value and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables; use "
                               "detach() to get a tensor outside the graph")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        self.requires_grad = requires_grad
        return self

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's memory has had (shared with its views; ``.data`` has its
        own, which is why writes through ``.data`` escape the check), as PyTorch's ``_version``."""
        return 0 if self._vc is None else self._vc[0]

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def data(self) -> "Tensor":
        """This tensor's array as a new tensor outside the graph (PyTorch's ``.data``)."""
        return _wrap(self.array, self._device)

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be set to a Tensor, got {type(value).__name__}")
        self.array, self._device = value.array, value._device

    @property
    def T(self) -> "Tensor":
        return _F.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> "Tensor":
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mT needs at least 2 dimensions, got {self.ndim}")
        return _F.transpose(self, -2, -1)

    # ----------------------------------------------------------------------------------- conversion
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The CPU array itself (shared memory), like ``torch.Tensor.numpy``."""
        if force:
            return self._device.backend.to_numpy(self.array) if self._device is not cpu \
                else self.array
        if self._device is not cpu:
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self.array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """NumPy's protocol: ``np.asarray(t)`` shares memory, ``np.array(t)`` (copy=True) copies."""
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def item(self) -> Any:
        if self.array.size != 1:
            raise RuntimeError(f"a Tensor with {self.array.size} elements cannot be converted to Scalar")
        return self.array.item()

    def tolist(self) -> Any:
        return self._device.backend.to_numpy(self.array).tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.array.dtype.kind not in "iub" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.array.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.array.size} values is ambiguous")
        return bool(self.item())

    def __len__(self) -> int:
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        if self.array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.array.shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        host = self._device.backend.to_numpy(self.array)
        # PyTorch prints 4 decimals ("1.5000") unless every finite value is whole ("1., 2.").
        finite = host[np.isfinite(host)] if host.dtype.kind == "f" else host
        whole = host.dtype.kind != "f" or bool(np.all(finite == np.round(finite)))
        body = np.array2string(host, separator=", ", precision=4, prefix="tensor(", threshold=1000,
                               edgeitems=3, floatmode="maxprec" if whole else "fixed")
        extras = []
        if self._device is not cpu:
            extras.append(f"device='{self._device}'")
        if host.size == 0:
            # An empty tensor shows what its body cannot: a shape other than (0,), a non-default dtype.
            if host.ndim != 1:
                extras.append(f"size={tuple(host.shape)}")
            if self.array.dtype != _dt.get_default_dtype().np:
                extras.append(f"dtype={self.dtype}")
        elif self.array.dtype not in (_dt.get_default_dtype().np, np.int64, np.bool_):
            extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn={self.grad_fn!r}")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"

    # ------------------------------------------------------------------------------ device, dtype
    def to(self, *args: Any, **kwargs: Any) -> "Tensor":
        """PyTorch's forms: ``to(device=None, dtype=None, non_blocking=False, copy=False)``, ``to(dtype,
        non_blocking=False, copy=False)``, ``to(other, non_blocking=False, copy=False)``. Returns self when
        nothing changes and ``copy`` is False. Differentiable. ``non_blocking`` is accepted for PyTorch's
        code and changes nothing: the copy is ``functional.cast.ToDevice``'s (the DataLoader's ``device=``
        is the asynchronous path)."""
        unknown = set(kwargs) - {"device", "dtype", "non_blocking", "copy"}
        if unknown:
            raise TypeError(f"to() got an unexpected keyword argument '{sorted(unknown)[0]}'")
        dev, dt, flags = self._device, None, []
        for a in args:
            if isinstance(a, Tensor):
                dev, dt = a._device, a.dtype
            elif isinstance(a, (str, device)):
                dev = as_device(a)
            elif isinstance(a, bool):  # non_blocking, then copy (True/False; the bool *type* is a dtype)
                flags.append(a)
            elif a is not None:
                dt = _dt.as_dtype(a)
        if len(flags) > 2:
            raise TypeError(f"to() takes at most 2 positional flags (non_blocking, copy), got {len(flags)}")
        if kwargs.get("device") is not None:
            dev = as_device(kwargs["device"])
        if kwargs.get("dtype") is not None:
            dt = _dt.as_dtype(kwargs["dtype"])
        copy = kwargs.get("copy", flags[1] if len(flags) == 2 else False)
        out = self
        if dt is not None and dt.np != self.array.dtype:
            out = _F.to_dtype(out, dt)
        if dev is not out._device:
            out = _F.to_device(out, dev)
        if copy and out is self:
            out = self.clone()
        return out

    def cpu(self) -> "Tensor":
        return self.to(cpu)

    def cuda(self, device: Any = None, non_blocking: bool = False) -> "Tensor":
        """This tensor on a CUDA device: an index, "cuda:N" or a device (None: ``device("cuda")``)."""
        target = as_device("cuda" if device is None else
                           f"cuda:{device}" if isinstance(device, int) else device)
        if target.type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device (got '{target}')")
        return self.to(target, non_blocking=non_blocking)

    def pin_memory(self) -> "Tensor":
        """A copy of this CPU tensor in page-locked (pinned) host memory, from which copies to a GPU run
        without blocking the host; self when it already is pinned. The array stays a NumPy array (over a
        block of CuPy's pinned pool). Needs CUDA, as in PyTorch."""
        if self._device is not cpu:
            raise RuntimeError(f"cannot pin a '{self._device}' tensor: only CPU tensors can be pinned")
        if _cuda._is_pinned(self.array):
            return self
        pinned = _cuda._pinned_copy(self.array)
        if not self._requires_grad:
            return _wrap(pinned, cpu)
        out = _F.clone(self)  # the autograd edge (gradient passes through); its array becomes the pinned copy
        out.array = pinned
        return out

    def is_pinned(self) -> bool:
        """True when this tensor's memory is page-locked host memory (False without CUDA)."""
        return self._device is cpu and _cuda._is_pinned(self.array)

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """DLPack export of the array itself (NumPy's or CuPy's ``__dlpack__``): ``torch.from_dlpack(t)``,
        ``numpy.from_dlpack(t)``, ``cupy.from_dlpack(t)`` share this tensor's memory. Only the options
        the consumer passed are forwarded, so an older producer's TypeError lets it retry without them."""
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        options = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
        return self.array.__dlpack__(**{k: v for k, v in options.items() if v is not None})

    def __dlpack_device__(self) -> tuple[int, int]:
        """(DLPack device type, index): (1, 0) on the CPU, (2, N) on cuda:N."""
        return self.array.__dlpack_device__()

    def float(self) -> "Tensor":
        return self.to(_dt.float32)

    def double(self) -> "Tensor":
        return self.to(_dt.float64)

    def half(self) -> "Tensor":
        return self.to(_dt.float16)

    def long(self) -> "Tensor":
        return self.to(_dt.int64)

    def int(self) -> "Tensor":
        return self.to(_dt.int32)

    def bool(self) -> "Tensor":
        return self.to(_dt.bool)

    def type_as(self, other: "Tensor") -> "Tensor":
        return self.to(other.dtype)

    # ---------------------------------------------------------------------------------- autograd
    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Sequence["Tensor"] | None = None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``gradient`` weights a non-scalar)."""
        _autograd.backward([self], None if gradient is None else [gradient], retain_graph=retain_graph,
                           create_graph=create_graph, inputs=inputs)

    def detach(self) -> "Tensor":
        """The same memory outside the graph; it shares the version counter (unlike ``.data``)."""
        t = _wrap(self.array, self._device)
        t._vc = _counter(self)
        return t

    def detach_(self) -> "Tensor":
        self.grad_fn, self._requires_grad = None, False
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None:
            self.grad_fn._retained = weakref.ref(self)

    def clone(self) -> "Tensor":
        return _F.clone(self)

    def contiguous(self) -> "Tensor":
        return self if self.array.flags.c_contiguous else _F.cast.contiguous(self)

    def is_contiguous(self) -> bool:
        return bool(self.array.flags.c_contiguous)

    # ------------------------------------------------------------------------------ new tensors
    def new_tensor(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return tensor(data, dtype=dtype or self.dtype, device=self._device, requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return zeros(*size, dtype=dtype or self.dtype, device=self._device, requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return ones(*size, dtype=dtype or self.dtype, device=self._device, requires_grad=requires_grad)

    def new_full(self, size: Sequence[int], fill_value: Any, dtype: Any = None,
                 requires_grad: bool = False) -> "Tensor":
        return full(size, fill_value, dtype=dtype or self.dtype, device=self._device,
                    requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return empty(*size, dtype=dtype or self.dtype, device=self._device, requires_grad=requires_grad)

    # ------------------------------------------------------------------------------- arithmetic
    def __add__(self, other: Any) -> "Tensor":
        return _F.add(self, other)

    def __radd__(self, other: Any) -> "Tensor":
        return _F.add(other, self)

    def __sub__(self, other: Any) -> "Tensor":
        return _F.sub(self, other)

    def __rsub__(self, other: Any) -> "Tensor":
        return _F.sub(other, self)

    def __mul__(self, other: Any) -> "Tensor":
        return _F.mul(self, other)

    def __rmul__(self, other: Any) -> "Tensor":
        return _F.mul(other, self)

    def __truediv__(self, other: Any) -> "Tensor":
        return _F.div(self, other)

    def __rtruediv__(self, other: Any) -> "Tensor":
        return _F.div(other, self)

    def __floordiv__(self, other: Any) -> "Tensor":
        return _F.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> "Tensor":
        return _F.floor_divide(other, self)

    def __mod__(self, other: Any) -> "Tensor":
        return _F.remainder(self, other)

    def __rmod__(self, other: Any) -> "Tensor":
        return _F.remainder(other, self)

    def __pow__(self, other: Any) -> "Tensor":
        return _F.pow(self, other)

    def __rpow__(self, other: Any) -> "Tensor":
        return _F.pow(other, self)

    def __matmul__(self, other: Any) -> "Tensor":
        return _F.matmul(self, other)

    def __rmatmul__(self, other: Any) -> "Tensor":
        return _F.matmul(other, self)

    def __neg__(self) -> "Tensor":
        return _F.neg(self)

    def __pos__(self) -> "Tensor":
        return self

    def __abs__(self) -> "Tensor":
        return _F.abs(self)

    def __eq__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return _F.eq(self, other)

    def __ne__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return _F.ne(self, other)

    def __lt__(self, other: Any) -> "Tensor":
        return _F.lt(self, other)

    def __le__(self, other: Any) -> "Tensor":
        return _F.le(self, other)

    def __gt__(self, other: Any) -> "Tensor":
        return _F.gt(self, other)

    def __ge__(self, other: Any) -> "Tensor":
        return _F.ge(self, other)

    def __and__(self, other: Any) -> "Tensor":
        return _F.logical_and(self, other) if self.array.dtype == np.bool_ else _F.bitwise_and(self, other)

    def __or__(self, other: Any) -> "Tensor":
        return _F.logical_or(self, other) if self.array.dtype == np.bool_ else _F.bitwise_or(self, other)

    def __xor__(self, other: Any) -> "Tensor":
        return _F.logical_xor(self, other) if self.array.dtype == np.bool_ else _F.bitwise_xor(self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self) -> "Tensor":
        return _F.logical_not(self) if self.array.dtype == np.bool_ else _F.bitwise_not(self)

    # ----------------------------------------------------------------------------------- in place
    def __iadd__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.add, other)

    def __isub__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.sub, other)

    def __imul__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.mul, other)

    def __itruediv__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.div, other)

    def add_(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        return _F.inplace(self, _F.add, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        return _F.inplace(self, _F.sub, other, alpha=alpha)

    def mul_(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.mul, other)

    def div_(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.div, other)

    def pow_(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.pow, other)

    def clamp_(self, min: Any = None, max: Any = None) -> "Tensor":
        return _F.inplace(self, _F.clamp, min, max)

    def masked_fill_(self, mask: "Tensor", value: Any) -> "Tensor":
        return _F.inplace(self, _F.masked_fill, mask, value)

    def copy_(self, src: Any) -> "Tensor":
        """Copy ``src`` (broadcast, cast, from any device) into this tensor's memory."""
        return _F.copy_(self, src)

    def fill_(self, value: Any) -> "Tensor":
        return _F.copy_(self, value)

    def zero_(self) -> "Tensor":
        return _F.copy_(self, 0)

    def uniform_(self, a: float = 0.0, b: float = 1.0) -> "Tensor":
        return _F.copy_(self, rand(*self.shape, dtype=self.dtype, device=self._device) * (b - a) + a)

    def normal_(self, mean: float = 0.0, std: float = 1.0) -> "Tensor":
        return _F.copy_(self, randn(*self.shape, dtype=self.dtype, device=self._device) * std + mean)

    def __setitem__(self, index: Any, value: Any) -> None:
        _F.setitem(self, index, value)

    def __getitem__(self, index: Any) -> "Tensor":
        return _F.getitem(self, index)

    # ---------------------------------------------------------------------------- math methods
    def add(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        return _F.add(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        return _F.sub(self, other, alpha=alpha)

    def mul(self, other: Any) -> "Tensor":
        return _F.mul(self, other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> "Tensor":
        return _F.div(self, other, rounding_mode=rounding_mode)

    def pow(self, exponent: Any) -> "Tensor":
        return _F.pow(self, exponent)

    def matmul(self, other: "Tensor") -> "Tensor":
        return _F.matmul(self, other)

    def exp(self) -> "Tensor":
        return _F.exp(self)

    def log(self) -> "Tensor":
        return _F.log(self)

    def log1p(self) -> "Tensor":
        return _F.log1p(self)

    def expm1(self) -> "Tensor":
        return _F.expm1(self)

    def sqrt(self) -> "Tensor":
        return _F.sqrt(self)

    def rsqrt(self) -> "Tensor":
        return _F.rsqrt(self)

    def abs(self) -> "Tensor":
        return _F.abs(self)

    def sign(self) -> "Tensor":
        return _F.sign(self)

    def neg(self) -> "Tensor":
        return _F.neg(self)

    def reciprocal(self) -> "Tensor":
        return _F.reciprocal(self)

    def square(self) -> "Tensor":
        return _F.mul(self, self)

    def sin(self) -> "Tensor":
        return _F.sin(self)

    def cos(self) -> "Tensor":
        return _F.cos(self)

    def tanh(self) -> "Tensor":
        return _F.tanh(self)

    def sigmoid(self) -> "Tensor":
        return _F.sigmoid(self)

    def relu(self) -> "Tensor":
        return _F.relu(self)

    def clamp(self, min: Any = None, max: Any = None) -> "Tensor":
        return _F.clamp(self, min, max)

    clip = clamp

    def maximum(self, other: "Tensor") -> "Tensor":
        return _F.maximum(self, other)

    def minimum(self, other: "Tensor") -> "Tensor":
        return _F.minimum(self, other)

    def eq(self, other: Any) -> "Tensor":
        return _F.eq(self, other)

    def ne(self, other: Any) -> "Tensor":
        return _F.ne(self, other)

    def lt(self, other: Any) -> "Tensor":
        return _F.lt(self, other)

    def le(self, other: Any) -> "Tensor":
        return _F.le(self, other)

    def gt(self, other: Any) -> "Tensor":
        return _F.gt(self, other)

    def ge(self, other: Any) -> "Tensor":
        return _F.ge(self, other)

    def logical_not(self) -> "Tensor":
        return _F.logical_not(self)

    def isnan(self) -> "Tensor":
        return _F.isnan(self)

    def isinf(self) -> "Tensor":
        return _F.isinf(self)

    def isfinite(self) -> "Tensor":
        return _F.isfinite(self)

    def where(self, condition: "Tensor", other: Any) -> "Tensor":
        return _F.where(condition, self, other)

    def masked_fill(self, mask: "Tensor", value: Any) -> "Tensor":
        return _F.masked_fill(self, mask, value)

    def gather(self, dim: int, index: "Tensor") -> "Tensor":
        return _F.gather(self, dim, index)

    def softmax(self, dim: int) -> "Tensor":
        return _F.softmax(self, dim)

    def log_softmax(self, dim: int) -> "Tensor":
        return _F.log_softmax(self, dim)

    def index_select(self, dim: int, index: "Tensor") -> "Tensor":
        return _F.index_select(self, dim, index)

    def narrow(self, dim: int, start: Any, length: int) -> "Tensor":
        return _F.narrow(self, dim, start, length)

    # ------------------------------------------------------------------------------ reductions
    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> "Tensor":
        return _F.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> "Tensor":
        return _F.mean(self, dim, keepdim, dtype=dtype)

    def var(self, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
            unbiased: bool | None = None) -> "Tensor":
        return _F.var(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    def std(self, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
            unbiased: bool | None = None) -> "Tensor":
        return _F.std(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    def prod(self, dim: int | None = None, keepdim: bool = False) -> "Tensor":
        return _F.prod(self, dim, keepdim)

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        return _F.max(self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        return _F.min(self, dim, keepdim)

    def amax(self, dim: Any = (), keepdim: bool = False) -> "Tensor":
        return _F.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: bool = False) -> "Tensor":
        return _F.amin(self, dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> "Tensor":
        return _F.argmax(self, dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> "Tensor":
        return _F.argmin(self, dim, keepdim)

    def logsumexp(self, dim: Any, keepdim: bool = False) -> "Tensor":
        return _F.logsumexp(self, dim, keepdim)

    def all(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        return _F.all(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        return _F.any(self, dim, keepdim)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> "Tensor":
        return _F.norm(self, p, dim, keepdim)

    # ----------------------------------------------------------------------------------- shape
    def reshape(self, *shape: Any) -> "Tensor":
        return _F.reshape(self, _sizes(shape))

    def view(self, *shape: Any, dtype: Any = None) -> "Tensor":
        """A view with a new shape, or, given a dtype, of the same bytes read as that dtype."""
        if dtype is None and len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
            dtype = shape[0]
        if dtype is not None:
            return _F.view_dtype(self, dtype)
        return _F.reshape(self, _sizes(shape))

    def view_as(self, other: "Tensor") -> "Tensor":
        return _F.reshape(self, other.shape)

    reshape_as = view_as

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        return _F.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> "Tensor":
        return _F.unflatten(self, dim, sizes)

    def squeeze(self, dim: Any = None) -> "Tensor":
        return _F.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> "Tensor":
        return _F.unsqueeze(self, dim)

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        return _F.transpose(self, dim0, dim1)

    def t(self) -> "Tensor":
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self.T

    def permute(self, *dims: Any) -> "Tensor":
        return _F.permute(self, _sizes(dims))

    def expand(self, *sizes: Any) -> "Tensor":
        return _F.expand(self, _sizes(sizes))

    def expand_as(self, other: "Tensor") -> "Tensor":
        return _F.expand(self, other.shape)

    def broadcast_to(self, shape: Sequence[int]) -> "Tensor":
        return _F.broadcast_to(self, shape)

    def repeat(self, *sizes: Any) -> "Tensor":
        return _F.repeat(self, _sizes(sizes))

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.split(self, split_size_or_sections, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.unbind(self, dim)

    def flip(self, dims: Any) -> "Tensor":
        return _F.flip(self, dims)

    def tril(self, diagonal: int = 0) -> "Tensor":
        return _F.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> "Tensor":
        return _F.triu(self, diagonal)

    def tril_(self, diagonal: int = 0) -> "Tensor":
        return _F.inplace(self, _F.tril, diagonal)

    def triu_(self, diagonal: int = 0) -> "Tensor":
        return _F.inplace(self, _F.triu, diagonal)


def _sizes(args: tuple) -> tuple[int, ...]:
    """``f(2, 3)`` and ``f((2, 3))`` both give (2, 3), as PyTorch's size arguments do."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _new_shape(args: tuple) -> tuple[int, ...]:
    """The size arguments of a creation function, none negative (PyTorch's error); a non-integer size is
    left to the array library's TypeError (one ``min`` keeps this off the creation hot path)."""
    shape = _sizes(args)
    if shape and min(shape) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    return shape


# ----------------------------------------------------------------------------------------- creation
def _infer_numpy(data: Any, dtype: Any = None) -> np.ndarray:
    """An ndarray for ``data`` with PyTorch's inference: Python floats give the default float dtype. With a
    ``dtype`` asked for, the values are kept at full precision for the one cast to it (0.1 as float64 stays
    the float64 0.1, not a float32 rounding of it)."""
    if isinstance(data, Tensor):
        return data._device.backend.to_numpy(data.array)
    if isinstance(data, (np.ndarray, np.generic)):
        return np.asarray(data)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [_infer_numpy(x) for x in data]
    try:
        arr = np.asarray(data)
    except ValueError:  # NumPy 2 refuses ragged nested sequences outright
        raise ValueError(f"could not make a tensor from {type(data).__name__}: the nested sequences have "
                         "different lengths") from None
    if dtype is not None and arr.dtype.kind != "O":
        return arr
    if arr.dtype == np.float64:
        arr = arr.astype(_dt.get_default_dtype().np)
    elif arr.dtype.kind in "iu" and arr.dtype != np.int64 and not isinstance(data, np.ndarray):
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "O":
        raise TypeError(f"could not make a tensor from {type(data).__name__}: ragged or non-numeric data")
    return arr


def _finish(host_or_array: Any, dtype: Any, dev: device, requires_grad: bool, copy: bool) -> Tensor:
    backend = dev.backend
    np_dtype = None if dtype is None else _dt.as_dtype(dtype).np
    a = host_or_array
    if np_dtype is not None and a.dtype != np_dtype:
        a = a.astype(np_dtype)
        copy = False
    _dt.from_numpy_dtype(a.dtype)  # refuses unsupported dtypes with a clear message
    if isinstance(a, np.ndarray) and dev is not cpu:
        a = backend.asarray(a)
        copy = False
    if copy:
        a = backend.copy(a)
    t = _wrap(a, dev)
    if requires_grad:
        t.requires_grad = True
    return t


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested sequences, scalars, arrays or tensors)."""
    dev = as_device(device) if device is not None else (
        data._device if isinstance(data, Tensor) else cpu)
    src = data.array if isinstance(data, Tensor) and data._device is dev else _infer_numpy(data, dtype)
    return _finish(src, dtype, dev, requires_grad, copy=True)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory where dtype and device allow."""
    if isinstance(data, Tensor) and (dtype is None or _dt.as_dtype(dtype).np == data.array.dtype) and \
            (device is None or as_device(device) is data._device):
        return data
    dev = as_device(device) if device is not None else (
        data._device if isinstance(data, Tensor) else cpu)
    src = data.array if isinstance(data, Tensor) and data._device is dev else _infer_numpy(data, dtype)
    return _finish(src, dtype, dev, False, copy=False)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing ``array``'s memory and dtype."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dt.from_numpy_dtype(array.dtype)
    return _wrap(array, cpu)


def _factory(fill: str, size: tuple, dtype: Any, device: Any, requires_grad: bool,
             value: Any = None) -> Tensor:
    dev = as_device(device)
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    shape = _new_shape(size)
    b = dev.backend
    if fill == "full":
        a = b.full(shape, value, dt.np)
    else:
        a = getattr(b, fill)(shape, dt.np)
    t = _wrap(a, dev)
    if requires_grad:
        t.requires_grad = True
    return t


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _factory("zeros", size, dtype, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _factory("ones", size, dtype, device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _factory("empty", size, dtype, device, requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Filled with ``fill_value``; the dtype follows the value (bool, int64, default float) when not given."""
    if dtype is None:
        dtype = _dt._DEFAULT_BY_CATEGORY[_dt.scalar_category(fill_value)]
    return _factory("full", (tuple(size),), dtype, device, requires_grad, fill_value)


def _like(t: Tensor, dtype: Any, device: Any) -> tuple[Any, Any]:
    return (dtype or t.dtype), (device or t._device)


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return zeros(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return ones(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return empty(input.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return full(input.shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """[start, end) in steps; int64 when every bound is an integer, else the default float dtype."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        category = max(_dt.scalar_category(v) for v in (start, end, step))
        dtype = _dt._DEFAULT_BY_CATEGORY[max(category, 1)]
    bounds = float(start), float(end), float(step)
    if bounds[2] == 0:
        raise RuntimeError("arange: step must be nonzero")
    if not (np.isfinite(bounds[0]) and np.isfinite(bounds[1])):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end}")
    if (bounds[1] - bounds[0]) * bounds[2] < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign (start={start}, "
                           f"end={end}, step={step})")
    dt = _dt.as_dtype(dtype)
    dev = as_device(device)
    t = _wrap(dev.backend.arange(start, end, step, dt.np), dev)
    if requires_grad:
        t.requires_grad = True
    return t


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` points from start to end; integer dtypes truncate toward zero, as PyTorch does."""
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    if dt.np == np.bool_:
        raise RuntimeError("\"linspace\" not implemented for 'Bool'")
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))  # 0-d tensors, as PyTorch
    dev = as_device(device)
    t = _wrap(dev.backend.linspace(start, end, steps, dt.np), dev)
    if requires_grad:
        t.requires_grad = True
    return t


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    m = n if m is None else m
    for what, v in (("n", n), ("m", m)):
        if operator.index(v) < 0:
            raise RuntimeError(f"eye: {what} must be greater or equal to 0, got {v}")
    dev = as_device(device)
    t = _wrap(dev.backend.eye(n, m, dt.np), dev)
    if requires_grad:
        t.requires_grad = True
    return t


def rand(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """U[0, 1) from the device's generator (``manual_seed`` seeds it)."""
    dev = as_device(device)
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    t = _wrap(dev.backend.uniform(_new_shape(size), 0.0, 1.0, dt.np), dev)
    if requires_grad:
        t.requires_grad = True
    return t


def randn(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """N(0, 1) from the device's generator."""
    dev = as_device(device)
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    t = _wrap(dev.backend.normal(_new_shape(size), 0.0, 1.0, dt.np), dev)
    if requires_grad:
        t.requires_grad = True
    return t


def randint(low: int, high: int | None = None, size: Sequence[int] = (), *, dtype: Any = None,
            device: Any = None) -> Tensor:
    """Integers in [low, high) (``randint(high, size)`` also works, as in PyTorch)."""
    if high is None or isinstance(high, (tuple, list)):
        if high is not None:
            size = high
        low, high = 0, low
    size = _new_shape((tuple(size),))
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dev = as_device(device)
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.int64
    # Integers are drawn as integers, then cast: randint_like(float_tensor) gives whole floats.
    a = dev.backend.randint(low, high, size, dt.np if dt.category == 1 else np.int64)
    return _wrap(a.astype(dt.np, copy=False), dev)


def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return rand(input.shape, dtype=dt, device=dev)


def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return randn(input.shape, dtype=dt, device=dev)


def randint_like(input: Tensor, low: int, high: int | None = None, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return randint(low, high, input.shape, dtype=dt, device=dev)


def randperm(n: int, *, dtype: Any = None, device: Any = None) -> Tensor:
    dev = as_device(device)
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.int64
    if operator.index(n) < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    return _wrap(dev.backend.permutation(n).astype(dt.np, copy=False), dev)


from . import autograd as _autograd  # noqa: E402  (autograd and the ops need Tensor defined first)
from . import functional as _F  # noqa: E402
