"""``SummaryWriter``: PyTorch's ``torch.utils.tensorboard.SummaryWriter`` over TensorBoard's own
``EventFileWriter`` (a queue flushed by a thread every ``flush_secs``, one event file per run directory)."""
from __future__ import annotations

import os
import socket
import time
import warnings
from datetime import datetime
from typing import Any

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summary as _s
from .hparams import hparams


class FileWriter:
    """One event file: wraps summaries into events with a step and a wall time."""

    def __init__(self, log_dir: str, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: Any = None, walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary: Summary, global_step: Any = None, walltime: float | None = None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


class SummaryWriter:
    """Writes scalars, histograms, images, figures, text and hparams to ``log_dir`` (default
    ``runs/<Mon DD_HH-MM-SS>_<host><comment>``). ``purge_step`` hides earlier events at or after that step
    from TensorBoard (a resumed run); ``add_scalars`` writes one sub-run per key, as PyTorch."""

    def __init__(self, log_dir: str | os.PathLike | None = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self.default_bins = _s.default_bins()
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        """The run's FileWriter, made again after ``close`` (a new event file), as PyTorch's."""
        if self.file_writer is None or self.all_writers is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Any = None, walltime: float | None = None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        self._get_file_writer().add_summary(_s.scalar(tag, scalar_value, new_style, double_precision),
                                            global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: Any = None,
                    walltime: float | None = None) -> None:
        """Each key's value under ``main_tag`` in the sub-run ``<log_dir>/<main_tag>_<key>``."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, value in tag_scalar_dict.items():
            path = root + "/" + main_tag.replace("/", "_") + "_" + tag
            if path not in self.all_writers:
                self.all_writers[path] = FileWriter(path, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers[path].add_summary(_s.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Any = None, bins: Any = "tensorflow",
                      walltime: float | None = None, max_bins: int | None = None) -> None:
        bins = self.default_bins if isinstance(bins, str) and bins == "tensorflow" else bins
        self._get_file_writer().add_summary(_s.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: Any = None, walltime: float | None = None,
                  dataformats: str = "CHW") -> None:
        self._get_file_writer().add_summary(_s.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: Any = None, walltime: float | None = None,
                   dataformats: str = "NCHW") -> None:
        """A batch as one grid image, 8 to a row."""
        self._get_file_writer().add_summary(_s.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: Any = None, close: bool = True,
                   walltime: float | None = None) -> None:
        """A matplotlib figure (or a list of them, as a grid) rendered to an image."""
        if isinstance(figure, list):
            import numpy as np
            self.add_image(tag, np.stack([_s.figure_to_chw(f, close) for f in figure]), global_step, walltime,
                           dataformats="NCHW")
        else:
            self.add_image(tag, _s.figure_to_chw(figure, close), global_step, walltime, dataformats="CHW")

    def add_text(self, tag: str, text_string: str, global_step: Any = None, walltime: float | None = None) -> None:
        self._get_file_writer().add_summary(_s.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None,
                    run_name: str | None = None, global_step: Any = None) -> None:
        """The hyperparameters and the metrics' values, in the sub-run ``run_name`` (default: the time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as run:
            for s in summaries:
                run._get_file_writer().add_summary(s, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """Writes nothing: PyTorch traces the model with TorchScript, which minitensor has not (use
        ``minitensor.onnx.export`` and an ONNX viewer to see a graph)."""
        warnings.warn("SummaryWriter.add_graph writes nothing in minitensor (there is no TorchScript tracer; "
                      "minitensor.onnx.export draws the graph as ONNX)", UserWarning, stacklevel=2)

    def flush(self) -> None:
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
