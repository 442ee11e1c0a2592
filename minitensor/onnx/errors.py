"""The ONNX exporter's errors, with PyTorch's names (``torch.onnx.errors``)."""
from __future__ import annotations

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """Raised by the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """Raised when the traced model applies an op that the exporter cannot write as ONNX nodes.

    ``name`` is the op (``minitensor::<Function>``), ``version`` the opset asked for and
    ``supported_version`` the first opset that has it, or None (PyTorch's arguments)."""

    def __init__(self, name: str, version: int, supported_version: int | None, detail: str = "") -> None:
        msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
        if supported_version is not None:
            msg += (f". Support for this operator was added in version {supported_version}, try exporting "
                    "with this version")
        super().__init__(msg + (f": {detail}" if detail else ""))
        self.name, self.version, self.supported_version = name, version, supported_version
