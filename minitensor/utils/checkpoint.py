"""Gradient checkpointing (``torch.utils.checkpoint``): trade compute for memory.

``checkpoint(f, *args)`` runs ``f`` without recording a graph and keeps only its inputs (and the RNG state);
backward runs ``f`` again with grad on, from detached copies of the inputs, and backpropagates the incoming
gradient through that recomputed graph. The parameters ``f`` uses are the recomputed graph's leaves, so their
``.grad`` accumulates as without checkpointing; the inputs' gradients flow on through the checkpoint's node.
Peak activation memory of a chain of L layers cut in s segments drops from O(L) to O(s + L/s).
"""
from __future__ import annotations

import copy
import warnings
from typing import Any, Callable, Sequence

import minitensor.autograd as autograd
from minitensor.tensor import Tensor, _wrap
from minitensor.autograd.function import Function
from minitensor.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from minitensor.backends.base import Backend

_NO_INPUT_GRAD = "None of the inputs have requires_grad=True. Gradients will be None"
_USE_REENTRANT = ("minitensor.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
                  "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                  "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                  "the two variants.")


class _Region:
    """One checkpointed call: the function, its arguments, the RNG states to replay, and (during backward)
    the recomputed outputs and the detached inputs that the recomputed graph starts from."""

    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                 preserve_rng_state: bool) -> None:
        self.function, self.args, self.kwargs = function, args, kwargs
        backends = {id(a._device.backend): a._device.backend for a in args if isinstance(a, Tensor)}
        # Snapshots of the generators of the inputs' devices (PyTorch's: the CPU and the inputs' CUDA devices).
        self.rng: list[tuple[Backend, Any]] = [(B, copy.deepcopy(B.get_rng())) for B in backends.values()] \
            if preserve_rng_state else []
        self.pending = 0  # checkpoint nodes whose backward has not yet run
        self.outputs: Any = None
        self.detached: list[Any] = []

    def run(self) -> Any:
        return self.function(*self.args, **self.kwargs)

    def recompute(self) -> None:
        """Run the function again with grad on, from detached inputs, with the forward's random draws."""
        self.detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                         for a in self.args]
        current = [(B, B.get_rng()) for B, _ in self.rng]
        for B, snapshot in self.rng:  # a copy: the snapshot stays valid for a retained graph's next backward
            B.set_rng(copy.deepcopy(snapshot))
        try:
            with enable_grad():
                out = self.function(*self.detached, **self.kwargs)
        finally:
            for B, rng in current:
                B.set_rng(rng)
        self.outputs = _leaves(out)

    def backward(self, index: int, grad: Any) -> tuple[Any, ...]:
        """The inputs' gradients from output ``index``'s gradient ``grad`` (an array)."""
        if self.outputs is None:
            self.recompute()
        self.pending -= 1
        out = self.outputs[index]
        if out.requires_grad:
            autograd.backward(out, _wrap(grad, out._device), retain_graph=self.pending > 0)
        grads = []
        for d in self.detached:
            g = d.grad if isinstance(d, Tensor) else None
            grads.append(None if g is None else g.array)
            if g is not None:
                d.grad = None  # the next output's backward reports its own share
        if self.pending <= 0:  # the last output: drop the recomputed graph
            self.outputs, self.detached = None, []
        return (None, *grads)  # the first input is the dummy leaf


class _Checkpoint(Function):
    """The graph node of one output of a checkpointed region; inputs: a dummy leaf, then the region's
    arguments (tensors get edges; the region keeps them, not their activations)."""

    @staticmethod
    def forward(ctx: Function, B: Backend, *arrays: Any, region: _Region, index: int, output: Any) -> Any:
        ctx.region, ctx.index = region, index  # type: ignore[attr-defined]
        return output.array

    @staticmethod
    def backward(ctx: Function, B: Backend, grad: Any) -> Any:
        return ctx.region.backward(ctx.index, grad)  # type: ignore[attr-defined]


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], Any] | None = None, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` whose activations are recomputed in backward instead of kept.

    ``preserve_rng_state`` (a keyword, default True) replays the forward's random draws (dropout masks) in
    the recomputation. ``use_reentrant=None`` warns and means True, as PyTorch's; both modes give the same
    gradients here, but reentrant mode refuses keyword arguments and gives no gradient when no input
    requires grad, as PyTorch's does. ``context_fn``, ``debug`` and ``early_stop`` are accepted and ignored.
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant and (context_fn is not None or debug):
        raise ValueError("Passing context_fn or debug is only supported when use_reentrant=False.")
    region = _Region(function, args, kwargs, preserve)
    inputs_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if not is_grad_enabled():
        return region.run()
    if use_reentrant and not inputs_grad:
        warnings.warn(_NO_INPUT_GRAD, stacklevel=2)
    if inputs_grad or use_reentrant:
        with no_grad():
            out = region.run()
        record = inputs_grad
    else:  # parameters inside may need gradients: only a run with grad tells (its graph is dropped at once)
        out = region.run()
        record = any(isinstance(o, Tensor) and o.requires_grad for o in _leaves(out))
    if not record:
        return _map(out, lambda o: o.detach() if isinstance(o, Tensor) else o)
    return _attach(region, out)


def _leaves(out: Any) -> list[Any]:
    """The outputs in (nested) tuples and lists, in order: an LSTM's ``(y, (h, c))`` gives [y, h, c]."""
    return [leaf for o in out for leaf in _leaves(o)] if type(out) in (tuple, list) else [out]


def _map(out: Any, fn: Callable[[Any], Any]) -> Any:
    """``out`` with each leaf replaced by ``fn(leaf)``, in ``_leaves``'s order, nesting kept."""
    return type(out)(_map(o, fn) for o in out) if type(out) in (tuple, list) else fn(out)


def _attach(region: _Region, out: Any) -> Any:
    """The outputs with each floating tensor replaced by one whose grad_fn is a checkpoint node."""
    first = next(o for o in (*region.args, *_leaves(out)) if isinstance(o, Tensor))
    # A leaf that requires grad, so the node is recorded even when no input requires grad (parameters inside).
    dummy = _wrap(first._device.backend.zeros((0,), first.array.dtype), first._device)
    dummy.requires_grad_(True)
    index = iter(range(len(_leaves(out))))

    def node(o: Any) -> Any:
        i = next(index)
        if not _floating(o):
            return o
        region.pending += 1
        return _Checkpoint.apply(dummy, *region.args, region=region, index=i, output=o)
    return _map(out, node)


def _floating(o: Any) -> bool:
    return isinstance(o, Tensor) and o.dtype.is_floating_point


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    """Run ``functions`` (a list or ``nn.Sequential``) on ``input`` in ``segments`` chunks, each but the last
    checkpointed: only the chunks' boundaries stay in memory."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from minitensor.nn import Sequential  # nn builds on autograd: import when called

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)
    segment_size = len(functions) // segments  # segments=0: ZeroDivisionError, as PyTorch's
    if segment_size == 0:
        raise ValueError(f"checkpoint_sequential: segments ({segments}) must not exceed the number of "
                         f"functions ({len(functions)})")
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(_run(functions[start:end + 1]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _run(functions[end + 1:])(input)


def _run(functions: Sequence[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    def forward(x: Any) -> Any:
        for f in functions:
            x = f(x)
        return x
    return forward


__all__ = ["checkpoint", "checkpoint_sequential"]
