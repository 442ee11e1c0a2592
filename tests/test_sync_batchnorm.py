"""SyncBatchNorm in one process (no process group): PyTorch's fallback to batch norm, its checks,
convert_sync_batchnorm. The 2-rank path is tests/distributed/test_sync_batchnorm.py."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.distributed as dist
from minitensor import nn
from minitensor.nn import functional as F
from tests.helpers import assert_close, t64


def _no_group() -> None:
    if dist.is_initialized():
        pytest.skip("a process group is open in this process")


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 2, 2, 2)])
def test_without_a_process_group_it_is_batch_norm(shape):
    _no_group()
    r = np.random.default_rng(0)
    sync = nn.SyncBatchNorm(3, momentum=None).double()
    w, b = t64(r.standard_normal(3)), t64(r.standard_normal(3))
    with mt.no_grad():
        sync.weight.copy_(w)
        sync.bias.copy_(b)
    axes = tuple(d for d in range(len(shape)) if d != 1)
    xs = [r.standard_normal(shape) for _ in range(2)]
    for x in xs:  # the reference: F.batch_norm with the batch's statistics
        a, ref_in = t64(x), t64(x)
        ya = sync(a)
        yb = F.batch_norm(ref_in, None, None, w, b, training=True)
        assert_close(ya, yb.detach().numpy(), rtol=1e-12)
        ya.sum().backward()
        yb.sum().backward()
        assert_close(a.grad, ref_in.grad.numpy(), rtol=1e-10, atol=1e-12)
    n = xs[0].size // 3  # momentum=None: the cumulative average of the unbiased variances
    assert_close(sync.running_var, np.mean([x.var(axis=axes) * n / (n - 1) for x in xs], axis=0), rtol=1e-12)
    assert int(sync.num_batches_tracked) == 2
    sync.eval()
    x = r.standard_normal(shape)
    cs = [1, 3] + [1] * (len(shape) - 2)
    ref = (x - sync.running_mean.numpy().reshape(cs)) / np.sqrt(sync.running_var.numpy().reshape(cs) + 1e-5) \
        * w.detach().numpy().reshape(cs) + b.detach().numpy().reshape(cs)
    assert_close(sync(t64(x, False)), ref, rtol=1e-12)


def test_checks_repr_and_bias_flag():
    with pytest.raises(ValueError, match=r"^expected at least 2D input \(got 1D input\)$"):
        nn.SyncBatchNorm(3)(mt.randn(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(mt.randn(2, 0))
    m = nn.SyncBatchNorm(4, bias=False)
    assert m.bias is None and list(m.state_dict()) == ["weight", "running_mean", "running_var",
                                                       "num_batches_tracked"]
    assert repr(nn.SyncBatchNorm(4)) == \
        "SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert nn.SyncBatchNorm(2, process_group="pg").process_group == "pg"


def test_convert_sync_batchnorm_shares_state_and_recurses():
    inner = nn.Sequential(nn.BatchNorm3d(2), nn.InstanceNorm2d(2))
    model = nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2, momentum=None, eps=1e-3), inner).eval()
    bn = model[1]
    out = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group="pg")
    assert out is model  # the root is no BatchNorm: it keeps its identity, its children are swapped
    s = out[1]
    assert type(s) is nn.SyncBatchNorm and s.process_group == "pg" and not s.training
    assert s.weight is bn.weight and s.bias is bn.bias and s.running_mean is bn.running_mean
    assert s.num_batches_tracked is bn.num_batches_tracked and s.momentum is None and s.eps == 1e-3
    assert type(out[2][0]) is nn.SyncBatchNorm and type(out[2][1]) is nn.InstanceNorm2d
    single = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(3, affine=False))
    assert type(single) is nn.SyncBatchNorm and single.weight is None


@pytest.mark.torch
def test_fallback_matches_torch():
    torch = pytest.importorskip("torch")
    _no_group()
    x = np.random.default_rng(1).standard_normal((5, 3, 4))
    m, t = nn.SyncBatchNorm(3).double(), torch.nn.SyncBatchNorm(3).double()
    a, b = t64(x), torch.tensor(x, requires_grad=True)
    ya, yb = m(a), t(b)
    assert_close(ya, yb.detach().numpy(), rtol=1e-12)
    (ya * ya).sum().backward()
    (yb * yb).sum().backward()
    assert_close(a.grad, b.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert_close(m.running_var, t.running_var.numpy(), rtol=1e-12)
    assert list(m.state_dict()) == list(t.state_dict())
