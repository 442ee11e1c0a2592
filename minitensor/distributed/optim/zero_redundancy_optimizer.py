"""``ZeroRedundancyOptimizer`` (ZeRO stage 1): each rank keeps the optimizer state of its own shard of the
parameters, steps only that shard, then every parameter is broadcast from the rank that owns it, so all ranks
end the step with the same parameters while each holds about 1 / world_size of the state.

The shards are PyTorch's: per parameter group, the parameters largest first, each to the rank with the fewest
elements so far (the lowest rank on a tie), the counts running on across groups."""
from __future__ import annotations

from typing import Any, Callable

from ...optim.optimizer import Optimizer
from ...tensor import Tensor
from .. import broadcast, get_global_rank, get_rank, get_world_size, group as _group


class ZeroRedundancyOptimizer(Optimizer):
    """``torch.distributed.optim.ZeroRedundancyOptimizer(params, optimizer_class, process_group=None,
    parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults)``: ``optimizer_class(shard, **defaults)``
    on this rank's shard (``self.optim``). ``parameters_as_bucket_view`` changes only PyTorch's memory layout
    (the values are the same); ``overlap_with_ddp`` (a DDP communication hook) is not supported."""

    def __init__(self, params: Any, optimizer_class: type[Optimizer], process_group: Any = None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False, **defaults: Any) -> None:
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) is not supported by minitensor")
        self.initialized = False  # the base class adds the groups before the shards exist
        super().__init__(params, defaults)
        self.process_group = process_group if process_group is not None else _group.WORLD
        self.world_size = get_world_size(self.process_group)  # PyTorch's error without a process group
        self.rank = get_rank(self.process_group)
        self.global_rank = self._global(self.rank)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._optim_defaults = defaults
        self._optim_constructor = optimizer_class
        self._partition_cache: list[list[dict[str, Any]]] = []
        self.optim = optimizer_class(self._partition_parameters()[self.rank], **defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self.initialized = True

    def _global(self, rank: int) -> int:
        return rank if self.process_group is None else get_global_rank(self.process_group, rank)

    # ------------------------------------------------------------------------------------ shards
    def _partition_parameters(self) -> list[list[dict[str, Any]]]:
        """For each rank, its parameter groups: copies of ``param_groups`` holding only its parameters."""
        if not self._partition_cache:
            self._partition_cache = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for param_group in self.param_groups:
                per_rank: list[list[Tensor]] = [[] for _ in range(self.world_size)]
                for param in sorted(param_group["params"], key=lambda t: t.numel(), reverse=True):
                    rank = sizes.index(min(sizes))  # the first of the smallest
                    per_rank[rank].append(param)
                    sizes[rank] += param.numel()
                for rank, params in enumerate(per_rank):
                    self._partition_cache[rank].append({**param_group, "params": params})
        return self._partition_cache

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group to every rank's view; this rank's share of it joins the local optimizer (the earlier
        groups keep their shards, as PyTorch's)."""
        super().add_param_group(param_group)
        if self.initialized:
            self._partition_cache = []
            mine = self._partition_parameters()[self.rank]
            if len(mine) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(mine[-1])

    @staticmethod
    def _sync_param_groups(src: list[dict[str, Any]], dst: list[dict[str, Any]]) -> None:
        """Copy every hyper-parameter (not "params") of each group of ``src`` onto its twin in ``dst``."""
        for src_group, dst_group in zip(src, dst):
            dst_group.update({k: v for k, v in src_group.items() if k != "params"})

    # -------------------------------------------------------------------------------------- step
    def step(self, closure: Callable[[], Any] | None = None, **kwargs: Any) -> Any:
        """Step this rank's shard (the groups' current hyper-parameters, e.g. a scheduler's lr, passed down
        first), then broadcast every parameter from its owner; returns the closure's loss, if any."""
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        loss = self.optim.step(**kwargs) if closure is None else self.optim.step(closure=closure, **kwargs)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        works = [broadcast(param, src=self._global(rank), group=self.process_group, async_op=True)
                 for rank, groups in enumerate(self._partition_parameters())
                 for g in groups for param in g["params"]]
        for work in works:
            if work is not None:
                work.wait()
        return loss

    # ----------------------------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """Not supported: PyTorch's gathers every rank's shard first (``consolidate_state_dict``)."""
        raise NotImplementedError("ZeroRedundancyOptimizer.state_dict (and consolidate_state_dict) is not "
                                  "supported by minitensor: save self.optim.state_dict() on each rank")

    def consolidate_state_dict(self, to: int = 0) -> None:
        self.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        raise NotImplementedError("ZeroRedundancyOptimizer.load_state_dict is not supported by minitensor: "
                                  "load each rank's self.optim.load_state_dict()")
