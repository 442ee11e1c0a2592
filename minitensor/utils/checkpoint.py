"""Gradient checkpointing (``torch.utils.checkpoint``): trade compute for memory.

``checkpoint(f, *args)`` runs ``f`` without recording a graph and keeps only its inputs (as the saved arrays
of its nodes: version-checked, freed by a backward that does not retain the graph), the RNG states and the
autocast state. Backward runs ``f`` again with grad on, in that autocast state and with the forward's random
draws, from detached copies of the inputs, and backpropagates the incoming gradient through that recomputed
graph. The parameters ``f`` uses are the recomputed graph's leaves, so their ``.grad`` accumulates as without
checkpointing; the inputs' gradients flow on through the checkpoint's node. Peak activation memory of a
chain of L layers cut in s segments drops from O(L) to O(s + L/s).
"""
from __future__ import annotations

import warnings
from contextlib import ExitStack, nullcontext
from typing import Any, Callable, ContextManager, Sequence

import minitensor.autograd as autograd
from minitensor.amp import autocast, get_autocast_dtype, is_autocast_cache_enabled, is_autocast_enabled
from minitensor.tensor import Tensor, _wrap
from minitensor.autograd.function import ArrayFunction
from minitensor.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from minitensor.backends.base import Backend

_NO_INPUT_GRAD = "None of the inputs have requires_grad=True. Gradients will be None"
_USE_REENTRANT = ("minitensor.utils.checkpoint{}: the use_reentrant parameter should be passed explicitly. "
                  "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                  "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                  "the two variants.")
_TIP = "\nTip: pass determinism_check='none' to checkpoint(...) to turn this check off."
_AUTOCAST_DEVICES = ("cpu", "cuda")


class CheckpointError(RuntimeError):
    """The recomputation does not match the forward (PyTorch's ``torch.utils.checkpoint.CheckpointError``)."""


def noop_context_fn() -> tuple[ContextManager[Any], ContextManager[Any]]:
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return nullcontext(), nullcontext()


class _Region:
    """One checkpointed call: the function, where its tensor arguments were (their arrays come back from the
    nodes' saved arrays), the RNG and autocast states to replay, the outputs' metadata to check, and (during
    backward) the recomputed outputs and the detached inputs that the recomputed graph starts from."""

    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                 preserve_rng_state: bool, recompute_context: ContextManager[Any], reentrant: bool) -> None:
        self.function, self.kwargs = function, kwargs
        self.recompute_context, self.reentrant = recompute_context, reentrant
        self.tensors = [(i, a._device, a.requires_grad) for i, a in enumerate(args) if isinstance(a, Tensor)]
        backends = {id(a._device.backend): a._device.backend for a in args if isinstance(a, Tensor)}
        # Snapshots of the generators of the inputs' devices (PyTorch's: the CPU and the inputs' CUDA devices).
        self.rng: list[tuple[Backend, Any]] = [(B, B.copy_rng()) for B in backends.values()] \
            if preserve_rng_state else []
        # PyTorch's: the recomputation runs in the forward's autocast state, wherever backward runs.
        self.autocast = [(d, get_autocast_dtype(d), is_autocast_enabled(d), is_autocast_cache_enabled())
                         for d in _AUTOCAST_DEVICES]
        self.meta: list[dict[str, Any]] | None = None  # the forward's outputs, for the determinism check
        self.pending = 0  # checkpoint nodes whose backward has not yet run
        self.outputs: Any = None
        self.detached: list[Any] = []

    def recompute(self, saved: Sequence[Any]) -> None:
        """Run the function again with grad on, from detached inputs (``saved``: the arguments, tensors as
        their arrays), in the forward's autocast state and with its random draws."""
        self.detached = list(saved)
        for i, device, requires_grad in self.tensors:
            self.detached[i] = _wrap(saved[i], device).requires_grad_(requires_grad)
        current = [(B, B.get_rng()) for B, _ in self.rng]
        for B, snapshot in self.rng:  # a copy: the snapshot stays valid for a retained graph's next backward
            B.set_rng(B.copy_rng(snapshot))
        try:
            with ExitStack() as stack:
                for device, dtype, enabled, cache in self.autocast:
                    stack.enter_context(autocast(device, dtype, enabled, cache))
                stack.enter_context(self.recompute_context)
                stack.enter_context(enable_grad())
                out = self.function(*self.detached, **self.kwargs)
        finally:
            for B, rng in current:
                B.set_rng(rng)
        self.outputs = _leaves(out)
        if self.meta is not None:
            _check_match(self.meta, [_meta(o) for o in self.outputs if isinstance(o, Tensor)])
        if self.reentrant and not any(isinstance(o, Tensor) and o.requires_grad for o in self.outputs):
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")

    def backward(self, index: int, grad: Any, saved: Sequence[Any]) -> tuple[Any, ...]:
        """The inputs' gradients from output ``index``'s gradient ``grad`` (an array)."""
        if self.outputs is None:
            self.recompute(saved)
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


class _Checkpoint(ArrayFunction):
    """The graph node of one output of a checkpointed region; inputs: a dummy leaf, then the region's
    arguments (tensors get edges). It saves the arguments, not their activations: a saved argument written in
    place before backward gives PyTorch's "modified by an inplace operation" error."""

    @staticmethod
    def forward(ctx: ArrayFunction, B: Backend, *arrays: Any, region: _Region, index: int, output: Any) -> Any:
        ctx.region, ctx.index = region, index  # type: ignore[attr-defined]
        ctx.save_for_backward(*arrays)
        return output.array

    @staticmethod
    def backward(ctx: ArrayFunction, B: Backend, grad: Any) -> Any:
        return ctx.region.backward(ctx.index, grad, ctx.saved_arrays[1:])


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[ContextManager[Any], ContextManager[Any]]] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` whose activations are recomputed in backward instead of kept.

    ``preserve_rng_state`` (a keyword, default True) replays the forward's random draws (dropout masks) in
    the recomputation. ``use_reentrant=None`` warns and means True, as PyTorch's; both modes give the same
    gradients here, but reentrant mode refuses keyword arguments and ``context_fn``, and gives no gradient
    when no input requires grad, as PyTorch's does. ``context_fn()`` returns two context managers, entered
    around the forward and around the recomputation. ``determinism_check="default"`` raises CheckpointError
    when the recomputed outputs differ from the forward's in number, shape, dtype or device; ``"none"``
    skips it. ``debug`` and ``early_stop`` are accepted and ignored.
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT.format(""), stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and (context_fn is not noop_context_fn or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():
        return function(*args, **kwargs)
    region = _Region(function, args, kwargs, preserve, recompute_context, use_reentrant)
    inputs_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if use_reentrant and not inputs_grad:
        warnings.warn(_NO_INPUT_GRAD, stacklevel=2)
    # Parameters inside may need gradients when no input does: only a run with grad tells (its graph is
    # dropped at once). Reentrant mode records nothing then, as PyTorch's.
    ran = False
    with forward_context, (no_grad() if inputs_grad or use_reentrant else nullcontext()):
        out = function(*args, **kwargs)
        ran = True
    if not ran:
        raise RuntimeError("minitensor.utils.checkpoint: the forward context provided by context_fn suppressed "
                           "an exception raised during the checkpointed forward. This is not supported because "
                           "checkpoint cannot return a value for a failed forward.")
    record = inputs_grad or (not use_reentrant and any(isinstance(o, Tensor) and o.requires_grad
                                                        for o in _leaves(out)))
    if not record:
        return _map(out, lambda o: o.detach() if isinstance(o, Tensor) else o)
    if determinism_check == "default":
        region.meta = [_meta(o) for o in _leaves(out) if isinstance(o, Tensor)]
    return _attach(region, args, out)


def _meta(t: Tensor) -> dict[str, Any]:
    """What the determinism check compares (PyTorch's default: shape, dtype, device)."""
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


def _check_match(forward: list[dict[str, Any]], recomputed: list[dict[str, Any]]) -> None:
    """PyTorch's CheckpointError when the recomputation's output tensors differ from the forward's."""
    if len(forward) != len(recomputed):
        raise CheckpointError(
            "minitensor.utils.checkpoint: A different number of tensors was output during the original forward "
            f"and recomputation.\nNumber of tensors output during forward: {len(forward)}\nNumber of tensors "
            f"output during recomputation: {len(recomputed)}.\n{_TIP}")
    different = "".join(f"tensor at position {i}:\nsaved metadata: {a}\nrecomputed metadata: {b}\n"
                        for i, (a, b) in enumerate(zip(forward, recomputed)) if a != b)
    if different:
        raise CheckpointError("minitensor.utils.checkpoint: Recomputed values for the following tensors have "
                              f"different metadata than during the forward pass.\n{different}.\n{_TIP}")


def _leaves(out: Any) -> list[Any]:
    """The outputs in (nested) tuples and lists, in order: an LSTM's ``(y, (h, c))`` gives [y, h, c]."""
    return [leaf for o in out for leaf in _leaves(o)] if type(out) in (tuple, list) else [out]


def _map(out: Any, fn: Callable[[Any], Any]) -> Any:
    """``out`` with each leaf replaced by ``fn(leaf)``, in ``_leaves``'s order, nesting kept."""
    return type(out)(_map(o, fn) for o in out) if type(out) in (tuple, list) else fn(out)


def _attach(region: _Region, args: tuple[Any, ...], out: Any) -> Any:
    """The outputs with each floating tensor replaced by one whose grad_fn is a checkpoint node."""
    first = next(o for o in (*args, *_leaves(out)) if isinstance(o, Tensor))
    # A leaf that requires grad, so the node is recorded even when no input requires grad (parameters inside).
    dummy = _wrap(first._device.backend.zeros((0,), first.array.dtype), first._device)
    dummy.requires_grad_(True)
    index = iter(range(len(_leaves(out))))

    def node(o: Any) -> Any:
        i = next(index)
        if not _floating(o):
            return o
        region.pending += 1
        return _Checkpoint.apply(dummy, *args, region=region, index=i, output=o)
    return _map(out, node)


def _floating(o: Any) -> bool:
    return isinstance(o, Tensor) and o.dtype.is_floating_point


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    """Run ``functions`` (a list or ``nn.Sequential``) on ``input`` in ``segments`` chunks, each but the last
    checkpointed: only the chunks' boundaries stay in memory."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT.format(".checkpoint_sequential"), stacklevel=2)
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


__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential", "noop_context_fn"]
