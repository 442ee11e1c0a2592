"""Run by tests/distributed/test_sync_batchnorm.py under ``mpiexec -n 2``: SyncBatchNorm on rank r's rows of
one batch (3 rows on rank 0, 5 on rank 1) == BatchNorm over the whole batch, in float64. Prints "ok <rank>"."""
from __future__ import annotations

import sys

import numpy as np

import minitensor as mt
import minitensor.distributed as dist
from minitensor import nn


_all_reduce = dist.all_reduce


def _count_all_reduce() -> list[int]:
    """Count the calls of ``dist.all_reduce`` from now on (in a one-item list)."""
    calls = [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        return _all_reduce(*args, **kwargs)
    dist.all_reduce = counted
    return calls


def main(momentum: str, affine: str) -> None:
    rank = dist.get_rank()
    rows = [slice(0, 3), slice(3, 8)][rank]
    g = mt.Generator().manual_seed(7)  # the same data and weights on every rank
    m = None if momentum == "none" else float(momentum)
    reference = nn.BatchNorm1d(4, momentum=m, affine=affine == "affine").double()
    if reference.affine:
        with mt.no_grad():
            reference.weight.copy_(mt.randn(4, generator=g, dtype=mt.float64))
            reference.bias.copy_(mt.randn(4, generator=g, dtype=mt.float64))
    sync = nn.SyncBatchNorm.convert_sync_batchnorm(
        nn.Sequential(nn.BatchNorm1d(4, momentum=m, affine=reference.affine).double()))[0]
    sync.load_state_dict(reference.state_dict())
    for step in range(2):
        x = mt.randn(8, 4, 3, generator=g, dtype=mt.float64) * 3 + 1
        cot = mt.randn(8, 4, 3, generator=g, dtype=mt.float64)
        xr = x.clone().requires_grad_()
        yr = reference(xr)  # once: each training forward moves the running statistics
        (yr * cot).sum().backward()
        xs = x[rows].clone().requires_grad_()
        calls = _count_all_reduce()
        y = sync(xs)
        assert calls == [1], calls  # one all_reduce of [sum, sum of squares, count] per forward
        np.testing.assert_allclose(y.detach().numpy(), yr.detach().numpy()[rows], rtol=1e-12, atol=1e-12)
        (y * cot[rows]).sum().backward()
        assert calls == [2], calls  # and one of the gradient sums per backward
        dist.all_reduce = _all_reduce
        np.testing.assert_allclose(xs.grad.numpy(), xr.grad.numpy()[rows], rtol=1e-10, atol=1e-12)
        # each rank's weight / bias gradient is its own share; their sum is the whole batch's (DDP sums them)
        for name in ("weight", "bias") if reference.affine else ():
            grad = getattr(sync, name).grad.clone()
            dist.all_reduce(grad)
            np.testing.assert_allclose(grad.numpy(), getattr(reference, name).grad.numpy(), rtol=1e-10)
        for p in (*sync.parameters(), *reference.parameters()):
            p.grad = None
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(sync, name).numpy(), getattr(reference, name).numpy(), rtol=1e-12)
    assert int(sync.num_batches_tracked) == 2
    sync.eval()  # no collective in eval: each rank normalises its own rows with the running statistics
    reference.eval()
    x = mt.randn(2 + rank, 4, 3, dtype=mt.float64)
    np.testing.assert_allclose(sync(x).detach().numpy(), reference(x).detach().numpy(), rtol=1e-12)


if __name__ == "__main__":
    dist.init_process_group("mpi")
    try:
        main(*sys.argv[1:])
        sys.stdout.write(f"ok {dist.get_rank()}\n")  # one write: the ranks share the terminal
        sys.stdout.flush()
    finally:
        dist.destroy_process_group()
