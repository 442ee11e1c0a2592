"""DDP's gradient reducer: buckets of parameters, filled by post-accumulate hooks, all-reduced asynchronously.

Parameters go into buckets in reverse registration order (backward finishes the last layers first), one flat
buffer per bucket and per (device, dtype), the first bucket capped at 1 MiB and the others at
``bucket_cap_mb`` (PyTorch's ``_DEFAULT_FIRST_BUCKET_BYTES``): a small first bucket starts communication
early. A parameter's gradient is copied into its slice of the flat buffer when it is accumulated; when a
bucket's last gradient arrives its buffer is scaled by 1/world_size and ``all_reduce``-d with
``async_op=True``, buckets always launched in index order (every rank must issue its collectives in the same
order). A callback at the end of backward waits for the outstanding reductions and writes the averaged
gradients back into ``.grad`` (copies, or the slices themselves with ``gradient_as_bucket_view``).
"""
from __future__ import annotations

from typing import Any, Sequence

from ...autograd import hooks as _hooks
from ...autograd.grad_mode import no_grad
from ...creation import zeros
from ...tensor import Tensor

FIRST_BUCKET_BYTES = 1024 * 1024


def bucket_assignment(params: Sequence[Tensor], first_cap_bytes: int, cap_bytes: int) -> list[list[int]]:
    """Indices of ``params`` per bucket: reverse order, split by (device, dtype); a bucket closes when it
    reaches its cap (so it may pass it by one tensor), the first bucket of each kind at ``first_cap_bytes``."""
    open_: dict[Any, tuple[list[int], int]] = {}  # (device, dtype) -> (indices, bytes)
    closed: dict[Any, int] = {}  # how many buckets of that kind were closed
    buckets: list[list[int]] = []
    for i in reversed(range(len(params))):
        p = params[i]
        key = (p.device, p.dtype)
        indices, size = open_.get(key, ([], 0))
        indices.append(i)
        size += p.numel() * p.element_size()
        if size >= (first_cap_bytes if not closed.get(key) else cap_bytes):
            buckets.append(indices)
            closed[key] = closed.get(key, 0) + 1
            open_.pop(key, None)
        else:
            open_[key] = (indices, size)
    buckets.extend(indices for indices, _ in open_.values())
    return buckets


class Reducer:
    """The buckets of one DDP module and the state of the current backward's reductions."""

    def __init__(self, params: Sequence[Tensor], buckets: list[list[int]], dist: Any, group: Any,
                 find_unused: bool, as_view: bool) -> None:
        self.params, self.buckets, self.dist, self.group = list(params), buckets, dist, group
        self.find_unused, self.as_view = find_unused, as_view
        self.world = dist.get_world_size(group)
        self.flat: list[Tensor] = []
        self.slot: dict[int, Tensor] = {}  # param index -> its view into its bucket's flat buffer
        self.bucket_of: dict[int, int] = {}
        for b, indices in enumerate(buckets):
            p0 = params[indices[0]]
            flat = zeros(sum(params[i].numel() for i in indices), dtype=p0.dtype, device=p0.device)
            offset = 0
            for i in indices:
                n = params[i].numel()
                self.slot[i] = flat[offset:offset + n].view(params[i].shape)
                self.bucket_of[i] = b
                offset += n
            self.flat.append(flat)
        self.armed = False  # the last forward asked for a synchronised backward
        self.comm_hook: tuple[Any, Any] | None = None  # (state, hook) from register_comm_hook
        for i, p in enumerate(params):
            p.register_post_accumulate_grad_hook(self._hook(i))
        self._reset()

    def _reset(self) -> None:
        self.pending = [len(indices) for indices in self.buckets]
        self.ready: set[int] = set()
        self.next_bucket = 0  # buckets below it are launched
        self.works: list[Any] = []  # one future per launched bucket
        self.finished = 0  # works[:finished] are known to be complete
        self.queued = False

    @property
    def unfinished(self) -> bool:
        """A backward marked some parameters ready but not all (the gradients of unused parameters)."""
        return bool(self.ready) and len(self.ready) < len(self.params)

    def _hook(self, i: int) -> Any:
        def hook(p: Tensor) -> None:
            if self.armed:
                self.mark_ready(i, p.grad)
        return hook

    def mark_ready(self, i: int, grad: Tensor | None) -> None:
        """Parameter i's gradient is final for this backward: into its bucket; launch what became ready."""
        if i in self.ready:
            raise RuntimeError(f"Expected to mark a variable ready only once. Parameter at index {i} has been "
                               "marked as ready twice: it may be shared by several DDP modules or used in "
                               "several backward passes of one forward")
        if not self.queued:
            _hooks.queue_callback(self.finalize)
            self.queued = True
        self.ready.add(i)
        slot = self.slot[i]
        with no_grad():
            if grad is None:
                slot.zero_()
            elif grad is not slot:
                slot.copy_(grad)
        b = self.bucket_of[i]
        self.pending[b] -= 1
        while self.next_bucket < len(self.buckets) and not self.pending[self.next_bucket]:
            with no_grad():
                self.works.append(self._launch(self.next_bucket))
            self.next_bucket += 1
        # MPI advances a nonblocking collective only inside MPI calls: asking whether the launched reductions
        # are done at every ready gradient moves them on while backward computes (NCCL's run by themselves).
        while self.finished < len(self.works) and self.works[self.finished].done():
            self.finished += 1

    def _launch(self, b: int) -> Any:
        """Bucket b's reduction: the average by all_reduce, or the registered comm hook's future."""
        flat = self.flat[b]
        if self.comm_hook is None:
            flat.div_(self.world)
            return self.dist.all_reduce(flat, group=self.group, async_op=True).get_future()
        from ...distributed.grad_bucket import GradBucket
        indices = self.buckets[b]
        bucket = GradBucket(b, flat, [self.params[i] for i in indices], [self.slot[i] for i in indices],
                            b == len(self.buckets) - 1)
        state, hook = self.comm_hook
        return hook(state, bucket)

    def finalize(self) -> None:
        """At the end of backward: unused parameters marked ready (``find_unused_parameters``), the reductions
        waited for, the averaged gradients written back."""
        missing = [i for i in range(len(self.params)) if i not in self.ready]
        if missing and not self.find_unused:
            self.armed = False  # the next forward raises (PyTorch's "Expected to have finished reduction")
            for fut in self.works:
                fut.wait()
            return
        used = None
        if self.find_unused:
            used = zeros(len(self.params), dtype=self.flat[0].dtype, device=self.params[0].device)
            used[sorted(self.ready)] = 1
            for i in missing:  # what .grad holds already (zeros when None), as PyTorch's
                self.mark_ready(i, self.params[i].grad)
            # after every bucket: the ranks must issue their collectives in one order, and a bucket may have
            # left during backward on one rank and only now on another
            used_work = self.dist.all_reduce(used, group=self.group, async_op=True)
        for b, fut in enumerate(self.works):
            value = fut.wait()
            if self.comm_hook is not None:  # a hook's future holds the bucket's result (a tensor, or [tensor])
                value = value[0] if isinstance(value, (list, tuple)) else value
                if value is not self.flat[b]:
                    with no_grad():
                        self.flat[b].copy_(value)
        if used is not None:
            used_work.wait()
            used_anywhere = used.tolist()
        with no_grad():
            for i, p in enumerate(self.params):
                if used is not None and not used_anywhere[i]:
                    continue  # no rank used it: its .grad stays as it was, as PyTorch's
                slot = self.slot[i]
                if self.as_view:
                    p.grad = slot
                elif p.grad is None:
                    p.grad = slot.clone()
                else:
                    p.grad.copy_(slot)
        self.armed = False
        self._reset()

    def missing_message(self) -> str:
        missing = [i for i in range(len(self.params)) if i not in self.ready]
        return ("Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`minitensor.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function "
                "outputs participate in calculating loss.\nParameter indices which did not receive grad for rank "
                f"{self.dist.get_rank(self.group)}: {' '.join(map(str, missing))}")
