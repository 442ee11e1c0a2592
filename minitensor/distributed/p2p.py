"""Batched point-to-point: PyTorch's ``P2POp`` and ``batch_isend_irecv`` (pipeline stages exchange
activations and gradients with them). On NCCL the whole batch is one NCCL group, which is what keeps two
ranks that both send first from waiting on each other; MPI's sends and receives never block, so there they are
simply launched in order."""
from __future__ import annotations

from typing import Any, Callable

from ..tensor import Tensor
from .collectives import _array, _check_tensor, _peer, _start, irecv, isend
from .process_group import ProcessGroup, resolve
from .work import Work

__all__ = ["P2POp", "batch_isend_irecv"]


class P2POp:
    """One send or receive of a batch: ``op`` is ``isend`` or ``irecv``; ``peer`` a global rank (``group_peer``:
    a rank in ``group``)."""

    def __init__(self, op: Callable[..., Any], tensor: Tensor, peer: int | None = None,
                 group: ProcessGroup | None = None, tag: int = 0, group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        self.op, self.tensor = op, _check_tensor(tensor, "tensor")
        self.group = resolve(group)
        param = "destination" if op is isend else "source"
        self.group_peer = _peer(self.group, peer, group_peer, param)
        self.peer = self.group.global_rank_of(self.group_peer)
        self.tag = tag


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Launch every op of the list at once; one ``Work`` per op, in order."""
    if not isinstance(p2p_op_list, list) or not p2p_op_list or \
            not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    pg = p2p_op_list[0].group
    if any(p.group is not pg for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    pg.check()
    plan = [(p.op is isend, _array(pg, p.tensor, "tensor"), p.group_peer, p.tag) for p in p2p_op_list]
    pendings = pg.engine.batch_p2p(plan)
    return [_start(pg, "send" if p.op is isend else "recv", pending, [] if p.op is isend else [p.tensor])
            for p, pending in zip(p2p_op_list, pendings)]
