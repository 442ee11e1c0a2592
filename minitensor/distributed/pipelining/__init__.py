"""Pipeline parallelism with PyTorch's ``torch.distributed.pipelining`` names: a ``PipelineStage`` per rank
holding its part of the model, and ``ScheduleGPipe`` (all micro-batches forward, then all backward), the
activations and their gradients passed between successive ranks with ``send``/``recv``."""
from __future__ import annotations

from .schedules import ScheduleGPipe
from .stage import PipelineStage, split_sequential

__all__ = ["PipelineStage", "ScheduleGPipe", "split_sequential"]
