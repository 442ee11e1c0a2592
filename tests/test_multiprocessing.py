"""``minitensor.multiprocessing``: CPU tensors in shared memory seen by forked and spawned processes (Hogwild),
tensors through queues, PyTorch's refusal of graph tensors, ``spawn`` and its errors; ``Tensor.__format__``."""
from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import minitensor as mt
import minitensor.multiprocessing as mp
import minitensor.nn as nn
import mp_workers


def test_hogwild_writes_of_forked_processes_land_in_the_parents_model():
    model = nn.Linear(3, 2).share_memory()
    assert all(p.is_shared() for p in model.parameters())
    before = [p.detach().numpy().copy() for p in model.parameters()]
    context = mp.get_context("fork")
    workers = [context.Process(target=mp_workers.hogwild_step, args=(rank, model, 5)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
        assert w.exitcode == 0
    for p, b in zip(model.parameters(), before):  # 5 steps of +1 and 5 of +2, in the parent's memory
        np.testing.assert_allclose(p.detach().numpy(), b + 15, rtol=1e-6)


def test_a_spawned_process_writes_into_a_shared_tensor():
    shared = mt.zeros(3).share_memory_()
    mp.spawn(mp_workers.write_rank, args=(shared,), nprocs=3)
    assert shared.tolist() == [10.0, 11.0, 12.0]


def test_a_shared_view_travels_through_a_queue_and_stays_shared():
    base = mt.arange(12.).reshape(3, 4).share_memory_()
    view = base[1:, ::2]  # an offset, strided view of the block
    context = mp.get_context("spawn")
    queue, done = context.Queue(), context.Queue()
    child = context.Process(target=mp_workers.take_from_queue, args=(queue, done))
    child.start()
    queue.put(view)
    assert done.get(timeout=60) is True
    child.join()
    assert base.tolist() == [[0., 1., 2., 3.], [8., 5., 12., 7.], [16., 9., 20., 11.]]


def test_a_tensor_not_in_shared_memory_travels_as_a_copy():
    t = mt.arange(3.)
    assert not t.is_shared()
    copy = ForkingPickler.loads(ForkingPickler.dumps(t))
    copy.add_(1)
    assert t.tolist() == [0., 1., 2.] and copy.tolist() == [1., 2., 3.]
    p = nn.Parameter(mt.ones(2))
    back = ForkingPickler.loads(ForkingPickler.dumps(p))
    assert isinstance(back, nn.Parameter) and back.requires_grad


def test_a_graph_tensor_is_refused_as_pytorch_refuses_it():
    y = mt.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        ForkingPickler.dumps(y)
    ForkingPickler.dumps(y.detach())  # the advice in the message works


def test_spawn_reports_a_failing_child_with_its_traceback():
    with pytest.raises(mp.ProcessRaisedException, match="rank one fails on purpose") as info:
        mp.spawn(mp_workers.fail_on_rank_one, nprocs=2)
    assert info.value.error_index == 1 and "ValueError" in str(info.value)
    context = mp.spawn(mp_workers.fail_on_rank_one, args=(), nprocs=1, join=False)
    assert context is not None and len(context.pids()) == 1
    while not context.join():
        pass


def test_sharing_strategy_and_module_surface():
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(ValueError, match="not supported"):
        mp.set_sharing_strategy("file_descriptor")
    assert mp.Queue is not None and mp.Process is not None and callable(mp.cpu_count)


def test_format_spec_of_a_scalar_tensor_formats_its_number():
    assert f"{mt.tensor(3.14159):.2f}" == "3.14"
    assert f"{mt.tensor(7):>4}" == "   7"
    assert format(mt.tensor([1.0, 2.0]), "") == str(mt.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{mt.tensor([1.0, 2.0]):.2f}"
