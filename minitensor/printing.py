"""How tensors print, as PyTorch's ``torch._tensor_str``: ``set_printoptions`` / ``get_printoptions`` /
``printoptions`` and the body of ``repr(tensor)``.

A float tensor prints in one of three modes chosen from its nonzero finite values v (PyTorch's rule):
scientific when max|v| / min|v| > 1000, max|v| > 1e8 or min|v| < 1e-4 (unless ``sci_mode`` forces it);
otherwise "whole" (``1., 2.``) when every v is an integer, else fixed with ``precision`` decimals. Every
element is right-aligned to the widest of those values. Past ``threshold`` elements, each dimension longer
than 2·``edgeitems`` shows only its first and last ``edgeitems`` entries around ``...``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any, Iterator

import numpy as np


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """PyTorch's ``set_printoptions``: ``profile`` ("default", "short", "full") first, then each option given;
    ``sci_mode`` is always set (None: chosen per tensor)."""
    if profile is not None and profile in _PROFILES:  # PyTorch ignores an unknown profile
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Set print options inside a ``with`` block; the old ones come back after it."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """PyTorch's ``_Formatter``: the mode and width chosen from the values shown, then one string a value."""

    def __init__(self, shown: np.ndarray) -> None:
        self.floating = shown.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        if not self.floating:
            self.max_width = max([len(str(v)) for v in shown.ravel().tolist()], default=1)
            return
        values = shown[np.isfinite(shown) & (shown != 0)].astype(np.float64)
        if values.size == 0:
            return
        magnitude = np.abs(values)
        low, high = magnitude.min(), magnitude.max()
        self.int_mode = bool(np.all(values == np.ceil(values)))
        sci = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
        self.sci_mode = bool(sci if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
        # the widest of the nonzero finite values ("1." is one wider than "1": the dot)
        if self.sci_mode:
            texts = [f"{v:.{PRINT_OPTS.precision}e}" for v in values.tolist()]
        elif self.int_mode:
            texts = [f"{v:.0f}." for v in values.tolist()]
        else:
            texts = [f"{v:.{PRINT_OPTS.precision}f}" for v in values.tolist()]
        self.max_width = max(len(t) for t in texts)

    def format(self, value: Any) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return text.rjust(self.max_width)


def _summarized(a: np.ndarray) -> np.ndarray:
    """The entries a summarized print shows: each dim longer than 2·edgeitems cut to its two ends."""
    edge = PRINT_OPTS.edgeitems
    for dim, n in enumerate(a.shape):
        if n > 2 * edge:
            a = np.take(a, np.r_[0:edge, n - edge:n], axis=dim)
    return a


def _body(a: np.ndarray, fmt: _Formatter, indent: int, summarize: bool) -> str:
    """The bracketed text of ``a``, a dim at a time; elements per line from ``linewidth``."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return fmt.format(a.item())
    cut = summarize and a.shape[0] > 2 * edge
    if a.ndim == 1:
        per_line = max(1, (PRINT_OPTS.linewidth - indent) // (fmt.max_width + 2))
        if summarize and not edge:
            items = ["..."]
        elif cut:
            items = [fmt.format(v) for v in a[:edge].tolist()] + [" ..."] + \
                [fmt.format(v) for v in a[-edge:].tolist()]
        else:
            items = [fmt.format(v) for v in a.tolist()]
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(edge) if cut else range(a.shape[0])
    parts = [_body(a[i], fmt, indent + 1, summarize) for i in rows]
    if cut:
        parts += ["..."] + [_body(a[i], fmt, indent + 1, summarize) for i in range(a.shape[0] - edge, a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def tensor_text(host: np.ndarray, indent: int) -> str:
    """``host`` (NumPy, a non-empty array) as PyTorch prints a tensor's values after ``tensor(``."""
    summarize = host.size > PRINT_OPTS.threshold
    return _body(host, _Formatter(_summarized(host) if summarize else host), indent, summarize)


def add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """``text`` then ``, suffix`` each, a suffix going to its own line when it would pass ``linewidth``."""
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1  # (PyTorch's count, one more than the line's length)
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"
