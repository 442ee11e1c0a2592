"""Every collective, for every ReduceOp and dtype, against NumPy's reduction of every rank's data (each rank
can make every rank's data: ``data(r, ...)`` depends only on r). Run under mpiexec by test_mpi.py; prints
``ok <rank>``."""
from __future__ import annotations

import functools
import sys

import numpy as np

import minitensor as mt
import minitensor.distributed as dist
from minitensor.distributed import ReduceOp
from minitensor.utils.data import DistributedSampler

DTYPES = [mt.float32, mt.float64, mt.float16, mt.bfloat16, mt.int16, mt.int32, mt.int64, mt.int8, mt.uint8, mt.bool]
UFUNCS = {ReduceOp.SUM: np.add, ReduceOp.PRODUCT: np.multiply, ReduceOp.MAX: np.maximum, ReduceOp.MIN: np.minimum,
          ReduceOp.BAND: np.bitwise_and, ReduceOp.BOR: np.bitwise_or, ReduceOp.BXOR: np.bitwise_xor}


def data(r: int, dtype: mt.dtype, shape: tuple[int, ...] = (3, 5), salt: int = 0) -> np.ndarray:
    """Rank r's values: small integers (no overflow under PRODUCT), halves for the floats."""
    rng = np.random.default_rng(1000 * r + 7 * salt + 1)
    if dtype == mt.bool:
        return rng.random(shape) < 0.5
    lo = 0 if dtype == mt.uint8 else -3
    values = rng.integers(lo, 4, shape).astype(np.float64)
    return (values / 2 if dtype.is_floating_point else values).astype(dtype.np)


def reference(op: object, arrays: list[np.ndarray]) -> np.ndarray:
    """NumPy's reduction in the arrays' dtype (booleans: or / and; AVG: the float64 mean, or the truncated
    integer quotient)."""
    a0 = arrays[0]
    if op is ReduceOp.AVG:
        total = functools.reduce(np.add, [a.astype(np.float64) for a in arrays])
        mean = total / len(arrays)
        return (mean if a0.dtype.kind == "f" or a0.dtype == mt.bfloat16.np else np.trunc(mean)).astype(a0.dtype)
    if a0.dtype.kind == "b":
        op = {ReduceOp.SUM: ReduceOp.MAX, ReduceOp.PRODUCT: ReduceOp.MIN}.get(op, op)  # type: ignore[call-overload]
    return functools.reduce(UFUNCS[op], arrays)  # type: ignore[index]


def check(name: str, got: mt.Tensor, expected: np.ndarray) -> None:
    g = got.numpy()
    assert g.dtype == expected.dtype, (name, g.dtype, expected.dtype)
    tol = {2: 1e-2}.get(g.itemsize, 1e-6) if g.dtype.kind in "fV" else 0
    np.testing.assert_allclose(g.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol, err_msg=name)


def ops_for(dtype: mt.dtype) -> list[object]:
    ops: list[object] = [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MAX, ReduceOp.MIN]
    if dtype.is_floating_point:
        return ops + [ReduceOp.AVG]
    bitwise = [ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR]
    return ops + bitwise if dtype == mt.bool else ops + bitwise + [ReduceOp.AVG]


def main() -> None:
    backend = sys.argv[1] if len(sys.argv) > 1 else "mpi"  # "gloo" runs on MPI too
    dist.init_process_group(backend)
    rank, n = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and dist.get_backend() == backend
    everyone = range(n)
    for dtype in DTYPES:
        for op in ops_for(dtype):
            name = f"{dtype} {op}"
            arrays = [data(r, dtype) for r in everyone]
            t = mt.tensor(arrays[rank])
            assert dist.all_reduce(t, op=op) is None
            check(f"all_reduce {name}", t, reference(op, arrays))
            t = mt.tensor(arrays[rank])
            work = dist.all_reduce(t, op=op, async_op=True)
            assert work is not None and work.wait() is True and work.is_completed()
            check(f"async all_reduce {name}", t, reference(op, arrays))
            assert work.result() == [t]
            t = mt.tensor(arrays[rank])
            dist.reduce(t, dst=n - 1, op=op)
            check(f"reduce {name}", t, reference(op, arrays) if rank == n - 1 else arrays[rank])
            blocks = [data(r, dtype, (n, 2, 3), salt=1) for r in everyone]
            out = mt.empty((2, 3), dtype=dtype)
            dist.reduce_scatter_tensor(out, mt.tensor(blocks[rank]), op=op)
            check(f"reduce_scatter_tensor {name}", out, reference(op, [b[rank] for b in blocks]))
            out = mt.empty((2, 3), dtype=dtype)
            dist.reduce_scatter(out, list(mt.tensor(blocks[rank]).unbind(0)), op=op)
            check(f"reduce_scatter {name}", out, reference(op, [b[rank] for b in blocks]))
        mine = data(rank, dtype, (4,), salt=2)
        t = mt.tensor(mine)
        dist.broadcast(t, src=n - 1)
        check(f"broadcast {dtype}", t, data(n - 1, dtype, (4,), salt=2))
        gathered = [mt.zeros(2, 2, dtype=dtype) for _ in everyone]
        dist.all_gather(gathered, mt.tensor(data(rank, dtype, (2, 2), salt=3)))
        for r in everyone:
            check(f"all_gather {dtype} [{r}]", gathered[r], data(r, dtype, (2, 2), salt=3))
        out = mt.zeros(n, 2, 2, dtype=dtype)
        dist.all_gather_into_tensor(out, mt.tensor(data(rank, dtype, (2, 2), salt=3)))
        check(f"all_gather_into_tensor {dtype}", out, np.stack([data(r, dtype, (2, 2), salt=3) for r in everyone]))
    future_chain(n)
    if n > 1:
        point_to_point(rank, n)
    rooted(rank, n)
    sampler_shares(n)
    bad_arguments(rank, n)
    objects(rank, n)
    if n > 1:
        groups(rank, n)
    dist.barrier()
    assert dist.barrier(async_op=True).wait()  # type: ignore[union-attr]
    dist.destroy_process_group()
    assert not dist.is_initialized()
    dist.init_process_group(backend)  # again: MPI stays up between groups
    t = mt.ones(1)
    dist.all_reduce(t)
    assert t.tolist() == [n]
    dist.destroy_process_group()
    sys.stdout.write(f"ok {rank}\n")


def future_chain(n: int) -> None:
    """Work.get_future().then(...): DDP comm hooks' way to post-process an async all_reduce."""
    t = mt.ones(3)
    future = dist.all_reduce(t, async_op=True).get_future()  # type: ignore[union-attr]
    halved = future.then(lambda f: f.value()[0] / 2)
    assert halved.wait().tolist() == [n / 2] * 3 and future.done() and halved.value() is halved.wait()


def point_to_point(rank: int, n: int) -> None:
    """A ring of send/recv, then isend/irecv with recv from any source."""
    right, left = (rank + 1) % n, (rank - 1) % n
    got = mt.zeros(3)
    if rank % 2 == 0:
        dist.send(mt.full((3,), float(rank)), dst=right)
        assert dist.recv(got, src=left) == left
    else:
        assert dist.recv(got, src=left) == left
        dist.send(mt.full((3,), float(rank)), dst=right)
    check("send/recv", got, np.full(3, left, np.float32))
    incoming = mt.zeros(2, dtype=mt.int64)
    receive = dist.irecv(incoming, tag=5)
    send = dist.isend(mt.tensor([rank, 10 * rank]), dst=right, tag=5)
    receive.wait()
    send.wait()
    check("isend/irecv", incoming, np.array([left, 10 * left]))
    assert receive._source_rank() == left
    # a batch where every rank sends first: one NCCL group on NCCL, nonblocking calls on MPI
    back, forth = mt.zeros(4), mt.zeros(4)
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, mt.full((4,), float(rank)), right),
                                    dist.P2POp(dist.isend, mt.full((4,), -float(rank)), left, tag=1),
                                    dist.P2POp(dist.irecv, back, left),
                                    dist.P2POp(dist.irecv, forth, right, tag=1)])
    assert len(works) == 4 and all(w.wait() for w in works)
    check("batch_isend_irecv", back, np.full(4, left, np.float32))
    check("batch_isend_irecv tag 1", forth, np.full(4, -right, np.float32))
    raises(ValueError, "Each op is expected to to be of type ``torch.distributed.P2POp``", dist.batch_isend_irecv, [])
    raises(ValueError, "Expected ``op`` to be of type ``torch.distributed.isend``", dist.P2POp, dist.send, back, left)


def rooted(rank: int, n: int) -> None:
    """gather, scatter and all_to_all_single with uneven splits."""
    mine = mt.tensor(data(rank, mt.float32, (3,), salt=4))
    if rank == 0:
        outs = [mt.zeros(3) for _ in range(n)]
        dist.gather(mine, outs, dst=0)
        for r in range(n):
            check(f"gather [{r}]", outs[r], data(r, mt.float32, (3,), salt=4))
    else:
        dist.gather(mine, dst=0)
    got = mt.zeros(2, dtype=mt.int32)
    dist.scatter(got, [mt.tensor([10 * r, r], dtype=mt.int32) for r in range(n)] if rank == n - 1 else None,
                 src=n - 1)
    check("scatter", got, np.array([10 * rank, rank], np.int32))
    # rank r sends r + 1 rows of width 2 to every rank j, each row filled with 100 * r + j
    send = mt.tensor(np.repeat(100 * rank + np.arange(n), rank + 1)[:, None].repeat(2, 1).astype(np.float32))
    out = mt.zeros(sum(r + 1 for r in range(n)), 2)
    dist.all_to_all_single(out, send, [r + 1 for r in range(n)], [rank + 1] * n)
    expected = np.concatenate([np.full((r + 1, 2), 100 * r + rank, np.float32) for r in range(n)])
    check("all_to_all_single", out, expected)


def sampler_shares(n: int) -> None:
    """DistributedSampler with the group's rank and size: the ranks' shares, gathered, cover the dataset."""
    sampler = DistributedSampler(range(25), seed=3)
    sampler.set_epoch(1)
    shares = [mt.zeros(len(sampler), dtype=mt.int64) for _ in range(n)]
    dist.all_gather(shares, mt.tensor(list(sampler)))
    counts = np.bincount(mt.cat(shares).numpy(), minlength=25)
    assert counts.min() >= 1 and counts.sum() == len(sampler) * n, counts


def objects(rank: int, n: int) -> None:
    """all_gather_object and broadcast_object_list: any picklable object, of any size per rank."""
    got: list = [None] * n
    dist.all_gather_object(got, {"rank": rank, "payload": "x" * (100 * rank)})
    assert got == [{"rank": r, "payload": "x" * (100 * r)} for r in range(n)], got
    items: list = [("from", rank), np.arange(rank + 3), None]
    dist.broadcast_object_list(items, src=n - 1)
    assert items[0] == ("from", n - 1) and items[1].tolist() == list(range(n + 2)) and items[2] is None


def groups(rank: int, n: int) -> None:
    """new_group of every rank but 0 (global ranks in the calls, group ranks from get_rank(group)); rank 0 is
    outside: its calls warn and do nothing, as PyTorch's."""
    import warnings
    members = list(range(1, n))
    g = dist.new_group(list(reversed(members)))
    t = mt.full((2,), float(rank))
    if rank == 0:
        assert g == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1 and dist.get_world_size(g) == -1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert dist.all_reduce(t, group=g) is None
        assert "does not belong to the given group" in str(caught[0].message) and t.tolist() == [0, 0]
    else:
        assert dist.get_rank(g) == rank - 1 and dist.get_world_size(g) == n - 1
        assert dist.get_group_rank(g, n - 1) == n - 2 and dist.get_global_rank(g, 0) == 1
        assert dist.get_process_group_ranks(g) == members
        dist.all_reduce(t, group=g)
        assert t.tolist() == [sum(members)] * 2
        t = mt.full((1,), float(rank))
        dist.broadcast(t, src=n - 1, group=g)
        assert t.tolist() == [n - 1]
        raises(ValueError, "Global rank 0 is not part of group", dist.broadcast, t, 0, group=g)
        dist.destroy_process_group(g)
    dist.barrier()


def raises(kind: type[Exception], text: str, call: object, *args: object, **kwargs: object) -> None:
    try:
        call(*args, **kwargs)  # type: ignore[operator]
    except kind as e:
        assert text in str(e), (text, str(e))
    else:
        raise AssertionError(f"{call} did not raise {kind.__name__}({text!r})")


def bad_arguments(rank: int, n: int) -> None:
    """PyTorch's errors, raised on every rank before anything is sent (so the group stays usable)."""
    raises(RuntimeError, "input tensor has to be contiguous", dist.all_reduce, mt.ones(3, 2).t())
    raises(TypeError, "Expected parameter `tensor` of type torch.Tensor", dist.all_reduce, np.ones(3))
    raises(TypeError, "Cannot use ReduceOp.AVG with boolean inputs", dist.all_reduce, mt.ones(2, dtype=mt.bool),
           op=ReduceOp.AVG)
    raises(RuntimeError, "Cannot use ReduceOp.BAND with non-integral dtype", dist.all_reduce, mt.ones(2),
           op=ReduceOp.BAND)
    raises(ValueError, f"Cannot use ReduceOp.PREMUL_SUM with {dist.get_backend()}", dist.all_reduce, mt.ones(2),
           op=ReduceOp.PREMUL_SUM)
    raises(TypeError, "op must be a ReduceOp", dist.all_reduce, mt.ones(2), op="sum")
    raises(ValueError, f"tensor_list must hold one tensor per rank of the group ({n})", dist.all_gather,
           [mt.ones(2)] * (n + 1), mt.ones(2))
    raises(ValueError, "Invalid usage of tensors with different dtypes", dist.all_gather,
           [mt.ones(2, dtype=mt.float64)] * n, mt.ones(2))
    raises(ValueError, "output tensor size must be equal to world_size times input tensor size",
           dist.all_gather_into_tensor, mt.ones(n + 1), mt.ones(1))
    raises(ValueError, "Argument ``gather_list`` must be specified on destination rank.", dist.gather, mt.ones(1),
           None, rank)
    raises(ValueError, f"Global rank {n} is not part of group", dist.broadcast, mt.ones(1), n)
    raises(ValueError, "Can only specify one of src or group_src", dist.broadcast, mt.ones(1), 0, group_src=0)
    raises(ValueError, "trying to initialize the default process group twice!", dist.init_process_group, "mpi")
    if n > 1:
        raises(ValueError, "Argument ``gather_list`` must NOT be specified on non-destination ranks.", dist.gather,
               mt.ones(1), [mt.ones(1)] * n, (rank + 1) % n)
        raises(ValueError, "Invalid destination rank", dist.send, mt.ones(1), rank)
    t = mt.ones(2)
    dist.all_reduce(t)  # still usable
    assert t.tolist() == [n, n]


if __name__ == "__main__":
    main()
    sys.exit(0)
