"""``ArrayFunction``: one differentiable op, written on raw backend arrays, and its node in the graph (the
base of every op in minitensor/functional/; PyTorch's user-facing ``Function``, on tensors, is built on it
in custom_function.py and re-exported here, as ``torch.autograd.function`` has it).

Subclasses define two static methods::

    class Exp(ArrayFunction):
        @staticmethod
        def forward(ctx, B, x):          # B: the backend; x: a backend array
            y = B.exp(x)
            ctx.save_for_backward(y)     # arrays only through save_for_backward (freed after backward)
            return y                     # or (y, extra, ...): extras come back as tensors without grad
        @staticmethod
        def backward(ctx, B, gy):
            y, = ctx.saved_arrays
            return gy * y                # one gradient per positional forward argument (None: no gradient)

``Exp.apply(t)`` unwraps tensor arguments to arrays (other positional arguments and keywords pass as they
are), checks that all tensors share a device, runs ``forward`` on that device's backend and, when grad
mode is on and an input requires grad, records the call instance as ``grad_fn`` of the output. The
engine sums each returned gradient back to its input's shape and casts it to its input's dtype, so an op
never handles broadcasting in backward.
Operands that do not broadcast (NumPy's or CuPy's ValueError in forward) raise PyTorch's RuntimeError,
"The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", for every op.
"""
from __future__ import annotations

import itertools
import traceback
import weakref
from typing import Any, Callable, Sequence

import minitensor.tensor as _tensor_mod

from .grad_mode import state
from ..backends.base import Backend
from ..backends.generic.sparse import SparseCOO, SparseLayoutError, sparse_op_error
from ..backends.ieee_errors import IGNORE, restore, silence

_FREED = ("Trying to backward through the graph a second time (or to read saved tensors after they were "
          "freed). Saved arrays are freed after backward; pass retain_graph=True to the first "
          "backward() or autograd.grad() call if you need to backward through the graph again.")


_new = object.__new__
# ``Tensor`` and its ``_wrap``, bound by tensor.py once Tensor exists (this module is imported before it is
# defined): two module globals instead of two attribute reads of the tensor module on every op.
_Tensor: Any = None
_wrap: Any = None
_sequence = itertools.count()  # numbers the recorded nodes (next() on it is atomic under the GIL)

# The ONNX exporter's tracer while it runs a model (minitensor/onnx/trace.py), else None: every ``apply``
# reports its call to it. One global read per op when no export is running.
tracer: Any = None
# autocast's hook (minitensor/amp/autocast_mode.cast_inputs) while a thread is inside an enabled autocast
# region, else None: it casts the op's tensor arguments by the policy table. One global read per op when off.
autocast: Any = None
# The profiler's Recorder (minitensor/profiler/recorder.py) while a profile records, else None: ``apply``
# hands the call to it, which runs it as one event. One global read per op when no profile records.
profiler: Any = None
# The innermost (pack_hook, unpack_hook) of autograd.graph.saved_tensors_hooks (autograd/saved_hooks.py), else
# None: a recorded op that saves arrays hands them to it. One global read per such op when no hooks are set.
saved_hooks: Any = None


class AccumulateGrad:
    """The node ``next_functions`` shows for a leaf tensor that requires grad (PyTorch's): ``variable`` is the
    leaf. One per leaf while any is held, so two graphs show the same object for the same leaf."""

    __slots__ = ("variable", "__weakref__")
    next_functions: tuple = ()

    def __init__(self, variable: Any) -> None:
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


# id(leaf) -> its AccumulateGrad, held weakly: the node holds its leaf, so the id stays the leaf's while the
# entry lives
_accumulators: "weakref.WeakValueDictionary[int, AccumulateGrad]" = weakref.WeakValueDictionary()


def accumulate_grad(leaf: Any) -> AccumulateGrad:
    node = _accumulators.get(id(leaf))
    if node is None:
        node = _accumulators[id(leaf)] = AccumulateGrad(leaf)
    return node


class ArrayFunction:
    """The ctx of one call and its graph node (like a PyTorch ``ctx`` and ``grad_fn`` in one object)."""

    # Set per call by ``apply``: which positional inputs need a gradient and, for each that does, the
    # engine's edge to it: (input position, its node or leaf Tensor, whether that is a node, the input's
    # shape and dtype, to which the engine sums and casts the gradient).
    needs_input_grad: tuple[bool, ...]
    _next: Sequence[tuple[int, Any, bool, tuple[int, ...], Any]] = ()  # a list: no tuple() per op
    _seq: int  # creation order: a node is always newer than its inputs' nodes (the engine runs newest first)
    _saved: tuple[Any, ...] | None = ()
    _device: Any = None  # where backward runs: the inputs' device
    out_device: Any = None  # set by forward only when the output lives elsewhere (device copies)
    _retained: Any = None  # weakref to the output tensor when it called retain_grad()
    _hooks: Any = None  # the output tensor's register_hook hooks (autograd/hooks.py)
    _stack: list[str] | None = None  # creation traceback, kept in anomaly mode
    # True where the op saves its output and PyTorch its input (leaky_relu, elu, hardtanh): an in-place
    # write into the output copies the saved output first, so the gradient stays valid, as PyTorch's.
    copies_output_on_write = False
    # Per saved array that is an input's or the output's own memory: (its tensor's version counter, the
    # version when saved, its position in _saved, its tensor's grad_fn or the string "output"), checked
    # when backward reads saved_tensors (PyTorch's SavedVariable).
    _versions: list[tuple[list[int], int, int, Any]] | tuple = ()
    differentiable = True  # False: an op without a gradient (comparisons, rounding...), never recorded
    # True on the node of a view (through chains of views) of a leaf that requires grad, made in grad mode:
    # an in-place write into it is refused, as PyTorch's (the leaf's gradient would miss the write).
    view_of_leaf = False
    # Per saved array the forward computed (not an input's or the output's memory), what it is to a double
    # backward (create_graph=True, autograd/higher_order.py): None, a constant (a divisor of the targets), or
    # a function (node, presented saved arrays, the array, output shape) -> the array as a facade with a graph
    # to the inputs (or None). Other computed float arrays make the double backward raise.
    derived_saves: dict[int, Any] = {}
    accepts_sparse = False  # True: forward takes sparse COO arrays (functional/sparse.py); others refuse them
    # ``name()``: PyTorch's name of this node, the class name + "Backward0" unless a class sets it (PyTorch
    # names a node after the aten op it differentiates: CrossEntropy's is "NllLossBackward0").
    torch_name = "ArrayFunctionBackward0"
    # PyTorch's names of the values ``_saved`` holds, in order (the arguments of its derivative formulas: "self",
    # "other", "result", "exponent"): ``grad_fn._saved_<name>`` reads one (saved_values.py). () where not given.
    saved_names: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "torch_name" not in cls.__dict__:  # PyTorch's node names end in the overload's number: MulBackward0
            cls.torch_name = cls.__name__ + "Backward0"
        if "__init__" in cls.__dict__:  # apply makes the ctx without calling it
            raise TypeError(f"{cls.__name__}: a Function keeps its state on ctx in forward; it cannot define "
                            "__init__")

    @staticmethod
    def forward(ctx: "ArrayFunction", B: Backend, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: "ArrayFunction", B: Backend, grad: Any) -> Any:
        raise NotImplementedError(f"{type(ctx).__name__} is not differentiable")

    def save_for_backward(self, *arrays: Any) -> None:
        self._saved = arrays

    @property
    def saved_arrays(self) -> tuple[Any, ...]:
        """What forward saved, for backward (a custom Function's ctx calls it ``saved_tensors``; a built-in
        node has no ``saved_tensors``, as PyTorch's: ``grad_fn._saved_<name>`` reads its values)."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        for counter, version, j, owner in self._versions:
            if counter[0] != version:
                raise RuntimeError(_modified_message(self, (counter, version, j, owner)))
        if type(saved) is not tuple and isinstance(saved, _saved_hooks.Packed):  # under saved_tensors_hooks:
            # unpacked at each read (the first test, on a builtin, is all that an unhooked backward pays)
            return saved.unpack()
        return saved

    def name(self) -> str:
        return self.torch_name

    def __getattr__(self, name: str) -> Any:  # only for names the node lacks: _saved_<name>
        if name.startswith("_saved_") and name[7:] in type(self).saved_names:
            return _saved_values.saved_value(self, type(self).saved_names.index(name[7:]))
        raise AttributeError(f"'{self.name()}' object has no attribute '{name}'")  # PyTorch's node name

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """PyTorch's ``(node, output index)`` pairs, one per input that requires grad, in input order: the
        input's ``grad_fn``, or for a leaf its ``AccumulateGrad`` (``.variable`` is the leaf). PyTorch also
        lists ``(None, 0)`` for a tensor input that does not require grad; minitensor leaves those out."""
        return tuple((edge, 0) if is_node else (accumulate_grad(edge), 0) for _, edge, is_node, _, _ in self._next)

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    # autograd.graph.Node's API (graph.py): hooks on the node itself, and a dict for the user's metadata.
    @property
    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] | None = self.__dict__.get("_metadata")
        if meta is None:
            meta = self.__dict__["_metadata"] = {}
        return meta

    def register_hook(self, fn: Callable[[tuple, tuple], Any]) -> Any:
        """``fn(grad_inputs, grad_outputs)`` after this node's backward; it may return new grad_inputs."""
        return _hooks.add_to(self, fn, post=True, leaf=False)

    def register_prehook(self, fn: Callable[[tuple], Any]) -> Any:
        """``fn(grad_outputs)`` before this node's backward; it may return new grad_outputs."""
        def pre(g: Any) -> Any:
            out = fn((g,))
            return None if out is None else out[0]
        return _hooks.add_to(self, pre, post=False, leaf=False)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if profiler is not None and profiler.wants():
            return profiler.op(cls, args, kwargs)
        if autocast is not None:
            args = autocast(cls, args)
        Tensor = _Tensor
        device = None
        grad_inputs = []  # positions of the tensors that require grad
        arrays = list(args)
        needs = [False] * len(arrays)
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                if a._hv is not None and a._hv[0] != a._gv and state.grad_enabled:
                    _views.refresh(a)  # its memory was written through another view: remake its node
                if device is None:
                    device = a._device
                elif a._device is not device:
                    raise RuntimeError(
                        f"{cls.__name__}: expected all tensors on one device, got {device} and "
                        f"{a._device}; move one with .to({str(device)!r}) or .to({str(a._device)!r})")
                arrays[i] = a.array
                if a._requires_grad:
                    grad_inputs.append(i)
                    needs[i] = True
        if device is None:
            raise TypeError(f"{cls.__name__}.apply needs at least one tensor argument")
        B = device.backend
        ctx = _new(cls)  # no __init__ to run (see __init_subclass__): skips the call
        track = bool(grad_inputs) and state.grad_enabled and cls.differentiable
        ctx.needs_input_grad = tuple(needs) if track else (False,) * len(args)
        quiet = silence(IGNORE)  # IEEE special values compute silently, as PyTorch's (backends/ieee_errors.py)
        try:  # free when nothing raises (Python 3.11's zero-cost exceptions)
            out = cls.forward(ctx, B, *arrays, **kwargs)
        except Exception as e:
            if type(e) is ValueError and "could not be broadcast together with shapes" in str(e):  # NumPy's and
                # CuPy's text for elementwise operands (matmul's batch dims say "remapped shapes": matmul's own)
                from ..functional._util import broadcast_error  # (the functional package imports this one)
                raise broadcast_error([a.shape for a in arrays if hasattr(a, "shape")]) from None
            if cls.accepts_sparse or not any(type(a) is SparseCOO for a in arrays):
                raise
            return _run_sparse(_sparse_kernel(cls, e, device.type == "cuda"), args, kwargs)
        finally:
            restore(quiet)
        extras: tuple = ()
        if type(out) is tuple:
            out, *extras = out  # type: ignore[assignment]
        if type(out) is not B.array_type:
            if type(out) is SparseCOO:
                if not cls.accepts_sparse:  # a dense forward that went through (SparseCOO's + of two): its kernel
                    return _run_sparse(_sparse_kernel(cls, None, device.type == "cuda"), args, kwargs)
            else:  # NumPy reductions return scalars. By the output's backend: a device copy's result lives on the
                # target (np.asarray of a CuPy array raises; cupy.asarray of a host result would upload it back)
                scalar, out = out, (B if ctx.out_device is None else ctx.out_device.backend).asarray(out)
                if ctx._saved and any(s is scalar for s in ctx._saved):  # a 0-d exp/tanh saving its output:
                    # save the array the result holds, so create_graph links it to the output (higher_order.py)
                    ctx._saved = tuple(out if s is scalar else s for s in ctx._saved)
        if state.anomaly:
            _check_finite(B, out, f"Function '{cls.__name__}' returned nan or inf values in its forward output")
            ctx._stack = traceback.format_stack()[:-1]
        wrap = _wrap
        result = wrap(out, ctx.out_device or device)
        if track:
            ctx._seq = next(_sequence)
            ctx._device = device
            edges = []
            for i in grad_inputs:
                a = args[i]
                node = a.grad_fn
                x = arrays[i]
                edges.append((i, a, False, x.shape, x.dtype) if node is None else
                             (i, node, True, x.shape, x.dtype))
            ctx._next = edges
            result._requires_grad = True
            result.grad_fn = ctx
            saved = ctx._saved
            if saved:  # PyTorch's SavedVariable: the versions of the saved arrays that tensors own (inlined:
                # this runs on every recorded op). A saved array is the output's, an input's or the op's own.
                records = []
                n = len(arrays)
                for j, s in enumerate(saved):
                    if s is None:
                        continue
                    if j < n and arrays[j] is s:  # most ops save their inputs in order
                        t = args[j]
                    elif s is out:
                        vc = result._vc = [0]  # the result is new: it has no counter yet
                        records.append((vc, 0, j, "output"))
                        continue
                    else:
                        for i, a in enumerate(arrays):
                            if a is s:
                                t = args[i]
                                break
                        else:
                            continue  # an array the op made: private to it
                    if t is not s:  # a tensor (a raw array or a number has no version)
                        vc = t._vc
                        if vc is None:
                            vc = t._vc = [0]
                        records.append((vc, vc[0], j, t.grad_fn))
                ctx._versions = records
                if saved_hooks is not None:
                    _saved_hooks.pack(ctx, saved, args, arrays, result)
        outputs: Any = (result, *(wrap(e, device) for e in extras)) if extras else result
        if tracer is not None:
            tracer.record(cls, args, kwargs, outputs)
        return outputs


class ViewFunction(ArrayFunction):
    """A Function whose output may be a view of its first input's memory (reshape, permute, basic
    indexing...): when it is, the output shares the input's version counter, as PyTorch's views do, so an
    in-place write through either is seen by what saved the other."""

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        out = super().apply(*args, **kwargs)
        x = args[0]
        base = out.array.base
        if base is not None and (base is x.array or base is x.array.base):
            out._vc = _tensor_mod._counter(x)
            hv = x._hv
            if hv is None:  # the history counter, created at the first view (x's history is current)
                hv = x._hv = [0]
                x._gv = 0
                x._view = None  # x is a base (see autograd/views.py)
            out._hv, out._gv = hv, hv[0]
            info = x._view
            base = x if info is None else info.base
            meta = None if state.grad_enabled and (info is None or info.meta is None) else \
                _views.creation_meta(cls.__name__, info)  # made in no_grad mode, or a view of such a view
            out._view = _views.ViewInfo(base, base.grad_fn, meta)
            node = x.grad_fn
            if out.grad_fn is not None and x._requires_grad and (node is None or node.view_of_leaf):
                out.grad_fn.view_of_leaf = True
        return out


# The sparse COO version of a dense op, by its Function (functional/sparse_ops.py): apply runs it, with the
# op's tensor arguments, when the dense forward refuses a sparse input, so the dense path checks nothing.
SPARSE_KERNELS: dict[type, Callable[..., Any]] = {}


def _sparse_kernel(cls: type[ArrayFunction], e: Exception | None, on_cuda: bool) -> Callable[..., Any]:
    """The op's sparse kernel, or PyTorch's NotImplementedError for an op without one."""
    kernel = SPARSE_KERNELS.get(cls)
    if kernel is None:
        raise _sparse_input_error(cls, e, on_cuda) from (None if isinstance(e, SparseLayoutError) else e)
    return kernel


def _run_sparse(kernel: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    try:
        return kernel(*args, **kwargs)
    except Exception as e:  # its own error (PyTorch's), not chained to the dense forward's refusal
        e.__suppress_context__ = True
        raise


def _sparse_input_error(cls: type[ArrayFunction], e: Exception | None, on_cuda: bool) -> SparseLayoutError:
    """PyTorch's NotImplementedError for a dense op given a sparse input, naming the op whatever broke
    (for the ops without a gradient, which share one Function, the array op that refused)."""
    op = e.op if isinstance(e, SparseLayoutError) and not cls.differentiable else cls.__name__
    return sparse_op_error(op, on_cuda)


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "bool": "Bool"}


def _modified_message(ctx: ArrayFunction, record: tuple[list[int], int, int, Any]) -> str:
    """PyTorch's error for a saved tensor written in place after it was saved."""
    counter, version, j, owner = record
    saved: Any = ctx._saved
    a = (saved.unpack() if type(saved) is _saved_hooks.Packed else saved)[j]  # read before they are freed
    a = a.array if isinstance(a, _Tensor) else a  # a custom Function saves tensors
    kind = "cuda." if ctx._device is not None and ctx._device.type == "cuda" else ""
    what = f"[minitensor.{kind}{_TYPE_NAMES.get(a.dtype.name, a.dtype.name)}Tensor {list(a.shape)}]"
    if owner == "output":
        what += f", which is output 0 of {ctx.name()},"
    elif owner is not None:
        what += f", which is output 0 of {owner.name()},"
    return ("one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: {what} is at version {counter[0]}; expected version {version} instead. Hint: enable "
            "anomaly detection to find the operation that failed to compute its gradient, with "
            "minitensor.autograd.set_detect_anomaly(True).")


class IndexedGrad:
    """The gradient of ``x[index]`` for x: zeros of ``shape`` holding ``value`` at ``index``. Slicing ops
    return it so the engine writes every slice into one buffer per input, which is linear in the number of
    slices (an RNN's time steps); a full array per slice would be quadratic."""

    __slots__ = ("shape", "index", "value", "basic")

    def __init__(self, shape: tuple[int, ...], index: Any, value: Any, basic: bool) -> None:
        self.shape, self.index, self.value, self.basic = shape, index, value, basic


def _check_finite(B: Backend, a: Any, message: str) -> None:
    if a is not None and a.dtype.kind in "fcV" and not B.isfinite_all(a):
        raise RuntimeError(message)


from .custom_function import Function, FunctionCtx, once_differentiable  # noqa: E402, F401  (re-exported, as torch.autograd.function)
from . import views as _views  # noqa: E402  (it subclasses ArrayFunction)
from . import saved_hooks as _saved_hooks  # noqa: E402
from . import saved_values as _saved_values  # noqa: E402
from . import hooks as _hooks  # noqa: E402
