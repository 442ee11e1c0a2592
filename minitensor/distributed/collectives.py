"""The collectives and point-to-point operations on tensors, with PyTorch's signatures.

Each checks its arguments (PyTorch's errors), hands the tensors' own arrays to the group's engine where the
engine can take them (contiguous, one buffer) and otherwise one staging tensor (``all_gather``'s and
``gather``'s lists, ``reduce_scatter``'s and ``scatter``'s inputs), and returns a ``Work`` with
``async_op=True`` or waits for it (None). Ranks (``src``, ``dst``) are global ranks, ``group_src`` /
``group_dst`` ranks in ``group``. AVG on an engine without it is a SUM divided by the group's size when the
operation finishes (integers: truncated, as NCCL's average). Every collective's data move waits for the
check that all ranks run the same one (``pg.gate``, checks.py).
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, Sequence, TypeVar

from ..autograd import no_grad
from ..creation import empty
from ..functional import stack
from ..tensor import Tensor, _bump_version
from .engine import Array
from .checks import signature
from .process_group import GroupMember, ProcessGroup, resolve
from .reduce_op import ReduceOp, RedOpType, effective_op
from .work import Pending, Work

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
           "reduce_scatter_tensor", "gather", "scatter", "all_to_all_single", "all_to_all", "send", "recv",
           "isend", "irecv", "barrier"]


F = TypeVar("F", bound=Callable[..., Any])


def members_only(fn: F) -> F:
    """On a rank outside ``group`` (``new_group`` gave it ``GroupMember.NON_GROUP_MEMBER``), the operation warns
    and does nothing, as PyTorch's (``recv`` returns -1)."""
    signature = inspect.signature(fn)
    skipped = -1 if fn.__name__ == "recv" else None

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        group = signature.bind_partial(*args, **kwargs).arguments.get("group")
        if isinstance(group, int) and group == GroupMember.NON_GROUP_MEMBER:
            warnings.warn(f"Running {fn.__name__} on global rank {resolve(None).global_rank} which does not "
                          "belong to the given group.", stacklevel=2)
            return skipped
        return fn(*args, **kwargs)
    return run  # type: ignore[return-value]


def _check_tensor(t: object, param: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")
    return t


def _check_list(ts: object, param: str, size: int | None = None) -> list[Tensor]:
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type List[torch.Tensor]\n"
                        f"             but got {type(ts)} instead.")
    if size is not None and len(ts) != size:
        raise ValueError(f"{param} must hold one tensor per rank of the group ({size}), got {len(ts)}")
    return list(ts)


def _array(pg: ProcessGroup, t: Tensor, param: str) -> Array:
    pg.engine.check_tensor(t.array, t.device.type, param)
    return t.array


def _same(ts: Sequence[Tensor], like: Tensor, param: str) -> None:
    """Every tensor of ``ts`` has ``like``'s dtype and element count (the blocks of one buffer)."""
    for t in ts:
        if t.dtype != like.dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypes Found {like.dtype} and  {t.dtype}")
        if t.numel() != like.numel():
            raise ValueError(f"every tensor of {param} must have {like.numel()} elements (as `tensor`), got "
                             f"{list(t.shape)}")


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, param: str) -> int:
    """The group rank named by a global ``rank`` or a ``group_rank`` (exactly one of the two)."""
    if (rank is None) == (group_rank is None):
        raise ValueError(f"Can only specify one of {param} or group_{param}, and one is required")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return group_rank
    return pg.group_rank(rank, param)  # type: ignore[arg-type]


def _blocks(pg: ProcessGroup, whole: Tensor, block: Tensor, type_error: str, size_error: str) -> None:
    """``whole`` must hold one ``block``-sized block per rank, of ``block``'s dtype (PyTorch's errors)."""
    if whole.dtype != block.dtype:
        raise TypeError(type_error)
    if whole.numel() != block.numel() * pg.size():
        raise ValueError(size_error)


def _reduction(pg: ProcessGroup, op: object, array: Array) -> tuple[RedOpType, bool]:
    """The op the engine runs, and whether the result must still be divided by the group's size (AVG)."""
    red = effective_op(op, array.dtype, pg.backend_name)
    if red is RedOpType.AVG and not pg.engine.native_avg:
        return RedOpType.SUM, True
    return red, False


def _averaged(t: Tensor, pg: ProcessGroup, divide: bool) -> Callable[[], None] | None:
    """The finisher that turns ``t``'s SUM into AVG (None when nothing is to divide)."""
    def average() -> None:
        with no_grad():
            if t.is_floating_point():
                t.div_(pg.size())
            else:
                t.copy_(t.div(pg.size(), rounding_mode="trunc"))
    return average if divide else None


def _start(pg: ProcessGroup, op: str, pending: Pending, outputs: Sequence[Tensor],
           finish: Callable[[], None] | None = None) -> Work:
    for t in outputs:
        _bump_version(t)  # the engine writes into them: graphs that saved them must not use the old values
    return Work(pg, op, pending, outputs, finish)


def _launch(pg: ProcessGroup, op: str, pending: Pending, outputs: Sequence[Tensor], async_op: bool,
            finish: Callable[[], None] | None = None) -> Work | None:
    work = _start(pg, op, pending, outputs, finish)
    if async_op:
        return work
    work.wait()
    return None


def _copy_out(src: Tensor, outs: Sequence[Tensor]) -> Callable[[], None]:
    """Copy block i of the staging tensor ``src`` into ``outs[i]``."""
    def copy() -> None:
        with no_grad():
            for i, t in enumerate(outs):
                t.copy_(src[i].reshape(t.shape))
    return copy


def _staging(like: Tensor, blocks: int) -> Tensor:
    return empty((blocks, *like.shape), dtype=like.dtype, device=like.device)


def _stacked(ts: Sequence[Tensor], like: Tensor) -> Tensor:
    with no_grad():
        return stack([t.reshape(like.shape) for t in ts])


@members_only
def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Every rank's ``tensor`` becomes the reduction (``op``) of all ranks' tensors, in place."""
    pg, t = resolve(group), _check_tensor(tensor, "tensor")
    a = _array(pg, t, "tensor")
    red, divide = _reduction(pg, op, a)
    pending = pg.gate.submit(signature("ALLREDUCE", [t.shape], t.dtype, op), lambda: pg.engine.all_reduce(a, red))
    return _launch(pg, "all_reduce", pending, [t], async_op, _averaged(t, pg, divide))


@members_only
def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:
    """Every rank's ``tensor`` becomes rank ``src``'s, in place."""
    pg, t = resolve(group), _check_tensor(tensor, "tensor")
    root = _root(pg, src, group_src, "src")
    a = _array(pg, t, "tensor")
    sig = signature("BROADCAST", [t.shape], t.dtype, root=root)
    pending = pg.gate.submit(sig, lambda: pg.engine.broadcast(a, root))
    return _launch(pg, "broadcast", pending, [t], async_op)


@members_only
def reduce(tensor: Tensor, dst: int | None = None, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Rank ``dst``'s ``tensor`` becomes the reduction of all ranks' tensors; the others' stay as they are."""
    pg, t = resolve(group), _check_tensor(tensor, "tensor")
    root = _root(pg, dst, group_dst, "dst")
    a = _array(pg, t, "tensor")
    red, divide = _reduction(pg, op, a)
    at_root = pg.rank() == root
    finish = _averaged(t, pg, divide and at_root)
    pending = pg.gate.submit(signature("REDUCE", [t.shape], t.dtype, op, root), lambda: pg.engine.reduce(a, red, root))
    return _launch(pg, "reduce", pending, [t] if at_root else [], async_op, finish)


@members_only
def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """``tensor_list[r]`` gets rank r's ``tensor`` (through one staging buffer)."""
    pg, t = resolve(group), _check_tensor(tensor, "tensor")
    outs = _check_list(tensor_list, "tensor_list", pg.size())
    _same(outs, t, "tensor_list")
    staged, a = _staging(t, pg.size()), _array(pg, t, "tensor")
    pending = pg.gate.submit(signature("ALLGATHER", [t.shape], t.dtype), lambda: pg.engine.all_gather(a, staged.array))
    return _launch(pg, "all_gather", pending, outs, async_op, _copy_out(staged, outs))


@members_only
def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """``output_tensor`` (size x input's elements: stacked or concatenated on dim 0) gets every rank's
    ``input_tensor`` in rank order, written directly."""
    pg = resolve(group)
    out, inp = _check_tensor(output_tensor, "output_tensor"), _check_tensor(input_tensor, "input_tensor")
    _blocks(pg, out, inp, "output tensor must have the same type as input tensor",
            "output tensor size must be equal to world_size times input tensor size")
    send, recv = _array(pg, inp, "input_tensor"), _array(pg, out, "output_tensor")
    pending = pg.gate.submit(signature("_ALLGATHER_BASE", [inp.shape], inp.dtype),
                       lambda: pg.engine.all_gather(send, recv))
    return _launch(pg, "all_gather_into_tensor", pending, [out], async_op)


@members_only
def reduce_scatter(output: Tensor, input_list: list[Tensor], op: Any = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Rank r's ``output`` becomes the reduction of every rank's ``input_list[r]``."""
    pg, out = resolve(group), _check_tensor(output, "output")
    ins = _check_list(input_list, "input_list", pg.size())
    _same(ins, out, "input_list")
    a = _array(pg, out, "output")
    red, divide = _reduction(pg, op, a)
    send = _stacked(ins, out).array
    pending = pg.gate.submit(signature("REDUCE_SCATTER", [out.shape], out.dtype, op),
                       lambda: pg.engine.reduce_scatter(send, a, red))
    return _launch(pg, "reduce_scatter", pending, [out], async_op, _averaged(out, pg, divide))


@members_only
def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """``reduce_scatter`` with the blocks as one ``input`` tensor (size x output's elements)."""
    pg = resolve(group)
    out, inp = _check_tensor(output, "output"), _check_tensor(input, "input")
    _blocks(pg, inp, out, "input tensor must be the same type as the output tensor.",
            "input tensor must be the same size as output size times world size")
    a = _array(pg, out, "output")
    red, divide = _reduction(pg, op, a)
    send = _array(pg, inp, "input")
    pending = pg.gate.submit(signature("_REDUCE_SCATTER_BASE", [out.shape], out.dtype, op),
                       lambda: pg.engine.reduce_scatter(send, a, red))
    return _launch(pg, "reduce_scatter_tensor", pending, [out], async_op, _averaged(out, pg, divide))


@members_only
def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Rank ``dst``'s ``gather_list[r]`` gets rank r's ``tensor`` (``gather_list`` only on ``dst``)."""
    pg, t = resolve(group), _check_tensor(tensor, "tensor")
    root = _root(pg, 0 if dst is None and group_dst is None else dst, group_dst, "dst")
    a, sig = _array(pg, t, "tensor"), signature("GATHER", [t.shape], t.dtype, root=root)
    if pg.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        outs = _check_list(gather_list, "gather_list", pg.size())
        _same(outs, t, "gather_list")
        staged = _staging(t, pg.size())
        pending = pg.gate.submit(sig, lambda: pg.engine.gather(a, staged.array, root))
        return _launch(pg, "gather", pending, outs, async_op, _copy_out(staged, outs))
    if gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    return _launch(pg, "gather", pg.gate.submit(sig, lambda: pg.engine.gather(a, None, root)), [], async_op)


@members_only
def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Rank r's ``tensor`` gets rank ``src``'s ``scatter_list[r]`` (``scatter_list`` only on ``src``)."""
    pg, t = resolve(group), _check_tensor(tensor, "tensor")
    root = _root(pg, 0 if src is None and group_src is None else src, group_src, "src")
    a, sig = _array(pg, t, "tensor"), signature("SCATTER", [t.shape], t.dtype, root=root)
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        ins = _check_list(scatter_list, "scatter_list", pg.size())
        _same(ins, t, "scatter_list")
        send = _stacked(ins, t).array
        return _launch(pg, "scatter", pg.gate.submit(sig, lambda: pg.engine.scatter(send, a, root)), [t], async_op)
    if scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    return _launch(pg, "scatter", pg.gate.submit(sig, lambda: pg.engine.scatter(None, a, root)), [t], async_op)


def _splits(t: Tensor, sizes: list[int] | None, n: int, param: str) -> list[int]:
    """Element counts of the dim-0 blocks of ``t`` going to (or coming from) each rank."""
    rows = t.shape[0] if t.dim() else 1
    per_row = t.numel() // rows if rows else 0
    if not sizes:
        if rows % n:
            raise ValueError(f"Tensor's dim 0 ({rows}) does not divide equally across group size {n} ({param})")
        return [rows // n * per_row] * n
    if len(sizes) != n or sum(sizes) != rows:
        raise ValueError(f"{param} must give {n} sizes that add up to dim 0 of the tensor ({rows}), got {sizes}")
    return [s * per_row for s in sizes]


@members_only
def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: list[int] | None = None,
                      input_split_sizes: list[int] | None = None, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:
    """Block j of ``input`` (dim 0, ``input_split_sizes[j]`` rows; equal blocks by default) goes to rank j;
    ``output``'s block j comes from rank j."""
    pg = resolve(group)
    out, inp = _check_tensor(output, "output"), _check_tensor(input, "input")
    if out.dtype != inp.dtype:
        raise ValueError(f"Invalid usage of tensors with different dtypes Found {inp.dtype} and  {out.dtype}")
    send = _splits(inp, input_split_sizes, pg.size(), "input_split_sizes")
    recv = _splits(out, output_split_sizes, pg.size(), "output_split_sizes")
    a, b = _array(pg, inp, "input"), _array(pg, out, "output")
    # the shapes may differ across ranks (uneven splits): only the dtype must agree
    pending = pg.gate.submit(signature("ALLTOALL_BASE", dtype=inp.dtype),
                             lambda: pg.engine.all_to_all(a, b, send, recv))
    return _launch(pg, "all_to_all_single", pending, [out], async_op)


@members_only
def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor], group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Rank r's ``output_tensor_list[j]`` gets rank j's ``input_tensor_list[r]`` (any sizes, one dtype)."""
    pg = resolve(group)
    outs = _check_list(output_tensor_list, "output_tensor_list", pg.size())
    ins = _check_list(input_tensor_list, "input_tensor_list", pg.size())
    for t in outs + ins:
        if t.dtype != ins[0].dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypes Found {ins[0].dtype} and  {t.dtype}")
    with no_grad():
        send = _flat(ins)
        recv = empty((sum(t.numel() for t in outs),), dtype=ins[0].dtype, device=ins[0].device)
    counts = [t.numel() for t in ins], [t.numel() for t in outs]
    pending = pg.gate.submit(signature("ALLTOALL", dtype=ins[0].dtype),
                       lambda: pg.engine.all_to_all(send.array, recv.array, *counts))
    return _launch(pg, "all_to_all", pending, outs, async_op, _copy_split(recv, outs))


def _flat(ts: Sequence[Tensor]) -> Tensor:
    from ..functional import cat
    return cat([t.reshape(-1) for t in ts])


def _copy_split(src: Tensor, outs: Sequence[Tensor]) -> Callable[[], None]:
    def copy() -> None:
        with no_grad():
            start = 0
            for t in outs:
                t.copy_(src[start:start + t.numel()].reshape(t.shape))
                start += t.numel()
    return copy


def _peer(pg: ProcessGroup, rank: int | None, group_rank: int | None, param: str) -> int:
    peer = _root(pg, rank, group_rank, param)
    if peer == pg.rank():
        raise ValueError(f"Invalid {param} rank: {param} rank should not be the same as the rank of the current "
                         "process.")
    return peer


@members_only
def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_dst: int | None = None) -> Work:
    """Send ``tensor`` to rank ``dst`` without waiting; the Work's ``wait`` returns once it may be reused."""
    pg, t = resolve(group), _check_tensor(tensor, "tensor")
    peer = _peer(pg, dst, group_dst, "destination")
    return _start(pg, "send", pg.engine.send(_array(pg, t, "tensor"), peer, tag), [])


@members_only
def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_src: int | None = None) -> Work:
    """Receive into ``tensor`` from rank ``src`` (None: any rank) without waiting."""
    pg, t = resolve(group), _check_tensor(tensor, "tensor")
    peer = None if src is None and group_src is None else _peer(pg, src, group_src, "source")
    return _start(pg, "recv", pg.engine.recv(_array(pg, t, "tensor"), peer, tag), [t])


@members_only
def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    isend(tensor, dst, group, tag, group_dst).wait()


@members_only
def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor``; returns the sender's global rank."""
    return irecv(tensor, src, group, tag, group_src)._source_rank()


@members_only
def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Return once every rank of the group has called ``barrier``."""
    pg = resolve(group)
    return _launch(pg, "barrier", pg.gate.submit(signature("BARRIER"), pg.engine.barrier), [], async_op)
