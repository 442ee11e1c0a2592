"""``DistributedDataParallel``: one model replica per process, gradients averaged across processes.

At construction the parameter shapes are checked across ranks (an error names the first parameter that
differs) and rank 0's parameters and buffers are broadcast to the others. Backward all-reduces the gradients
bucket by bucket while it runs (``_reducer.py``). A forward that follows a synchronised training forward
first broadcasts rank 0's buffers (``broadcast_buffers``), so BatchNorm's running statistics follow rank 0,
as in PyTorch; the batch statistics themselves stay per rank (``nn.SyncBatchNorm`` shares them).
``static_graph`` is accepted and ignored: the reducer needs no graph analysis to be correct.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...creation import tensor
from ...dtypes import int64
from ..modules.module import Module
from ._reducer import FIRST_BUCKET_BYTES, Reducer, bucket_assignment


def _dist() -> Any:
    import minitensor.distributed as dist  # imported on use: DDP is importable without an MPI or NCCL engine
    if not dist.is_initialized():
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")
    return dist


def verify_shapes(named: Sequence[tuple[str, Any]], dist: Any, group: Any) -> None:
    """Raise on every rank when the ranks' parameters differ in number or shape (all_gather of a table of
    (ndim, sizes...) per parameter), naming the first parameter that differs."""
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    device = named[0][1].device if named else None
    header = tensor([len(named), max((p.ndim for _, p in named), default=0)], dtype=int64, device=device)
    headers = [header.clone() for _ in range(world)]
    dist.all_gather(headers, header, group=group)
    counts = [int(h[0]) for h in headers]
    if len(set(counts)) > 1:
        raise RuntimeError(f"DDP expects the same model on every rank, but rank {rank} has {counts[rank]} "
                           f"parameters while the ranks have {counts} (rank 0 first)")
    width = 1 + max(int(h[1]) for h in headers)
    rows = [[p.ndim, *p.shape] + [0] * (width - 1 - p.ndim) for _, p in named]
    table = tensor(rows or [[0] * width], dtype=int64, device=device)
    tables = [table.clone() for _ in range(world)]
    dist.all_gather(tables, table, group=group)
    rows_of = [t.tolist() for t in tables]
    for i, (name, p) in enumerate(named):
        for r in range(world):
            if rows_of[r][i] != rows_of[0][i]:
                other = tuple(rows_of[r][i][1:1 + rows_of[r][i][0]])
                first = tuple(rows_of[0][i][1:1 + rows_of[0][i][0]])
                raise RuntimeError(f"DDP expects the same model on every rank: parameter '{name}' (params[{i}]) "
                                   f"has shape {other} on rank {r} but {first} on rank 0")


class DistributedDataParallel(Module):
    """Wraps ``module`` (kept as ``.module``: ``state_dict`` keys read "module.<name>"); arguments as PyTorch's.
    Call it like the module; ``backward`` then leaves every rank with the average of the ranks' gradients."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps a Module, got {type(module).__name__}")
        dist = _dist()
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else None
        self.output_device = output_device
        self.dim, self.broadcast_buffers, self.process_group = dim, broadcast_buffers, process_group
        self.find_unused_parameters, self.static_graph = find_unused_parameters, static_graph
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.require_backward_grad_sync = self.require_forward_param_sync = True
        verify_shapes(named, dist, process_group)
        with no_grad():  # rank 0's initial state everywhere
            for t in [p for _, p in named] + list(module.buffers()):
                dist.broadcast(t, src=0, group=process_group)
        params = [p for _, p in named]
        first = min(FIRST_BUCKET_BYTES, self.bucket_bytes_cap)
        self._reducer = Reducer(params, bucket_assignment(params, first, self.bucket_bytes_cap), dist,
                                process_group, find_unused_parameters, gradient_as_bucket_view)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        reducer = self._reducer
        if reducer.unfinished:
            raise RuntimeError(reducer.missing_message())
        if self.broadcast_buffers and self.require_forward_param_sync and reducer.world > 1:
            with no_grad():
                for b in self.module.buffers():
                    reducer.dist.broadcast(b, src=0, group=self.process_group)
        # PyTorch's rule: a forward that will synchronise its backward arms the reducer, and the next
        # forward broadcasts the buffers only after such a forward (not after no_sync or no_grad ones).
        reducer.armed = self.require_forward_param_sync = is_grad_enabled() and self.require_backward_grad_sync
        return self.module(*inputs, **kwargs)

    def register_comm_hook(self, state: Any, hook: Callable[[Any, Any], Any]) -> None:
        """``hook(state, bucket)`` reduces each bucket instead of the built-in average: it gets a
        ``distributed.GradBucket`` and returns a future of the bucket's reduced tensor (PyTorch's hooks, e.g.
        ``distributed.algorithms.ddp_comm_hooks.default_hooks``). Once, before the first backward."""
        if self._reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if not callable(hook):
            raise TypeError(f"a communication hook must be callable, got {type(hook).__name__}")
        self._reducer.comm_hook = (state, hook)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes of forwards run inside accumulate into ``.grad`` locally, without communication;
        the first synchronised backward after it averages the accumulated gradients."""
        previous, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
