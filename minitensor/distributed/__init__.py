"""``minitensor.distributed``: PyTorch's ``torch.distributed`` names on the engines clusters run - MPI
through mpi4py (``backend="mpi"``; ``"gloo"`` runs on it too) and NCCL through CuPy (``backend="nccl"``).
Install them with ``pip install 'minitensor[distributed]'``; neither is imported until
``init_process_group``. See docs/distributed.md.
"""
from .collectives import (all_gather, all_gather_into_tensor, all_reduce, all_to_all, all_to_all_single, barrier,
                          broadcast, gather, irecv, isend, recv, reduce, reduce_scatter, reduce_scatter_tensor,
                          scatter, send)
from .objects import all_gather_object, broadcast_object_list
from .process_group import (Backend, GroupMember, ProcessGroup, default_pg_timeout, destroy_process_group,
                            get_backend, get_global_rank, get_group_rank, get_rank, get_world_size, group,
                            init_process_group, is_available, is_gloo_available, is_initialized, is_mpi_available,
                            is_nccl_available, is_torchelastic_launched)
from .reduce_op import ReduceOp
from .work import DistBackendError, DistError, DistStoreError, Work

from .p2p import P2POp, batch_isend_irecv
from .process_group import get_node_local_rank, get_process_group_ranks, new_group

__all__ = ["all_gather_object", "broadcast_object_list", "get_node_local_rank", "new_group"]
__all__ += ["P2POp", "batch_isend_irecv", "get_process_group_ranks"]
__all__ += ["Backend", "DistBackendError", "DistError", "DistStoreError", "GroupMember", "ProcessGroup", "ReduceOp",
           "Work", "all_gather", "all_gather_into_tensor", "all_reduce", "all_to_all", "all_to_all_single",
           "barrier", "broadcast", "default_pg_timeout", "destroy_process_group", "gather", "get_backend",
           "get_global_rank", "get_group_rank", "get_rank", "get_world_size", "group", "init_process_group",
           "irecv", "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
           "is_nccl_available", "is_torchelastic_launched", "isend", "recv", "reduce", "reduce_scatter",
           "reduce_scatter_tensor", "scatter", "send"]

from .grad_bucket import GradBucket  # noqa: E402  (DDP's communication hooks get one)

__all__ += ["GradBucket"]
