"""The Summary protocol buffers ``SummaryWriter`` writes, built as PyTorch's ``torch.utils.tensorboard.summary``
builds them (so TensorBoard shows the same thing): scalars, histograms, images, text and hparams. Images are
PNG-encoded here (zlib, no Pillow needed)."""
from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto


def make_np(x: Any) -> np.ndarray:
    """A NumPy array of a tensor (any device, detached), an array or a Python number."""
    from ...tensor import Tensor
    if isinstance(x, Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def scalar(tag: str, value: Any, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One scalar, as ``simple_value`` (or with ``new_style`` as a tensor for the scalars plugin)."""
    array = make_np(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {array.size} "
                             f"and {array.ndim} dimensions.")
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=number)])
    proto = (TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[number], dtype="DT_FLOAT"))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=metadata)])


def default_bins() -> list[float]:
    """PyTorch's "tensorflow" bins: +-1e-12 growing by 10% up to 1e20, and 0."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0.0] + edges


def histogram(tag: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    """A histogram of ``values`` (np.histogram's bins), trimmed to the occupied range as TensorBoard's
    histogram.cc does: only right bin limits are stored, so one empty bin is kept on the left."""
    flat = make_np(values).astype(float).reshape(-1)
    if flat.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(flat, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % step)).reshape(-1, step).sum(axis=-1)
        limits = np.append(limits[:-1:step], limits[-1])
    occupied = np.cumsum(counts > 0)
    start, end = (int(i) for i in np.searchsorted(occupied, [0, occupied[-1] - 1], side="right"))
    end += 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    proto = HistogramProto(min=flat.min(), max=flat.max(), num=len(flat), sum=flat.sum(),
                           sum_squares=flat.dot(flat), bucket_limit=limits.tolist(), bucket=counts.tolist())
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def _grid(nchw: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Images (N, 1 or 3, H, W) tiled into one (3, H*rows, W*cols) canvas, 8 to a row, as PyTorch."""
    if nchw.shape[1] == 1:
        nchw = np.concatenate([nchw] * 3, 1)
    if nchw.ndim != 4 or nchw.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = nchw.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=nchw.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = nchw[i]
    return canvas


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """An image in ``dataformats`` (NCHW, NHWC, CHW, HWC, HW, WH...) as (H, W, C); a batch becomes a grid,
    one channel becomes three."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {dataformats}")
    if array.ndim != len(fmt):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: "
                             f"{array.shape}, input_format: {dataformats}")
    if len(fmt) == 4:
        return _grid(array.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    return np.stack([array.transpose([fmt.find(c) for c in "HW"])] * 3, 2)


def encode_png(hwc: np.ndarray) -> bytes:
    """A uint8 (H, W, 1/3/4) image as PNG bytes: every row unfiltered, one zlib stream."""
    h, w, c = hwc.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    rows = np.concatenate([np.zeros((h, 1), np.uint8), hwc.reshape(h, w * c)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes())) + chunk(b"IEND", b""))


def image(tag: str, values: Any, dataformats: str = "NCHW") -> Summary:
    """An image (or a grid of a batch): uint8 as it is, any other dtype read as [0, 1] and scaled to 255."""
    array = to_hwc(make_np(values), dataformats)
    scale = 1 if array.dtype == np.uint8 else 255
    pixels = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    h, w, c = pixels.shape
    proto = Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=encode_png(pixels))
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def figure_to_chw(figure: Any, close: bool = True) -> np.ndarray:
    """A matplotlib figure rendered by Agg as a uint8 (3, H, W) array."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    w, h = figure.canvas.get_width_height()
    rgb = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
    if close:
        plt.close(figure)
    return np.moveaxis(rgb, 2, 0)


def text(tag: str, string: str) -> Summary:
    """A string for the text plugin, under ``tag + "/text_summary"`` as PyTorch writes it."""
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[string.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=proto)])
