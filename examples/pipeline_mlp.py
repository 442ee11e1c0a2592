"""Train the MLP split over 2 ranks: layers on rank 0 (Flatten, Linear(784, 128), ReLU) and rank 1
(Linear(128, 10)), GPipe's schedule over 4 micro-batches (all forwards, then all backwards), activations and
their gradients sent between the ranks. Each rank runs Adam on its own layers; rank 1, which computes the
loss, prints and writes the log (docs/distributed.md).

    mpiexec -n 2 python examples/pipeline_mlp.py --dataset digits
    mpiexec -n 2 python examples/pipeline_mlp.py --epochs 2 --microbatches 8
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

from common import add_data_arguments, load_images
from models import mlp

import minitensor as mt
import minitensor.distributed as dist
from minitensor import nn, optim
from minitensor.distributed.pipelining import PipelineStage, ScheduleGPipe, split_sequential
from minitensor.utils.data import DataLoader


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--microbatches", type=int, default=4, help="micro-batches per batch (default: 4)")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--limit-steps", type=int, default=None, metavar="N", help="stop after N steps")
    p.add_argument("--out", default="runs/pipeline_mlp", help="folder for metrics.json")
    add_data_arguments(p, seed_help="seeds weights and shuffling, the same on both ranks (default: 0)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any] | None:
    args = parse(argv)
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if world != 2:
        raise SystemExit(f"pipeline_mlp.py runs on 2 ranks (mpiexec -n 2), got {world}")
    mt.manual_seed(args.seed)  # both ranks build the same model and keep their half
    data = load_images(args.dataset, args.data_dir)
    stage_module = split_sequential(mlp(data.image_size), 2, split_points=[3])[rank]
    stage = PipelineStage(stage_module, rank, 2, mt.device("cpu"))
    schedule = ScheduleGPipe(stage, args.microbatches, loss_fn=nn.functional.cross_entropy)
    evaluate = ScheduleGPipe(stage, 1)  # forward only
    optimizer = optim.Adam(stage_module.parameters(), lr=args.lr)
    log: dict[str, Any] = {"example": "pipeline_mlp", "args": vars(args), "epochs": []}
    steps = 0
    for epoch in range(1, args.epochs + 1):
        loader = DataLoader(data.train, batch_size=args.batch_size, shuffle=True, drop_last=True,
                            generator=args.seed * 100_003 + epoch)  # the same batches on both ranks
        total, epoch_steps = 0.0, 0
        for x, y in loader:
            if args.limit_steps is not None and steps == args.limit_steps:
                break
            optimizer.zero_grad()
            losses: list[mt.Tensor] = []
            if rank == 0:
                schedule.step(x)
            else:
                schedule.step(target=y, losses=losses)
            optimizer.step()
            steps, epoch_steps = steps + 1, epoch_steps + 1
            total += float(sum(losses)) / args.microbatches if rank == 1 else 0.0
        x_test, y_test = data.test.tensors
        with mt.no_grad():
            logits = evaluate.step(x_test) if rank == 0 else evaluate.step()
        if rank == 1:
            record = {"epoch": epoch, "loss": total / max(epoch_steps, 1), "test_accuracy":
                      (logits.argmax(1) == y_test).float().mean().item()}
            log["epochs"].append(record)
            print(f"epoch {epoch}: loss {record['loss']:.4f}  test accuracy {record['test_accuracy']:.2%}")
    dist.destroy_process_group()
    if rank == 1:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "metrics.json").write_text(json.dumps(log, indent=2, default=str))
        return log
    return None


if __name__ == "__main__":
    main()
