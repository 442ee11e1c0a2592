"""Reverse-mode autodiff: ``backward``, ``grad``, ``Function``, grad modes and anomaly detection."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import minitensor.tensor as _tensor_mod  # first: creation builds on Tensor
import minitensor.creation as _creation  # noqa: I001

from .anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import _accumulate_leaf_grad, run_backward
from .function import ArrayFunction, Function
from . import views as _views
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled


def _seed_grads(tensors: Sequence[Any], grads: Sequence[Any] | None, create_graph: bool = False) -> list[Any]:
    """Arrays to start backward from: ones for scalars, else the given gradients (shape-checked); with
    ``create_graph`` facades over them (a given gradient keeps its own graph: a Hessian-vector product's v)."""
    out = []
    for i, t in enumerate(tensors):
        g = None if grads is None else grads[i]
        if type(t) is _EdgeEnd:  # a GradientEdge output: its gradient must be given (no shape to make ones)
            if not isinstance(g, _tensor_mod.Tensor):
                raise RuntimeError(f"autograd.grad: output {i} is a GradientEdge: pass its grad_outputs tensor")
            out.append(_higher_order().seed(g, g) if create_graph else g.array)
            continue
        if g is None:
            if t.array.size != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs; this output has "
                                   f"shape {tuple(t.shape)}: pass gradient= (a tensor of that shape)")
            out.append(_higher_order().seed(t, None) if create_graph else
                       t._device.backend.ones(t.shape, t.array.dtype))
            continue
        if not isinstance(g, _tensor_mod.Tensor):
            g = _creation.as_tensor(g, dtype=t.dtype, device=t.device)
        if g.shape != t.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                               f"output[{i}] has a shape of {tuple(t.shape)}.")
        if g._device is not t._device:
            raise RuntimeError(f"grad_output[{i}] is on {g.device} but output[{i}] is on {t.device}")
        if create_graph:
            out.append(_higher_order().seed(t, g if g.array.dtype == t.array.dtype else g.to(t.dtype)))
            continue
        out.append(g.array.astype(t.array.dtype, copy=False))
    return out


def _higher_order() -> Any:
    """autograd/higher_order.py, imported at the first create_graph=True (it builds on the functional ops)."""
    from . import higher_order
    return higher_order


class _EdgeEnd:
    """A ``graph.GradientEdge`` to a node, as ``autograd.grad`` hands it to the engine: what the engine reads
    of a tensor (an edge to a leaf is the leaf itself)."""
    requires_grad = True
    _hv = None
    _hooks = None

    def __init__(self, node: Any) -> None:
        self.grad_fn = node


def _as_list(x: Any) -> list[Any]:
    return [x] if isinstance(x, _tensor_mod.Tensor) else list(x)


def _ends(x: Any) -> list[Any]:
    """``_as_list`` for autograd.grad, whose inputs and outputs may also be GradientEdges."""
    items = [x] if isinstance(x, (_tensor_mod.Tensor, graph.GradientEdge)) else list(x)
    return [(e.node if isinstance(e.node, _tensor_mod.Tensor) else _EdgeEnd(e.node))
            if isinstance(e, graph.GradientEdge) else e for e in items]


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves of their graph; ``create_graph``:
    record the backward pass too, so ``.grad`` has a grad_fn (``retain_graph`` then defaults to True)."""
    tensors = _as_list(tensors)
    _views.refresh_outputs(tensors)
    grads = None if grad_tensors is None else _as_list(grad_tensors)
    seeds = _seed_grads(tensors, grads, create_graph)
    retain = create_graph if retain_graph is None else bool(retain_graph)
    if inputs is None:
        run_backward(tensors, seeds, retain, create_graph=create_graph)
        return
    # backward(inputs=...) accumulates only into the listed tensors.
    inputs = _as_list(inputs)
    for t, g in zip(inputs, run_backward(tensors, seeds, retain, inputs=inputs,  # type: ignore[arg-type]
                                         allow_unused=True, create_graph=create_graph)):
        if g is not None:
            _accumulate_leaf_grad(t, g)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         materialize_grads: bool = False) -> tuple[Any, ...]:
    """d(outputs)/d(inputs) as a tuple of tensors; no ``.grad`` is written (``only_inputs``: PyTorch's
    deprecated keyword, ignored as there). ``create_graph``: the backward pass is recorded, so the gradients
    can be differentiated again (``retain_graph`` then defaults to True)."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.",
                      FutureWarning, stacklevel=2)
    outputs, inputs = _ends(outputs), _ends(inputs)
    _views.refresh_outputs(outputs)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"autograd.grad: input {i} does not require grad")
    seeds = _seed_grads(outputs, None if grad_outputs is None else _as_list(grad_outputs), create_graph)
    retain = create_graph if retain_graph is None else bool(retain_graph)
    arrays = run_backward(outputs, seeds, retain, inputs=inputs,
                          allow_unused=bool(allow_unused) or materialize_grads, create_graph=create_graph)
    result = []
    for t, g in zip(inputs, arrays):  # type: ignore[arg-type]
        if type(t) is _EdgeEnd:  # a GradientEdge input: the gradient that reached its node, as it is
            node = t.grad_fn
            result.append(None if g is None else g.t if create_graph else
                          _tensor_mod._wrap(g, node.out_device or node._device))
        elif g is None:
            result.append(_creation.zeros_like(t) if materialize_grads else None)
        elif create_graph:
            result.append(g.t if g.shape == t.array.shape else g.t.sum_to_size(t.shape))
        else:
            g = g if g.shape == t.shape else t._device.backend.sum_to_shape(g, t.shape)
            result.append(_tensor_mod._wrap(g, t._device))
    return tuple(result)


def zero_grads(tensors: Any, set_to_none: bool = True) -> None:
    """Drop (``set_to_none``) or zero in place the ``.grad`` of each tensor: ``Module.zero_grad`` and
    ``Optimizer.zero_grad``."""
    for t in tensors:
        if t.grad is None:
            continue
        if set_to_none:
            t.grad = None
        else:
            t.grad.detach_()
            a = t.grad.array
            if t.grad.is_sparse:  # a sparse gradient with no entries (PyTorch's zero_() of a sparse tensor)
                t.grad.array = type(a)(a.indices[:, :0], a.values[:0], a.shape, True)
            else:
                a[...] = 0


__all__ = ["Function", "zero_grads", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "inference_mode", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]
__all__ += ["ArrayFunction"]

from . import functional  # noqa: E402  (torch.autograd.functional: jacobian, vjp)
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402  (the functions, as torch.autograd's)
from .variable import Variable  # noqa: E402  (PyTorch's deprecated wrapper)
__all__ += ["functional", "gradcheck", "gradgradcheck", "Variable"]
from . import graph  # noqa: E402  (torch.autograd.graph: Node, saved_tensors_hooks, register_multi_grad_hook)
__all__ += ["graph"]
from . import forward_ad  # noqa: E402  (torch.autograd.forward_ad: dual tensors, by the double-vjp identity)
__all__ += ["forward_ad"]


def __getattr__(name: str) -> Any:
    """``torch.autograd.profiler``, imported at its first use (it builds on minitensor.profiler)."""
    if name == "profiler":
        import importlib
        return importlib.import_module(f"{__name__}.profiler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
