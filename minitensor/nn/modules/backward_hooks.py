"""Module backward hooks (PyTorch's ``torch.utils.hooks.BackwardHook``): a module call with backward hooks
passes its positional tensor inputs, and then its outputs, through an identity custom Function
(``BackwardHookFunction``), so the graph gets one node holding the gradients w.r.t. the outputs and one
holding those w.r.t. the inputs. The output node runs first in backward: it calls the pre-hooks on
grad_output and keeps it; the input node then calls the hooks with (grad_input, grad_output).
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Callable

from ...autograd import Function
from ...autograd.grad_mode import state
from ...creation import zeros_like
from ...tensor import Tensor

_NO_INPUT_GRAD = ("Full backward hook is firing when gradients are computed with respect to module outputs since "
                  "no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module."
                  "html#torch.nn.Module.register_full_backward_hook for more details.")


_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # minitensor/


def _caller_stacklevel() -> int:
    """The stacklevel of the first frame outside minitensor (the ``backward()`` call), for a warning raised
    by this file's caller: the engine's depth varies."""
    frame: Any = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


class BackwardHookFunction(Function):
    """Identity on its tensors; its backward hands their gradients to ``on_grad`` (a BackwardHook method),
    whose result replaces them. Its node is named ``BackwardHookFunctionBackward``, as PyTorch's."""

    @staticmethod
    def forward(ctx: Any, on_grad: Callable[[tuple], tuple], *args: Any) -> Any:  # type: ignore[override]
        ctx.on_grad = on_grad
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        ctx.set_materialize_grads(False)  # grad_output keeps None for an output that got no gradient
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None, *ctx.on_grad(grads))


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return value if isinstance(value, tuple) else (value,)


class BackwardHook:
    """One module call's backward hooks: ``setup_input_hook`` before ``forward``, ``setup_output_hook``
    after; in backward, the output node's gradients reach the pre-hooks, then the input node's the hooks."""

    def __init__(self, module: Any, user_hooks: list[Callable], user_pre_hooks: list[Callable]) -> None:
        self.module, self.user_hooks, self.user_pre_hooks = module, user_hooks, user_pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = self.n_outputs = -1
        self.input_tensors: list[Tensor] | None = None  # the (wrapped) tensor inputs; None: none requires grad
        self.input_index: list[int] = []
        self.output_index: list[int] = []
        self.output_diff: list[int] = []  # the outputs passed through the node

    def _wrap(self, args: tuple[Any, ...], diff: list[int], on_grad: Callable) -> tuple[Any, ...]:
        """args with the tensors at ``diff`` replaced by the outputs of one BackwardHookFunction."""
        new = BackwardHookFunction.apply(on_grad, *(args[i] for i in diff))
        out = list(args)
        for i, t in zip(diff, _as_tuple(new)):
            out[i] = t
        return tuple(out) if type(args) is tuple else type(args)(*out)  # a namedtuple stays one

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        self.n_inputs = len(args)
        self.input_index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        # every tensor goes through the node (as PyTorch's), so an unused input gets a zero gradient
        if not (state.grad_enabled and any(args[i].requires_grad for i in self.input_index)):
            return args
        args = self._wrap(args, self.input_index, self._input_grads)
        self.input_tensors = [args[i] for i in self.input_index]
        return args

    def setup_output_hook(self, result: Any) -> Any:
        is_tuple = isinstance(result, tuple)
        outs = result if is_tuple else (result,)
        self.n_outputs = len(outs)
        self.output_index = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
        if not (state.grad_enabled and any(outs[i].requires_grad for i in self.output_index)):
            return result
        self.output_diff = self.output_index  # those not requiring grad go through as non-differentiable
        outs = self._wrap(outs, self.output_diff, self._output_grads)
        return outs if is_tuple else outs[0]

    def _output_grads(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        packed: list[Any] = [None] * self.n_outputs
        for i, g in zip(self.output_diff, grads):
            packed[i] = g
        self.grad_outputs = tuple(packed)
        for hook in self.user_pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            new = _as_tuple(new)
            if len(new) != self.n_outputs:
                raise RuntimeError("Backward pre hook returned an invalid number of grad_output, got "
                                   f"{len(new)}, but expected {self.n_outputs}")
            self.grad_outputs = new
        local = self.grad_outputs
        if self.input_tensors is None:  # no input requires grad: the hooks fire now, with grad_input all None
            warnings.warn(_NO_INPUT_GRAD, stacklevel=_caller_stacklevel())
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_diff)

    def _input_grads(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the outputs (e.g. double backward)
            return grads
        assert self.input_tensors is not None
        packed: list[Any] = [None] * self.n_inputs
        for i, g, t in zip(self.input_index, grads, self.input_tensors):
            packed[i] = zeros_like(t) if g is None else g  # PyTorch's node materializes the missing ones
        res = tuple(packed)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            out = _as_tuple(out)
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                   f"expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)
