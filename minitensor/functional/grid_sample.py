"""Spatial transformers: ``affine_grid`` and ``grid_sample`` (bilinear, nearest, bicubic; zeros, border,
reflection padding), as PyTorch's.

``grid`` (N, *out, d) holds normalised source coordinates in [-1, 1], x first (the last spatial dim of the
input). A coordinate c maps to pixel position ((c + 1) / 2) (size - 1) with ``align_corners`` (the corner
pixels' centres are -1 and 1), else ((c + 1) size - 1) / 2 (their outer edges are). Sampling composes tensor
ops: the taps' flat indices are computed without gradient, their values are one ``gather`` each from the
input flattened to (N, C, prod(spatial)) (whose gradient is the backend's scatter-add), and the weights are
differentiable functions of the grid, so both gradients come from autograd. Out-of-range taps read 0 through
``where`` (never a multiply, so an inf elsewhere in the input does not become NaN).
"""
from __future__ import annotations

import itertools
import math
import warnings
from typing import Any, Sequence

import numpy as np

from ..creation import full_like, zeros_like
from ..tensor import Tensor
from .along_axis import gather
from .arithmetic import fmod
from .indexing import where
from .math import floor, round as round_half_even

__all__ = ["affine_grid", "grid_sample"]

_CUBIC_A = -0.75
_DEFAULT_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                    "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                    "grid_sample for details.")


# ------------------------------------------------------------------------------------------ affine_grid
def _base_coords(steps: int, align_corners: bool, like: Tensor) -> Tensor:
    """PyTorch's linspace_from_neg_one: ``steps`` points over [-1, 1], shrunk by (steps - 1) / steps
    without ``align_corners`` (pixel centres); a single point is 0."""
    from ..creation import linspace, zeros
    if steps <= 1:
        return zeros(1, dtype=like.dtype, device=like.device)
    r = linspace(-1.0, 1.0, steps, dtype=like.dtype, device=like.device)
    return r if align_corners else r * ((steps - 1) / steps)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """grid[n, *p] = theta[n] @ (x_p, y_p[, z_p], 1): (N, H, W, 2) from theta (N, 2, 3) for size
    (N, C, H, W); (N, D, H, W, 3) from theta (N, 3, 4) for size (N, C, D, H, W)."""
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) in (4, 5):
        d = len(size) - 2
        if theta.ndim != 3 or theta.shape[-2] != d or theta.shape[-1] != d + 1:
            raise ValueError(f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {d + 1}] "
                           f"but got: [{theta.shape[0]}, {d + 1}].")
    from .shape import stack
    # base[*p] = (x, y[, z], 1): x varies along the last spatial dim
    axes = [_base_coords(n, align_corners, theta) for n in spatial]
    shape = [1] * d
    coords = []
    for k in reversed(range(d)):  # x is spatial dim d - 1
        view = list(shape)
        view[k] = spatial[k]
        coords.append(axes[k].reshape(view).expand(*spatial))
    coords.append(coords[0] * 0 + 1)
    base = stack(coords, -1).reshape(1, math.prod(spatial), d + 1)
    return (base @ theta.transpose(1, 2)).reshape(size[0], *spatial, d)


# ------------------------------------------------------------------------------ coordinate transforms
def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(x: Tensor, size: int, nan_high: bool = False) -> Tensor:
    """x clamped to [0, size - 1] with gradient 0 at and beyond the ends (PyTorch's clip_coordinates_set_grad).
    NaN becomes 0 as PyTorch's vectorised 2-d kernel, or size - 1 with ``nan_high`` as its scalar 3-d kernel
    (std::min(size - 1, std::max(NaN, 0)))."""
    high = full_like(x, size - 1)
    out = where(x > 0, where(x >= size - 1, high, x), zeros_like(x))
    return where(x != x, high, out) if nan_high else out


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """x reflected into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates): the gradient is
    +1 or -1 by the parity of the number of reflections; inf and NaN become NaN."""
    if twice_low == twice_high:  # one pixel with align_corners: 0, with a zero gradient (not none)
        zero = zeros_like(x)
        return where(zero > 0, x, zero)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    x = x - low
    x = where(x < 0, -x, x)
    extra = fmod(x, span)
    even = fmod(floor(x.detach() / span), 2) == 0
    return where(even, extra + low, (span - extra) + low)


def _pad_coords(x: Tensor, size: int, padding_mode: str, align_corners: bool, nan_high: bool = False) -> Tensor:
    """PyTorch's compute_coordinates: border clips, reflection reflects then clips, zeros keeps."""
    if padding_mode == "border":
        return _clip(x, size, nan_high)
    if padding_mode == "reflection":
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        return _clip(_reflect(x, low, high), size, nan_high)
    return x


# ------------------------------------------------------------------------------------------ sampling
def _read(flat: Tensor, taps: Sequence[Tensor], sizes: Sequence[int]) -> tuple[Tensor, Tensor]:
    """(values, valid): flat (N, C, prod(sizes)) read at integral float positions ``taps`` (one (N, P) per
    axis, x first); a tap outside [0, size) (NaN included) reads 0 and is not valid."""
    valid = None
    index = None
    stride = 1
    for t, n in zip(taps, sizes):
        t = t.detach()
        ok = (t >= 0) & (t < n)
        valid = ok if valid is None else valid & ok
        term = t * stride
        index = term if index is None else index + term
        stride *= n
    assert valid is not None and index is not None
    index = where(valid, index, zeros_like(index)).long()  # NaN, inf and far taps read position 0, then masked
    n, c = flat.shape[0], flat.shape[1]
    values = gather(flat, 2, index.unsqueeze(1).expand(n, c, index.shape[1]))
    return where(valid.unsqueeze(1), values, zeros_like(values)), valid


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """Keys' cubic convolution weights of the taps at -1, 0, 1, 2 (A = -0.75), PyTorch's
    get_cubic_upsample_coefficients."""
    a = _CUBIC_A

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    x2 = 1 - t
    return [far(t + 1), near(t), near(x2), far(x2 + 1)]


def _check(input: Tensor, grid: Tensor, mode: str) -> None:
    def sizes(t: Tensor) -> list[int]:
        return list(t.shape)
    if input.ndim < 1 or grid.ndim < 1 or input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {sizes(input)} and grid with sizes {sizes(grid)}")
    if input.ndim != grid.ndim or input.ndim not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {sizes(input)} and grid with sizes {sizes(grid)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {sizes(grid)}")
    for k in range(2, input.ndim):
        if input.shape[k] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {sizes(input)} with dimension {k} being empty")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """out[n, c, *p] = input[n, c] sampled at grid[n, *p]: input (N, C, H, W) with grid (N, Ho, Wo, 2) gives
    (N, C, Ho, Wo); input (N, C, D, H, W) with grid (N, Do, Ho, Wo, 3) gives (N, C, Do, Ho, Wo).

    bilinear: sum over the 2^d corners around the position of the product of (1 - |p - corner|) per axis;
    nearest: the pixel at the position rounded half to even; bicubic (4-d): 4x4 taps of Keys' kernel, each
    tap's position padded on its own."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, stacklevel=2)
        align_corners = False
    _check(input, grid, mode)
    with np.errstate(invalid="ignore"):  # NaN and inf coordinates are meant to give NaN, silently as PyTorch
        return _sample(input, grid, mode, padding_mode, align_corners)


def _sample(input: Tensor, grid: Tensor, mode: str, padding_mode: str, align_corners: bool) -> Tensor:
    n, c, spatial = input.shape[0], input.shape[1], tuple(input.shape[2:])
    out_spatial = tuple(grid.shape[1:-1])
    d = len(spatial)
    sizes = spatial[::-1]  # x first: the last spatial dim
    flat = input.reshape(n, c, math.prod(spatial))
    g = grid.reshape(n, math.prod(out_spatial), d)
    coords = [_unnormalize(g[:, :, k], sizes[k], align_corners) for k in range(d)]
    if mode == "bicubic":
        out = _bicubic(flat, coords, sizes, padding_mode, align_corners)
    else:
        coords = [_pad_coords(x, s, padding_mode, align_corners, d == 3) for x, s in zip(coords, sizes)]
        if mode == "nearest":
            out = _read(flat, [round_half_even(x.detach()) for x in coords], sizes)[0]
            if grid.requires_grad:  # PyTorch's grid gradient is zeros; x - (+0) keeps a -0 output
                out = out - g.reshape(-1)[:0].sum()
        else:
            out = _linear(flat, coords, sizes)
    return out.reshape(n, c, *out_spatial)


def _linear(flat: Tensor, coords: list[Tensor], sizes: Sequence[int]) -> Tensor:
    """Sum over the corners (x fastest, PyTorch's order) of w * value, w the product over axes of
    (x0 + 1 - x) or (x - x0), the form of PyTorch's kernel. 2-d, as its vectorised kernel, multiplies an
    outside corner's 0 by its weight (NaN and inf coordinates give NaN); 3-d, as its scalar kernel, skips
    it and sums from +0 (NaN and inf coordinates give 0 with zeros padding)."""
    lows = [floor(x.detach()) for x in coords]
    skip = len(coords) == 3
    out: Any = None
    for reversed_corner in itertools.product((0, 1), repeat=len(coords)):
        corner = reversed_corner[::-1]
        weight: Any = None
        for bit, x, x0 in zip(corner, coords, lows):
            w = (x - x0) if bit else ((x0 + 1) - x)
            weight = w if weight is None else weight * w
        values, valid = _read(flat, [x0 + bit for bit, x0 in zip(corner, lows)], sizes)
        term = weight.unsqueeze(1) * values
        if skip:
            term = where(valid.unsqueeze(1), term, zeros_like(term))
        out = (term + 0.0 if skip else term) if out is None else out + term
    return out


def _bicubic(flat: Tensor, coords: list[Tensor], sizes: Sequence[int], padding_mode: str,
             align_corners: bool) -> Tensor:
    x, y = coords
    x0, y0 = floor(x.detach()), floor(y.detach())
    wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
    taps_x = [_pad_coords(x0 + (i - 1), sizes[0], padding_mode, align_corners) for i in range(4)]
    taps_y = [_pad_coords(y0 + (j - 1), sizes[1], padding_mode, align_corners) for j in range(4)]
    # a padded tap is a whole number already, except the float of a reflected one: truncate as PyTorch's cast
    taps_x = [t if padding_mode == "zeros" else floor(t) for t in taps_x]
    taps_y = [t if padding_mode == "zeros" else floor(t) for t in taps_y]
    out: Any = None
    for j in range(4):
        row: Any = None
        for i in range(4):
            term = wx[i].unsqueeze(1) * _read(flat, [taps_x[i], taps_y[j]], sizes)[0]
            row = term if row is None else row + term
        term = wy[j].unsqueeze(1) * row
        out = term if out is None else out + term
    return out
