"""Views in the graph: in-place writes through a view rewrite the base's history (PyTorch's CopySlices).

A view (a ``ViewFunction`` output that shares its input's memory) records a ``ViewInfo``: its base (the
first tensor of the chain, never itself a view) and the base's node when the view's own node was made. An
in-place op on a view that the graph tracks (``set_history``):

    base.grad_fn = CopySlices(base's old node, the op's node)   # the base now holds the op's result there
    view.grad_fn = AsStrided(base)                              # the view is read back out of the new base

CopySlices' backward sends g (base-shaped) with the view's elements zeroed to the base's old node and g's
view elements to the op's node, which sends them on through the view's old node: so untouched elements
see the old history and the view's elements see the op, as PyTorch. Another view of the same memory made
before the write still reads the base's old history; the shared history counter (``Tensor._hv``) shows it
and ``refresh`` remakes its node as AsStrided of the base when an op next uses it (PyTorch regenerates a
view's grad_fn the same way). Places are storage geometry, (sizes, strides, offset) in elements of the
memory the tensors share (as ``as_strided`` takes them), so one rule covers every view op and chain; the
backwards map them to flat element indices (``index_within``), constants, so create_graph records them.
"""
from __future__ import annotations

from typing import Any, Sequence

from .function import ArrayFunction, ViewFunction
from .grad_mode import enable_grad, state
from ..backends.base import Backend

Geometry = tuple[tuple[int, ...], tuple[int, ...], int]

_MULTI = (" This view is the output of a function that returns multiple views. Such functions do not allow the "
          "output views to be modified inplace. You should replace the inplace operation by an out-of-place "
          "one.")
_NO_GRAD = ("A view was created in no_grad mode and is being modified inplace with grad mode enabled.")
_CUSTOM = (" This view was created inside a custom Function (or because an input was returned as-is) and the autograd "
           "logic to handle view+inplace would override the custom backward associated with the custom Function, "
           "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the "
           "custom Function.")
_NO_GRAD_HINT = (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
                 "code by moving both the view and the inplace either both inside the no_grad block (if you don't "
                 "want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


class ViewInfo:
    """What a view knows of its base: the base, the base's node its own node reads, and how it was made
    (None, or ``creation_meta``'s (kind, op, output index) for a view tracked in-place ops may not write)."""

    __slots__ = ("base", "node", "meta")

    def __init__(self, base: Any, node: Any, meta: Any) -> None:
        self.base, self.node, self.meta = base, node, meta

    def __reduce__(self) -> tuple[Any, tuple]:
        return type(None), ()  # a copy or an unpickled tensor owns its memory: it is no view (None)


# ------------------------------------------------------------------------------------------ geometry
def storage_root(a: Any) -> Any:
    """The outermost array a views (its storage: offsets count from its first element)."""
    root = a
    while isinstance(root.base, type(a)):
        root = root.base
    return root


def geometry(B: Backend, a: Any) -> Geometry:
    """a's sizes, strides and storage offset, in elements."""
    item = a.itemsize
    return tuple(a.shape), tuple(s // item for s in a.strides), B.storage_offset(a) // item


def _extent(g: Geometry) -> tuple[int, int]:
    """The first and one past the last storage element g reaches (strides may be negative: flip's views)."""
    sizes, strides, off = g
    if 0 in sizes:
        return off, off
    return (off + sum(min(0, (n - 1) * s) for n, s in zip(sizes, strides)),
            off + sum(max(0, (n - 1) * s) for n, s in zip(sizes, strides)) + 1)


def may_overlap(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """False when no two elements can share memory (each stride, in increasing order, steps past all the
    smaller dims reach); True may be a false alarm."""
    reach = 0
    for s, n in sorted((abs(s), n) for n, s in zip(sizes, strides) if n > 1):
        if s <= reach:
            return True
        reach += (n - 1) * s
    return False


def overlaps(a: Any) -> bool:
    """True when two elements of the array a share memory (expand's, unfold's overlapping windows)."""
    item = a.itemsize
    sizes, strides = a.shape, tuple(s // item for s in a.strides)
    if not may_overlap(sizes, strides):
        return False
    import numpy as np  # the exact check, on the host: only for arrays the cheap test cannot clear
    places = sum(np.arange(n).reshape((-1,) + (1,) * (len(sizes) - 1 - k)) * s
                 for k, (n, s) in enumerate(zip(sizes, strides)))
    return bool(np.unique(np.asarray(places).reshape(-1)).size < a.size)


def _places(xp: Any, g: Geometry, lo: int) -> Any:
    """The storage place (counted from ``lo``) of each element of g, in g's shape."""
    sizes, strides, off = g
    grid = sum((xp.arange(n).reshape((-1,) + (1,) * (len(sizes) - 1 - k)) * s
                for k, (n, s) in enumerate(zip(sizes, strides))), xp.zeros((), dtype=xp.int64))
    return xp.broadcast_to(grid + (off - lo), sizes)


def index_within(R: Backend, outer: Geometry, inner: Geometry) -> Any:
    """For each element of ``inner`` (in its shape), the flat index of the element of ``outer`` at the same
    storage place, -1 where outer has none. Made with the real backend R: a constant of the backward, so
    the body records under create_graph=True (autograd/higher_order.py)."""
    xp = R.xp
    spans = (_extent(outer), _extent(inner))
    lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
    owner = xp.full((max(hi - lo, 1),), -1, dtype=xp.int64)
    owner[_places(xp, outer, lo).reshape(-1)] = xp.arange(_numel(outer[0]))
    return owner[_places(xp, inner, lo)]


def _numel(sizes: Sequence[int]) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


# ------------------------------------------------------------------------------------------ the nodes
class CopySlices(ArrayFunction):
    """The base after an in-place op wrote ``src`` (the op's result) into its view ``view``: forward returns
    the base's array (the write is done). d base_old = g with the view's elements zeroed; d src = g[view]."""

    @staticmethod
    def forward(ctx: Any, B: Backend, base: Any, src: Any, view: Any) -> Any:
        ctx.geoms = geometry(B, base), geometry(B, view)
        return base

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        R = ctx._device.backend
        where = index_within(R, *ctx.geoms)  # the view's elements as flat indices of the base
        flat = g.reshape(-1)
        keep = R.xp.ones(flat.shape, dtype=bool)
        keep[where.reshape(-1)] = False
        gsrc = flat[where] if ctx.needs_input_grad[1] else None
        return B.where(keep, flat, 0).reshape(g.shape), gsrc, None

    def name(self) -> str:
        return "CopySlices"


class AsStrided(ViewFunction):
    """y = x's storage read at (sizes, strides, offset) (PyTorch's as_strided; given ``out``, that array:
    a view remade over its base). gx: g added up at the storage places y read, taken at x's places
    (AsStridedBackward: a place y reads twice gets both; one outside x gives x nothing)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, sizes: tuple[int, ...], strides: tuple[int, ...], offset: int,
                out: Any = None) -> Any:
        if out is None:
            out = _storage_view(B, x, sizes, strides, offset)
        ctx.geoms = geometry(B, x), (tuple(sizes), tuple(strides), offset)
        return out

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        R = ctx._device.backend
        gx, gy = ctx.geoms
        where = index_within(R, gx, gy).reshape(-1)
        flat = g.reshape(-1)
        inside = where >= 0
        if not bool(inside.all()):
            where, flat = where[inside], flat[inside]
        out = B.zeros((_numel(gx[0]),), g.dtype)
        B.index_add(out, where, flat)
        return out.reshape(gx[0]), None, None, None, None


def _storage_view(B: Backend, x: Any, sizes: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Any:
    """The array over x's storage at (sizes, strides, offset), as a view whose ``base`` is the storage (so
    it shares x's version counter and reports its storage offset)."""
    root, item = storage_root(x), x.itemsize
    if root.dtype != x.dtype:
        raise RuntimeError("as_strided: the tensor views its memory as another dtype; clone() it first")
    need = _extent((sizes, strides, offset))[1] if all(sizes) else 0
    if need > root.size:
        raise RuntimeError(f"setStorage: sizes {list(sizes)}, strides {list(strides)}, storage offset {offset}, "
                           f"and itemsize {item} requiring a storage size of {need * item} are out of bounds for "
                           f"storage of size {root.size * item}")
    byte_strides = tuple(s * item for s in strides)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        raise RuntimeError("as_strided: the tensor's storage is not one block of memory; clone() it first")
    if B.xp.__name__ == "numpy":
        out = B.xp.ndarray(sizes, x.dtype, buffer=root.reshape(-1, order="A"), offset=offset * item,
                           strides=byte_strides)
        if overlaps(out):  # read-only, as expand's: writes raise PyTorch's "more than one element" error
            out.flags.writeable = False
        return out
    flat = root.reshape(-1, order="A")  # CuPy: a view of the same memory (its base does not chain to root)
    return B.xp.lib.stride_tricks.as_strided(flat[offset:], sizes, byte_strides)


# ---------------------------------------------------------------------------------- the history rules
def refresh(t: Any) -> None:
    """Bring t's node up to date after its memory was written through another tensor (grad mode on): a
    view whose base's history changed since its node was made reads the base anew (AsStrided)."""
    t._gv = t._hv[0]
    info = t._view
    if info is None or info.base.grad_fn is info.node:
        return
    if info.meta is not None and info.meta[0] == "custom":  # remaking its node would bypass the Function's
        raise RuntimeError(f"Output {info.meta[2]} of {info.meta[1]} is a view and its base or another view of its "
                           "base has been modified inplace." + _CUSTOM)
    base = info.base
    info.node = base.grad_fn
    if base._requires_grad:
        sizes, strides, offset = geometry(base._device.backend, t.array)
        t.grad_fn, t._requires_grad = AsStrided.apply(base, sizes, strides, offset, t.array).grad_fn, True
    else:
        t.grad_fn, t._requires_grad = None, False


def refresh_outputs(tensors: Sequence[Any]) -> None:
    """``refresh`` the tensors a backward starts from (``v.backward()`` on a view whose base was written)."""
    for t in tensors:
        if getattr(t, "_hv", None) is not None and t._hv[0] != t._gv:
            with enable_grad():
                refresh(t)


def creation_meta(op: str, parent: ViewInfo | None) -> tuple[str, str, int]:
    """How a view made by ``op`` in no_grad mode, or of a view so marked, is refused a tracked in-place op
    (PyTorch's CreationMeta): (kind, the op's name, the output's index)."""
    if not state.grad_enabled:
        return "no_grad", op, 0
    kind = parent.meta[0] if parent is not None and parent.meta is not None else "no_grad"
    return (kind if kind in ("multi", "custom") else "no_grad_of_view"), op, 0


def mark_custom(alias: Any, t: Any, name: str, index: int) -> None:
    """``alias``, output ``index`` of the custom Function ``name`` that returned its input ``t`` as it is,
    becomes a view of t refusing tracked in-place ops (PyTorch's CreationMeta IN_CUSTOM_FUNCTION): such a
    write would make the view's node bypass the Function's backward."""
    hv = t._hv
    if hv is None:  # t becomes a base, as at its first view (function.py's ViewFunction)
        hv = t._hv = [0]
        t._gv = 0
        t._view = None
    alias._hv, alias._gv = hv, hv[0]
    base = t if t._view is None else t._view.base
    alias._view = ViewInfo(base, base.grad_fn, ("custom", name, index))


def check_rebase(t: Any, tracked: bool) -> None:
    """PyTorch's refusals of a tracked in-place op on a view made by a multi-output op (unbind, split,
    chunk), in no_grad mode, or of such a view. A write into a view of a base that requires grad counts as
    tracked in grad mode even when the view itself does not (made in no_grad mode), as PyTorch's."""
    info = t._view if t._hv is not None else None
    if info is None or info.meta is None or not (tracked or state.grad_enabled and info.base._requires_grad):
        return
    kind, name, index = info.meta
    if kind == "no_grad":
        raise RuntimeError(_NO_GRAD + _NO_GRAD_HINT)
    if kind == "custom":
        raise RuntimeError(f"Output {index} of {name} is a view and is being modified inplace." + _CUSTOM)
    if kind == "no_grad_of_view":
        raise RuntimeError(f"Output {index} of {name} is a view of a view which was created in no_grad mode and "
                           "is being modified inplace with grad mode enabled." + _NO_GRAD_HINT)
    head = f"Output {index} of {name} is a view and is being modified inplace." if t._requires_grad else _NO_GRAD
    raise RuntimeError(head + _MULTI)


def set_history(t: Any, out: Any) -> None:
    """t's memory now holds ``out`` (the result of a tracked in-place op on t): t takes out's node, or, for
    a view, its base takes CopySlices(base, out) and t reads the new base."""
    info = t._view if t._hv is not None else None
    if info is None:
        t.grad_fn, t._requires_grad = out.grad_fn, True
        return
    base = info.base
    base.grad_fn, base._requires_grad = CopySlices.apply(base, out, t.array).grad_fn, True
    info.node = base.grad_fn
    base._gv = t._gv = t._hv[0]  # the write bumped the shared counter: both histories are current
    sizes, strides, offset = geometry(t._device.backend, t.array)
    t.grad_fn, t._requires_grad = AsStrided.apply(base, sizes, strides, offset, t.array).grad_fn, True


def mark_multi_output(views: Sequence[Any], name: str) -> None:
    """unbind/split/chunk: their outputs refuse tracked in-place ops (PyTorch's MULTI_OUTPUT_NODE)."""
    if not state.grad_enabled:
        return  # made in no_grad mode: ViewFunction marked them so
    for i, v in enumerate(views):
        if v.grad_fn is not None:
            v.grad_fn.torch_name = name + "Backward0"  # PyTorch's node: UnbindBackward0, SplitBackward0...
        if v._hv is not None and v._view is not None:
            v._view.meta = ("multi", name, i)
