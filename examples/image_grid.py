"""Save a batch of images as one PNG grid, the way the GAN example shows its generated digits.

matplotlib is imported only when a grid is written (it is in the ``examples`` extra, not a dependency of
minitensor). ``matplotlib.image.imsave`` writes the array's pixels as they are, through Agg/Pillow, with no
figure, axes or GUI backend involved, so the PNG's size follows from the grid's layout alone.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np  # only to assemble the picture's pixels for matplotlib; the models never see it

import minitensor as mt

PAD = 2        # pixels of border around and between cells
MIN_CELL = 28  # smaller images (the 8x8 digits) are enlarged by a whole factor to at least this side


def png_available() -> bool:
    """Whether matplotlib, which writes the PNGs, is installed."""
    return importlib.util.find_spec("matplotlib") is not None


def save_grid(images: mt.Tensor, path: str | Path, nrow: int = 8,
              value_range: tuple[float, float] = (-1.0, 1.0)) -> Path:
    """Write ``images`` (N, 1, s, s) as a grid of ``nrow`` cells per row (grey levels: ``value_range``
    maps to black..white; values outside are clipped) with a white border of PAD pixels. Returns the path.

    Each cell is s * zoom pixels, zoom = ceil(MIN_CELL / s); the PNG is (rows * (cell + PAD) + PAD) pixels
    high and (nrow * (cell + PAD) + PAD) wide, rows = ceil(N / nrow)."""
    from matplotlib.image import imsave  # lazily: only the examples extra brings matplotlib

    if images.ndim != 4 or images.shape[1] != 1:
        raise ValueError(f"expected grey images (N, 1, s, s), got shape {tuple(images.shape)}")
    low, high = value_range
    pixels = images.detach().cpu().numpy()[:, 0].clip(low, high)
    n, side = pixels.shape[0], pixels.shape[-1]
    zoom = -(-MIN_CELL // side)
    pixels = pixels.repeat(zoom, axis=1).repeat(zoom, axis=2)
    cell = side * zoom
    rows = -(-n // nrow)
    grid = np.full((rows * (cell + PAD) + PAD, nrow * (cell + PAD) + PAD), high, dtype=pixels.dtype)
    for i, image in enumerate(pixels):
        top, left = PAD + (i // nrow) * (cell + PAD), PAD + (i % nrow) * (cell + PAD)
        grid[top:top + cell, left:left + cell] = image
    path = Path(path)
    imsave(path, grid, cmap="gray", vmin=low, vmax=high, format="png")
    return path

