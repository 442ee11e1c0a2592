"""The examples' ``--tensorboard``: every step's losses and every epoch's metrics, as TensorBoard scalars
(``minitensor.utils.tensorboard.SummaryWriter``, the tensorboard extra). Off, it costs nothing: without the
flag the loss is not read back per step."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import minitensor as mt


class TensorBoardLog:
    """Writes ``train/<loss>`` per step, ``epoch/<metric>`` per epoch and ``final/<result>`` at the end."""

    def __init__(self, log_dir: Path) -> None:
        try:
            from minitensor.utils.tensorboard import SummaryWriter
        except ImportError as e:
            raise SystemExit(f"--tensorboard: {e}") from e
        self.writer = SummaryWriter(str(log_dir))

    def step(self, step: int, losses: dict[str, mt.Tensor]) -> None:
        for name, value in losses.items():
            self.writer.add_scalar(f"train/{name}", value.item(), step)

    def epoch(self, epoch: int, metrics: dict[str, Any]) -> None:
        for name, value in metrics.items():
            if isinstance(value, (int, float)):
                self.writer.add_scalar(f"epoch/{name}", value, epoch)
        self.writer.flush()

    def final(self, step: int, results: dict[str, Any]) -> None:
        for name, value in results.items():
            if isinstance(value, (int, float)):
                self.writer.add_scalar(f"final/{name}", value, step)
        self.writer.close()
