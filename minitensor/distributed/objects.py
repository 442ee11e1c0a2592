"""Collectives of picklable Python objects (PyTorch's ``all_gather_object``, ``broadcast_object_list``):
each object is pickled into a uint8 tensor on the group's device, sizes are exchanged first, then the padded
bytes. Like PyTorch's, they unpickle what other ranks send: use them only among trusted processes."""
from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from ..creation import tensor, zeros
from ..dtypes import int64, uint8
from ..tensor import Tensor
from .collectives import all_gather_into_tensor, broadcast, members_only
from .process_group import ProcessGroup, resolve

__all__ = ["all_gather_object", "broadcast_object_list"]


def _to_bytes(obj: Any, device: str) -> Tensor:
    return tensor(np.frombuffer(pickle.dumps(obj), dtype=np.uint8), device=device)


def _from_bytes(t: Tensor) -> Any:
    return pickle.loads(t.cpu().numpy().tobytes())


@members_only
def all_gather_object(object_list: list[Any], obj: Any, group: ProcessGroup | None = None) -> None:
    """``object_list[r]`` becomes rank r's ``obj`` (``object_list`` has one slot per rank)."""
    pg = resolve(group)
    if not isinstance(object_list, list) or len(object_list) != pg.size():
        raise ValueError(f"object_list must be a list with one slot per rank of the group ({pg.size()})")
    device = pg.engine.device
    mine = _to_bytes(obj, device)
    sizes = zeros(pg.size(), dtype=int64, device=device)
    all_gather_into_tensor(sizes, tensor([mine.numel()], dtype=int64, device=device), group=group)
    longest = int(sizes.max().item())
    padded = zeros(longest, dtype=uint8, device=device)
    padded[:mine.numel()] = mine
    everyone = zeros(pg.size(), longest, dtype=uint8, device=device)
    all_gather_into_tensor(everyone, padded, group=group)
    object_list[:] = [_from_bytes(everyone[r, :int(n)]) for r, n in enumerate(sizes.tolist())]


@members_only
def broadcast_object_list(object_list: list[Any], src: int | None = None, group: ProcessGroup | None = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """Every rank's ``object_list`` becomes rank ``src``'s (in place; the lists have the same length)."""
    pg = resolve(group)
    where = pg.engine.device if device is None else str(device)
    root = group_src if group_src is not None else pg.group_rank(0 if src is None else src, "src")
    is_src = root == pg.rank()
    payload = _to_bytes(list(object_list), where) if is_src else None
    size = tensor([payload.numel() if payload is not None else 0], dtype=int64, device=where)
    broadcast(size, group=group, group_src=root)
    if payload is None:
        payload = zeros(int(size.item()), dtype=uint8, device=where)
    broadcast(payload, group=group, group_src=root)
    if not is_src:
        object_list[:] = _from_bytes(payload)
