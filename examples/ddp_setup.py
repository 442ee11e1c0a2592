"""--distributed for the examples: one process per rank under ``mpiexec -n N python examples/cnn.py
--distributed``; each rank trains on its shard of every epoch (``DistributedSampler``) with the same
per-rank --batch-size, the gradients averaged by ``DistributedDataParallel``; only rank 0 prints, logs,
saves and evaluates (the ranks' models are equal after every step, so one evaluation suffices).

The engine follows the device: MPI (mpi4py) on the CPU, NCCL (CuPy) on CUDA with one GPU per rank
(``cuda:<rank % GPUs>``). docs/distributed.md shows the commands.
"""
from __future__ import annotations

import argparse
from typing import Any

import minitensor as mt
from minitensor import nn


def add_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel training over the ranks of an mpiexec launch (docs/distributed.md)")


def start(args: argparse.Namespace, device: mt.device) -> mt.device:
    """With --distributed: open the process group and return this rank's device (else ``device``)."""
    if not getattr(args, "distributed", False):
        return device
    import minitensor.distributed as dist
    dist.init_process_group("nccl" if device.type == "cuda" else "mpi")
    if device.type == "cuda":
        device = mt.device("cuda", dist.get_rank() % mt.cuda.device_count())
        mt.cuda.set_device(device)
    return device


def rank() -> int:
    """This process's rank (0 without a process group)."""
    import minitensor.distributed as dist
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def wrap(model: nn.Module, args: argparse.Namespace) -> nn.Module:
    """``model`` in ``DistributedDataParallel`` with --distributed (train through what this returns; save and
    evaluate the model itself, so checkpoints keep the plain names)."""
    return nn.parallel.DistributedDataParallel(model) if getattr(args, "distributed", False) else model


def sampler(dataset: Any, args: argparse.Namespace, epoch: int) -> Any:
    """This rank's shard of ``dataset`` for ``epoch``, shuffled the same way on every rank (None without
    --distributed: the loader shuffles by itself)."""
    if not getattr(args, "distributed", False):
        return None
    from minitensor.utils.data.distributed import DistributedSampler
    s = DistributedSampler(dataset, shuffle=True, seed=args.seed)
    s.set_epoch(epoch)
    return s
