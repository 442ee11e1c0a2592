"""``PipelineStage``: one rank's part of a pipelined model, and the point-to-point transfers between stages.

A stage receives its input from the previous stage's rank (``stage_index - 1``) and sends its output to the
next; in backward it receives the gradient of its output and sends the gradient of its input. Activations
travel with a small header (ndim, sizes, dtype), so no stage needs to know the others' shapes; a gradient
has the shape of the activation it belongs to.
"""
from __future__ import annotations

from typing import Any, Sequence

import minitensor.distributed as dist
from ... import dtypes as _dt
from ...creation import empty, tensor
from ...nn.modules.container import Sequential
from ...nn.modules.module import Module
from ...tensor import Tensor

MAX_DIMS = 8
_DTYPES = (_dt.float32, _dt.float64, _dt.float16, _dt.bfloat16, _dt.int64, _dt.int32)


def split_sequential(module: Sequential, num_stages: int, split_points: Sequence[int] | None = None
                     ) -> list[Sequential]:
    """``module``'s layers in ``num_stages`` consecutive ``Sequential`` parts that share its parameters:
    cut before each index of ``split_points``, else into parts of (nearly) equal numbers of layers."""
    layers = list(module)
    if not 1 <= num_stages <= len(layers):
        raise ValueError(f"num_stages must be between 1 and the {len(layers)} layers, got {num_stages}")
    if split_points is None:
        split_points = [round(i * len(layers) / num_stages) for i in range(1, num_stages)]
    cuts = [0, *split_points, len(layers)]
    if len(cuts) != num_stages + 1 or any(a >= b for a, b in zip(cuts, cuts[1:])):
        raise ValueError(f"split_points must be {num_stages - 1} increasing layer indices inside (0, "
                         f"{len(layers)}), got {list(split_points)}")
    return [Sequential(*layers[a:b]) for a, b in zip(cuts, cuts[1:])]


class PipelineStage:
    """Stage ``stage_index`` of ``num_stages`` (stage i runs on rank i of ``group``), running ``submodule``
    on ``device``."""

    def __init__(self, submodule: Module, stage_index: int, num_stages: int, device: Any, group: Any = None
                 ) -> None:
        if not 0 <= stage_index < num_stages:
            raise ValueError(f"stage_index {stage_index} is out of range for {num_stages} stages")
        world = dist.get_world_size(group)
        if num_stages != world:
            raise ValueError(f"{num_stages} stages need {num_stages} ranks (one stage per rank), the group has "
                             f"{world}")
        self.submod, self.stage_index, self.num_stages = submodule, stage_index, num_stages
        self.device, self.group = device, group
        self.is_first, self.is_last = stage_index == 0, stage_index == num_stages - 1

    def _peer(self, offset: int) -> int:
        """The global rank of the stage ``offset`` away (stage i is rank i of the group)."""
        stage = self.stage_index + offset
        return stage if self.group is None else dist.get_global_rank(self.group, stage)

    def send_activation(self, x: Tensor) -> None:
        if x.ndim > MAX_DIMS or x.dtype not in _DTYPES:
            raise ValueError(f"a stage's output must have at most {MAX_DIMS} dimensions and one of the dtypes "
                             f"{[str(d) for d in _DTYPES]}, got shape {tuple(x.shape)} and {x.dtype}")
        header = [x.ndim, *x.shape] + [0] * (MAX_DIMS - x.ndim) + [_DTYPES.index(x.dtype)]
        dist.send(tensor(header, dtype=_dt.int64, device=self.device), self._peer(1), group=self.group)
        dist.send(x.detach().contiguous(), self._peer(1), group=self.group)

    def recv_activation(self) -> Tensor:
        header = empty(MAX_DIMS + 2, dtype=_dt.int64, device=self.device)
        dist.recv(header, self._peer(-1), group=self.group)
        h = header.tolist()
        if not (0 <= h[0] <= MAX_DIMS and 0 <= h[-1] < len(_DTYPES) and min(h[1:1 + h[0]], default=0) >= 0):
            raise RuntimeError(f"stage {self.stage_index}: the previous stage sent a malformed activation header "
                               f"{h} (ndim, sizes, padding, dtype index): a peer that is not a pipeline stage")
        x = empty(tuple(h[1:1 + h[0]]), dtype=_DTYPES[h[-1]], device=self.device)
        dist.recv(x, self._peer(-1), group=self.group)
        return x

    def send_grad(self, g: Tensor) -> None:
        dist.send(g.contiguous(), self._peer(-1), group=self.group)

    def recv_grad(self, like: Tensor) -> Tensor:
        g = empty(tuple(like.shape), dtype=like.dtype, device=self.device)
        dist.recv(g, self._peer(1), group=self.group)
        return g
