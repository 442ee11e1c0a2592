"""PyTorch's custom ``autograd.Function``, on tensors, built on the array-level ``ArrayFunction``::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):                 # tensors (and any other arguments); runs without grad
            y = x.exp()
            ctx.save_for_backward(y)
            return y                         # a tensor, or a tuple of tensors (and other values)
        @staticmethod
        def backward(ctx, gy):               # one gradient (a tensor) per forward output
            y, = ctx.saved_tensors
            return gy * y                    # one gradient per forward argument (None: no gradient)

``Exp.apply(x)`` runs ``forward`` and records ``ctx``, an instance of the class ``ExpBackward`` made per
Function (PyTorch's ``BackwardCFunction``): an ``ArrayFunction`` node whose array-level backward wraps the
engine's arrays as tensors, calls the user's ``backward`` and checks what it returns. The engine gives a
node one gradient; a Function with k > 1 differentiable outputs gives each output a ``_Slot`` node that
hands its gradient on as one part of a ``_Grads`` (which the engine sums like an array), so the engine and
the built-in ops stay as they are. Under ``create_graph=True`` the user's backward runs with grad mode on
and its tensors come back as the engine's facades: a backward written with differentiable ops is
differentiable again, unless marked ``once_differentiable``.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable

from . import forward_ad as _forward_ad
from . import function as _function
from . import views as _views
from .function import ArrayFunction, _new, _sequence
from .grad_mode import no_grad, state
from ..backends.base import Backend

_LEAF_DIRTY = "a leaf Variable that requires grad is being used in an in-place operation."


class FunctionCtx(ArrayFunction):
    """The ctx of a custom Function's call and its graph node (PyTorch's ``BackwardCFunction``)."""

    _forward_cls: Any  # the user's Function class
    _outputs: list[Any]  # per forward output: (shape, dtype) of a tensor, None for another value
    _diff: list[int]  # the positions of the differentiable outputs
    _not_tensors: list[int]  # the positions of the forward arguments that are not tensors
    _materialize = True
    _dirty: tuple[Any, ...] = ()
    _non_diff: tuple[Any, ...] = ()
    _to_save: tuple[Any, ...] = ()
    _saved_outputs: dict[int, int] = {}  # a multi-output node's saved outputs: position in saved -> output index

    saved_tensors = ArrayFunction.saved_arrays  # the tensors save_for_backward saved (PyTorch's name)

    def save_for_backward(self, *tensors: Any) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _function._Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """The inputs ``forward`` wrote in place (and returns): they become outputs of this node."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """False: ``backward`` gets None, not zeros, for an output that received no gradient."""
        self._materialize = value

    def name(self) -> str:
        return type(self).__name__

    @staticmethod
    def backward(ctx: ArrayFunction, B: Backend, gy: Any) -> Any:
        node: Any = ctx
        device = node._device
        # under create_graph the engine's gradients are facades over tensors (autograd/recording.py)
        wrap = _function._wrap if not getattr(B, "recording", False) else lambda g, _: g.t
        parts = gy.parts if type(gy) is _Grads else {0: gy}
        grads: list[Any] = [None] * len(node._outputs)
        for k, g in parts.items():
            grads[node._diff[k]] = wrap(g, device)
        if node._materialize:
            for i, meta in enumerate(node._outputs):
                if grads[i] is None and meta is not None:
                    grads[i] = wrap(B.zeros(*meta), device)
        result = node._forward_cls.backward(node, *grads)
        arrays = _check_gradients(node, result if type(result) is tuple else (result,))
        if getattr(B, "recording", False):
            from .recording import Rec
            return tuple(None if a is None else Rec(result[i] if type(result) is tuple else result)
                         for i, a in enumerate(arrays))
        return arrays


def _check_gradients(node: Any, result: tuple[Any, ...]) -> tuple[Any, ...]:
    """The user's gradients as arrays, one per forward argument, with PyTorch's errors."""
    n = len(node.needs_input_grad)
    if len(result) > n and all(g is None for g in result[n:]):
        result = result[:n]  # PyTorch drops trailing Nones
    if len(result) != n:
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
                           f"got {len(result)})")
    for i in node._not_tensors:
        if result[i] is not None:
            raise RuntimeError(f"function {node.name()} returned a gradient different than None at position "
                               f"{i + 1}, but the corresponding forward input was not a Variable")
    arrays: list[Any] = [None] * n
    for i, _, _, shape, _ in node._next:
        g = result[i]
        if g is None:
            continue
        if not isinstance(g, _function._Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        gs = tuple(g.shape)
        # the engine sums a gradient to its input's shape: the input must broadcast to it
        if gs != shape and (len(gs) < len(shape) or any(s not in (1, d) for s, d in zip(shape[::-1], gs[::-1]))):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                               f"{list(gs)} but expected shape compatible with {list(shape)}")
        arrays[i] = g.array
    return tuple(arrays)


class _Grads:
    """The gradients of a multi-output node's outputs received so far, by differentiable output index;
    the engine adds two of these as it adds arrays. ``shape``/``dtype``/``value`` make the engine pass it
    through unchanged (no reduction, no cast, no finiteness check: the parts are checked as tensors)."""

    __slots__ = ("parts",)
    shape: tuple[int, ...] = ()
    dtype = None
    value = None

    def __init__(self, parts: dict[int, Any]) -> None:
        self.parts = parts

    def __add__(self, other: "_Grads") -> "_Grads":
        parts = dict(self.parts)
        for k, g in other.parts.items():
            parts[k] = g if k not in parts else parts[k] + g
        return _Grads(parts)


def make_slot(ctx: Any, j: int) -> "_Slot":
    """A grad_fn for the ``j``-th differentiable output of the multi-output node ``ctx``."""
    slot = _new(_Slot)
    slot._index, slot._node, slot._device, slot._seq = j, ctx, ctx._device, next(_sequence)
    slot._next = [(0, ctx, True, (), None)]  # _Grads' shape and dtype: passed on as it is
    return slot


class _Slot(ArrayFunction):
    """The grad_fn of one output of a multi-output custom Function: forwards its gradient to the node."""

    _index: int
    _node: Any

    def name(self) -> str:
        return self._node.name()

    # Seen from an output, the slot is the Function's node: its ctx attributes, saved tensors and edges.
    def __getattr__(self, name: str) -> Any:
        if name == "_node":  # not set yet
            raise AttributeError(name)
        return getattr(self._node, name)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        return self._node.saved_tensors

    @property
    def next_functions(self) -> tuple[Any, ...]:
        return self._node.next_functions

    @property
    def metadata(self) -> dict[str, Any]:
        return self._node.metadata

    def register_hook(self, fn: Callable[[tuple, tuple], Any]) -> Any:
        return self._node.register_hook(fn)  # PyTorch's one node: grad_outputs has one entry per output

    def register_prehook(self, fn: Callable[[tuple], Any]) -> Any:
        raise NotImplementedError("register_prehook on the node of a custom Function with several "
                                  "differentiable outputs is not supported; use register_hook on the outputs")

    @staticmethod
    def backward(ctx: ArrayFunction, B: Backend, gy: Any) -> Any:
        return (_Grads({ctx._index: gy}),)


class Function(ArrayFunction):
    """Base class of PyTorch-style custom Functions: subclass it with static ``forward`` and ``backward``
    (and optionally ``setup_context``), and call ``apply``."""

    _backward_cls: type[FunctionCtx]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # not ArrayFunction's check against __init__: apply never makes an instance of the user's class
        super(ArrayFunction, cls).__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (FunctionCtx,), {"_forward_cls": cls})

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"{cls} should not be instantiated. Methods on autograd functions are all static, so you "
                      "should invoke them on the class itself. Instantiating an autograd function will raise an "
                      "error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)
        return super().__new__(cls)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """The outputs' tangents from the inputs' (forward-mode AD); without it a Function's tangents come
        from its backward (forward_ad.py)."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        profiler = _function.profiler
        if profiler is not None and profiler.wants():
            return profiler.op(cls, args, kwargs, _apply_again)  # one event named after cls
        return _apply(cls, *args, **kwargs)


def _apply_again(cls: Any, *args: Any, **kwargs: Any) -> Any:
    """``cls.apply`` from inside the profiler's event: it takes the profiler's re-entry mark, so the first op
    in forward is recorded as the event's child."""
    return cls.apply(*args, **kwargs)


def _apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
    """Run ``cls.forward`` without grad and record its ctx as the outputs' grad_fn."""
    Tensor = _function._Tensor
    device = next((a._device for a in args if isinstance(a, Tensor)), None)
    needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    track = state.grad_enabled and any(needs)
    ctx = _new(cls._backward_cls)
    ctx.needs_input_grad = needs if track else (False,) * len(args)
    with no_grad():
        if cls.setup_context is Function.setup_context:
            out = cls.forward(ctx, *args, **kwargs)
        else:  # PyTorch 2's style: forward without ctx, then setup_context(ctx, inputs, output)
            out = cls.forward(*args, **kwargs)
            if kwargs or len(args) < len(inspect.signature(cls.forward).parameters):
                bound = inspect.signature(cls.forward).bind(*args, **kwargs)
                bound.apply_defaults()
                args_in = bound.args
            else:
                args_in = args
            cls.setup_context(ctx, args_in, out)
    outs = list(out) if type(out) is tuple else [out]
    dirty = ctx._dirty
    for t in dirty:
        if not any(t is o for o in outs):
            raise RuntimeError("Some elements marked as dirty during the forward method were not returned as "
                               "output. The inputs that are modified inplace must all be outputs of the Function.")
        if track and t._requires_grad and (t.grad_fn is None or t.grad_fn.view_of_leaf):
            raise RuntimeError(_LEAF_DIRTY if t.grad_fn is None else "a view of " + _LEAF_DIRTY)
    wrap = _function._wrap
    for k, o in enumerate(outs):  # an input (or any tensor with a history) comes back as a new tensor on its memory
        if isinstance(o, Tensor) and not any(o is t for t in dirty) and (
                o._requires_grad or o.grad_fn is not None or any(o is a for a in args)):
            alias = outs[k] = wrap(o.array, o._device)
            alias._vc = _function._tensor_mod._counter(o)
            if track and any(o is a for a in args):
                _views.mark_custom(alias, o, cls.__name__, k)
            if ctx._non_diff:  # marked on the tensor returned: the mark follows it to its alias
                ctx._non_diff = tuple(alias if t is o else t for t in ctx._non_diff)
    if track:
        _record(ctx, args, outs, device)
        if _forward_ad._levels and cls.jvp is not Function.jvp:  # forward AD by the Function's own jvp
            _forward_ad.function_jvp(cls, ctx, args, outs)
    return tuple(outs) if type(out) is tuple else outs[0]


def _record(ctx: Any, args: tuple[Any, ...], outs: list[Any], device: Any) -> None:
    """Edges to the inputs, the outputs' grad_fn, the saved tensors and their versions."""
    Tensor = _function._Tensor
    ctx._seq = next(_sequence)
    ctx._device = device
    ctx._not_tensors = [i for i, a in enumerate(args) if not isinstance(a, Tensor)]
    ctx._next = [(i, a if a.grad_fn is None else a.grad_fn, a.grad_fn is not None, a.array.shape, a.array.dtype)
                 for i, a in enumerate(args) if isinstance(a, Tensor) and a._requires_grad]
    non_diff = ctx._non_diff
    ctx._outputs = [(o.array.shape, o.array.dtype) if isinstance(o, Tensor) else None for o in outs]
    ctx._diff = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and not any(o is t for t in non_diff)
                 and o.array.dtype.kind in "fcV"]
    for k, o in enumerate(outs):
        if isinstance(o, Tensor) and k not in ctx._diff:
            o._requires_grad = False
    if len(ctx._diff) == 1:
        outs[ctx._diff[0]].grad_fn = ctx
    for j, k in enumerate(ctx._diff if len(ctx._diff) > 1 else ()):
        outs[k].grad_fn = make_slot(ctx, j)
    for k in ctx._diff:
        outs[k]._requires_grad = True
    counter = _function._tensor_mod._counter
    saved: list[Any] = []
    records = []
    for j, t in enumerate(ctx._to_save):
        if t is None:
            saved.append(None)
            continue
        vc, owner = counter(t), t.grad_fn
        position = next((i for i, o in enumerate(outs) if t is o), None)
        if position is not None:  # an output: kept without its grad_fn (no reference cycle), and which one
            t, owner = _function._wrap(t.array, t._device), "output"
            t._vc = vc
            if len(ctx._diff) > 1:
                ctx._saved_outputs = {**ctx._saved_outputs, j: position}
        saved.append(t)
        records.append((vc, vc[0], j, owner))
    ctx._saved, ctx._versions = tuple(saved), records
    if _function.saved_hooks is not None and saved:
        from .saved_hooks import pack_tensors
        pack_tensors(ctx)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a ``backward`` as not differentiable: it runs without grad, and under ``create_graph=True`` its
    gradients raise PyTorch's error if a gradient reaches them (its DelayedError)."""
    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        recording = state.grad_enabled
        with no_grad():
            outputs = fn(ctx, *args)
        Tensor = _function._Tensor
        inputs = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        if not recording or not inputs:
            return outputs
        from .recording_backend import Underivable
        message = "trying to differentiate twice a function that was marked with @once_differentiable"

        def delayed(g: Any) -> Any:
            return Underivable.apply(*inputs, g, result=g.array, message=message) if isinstance(g, Tensor) else g
        return tuple(delayed(g) for g in outputs) if type(outputs) is tuple else delayed(outputs)
    return wrapper
