"""``ScheduleGPipe``: GPipe's schedule on one stage per rank.

The batch is split into ``n_microbatches`` along dim 0. Every stage runs the forward of all micro-batches
(receiving each input from the previous stage, sending each output to the next), keeping their graphs; then
the backward of all of them, in the same order (receiving the output's gradient from the next stage, sending
the input's gradient to the previous). The last stage computes ``loss_fn(output, target)`` per micro-batch;
with ``scale_grads`` (PyTorch's default) each loss's backward is scaled by 1/n_microbatches, so a mean loss
gives the gradients of the whole batch's mean loss. Gradients accumulate into ``.grad``; the caller steps
its optimizer on each stage's own parameters.
"""
from __future__ import annotations

from typing import Any, Callable

from ...autograd import backward
from ...functional.shape import cat
from ...functional.stacking import tensor_split
from ...tensor import Tensor
from .stage import PipelineStage


class ScheduleGPipe:
    def __init__(self, stage: PipelineStage, n_microbatches: int,
                 loss_fn: Callable[[Tensor, Tensor], Tensor] | None = None, scale_grads: bool = True) -> None:
        if n_microbatches < 1:
            raise ValueError(f"n_microbatches must be at least 1, got {n_microbatches}")
        self._stage, self._n_microbatches, self._loss_fn = stage, n_microbatches, loss_fn
        self.scale_grads = scale_grads

    def _split(self, x: Tensor, what: str) -> tuple[Tensor, ...]:
        if x.shape[0] < self._n_microbatches:
            raise ValueError(f"the {what} has {x.shape[0]} samples, fewer than the {self._n_microbatches} "
                             "micro-batches")
        return tensor_split(x, self._n_microbatches)  # PyTorch's split: sizes differ by at most one

    def step(self, *args: Tensor, target: Tensor | None = None, losses: list[Tensor] | None = None) -> Any:
        """One training step's forward and backward. The first stage passes the input batch, the last the
        ``target`` (and a list to receive the micro-batches' ``losses``); returns the last stage's output
        (the micro-batches' outputs concatenated), else None."""
        stage, n = self._stage, self._n_microbatches
        if stage.is_first != bool(args):
            raise ValueError("the first stage (and only it) passes the input batch to step()")
        train = self._loss_fn is not None
        if stage.is_last and train and target is None:
            raise ValueError("the last stage needs target= to compute the loss")
        inputs = self._split(args[0], "input") if stage.is_first else ()
        targets = self._split(target, "target") if target is not None and stage.is_last and train else ()
        outs, ins, mb_losses = [], [], []
        for m in range(n):  # all forwards
            x = inputs[m] if stage.is_first else stage.recv_activation().requires_grad_(train)
            y = stage.submod(x)
            ins.append(x)
            outs.append(y)
            if not stage.is_last:
                stage.send_activation(y)
            elif train:
                mb_losses.append(self._loss_fn(y, targets[m]))  # type: ignore[misc]
        if train:
            for m in range(n):  # then all backwards
                if stage.is_last:
                    loss = mb_losses[m]
                    backward(loss / n if self.scale_grads else loss)
                else:
                    backward(outs[m], stage.recv_grad(outs[m]))
                if not stage.is_first:
                    grad = ins[m].grad
                    if grad is None:
                        raise RuntimeError(f"stage {stage.stage_index}'s output does not depend on its input: no "
                                           "gradient to send to the previous stage")
                    stage.send_grad(grad)
        if losses is not None:
            losses.extend(loss.detach() for loss in mb_losses)
        return cat([y.detach() for y in outs]) if stage.is_last else None
