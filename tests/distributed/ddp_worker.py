"""Run by tests/distributed/test_ddp.py under ``mpiexec -n 2``: ``python ddp_worker.py <scenario> [args]``.
Each scenario asserts on every rank and prints "ok <rank>"; a failure exits non-zero."""
from __future__ import annotations

import copy
import sys

import numpy as np

import minitensor as mt
import minitensor.distributed as dist
from minitensor import nn
from minitensor.nn.parallel import DistributedDataParallel as DDP

STEPS, B = 20, 8


def mlp(dtype: mt.dtype) -> nn.Module:
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3)).to(dtype)


def data(dtype: mt.dtype, steps: int, world: int) -> tuple[mt.Tensor, mt.Tensor]:
    g = mt.Generator().manual_seed(123)  # the same on every rank
    return (mt.randn(steps, world * B, 6, generator=g, dtype=dtype),
            mt.randint(0, 3, (steps, world * B), generator=g))


def assert_params_equal(a: nn.Module, b: nn.Module, dtype: mt.dtype) -> None:
    tol = 1e-12 if dtype == mt.float64 else 1e-6
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=tol, atol=tol, err_msg=name)


def equal(dtype_name: str, bucket_cap_mb: str, as_view: str) -> None:
    """DDP on 2 ranks with batch B each == one process on the concatenated 2B batch, for STEPS steps."""
    dtype = getattr(mt, dtype_name)
    rank, world = dist.get_rank(), dist.get_world_size()
    mt.manual_seed(rank)  # different initial weights: DDP must broadcast rank 0's
    model = DDP(mlp(dtype), bucket_cap_mb=float(bucket_cap_mb), gradient_as_bucket_view=as_view == "view")
    if float(bucket_cap_mb) < 0.001:
        assert len(model._reducer.buckets) > 2, model._reducer.buckets
    reference = copy.deepcopy(model.module)
    xs, ys = data(dtype, STEPS, world)
    opt = mt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = mt.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(STEPS):
        mine = slice(rank * B, (rank + 1) * B)
        opt.zero_grad()
        loss_fn(model(xs[step, mine]), ys[step, mine]).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(reference(xs[step]), ys[step]).backward()
        ref_opt.step()
    assert_params_equal(model.module, reference, dtype)
    assert list(model.state_dict())[0] == "module.0.weight"


def no_sync() -> None:
    """Two backward passes under no_sync then one synchronised == the three micro-batches' gradients summed,
    averaged over the ranks: one process on the concatenated batches."""
    dtype = mt.float64
    rank, world = dist.get_rank(), dist.get_world_size()
    model = DDP(mlp(dtype), bucket_cap_mb=0.0005)
    reference = copy.deepcopy(model.module)
    xs, ys = data(dtype, 3, world)
    loss_fn = nn.CrossEntropyLoss()
    mine = slice(rank * B, (rank + 1) * B)
    with model.no_sync():
        for m in range(2):
            loss_fn(model(xs[m, mine]), ys[m, mine]).backward()
    local = [p.grad.numpy().copy() for p in model.parameters()]
    loss_fn(model(xs[2, mine]), ys[2, mine]).backward()
    for m in range(3):
        loss_fn(reference(xs[m]), ys[m]).backward()
    for p, q, before in zip(model.parameters(), reference.parameters(), local):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12, atol=1e-12)
        assert not np.allclose(before, q.grad.numpy())  # no_sync really skipped the reduction


def batchnorm() -> None:
    """Buffers follow rank 0 at each forward after a synchronised one (PyTorch's broadcast_buffers); batch
    statistics stay per rank."""
    rank = dist.get_rank()
    model = DDP(nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5)))
    bn = model.module[1]
    for step in range(3):
        x = mt.randn(8, 4, generator=mt.Generator().manual_seed(10 * step + rank)) + rank
        model(x).sum().backward()
    mean = bn.running_mean.clone()
    gathered = [mt.zeros(5) for _ in range(2)]
    dist.all_gather(gathered, mean)
    assert not np.allclose(gathered[0].numpy(), gathered[1].numpy())  # each rank's last forward updated its own
    model.eval()
    model(mt.randn(2, 4))  # eval: no update, but the forward broadcasts rank 0's buffers
    np.testing.assert_array_equal(bn.running_mean.numpy(), gathered[0].numpy())
    assert int(bn.num_batches_tracked) == 3
    model.train()
    with mt.no_grad():  # updates each rank's statistics; and the next forward does not broadcast (PyTorch)
        model(mt.randn(8, 4) + rank)
    model.eval()
    model(mt.randn(2, 4))
    dist.all_gather(gathered, bn.running_mean.clone())
    assert not np.allclose(gathered[0].numpy(), gathered[1].numpy())


def shapes() -> None:
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3 + rank, 2))
    try:
        DDP(model)
    except RuntimeError as e:
        assert "'2.weight'" in str(e) and "rank 1" in str(e), str(e)
    else:
        raise AssertionError("mismatched shapes were not detected")
    try:
        DDP(nn.Sequential(*[nn.Linear(2, 2) for _ in range(1 + rank)]))
    except RuntimeError as e:
        assert "2 parameters" in str(e) or "4 parameters" in str(e), str(e)
    else:
        raise AssertionError("a different number of parameters was not detected")


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 3)

    def forward(self, x: mt.Tensor, use_b: bool) -> mt.Tensor:
        return self.b(x) if use_b else self.a(x)


def unused() -> None:
    """find_unused_parameters: a branch used on one rank only gets that rank's gradient / 2 on both ranks;
    without the flag, parameters unused everywhere make the next forward raise PyTorch's error."""
    rank = dist.get_rank()
    x = mt.ones(2, 3) * (rank + 1)
    for cap in (25, 1e-5):  # one bucket; a bucket per tensor (rank 1's b leaves during backward, rank 0's after)
        mt.manual_seed(0)
        model = DDP(Branchy(), find_unused_parameters=True, bucket_cap_mb=cap)
        reference = copy.deepcopy(model.module)
        for _ in range(2):  # twice: the reducer starts afresh after a backward with unused parameters
            model(x, use_b=rank == 1).sum().backward()
            reference.a(mt.ones(2, 3)).sum().backward()
            reference.b(2 * mt.ones(2, 3)).sum().backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy() / 2, rtol=1e-6)
    strict = DDP(Branchy())
    strict(x, use_b=False).sum().backward()
    try:
        strict(x, use_b=False)
    except RuntimeError as e:
        assert "Expected to have finished reduction" in str(e) and ": 2 3" in str(e), str(e)
    else:
        raise AssertionError("an unfinished reduction was not reported")


def overlap() -> None:
    """Each bucket's all-reduce starts as soon as its last gradient is accumulated, while backward goes on:
    with small buckets, the last layer's reduction is launched before the first layer's backward."""
    events: list[str] = []
    model = DDP(mlp(mt.float32), bucket_cap_mb=0.0001)
    reducer = model._reducer

    class Recording:
        def __getattr__(self, name: str) -> object:
            return getattr(dist, name)

        def all_reduce(self, tensor: mt.Tensor, **kwargs: object) -> object:
            events.append(f"launch {tensor.numel()}")
            return dist.all_reduce(tensor, **kwargs)

    reducer.dist = Recording()
    x = mt.randn(4, 6)
    hidden = model.module[0](x)
    hidden.register_hook(lambda g: events.append("first layer's output gradient"))
    loss = model.module[1:](hidden).sum()
    reducer.armed = True  # as model(x) would (the forward above ran in two parts to hook the hidden layer)
    loss.backward()
    first = events.index("first layer's output gradient")
    launches = [i for i, e in enumerate(events) if e.startswith("launch")]
    assert launches[0] < first < launches[-1], events  # the last layer's bucket went out before, the first's after
    assert len(launches) == len(reducer.buckets) == 3, events


def comm_hooks() -> None:
    """register_comm_hook: allreduce_hook gives the built-in average exactly, fp16_compress_hook within
    float16's rounding; a hook sees every bucket once, in order, the last one flagged; a second registration
    is refused."""
    from minitensor.distributed.algorithms.ddp_comm_hooks import default_hooks
    rank, world = dist.get_rank(), dist.get_world_size()
    xs, ys = data(mt.float32, 1, world)
    mine = slice(rank * B, (rank + 1) * B)
    grads = {}
    for name, hook in [("builtin", None), ("allreduce", default_hooks.allreduce_hook),
                       ("fp16", default_hooks.fp16_compress_hook)]:
        mt.manual_seed(0)
        model = DDP(mlp(mt.float32), bucket_cap_mb=0.001)
        if hook is not None:
            model.register_comm_hook(None, hook)
        nn.CrossEntropyLoss()(model(xs[0, mine]), ys[0, mine]).backward()
        grads[name] = params_grads(model)
    for a, b, c in zip(grads["builtin"], grads["allreduce"], grads["fp16"]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=2e-3, atol=1e-4)
    seen = []

    def recording(state: list, bucket: dist.GradBucket) -> object:
        state.append((bucket.index(), bucket.is_last(), len(bucket.parameters()), len(bucket.gradients())))
        return default_hooks.allreduce_hook(None, bucket)
    model = DDP(mlp(mt.float32), bucket_cap_mb=0.001)
    model.register_comm_hook(seen, recording)
    model(xs[0, mine]).sum().backward()
    n = len(model._reducer.buckets)
    assert [s[0] for s in seen] == list(range(n)) and [s[1] for s in seen] == [False] * (n - 1) + [True], seen
    assert sum(s[2] for s in seen) == len(list(model.parameters())) and all(s[2] == s[3] for s in seen)
    try:
        model.register_comm_hook(None, recording)
    except RuntimeError as e:
        assert "only be called once" in str(e)
    else:
        raise AssertionError("a second comm hook was accepted")


def params_grads(model: nn.Module) -> list[np.ndarray]:
    return [p.grad.numpy().copy() for p in model.parameters()]


if __name__ == "__main__":
    dist.init_process_group("mpi")
    try:
        globals()[sys.argv[1]](*sys.argv[2:])
        sys.stdout.write(f"ok {dist.get_rank()}\n")  # one write: the ranks share the terminal
        sys.stdout.flush()
    finally:
        dist.destroy_process_group()
