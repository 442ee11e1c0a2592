"""``Tensor``: a backend array (``.array``), the device it lives on, and its place in the autograd graph.

Every operator and op method (``tensor_methods.py``, the base class) is a thin call into
``minitensor.functional``, where the differentiable ops live; the creation functions are in ``creation.py``.
``.array`` is the raw NumPy or CuPy array; ``.data`` is PyTorch's: a Tensor sharing that array, detached
from the graph.
"""
from __future__ import annotations

import weakref
from typing import Any, Iterator, Sequence

import numpy as np

from .backends.cuda import runtime as _cuda_runtime
from . import dtypes as _dt
from . import printing as _printing
from .device import as_device, cpu, device
from .size import Size
from .tensor_methods import TensorMethods
from .tensor_sparse import TensorSparseMethods
from .tensor_storage import TensorStorageMethods
from .tensor_layout import TensorLayoutMethods
from .tensor_extras import TensorExtraMethods
from .backends.generic.sparse import SparseCOO

_new = object.__new__
_new_size = tuple.__new__


def _wrap(array: Any, dev: device, requires_grad: bool = False) -> "Tensor":
    """A Tensor around ``array`` without copies or checks (the hot path of every op)."""
    t = _new(Tensor)
    t.array = array
    t._device = dev
    t._requires_grad = requires_grad
    t.grad = t.grad_fn = t._vc = t._hv = None  # no gradient, history or version counters yet
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


class Tensor(TensorMethods, TensorSparseMethods, TensorStorageMethods, TensorLayoutMethods, TensorExtraMethods):
    """An n-dimensional array with autograd, on one device.

    ``Tensor(data)`` makes a float32 tensor from nested sequences or arrays, ``Tensor(2, 3)`` an uninitialised
    one and ``Tensor()`` an empty one, as ``torch.Tensor`` does; prefer ``minitensor.tensor`` (which infers
    the dtype) and the other creation functions.
    """

    # _vc: the version counter (None until needed, see _counter), shared by views of the same memory.
    # _hv: the history counter, shared by a tensor and its graph views (ViewFunction outputs, not detach);
    # _gv: its value when this tensor's own history was last brought up to date. _hv[0] != _gv means the
    # memory was written through another view: the next op remakes grad_fn (autograd/views.py refresh).
    # _view: set with _hv: a view's ViewInfo (its base...), None on a base (autograd/views.py).
    # _hooks: a leaf's register_hook hooks (autograd/hooks.py), unset until the first one.
    __slots__ = ("array", "_device", "_requires_grad", "grad", "grad_fn", "_vc", "_hv", "_gv", "_view", "_hooks",
                 "__weakref__")
    _requires_grad: bool
    grad: "Tensor | None"
    grad_fn: Any
    _vc: list[int] | None
    _view: Any
    # NumPy defers to our reflected operators (ndarray + Tensor -> Tensor.__radd__).
    __array_ufunc__ = None

    def __init__(self, *args: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> None:
        src = _legacy.legacy_new(args, _dt.as_dtype(dtype or _dt.get_default_dtype()), device)
        if requires_grad:
            src.requires_grad = True
        self.array, self._device = src.array, src._device
        self._requires_grad, self.grad, self.grad_fn, self._vc = src._requires_grad, None, None, None
        self._hv = None

    # ----------------------------------------------------------------------------------- attributes
    @property
    def shape(self) -> Size:
        return _new_size(Size, self.array.shape)  # a NumPy/CuPy shape holds ints: no check needed

    def size(self, dim: int | None = None) -> Any:
        return _new_size(Size, self.array.shape) if dim is None else self.array.shape[dim]

    @property
    def ndim(self) -> int:
        return self.array.ndim

    def dim(self) -> int:
        return self.ndim

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
        return self.array.dtype.kind in "fV"

    @property
    def requires_grad(self) -> bool:
        if self._hv is not None and self._hv[0] != self._gv:  # a view whose base a write made require grad
            _autograd.views.refresh_outputs((self,))
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and self.grad_fn is None and self.array.dtype.kind not in "fV":
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
        return not self.requires_grad or self.grad_fn is None  # requires_grad: brings a view's node up to date

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (PyTorch's; ``detach`` makes none)."""
        return self._hv is not None and self._view is not None

    @property
    def _base(self) -> "Tensor | None":
        """The tensor this one is a view of (through chains of views, the first), else None (PyTorch's)."""
        return self._view.base if self._is_view() else None

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
        return self._last_two_swapped("tensor.mT")

    # ----------------------------------------------------------------------------------- conversion
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The CPU array itself (shared memory), like ``torch.Tensor.numpy``."""
        if type(self.array) is SparseCOO:
            raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")
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
        if type(self.array) is SparseCOO:
            return _F.sparse.sparse_repr(self)
        host = self._device.backend.to_numpy(self.array)
        if host.dtype.kind == "V":  # bfloat16: NumPy formats it only as float32
            host = host.astype(np.float32)
        prefix = "tensor("
        extras = []
        if self._device is not cpu:
            extras.append(f"device='{self._device}'")
        if host.size == 0:
            # An empty tensor shows what its body cannot: a shape other than (0,), a non-default dtype.
            body = "[]"
            if host.ndim != 1:
                extras.append(f"size={tuple(host.shape)}")
            if self.array.dtype != _dt.get_default_dtype().np:
                extras.append(f"dtype={self.dtype}")
        else:
            body = _printing.tensor_text(host, len(prefix))
            if not _printing.PRINT_OPTS.edgeitems:
                extras.append(f"size={tuple(host.shape)}")
            if self.array.dtype not in (_dt.get_default_dtype().np, np.int64, np.bool_):
                extras.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn={self.grad_fn!r}")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return _printing.add_suffixes(prefix + body, extras, len(prefix))

    # ------------------------------------------------------------------------------ device, dtype
    def to(self, *args: Any, **kwargs: Any) -> "Tensor":
        """PyTorch's forms: ``to(device=None, dtype=None, non_blocking=False, copy=False)``, ``to(dtype,
        non_blocking=False, copy=False)``, ``to(other, non_blocking=False, copy=False)``. Returns self when
        nothing changes and ``copy`` is False. Differentiable. ``non_blocking`` is accepted for PyTorch's
        code and changes nothing: the copy is ``functional.cast.ToDevice``'s (the DataLoader's ``device=``
        is the asynchronous path). ``memory_format`` lays the result out as ``memory_formats.to`` says."""
        unknown = set(kwargs) - {"device", "dtype", "non_blocking", "copy", "memory_format"}
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
        return _memory_formats.to(self, out, kwargs.get("memory_format"), copy)

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
        if _cuda_runtime.is_pinned(self.array):
            return self
        pinned = _cuda_runtime.pinned_copy(self.array)
        if not self._requires_grad:
            return _wrap(pinned, cpu)
        out = _F.clone(self)  # the autograd edge (gradient passes through); its array becomes the pinned copy
        out.array = pinned
        return out

    def is_pinned(self) -> bool:
        """True when this tensor's memory is page-locked host memory (False without CUDA)."""
        return self._device is cpu and _cuda_runtime.is_pinned(self.array)

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
        if self._hv is not None and self._view is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self.grad_fn, self._requires_grad = None, False
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None:
            self.grad_fn._retained = weakref.ref(self)

    def register_hook(self, hook: Any) -> Any:
        """``hook(grad) -> Tensor | None`` runs when this tensor's gradient is computed (before a leaf
        accumulates it); a returned tensor replaces the gradient. Returns a handle with ``remove()``."""
        return _autograd.hooks.register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """``hook(tensor)`` runs after this leaf's ``.grad`` has been accumulated in a backward."""
        return _autograd.hooks.register_post_accumulate_grad_hook(self, hook)

    def clone(self, *, memory_format: Any = None) -> "Tensor":
        """A copy; ``memory_format`` (default ``preserve_format``): see ``minitensor.memory_formats``."""
        return _memory_formats.clone(self, memory_format)

    def contiguous(self, memory_format: Any = None) -> "Tensor":
        if memory_format is None:
            return self if self.array.flags.c_contiguous else _F.cast.contiguous(self)
        return _memory_formats.contiguous(self, memory_format)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        if memory_format is None:
            return bool(self.array.flags.c_contiguous)
        return _memory_formats.is_contiguous(self, memory_format)


from . import autograd as _autograd  # noqa: E402  (autograd and the ops need Tensor defined first)
from . import functional as _F  # noqa: E402

from . import creation as _creation  # noqa: E402
from . import tensor_methods as _methods  # noqa: E402
from . import tensor_math as _math_methods, tensor_shape as _shape_methods  # noqa: E402
from . import legacy as _legacy  # noqa: E402  (Tensor(...))
from . import tensor_sparse as _sparse_methods  # noqa: E402
from . import tensor_storage as _storage_methods  # noqa: E402
from . import tensor_layout as _layout_methods  # noqa: E402
from . import memory_formats as _memory_formats  # noqa: E402
from . import tensor_extras as _extra_methods  # noqa: E402

_methods.bind_functional(_F)
_shape_methods._F = _math_methods._F = _F
_storage_methods._F = _layout_methods._F = _F
_autograd.function._Tensor, _autograd.function._wrap = Tensor, _wrap
_methods._C, _methods._L = _creation, _legacy
_sparse_methods._S = _F.sparse
_extra_methods._F, _extra_methods._L = _F, _legacy
