"""Shape ops: views where the array library gives them; each backward undoes the forward's movement."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from ..autograd.function import ArrayFunction, ViewFunction
from ..autograd.views import mark_multi_output
from ..tensor import Tensor
from ..creation import as_tensor
from .cast import contiguous
from ._util import gradient_unchanged, named, norm_dim, promote, tensor_sequence
from .along_axis import IndexSelect
from ..backends.base import Backend
from ..amp.autocast_mode import cast_early
from ..amp.policy import ReflectionPad, ReplicationPad

__all__ = ["reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "transpose", "swapaxes", "permute",
           "movedim", "expand", "broadcast_to", "repeat", "cat", "concat", "concatenate", "stack", "split",
           "chunk", "unbind", "narrow", "flip", "pad"]


class Reshape(ViewFunction):
    torch_name = "ViewBackward0"  # PyTorch's grad_fn name
    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, shape: tuple[int, ...]) -> Any:
        ctx.in_shape = x.shape
        return B.reshape(x, shape)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.reshape(gy, ctx.in_shape), None


class Permute(ViewFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axes: tuple[int, ...]) -> Any:
        ctx.inverse = tuple(np.argsort(axes))
        return B.transpose(x, axes)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.transpose(gy, ctx.inverse), None


class Expand(ViewFunction):
    """A broadcast view; the engine sums the gradient back to the input's shape."""
    backward = staticmethod(gradient_unchanged)

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, shape: tuple[int, ...]) -> Any:
        return B.broadcast_to(x, shape)


class Repeat(ArrayFunction):
    """Tile by ``reps``; the gradient sums the copies: gy viewed as (r0, s0, r1, s1, ...) summed over r."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, reps: tuple[int, ...]) -> Any:
        ctx.shape = (1,) * (len(reps) - x.ndim) + x.shape
        return B.tile(x, reps)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        split = []
        for r, s in zip(gy.shape, ctx.shape):
            split += [r // s if s else 0, s]
        g = gy.reshape(split).sum(axis=tuple(range(0, len(split), 2)))
        return g, None


class Cat(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, *arrays: Any, axis: int) -> Any:
        ctx.axis = axis
        ctx.bounds = np.cumsum([a.shape[axis] for a in arrays])[:-1]
        return B.concatenate(arrays, axis)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return tuple(B.split(gy, ctx.bounds, ctx.axis))


class Stack(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, *arrays: Any, axis: int) -> Any:
        ctx.axis = axis
        return B.stack(arrays, axis)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return tuple(B.moveaxis(gy, ctx.axis, 0))


class ConstantPad(ArrayFunction):
    torch_name = "ConstantPadNdBackward0"  # PyTorch's grad_fn name
    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, widths: tuple[tuple[int, int], ...], value: float) -> Any:
        ctx.crop = tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, x.shape))
        return B.pad(x, widths, "constant", value)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return gy[ctx.crop], None, None


def _infer_shape(shape: Sequence[int], numel: int, src: tuple[int, ...]) -> tuple[int, ...]:
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel} (shape {src})")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel} (shape {src})")
    return shape


def reshape(input: Tensor, shape: Sequence[int]) -> Tensor:
    """Same elements, new shape (one -1 inferred); a view when the layout allows, else a copy."""
    a = input.array
    shape = _infer_shape(shape, a.size, a.shape)
    return Reshape.apply(input, shape)  # a new tensor even for the same shape: a view, as PyTorch's


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if input.ndim == 0:
        return reshape(input, (1,))
    s, e = norm_dim(start_dim, input.ndim), norm_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input  # PyTorch's flatten returns self here (its other no-op views are new tensors)
    shape = input.array.shape  # the array's plain tuple: Size's slices and + cost a call each
    return Reshape.apply(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])  # (known valid)


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = norm_dim(dim, input.ndim)
    sizes = _infer_shape(sizes, input.shape[d], (input.shape[d],))
    return reshape(input, input.shape[:d] + tuple(sizes) + input.shape[d + 1:])


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Drop size-1 dims (all of them, or those in ``dim`` that have size 1, as PyTorch)."""
    if dim is None:
        dims = {i for i, s in enumerate(input.shape) if s == 1}
    else:
        dims = {norm_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)}
        dims = {d for d in dims if input.ndim and input.shape[d] == 1}
    overload = 0 if dim is None else 1 if isinstance(dim, int) else 2  # PyTorch's squeeze, .dim, .dims
    return named(reshape(input, tuple(s for i, s in enumerate(input.shape) if i not in dims)),
                 f"SqueezeBackward{overload}")


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    d = norm_dim(dim, input.ndim + 1)
    return named(reshape(input, input.shape[:d] + (1,) + input.shape[d:]), "UnsqueezeBackward0")


def permute(input: Tensor, dims: Sequence[int]) -> Tensor:
    if len(dims) != input.ndim:  # checked before the dims themselves, as PyTorch (a RuntimeError)
        raise RuntimeError(f"permute: number of dims don't match in permute: the tensor has {input.ndim} dims "
                           f"(shape {tuple(input.shape)}) but {len(dims)} were given: {tuple(dims)}")
    axes = tuple(norm_dim(d, input.ndim) for d in dims)
    if sorted(axes) != list(range(input.ndim)):
        raise RuntimeError(f"permute: dims {tuple(dims)} are not a permutation of the {input.ndim} dims of a "
                           f"tensor of shape {tuple(input.shape)}")
    return Permute.apply(input, axes)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    axes = list(range(input.ndim))
    if input.ndim < 2:
        norm_dim(dim0, input.ndim), norm_dim(dim1, input.ndim)
        return named(Permute.apply(input, tuple(axes)), "TransposeBackward0")
    a, b = norm_dim(dim0, input.ndim), norm_dim(dim1, input.ndim)
    axes[a], axes[b] = axes[b], axes[a]
    return named(permute(input, axes), "TransposeBackward0")


swapaxes = transpose


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """Dims ``source`` moved to ``destination`` (ints or sequences), the others keeping their order."""
    given = [[source] if isinstance(source, int) else list(source), [destination]
             if isinstance(destination, int) else list(destination)]
    src, dst = ([norm_dim(d, input.ndim) for d in dims] for dims in given)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({given[0]} dims) should contain "
                           f"the same number of dims as destination ({given[1]} dims)")
    for what, dims, shown in (("source", src, given[0]), ("destination", dst, given[1])):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({shown})")
    rest = iter(d for d in range(input.ndim) if d not in src)
    placed = dict(zip(dst, src))
    return permute(input, [placed[k] if k in placed else next(rest) for k in range(input.ndim)])


def expand(input: Tensor, sizes: Sequence[int]) -> Tensor:
    """A broadcast view to ``sizes`` (-1 keeps a dim; new dims go in front)."""
    sizes = tuple(int(s) for s in sizes)
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({input.ndim})")
    shape = []
    for i, s in enumerate(sizes):
        have = input.shape[i - lead] if i >= lead else None
        if s == -1:
            if have is None:
                raise RuntimeError(f"expand: -1 is not allowed in a new leading dimension ({i})")
            s = have
        elif have is not None and have != 1 and have != s:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}. Target sizes: {list(sizes)}. "
                               f"Tensor sizes: {list(input.shape)}")
        shape.append(s)
    if tuple(shape) == input.shape:  # a writable view, as PyTorch's (a broadcast one is read-only)
        return Reshape.apply(input, input.shape)
    return Expand.apply(input, tuple(shape))


def broadcast_to(input: Tensor, shape: Sequence[int]) -> Tensor:
    return expand(input, shape)


def repeat(input: Tensor, sizes: Sequence[int]) -> Tensor:
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(f"repeat: number of repeat dims ({len(sizes)}) can not be smaller than the number "
                           f"of dimensions of the tensor ({input.ndim})")
    if sizes and min(sizes) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: repeats {list(sizes)}")
    return Repeat.apply(input, sizes)


def _same_dtype(tensors: Sequence[Tensor], name: str) -> list[Tensor]:
    tensors = tensor_sequence(name, tensors)
    if not tensors:
        raise RuntimeError(f"{name}() expects a non-empty list of tensors")
    dt = tensors[0]
    for t in tensors[1:]:
        dt, _ = promote(dt, t)  # only the dtype is used: PyTorch promotes cat's inputs to one dtype
    target = dt.dtype
    return [t if t.dtype is target else t.to(target) for t in tensors]


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join along an existing dim; shapes must agree elsewhere."""
    if isinstance(tensors, (list, tuple)) and not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    tensors = _same_dtype(tensors, "cat")
    if tensors[0].ndim == 0:
        raise RuntimeError("cat: zero-dimensional tensors cannot be concatenated; use stack")
    axis = norm_dim(dim, tensors[0].ndim)
    ref = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.ndim != len(ref) or any(a != b for k, (a, b) in enumerate(zip(t.shape, ref)) if k != axis):
            raise RuntimeError(f"cat: sizes of tensors must match except in dimension {axis}; tensor 0 has "
                               f"shape {tuple(ref)} and tensor {i} has shape {tuple(t.shape)}")
    return Cat.apply(*tensors, axis=axis)


concat = concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join along a new dim; all shapes must be equal."""
    tensors = _same_dtype(tensors, "stack")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {tuple(tensors[0].shape)} "
                               f"at entry 0 and {tuple(t.shape)} at entry {i}")
    return Stack.apply(*tensors, axis=norm_dim(dim, tensors[0].ndim + 1))


def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """``input`` along ``dim`` from ``start`` (negative counts from the end) for ``length``: a view."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = norm_dim(dim, input.ndim)
    start, length, n = int(start), int(length), input.shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start > n - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return named(input[(slice(None),) * d + (slice(start, start + length),)], "SliceBackward0")


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller) or of the listed sizes."""
    d = norm_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
    else:
        sizes = [int(k) for k in split_size_or_sections]
        if sizes and min(sizes) < 0:
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={sizes}")
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                               f"size at dimension {d}), but got split_sizes={sizes}")
    starts = np.cumsum([0] + sizes[:-1])
    out = tuple(narrow(tensor, d, int(s), int(k)) for s, k in zip(starts, sizes))
    mark_multi_output(out, "Split" if isinstance(split_size_or_sections, int) else "SplitWithSizes")
    return out


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ceil(n / chunks) along ``dim`` (fewer when that covers n sooner); an empty dim gives
    ``chunks`` empty pieces, as PyTorch."""
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[norm_dim(dim, input.ndim)]
    return split(input, -(-n // chunks) if n else [0] * chunks, dim)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = norm_dim(dim, input.ndim)
    out = tuple(input[(slice(None),) * d + (i,)] for i in range(input.shape[d]))
    mark_multi_output(out, "Unbind")
    return out


def flip(input: Tensor, dims: Any) -> Tensor:
    """``input`` reversed along ``dims``: a copy, as PyTorch's (a write into it must not reach ``input``)."""
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    axes = [norm_dim(d, input.ndim) for d in dims]
    for a in axes:
        if axes.count(a) > 1:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    if input.ndim == 0:  # a 0-d tensor takes dim 0 (or -1) and flips to itself
        return input.clone()
    index = [slice(None)] * input.ndim
    for a in axes:
        index[a] = slice(None, None, -1)
    return named(contiguous(input[tuple(index)]), "FlipBackward0")


def _pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """For each output position along one dim, the input position it copies (reflect/replicate/circular);
    a negative ``lo`` or ``hi`` crops, and reflect/replicate still mirror at the uncropped input's ends."""
    pos = np.arange(-lo, n + hi)
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise RuntimeError(f"pad: reflect padding ({lo}, {hi}) must be smaller than the dim size {n}")
        period = 2 * (n - 1)
        pos = np.abs(pos) % period if period else np.zeros_like(pos)
        return np.where(pos >= n, period - pos, pos)
    if mode == "replicate":
        return np.clip(pos, 0, n - 1)
    if mode == "circular":
        if lo > n or hi > n:
            raise RuntimeError(f"pad: circular padding ({lo}, {hi}) may be at most the dim size {n}")
        return pos % n
    raise NotImplementedError(f"pad: unknown mode {mode!r}; use 'constant', 'reflect', 'replicate' or "
                              "'circular'")


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last len(pad)/2 dims: ``pad = (left_last, right_last, left_prev, right_prev, ...)`` as in
    PyTorch; negative amounts crop. Modes: constant, reflect, replicate, circular."""
    try:
        pad = [operator.index(p) for p in pad]
    except TypeError:
        raise TypeError(f"pad(): argument 'pad' must be a tuple of ints, got {pad!r}") from None
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError(f"pad: padding length must be even and at most 2 * ndim ({2 * input.ndim}), got "
                           f"{len(pad)}")
    k = len(pad) // 2
    widths = [(0, 0)] * (input.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    for d, ((lo, hi), n) in enumerate(zip(widths, input.shape)):
        if n + min(lo, 0) + min(hi, 0) < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative "
                               f"output size, which is invalid. Check dimension {d} of your input.")
    if mode in ("constant", "circular") and any(lo < 0 or hi < 0 for lo, hi in widths):
        # crop first, then pad what is positive (circular padding wraps around the cropped input, as
        # PyTorch's); reflect and replicate index the whole input instead (see _pad_index)
        crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, input.shape))
        input = input[crop]
        widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if mode == "constant":
        if not any(lo or hi for lo, hi in widths):  # a new tensor, as PyTorch's, even when nothing is padded
            return input.clone()
        return ConstantPad.apply(input, tuple(widths), 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"pad: padding mode '{mode}' doesn't take in value argument")
    if (mode, k) in (("reflect", 1), ("reflect", 2), ("replicate", 1), ("replicate", 2), ("replicate", 3)):
        input, = cast_early(ReflectionPad if mode == "reflect" else ReplicationPad, input)  # CPU autocast: fp32
    out = input
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            index = as_tensor(_pad_index(input.shape[axis], lo, hi, mode), device=input.device)
            out = IndexSelect.apply(out, index, axis)
    return out.clone() if out is input else out
