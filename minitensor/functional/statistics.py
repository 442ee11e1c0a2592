"""Statistics composed of other families' ops (differentiable where those are): ``aminmax``, ``cov``,
``corrcoef``, ``histogram`` and ``gradient`` (NumPy's ``np.gradient`` finite differences)."""
from __future__ import annotations

import builtins  # histogramdd's keyword ``range`` shadows the builtin there
import math
import warnings
from typing import Any, Sequence

from .. import dtypes as _dt
from .. import return_types as rt
from ..tensor import Tensor
from ._util import torch_dtype_name
from .cumulative import diff
from .math import clamp_min
from .reduce import amax, amin
from .searching import searchsorted
from .shape import cat, narrow

__all__ = ["aminmax", "corrcoef", "cov", "gradient", "histogram"]

def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> rt.aminmax:
    """(amin, amax) over ``dim`` (None: all elements; keepdim then keeps every dim as size 1)."""
    if input.numel() == 0 and (dim is None or input.shape[dim] == 0):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    dims: Any = tuple(range(input.dim())) if dim is None else dim
    return rt.aminmax((amin(input, dims, keepdim), amax(input, dims, keepdim)))


def _float(x: Tensor) -> Tensor:
    return x if x.is_floating_point() else x.to(_dt.get_default_dtype())


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """Covariance of the rows (variables) of a (V, N) or (N,) ``input`` over its N observations, with
    frequency and observation weights w = fweights * aweights: sum_n w_n (x_n - avg)(y_n - avg) / fact, fact =
    sum(w) - correction * sum(w * aweights) / sum(w) (NumPy's ``np.cov``); 0-d for one variable (a (1, N)
    input too, as PyTorch's)."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = _float(input.reshape(1, -1) if input.dim() < 2 else input)
    n = x.shape[1]
    w = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        if weights.dim() > 1 or weights.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have one dimension and the same number of elements as "
                               f"the observations ({n}), but got shape {tuple(weights.shape)}")
        if name == "fweights" and weights.is_floating_point():
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{weights.dtype} dtype")
        if name == "aweights" and not weights.is_floating_point():
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{weights.dtype} dtype")
        if n and bool((weights < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = weights if w is None else w * weights
    if w is None:
        w_sum: Any = n
        avg = x.mean(1, keepdim=True)
        fact: Any = n - correction
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / w_sum
        fact = w_sum if correction == 0 else w_sum - correction * ((w * aweights).sum() / w_sum
                                                                   if aweights is not None else 1)
    if not isinstance(fact, Tensor) and fact <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        fact = 0
    elif isinstance(fact, Tensor):
        fact = clamp_min(fact, 0)
    xc = x - avg
    c = (xc if w is None else xc * w) @ xc.t() / fact
    return c.reshape(()) if input.dim() < 2 or c.shape[0] == 1 else c  # PyTorch: one variable gives 0-d


def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation of the rows: cov / (std_i std_j), clipped to [-1, 1] (0-d: cov / cov)."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = c.diagonal().sqrt()
    return (c / std.reshape(-1, 1) / std.reshape(1, -1)).clamp(-1, 1)


def histogram(input: Tensor, bins: Any = 100, *, range: Sequence[float] | None = None,
              weight: Tensor | None = None, density: bool = False) -> rt.histogram:
    """Counts (or ``weight`` sums) of ``input``'s elements in ``bins`` (a count of equal bins over ``range``,
    default the data's min and max, or the ascending edges as a 1-D tensor); a bin holds edges[i] <= x <
    edges[i+1], the last one also its right edge. ``density`` divides by the total and the bins' widths."""
    if not input.is_floating_point():
        raise RuntimeError(f"torch.histogram: input tensor must be of floating point dtype, got {input.dtype}")
    if isinstance(bins, Tensor):
        if range is not None:
            raise TypeError("histogram(): range cannot be given with a tensor of bin edges")
        if bins.dim() != 1 or bins.numel() < 1:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension and at least 1 element")
        if bins.dtype != input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                               f"got input with dtype {input.dtype} and bins with dtype {bins.dtype}")
        edges = bins
    else:
        if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            low, high = float(range[0]), float(range[1])
        elif input.numel():
            low, high = float(input.min().item()), float(input.max().item())
        else:
            low, high = 0.0, 0.0
        if low > high:
            raise RuntimeError(f"torch.histogram(): min should not exceed max, but got min {low} max {high}")
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(f"torch.histogram(): range of [{low}, {high}] is not finite")
        if low == high:  # NumPy's and PyTorch's widening of an empty range
            low, high = low - 0.5, high + 0.5
        from ..creation import linspace
        edges = linspace(low, high, bins + 1, dtype=input.dtype, device=input.device)
    x = input.detach().reshape(-1)
    nbins = edges.numel() - 1
    index = searchsorted(edges, x, right=True) - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    index = index.clamp(0, max(nbins - 1, 0))  # x == the last edge falls in the last bin
    w = inside.to(input.dtype) if weight is None else weight.detach().reshape(-1).to(input.dtype) * inside
    hist = x.new_zeros(max(nbins, 0)).index_add(0, index[inside], w[inside])
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return rt.histogram((hist, edges))


def _coefficients(dx1: Any, dx2: Any) -> tuple[Any, Any, Any]:
    """The second-order weights of f(x - dx1), f(x), f(x + dx2) for f'(x) (NumPy's interior formula)."""
    return -dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2), dx1 / (dx2 * (dx1 + dx2))


def _gradient_1d(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    """df/dx along dim d; h: a float spacing, or the (n - 1,) coordinate steps shaped to broadcast on d."""
    n = f.shape[d]

    def step(i: int, length: int) -> Any:
        return h if not isinstance(h, Tensor) else narrow(h, 0, i if i >= 0 else h.shape[0] + i, length)
    if isinstance(h, Tensor):
        a, b, c = _coefficients(step(0, n - 2), step(1, n - 2))
        inner = a * narrow(f, d, 0, n - 2) + b * narrow(f, d, 1, n - 2) + c * narrow(f, d, 2, n - 2)
    else:  # PyTorch's even spacing: (f[i+1] - f[i-1]) / h / 2, never 0 * f[i] (an inf there stays out)
        inner = (narrow(f, d, 2, n - 2) - narrow(f, d, 0, n - 2)) / h / 2
    if edge_order == 1:
        first = (narrow(f, d, 1, 1) - narrow(f, d, 0, 1)) / step(0, 1)
        last = (narrow(f, d, n - 1, 1) - narrow(f, d, n - 2, 1)) / step(-1, 1)
    else:
        h1, h2 = step(0, 1), step(1, 1)  # f'(x0) from the parabola through the first three points
        first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * narrow(f, d, 0, 1) + (h1 + h2) / (h1 * h2) * narrow(f, d, 1, 1)
                 - h1 / (h2 * (h1 + h2)) * narrow(f, d, 2, 1))
        h1, h2 = step(-2, 1), step(-1, 1)
        last = (h2 / (h1 * (h1 + h2)) * narrow(f, d, n - 3, 1) - (h2 + h1) / (h1 * h2) * narrow(f, d, n - 2, 1)
                + (2 * h2 + h1) / (h2 * (h1 + h2)) * narrow(f, d, n - 1, 1))
    return cat([first, inner, last], d)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of ``input`` along each of ``dim`` (None: every dim) by second-order central differences
    inside and first- or second-order (``edge_order``) one-sided ones at the ends. ``spacing``: one number for
    every dim, one per dim, or 1-D coordinate tensors (one per dim; uneven steps use NumPy's formula)."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [d % input.dim() if input.dim() else d for d in dims]
    spacings = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(spacings) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a list of length equal "
                           f"to 'self.dim() = {input.dim()}', since dim argument was not given, but got a list of "
                           f"length {len(spacings)}" if dim is None else
                           f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length "
                           f"{len(spacings)} and a dim argument of length {len(dims)}.")
    f = _float(input)
    out = []
    for d, h in zip(dims, spacings):
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        if isinstance(h, Tensor):
            if h.dim() != 1 or h.shape[0] != input.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and to have the "
                                   f"size of dimension {d} of the input ({input.shape[d]}), got {tuple(h.shape)}")
            h = diff(_float(h)).to(f.dtype).reshape([-1] + [1] * (input.dim() - d - 1))
        out.append(_gradient_1d(f, d, h, edge_order))
    return tuple(out)


def histogramdd(input: Tensor, bins: Any, *, range: Sequence[float] | None = None, weight: Tensor | None = None,
                density: bool = False) -> rt.histogramdd:
    """The D-dimensional histogram of the points ``input`` (..., D): ``bins`` one count for every dim, a count
    per dim, or a 1-D tensor of ascending edges per dim; ``range`` [lo_0, hi_0, lo_1, hi_1, ...] (default each
    dim's min and max). Each dim bins as ``histogram`` (the last bin holds its right edge); a point counts
    where it is inside every dim. ``density`` divides by the total and the bins' volumes."""
    if not input.is_floating_point():
        raise RuntimeError(f"\"histogramdd\" not implemented for '{torch_dtype_name(input.dtype)}'")
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    D = input.shape[-1]
    per_dim = [bins] * D if isinstance(bins, int) else list(bins)
    if len(per_dim) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if range is not None and len(range) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: expected {2 * D} values for range, got {len(range)}")
    x = input.detach().reshape(-1, D)
    if range is None and x.shape[0] == 0:  # no points: PyTorch's histogramdd bins [0, 1] (histogram [-0.5, 0.5])
        range = [0.0, 1.0] * D
    edges = tuple(histogram(x[:, d].contiguous(), per_dim[d], range=None if range is None else range[2 * d: 2 * d + 2])
                  .bin_edges for d in builtins.range(D))
    sizes = [e.numel() - 1 for e in edges]
    flat = x.new_zeros(x.shape[0], dtype=_dt.int64)
    inside = x.new_ones(x.shape[0], dtype=_dt.bool)
    for d, e in enumerate(edges):  # a few dims: one vectorised search each
        col = x[:, d]
        index = (searchsorted(e, col.contiguous(), right=True) - 1).clamp(0, max(sizes[d] - 1, 0))
        flat = flat * sizes[d] + index
        inside = inside & (col >= e[0]) & (col <= e[-1])
    w = inside.to(input.dtype) if weight is None else weight.detach().reshape(-1).to(input.dtype) * inside
    hist = x.new_zeros(math.prod(sizes)).index_add(0, flat[inside], w[inside]).reshape(sizes)
    if density:
        volume = x.new_ones(sizes)
        for d, e in enumerate(edges):
            volume = volume * (e[1:] - e[:-1]).reshape([-1 if k == d else 1 for k in builtins.range(D)])
        hist = hist / (hist.sum() * volume)
    return rt.histogramdd((hist, edges))
