"""ONNX export with PyTorch's names: ``minitensor.onnx.export(model, args, "model.onnx", ...)``.

Needs the ``onnx`` package (``pip install 'minitensor[onnx]'``), imported by ``export`` itself: importing
minitensor (or this package) does not import it. What is exported and how: docs/onnx.md.
"""
from __future__ import annotations

from . import errors
from .errors import OnnxExporterError
from .utils import TrainingMode, export, is_in_onnx_export

__all__ = ["OnnxExporterError", "TrainingMode", "errors", "export", "is_in_onnx_export"]
