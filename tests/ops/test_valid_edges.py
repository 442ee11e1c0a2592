"""Valid inputs once refused (issue 25, item 11): empty batches, sequences of dims, negative indices, singular
and NaN matrices, the extra KL pairs and torch.special functions, DataLoader's timeout."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.utils.data import DataLoader, Dataset

NAN, INF = math.nan, math.inf


def test_movedim_with_sequences():
    x = mt.ones(2, 3, 4)
    assert mt.movedim(x, [0, 1], [2, 0]).shape == (3, 4, 2)
    assert x.movedim((0, 1), (2, 0)).shape == (3, 4, 2)
    assert x.moveaxis(-1, 0).shape == (4, 2, 3)


def test_index_fill_negative_index():
    assert mt.zeros(3).index_fill(0, mt.tensor([-1]), 1.0).tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 0 with size 3"):
        mt.zeros(3).index_fill(0, mt.tensor([-4]), 1.0)


def test_topk_of_0d_with_k0():
    values, indices = mt.topk(mt.tensor(5.0), 0)
    assert values.shape == () and values.item() == 5.0 and indices.item() == 0


@pytest.mark.parametrize("case", ["prod0", "prod_all", "adaptive_max_pool2d", "max_pool3d", "group_norm", "qr",
                                  "eigh", "pinv", "svd"])
def test_empty_batches_forward_and_backward(case):
    shapes = {"prod0": (0, 3), "prod_all": (2, 0), "adaptive_max_pool2d": (0, 2, 4, 4), "max_pool3d": (0, 1, 2, 2, 2),
              "group_norm": (0, 4, 2)}
    x = mt.ones(*shapes.get(case, (0, 3, 3)), requires_grad=True)
    out = {"prod0": lambda: mt.prod(x, 0), "prod_all": lambda: mt.prod(x),
           "adaptive_max_pool2d": lambda: F.adaptive_max_pool2d(x, 2, return_indices=True)[0],
           "max_pool3d": lambda: F.max_pool3d(x, 2, return_indices=True)[0], "group_norm": lambda: F.group_norm(x, 2),
           "qr": lambda: mt.linalg.qr(x)[0], "eigh": lambda: mt.linalg.eigh(x)[1], "pinv": lambda: mt.linalg.pinv(x),
           "svd": lambda: mt.linalg.svd(x)[1]}[case]()
    out.sum().backward()
    assert x.grad.shape == x.shape
    assert mt.linalg.lstsq(mt.ones(0, 3, 3), mt.ones(0, 3, 2)).solution.shape == (0, 3, 2)
    assert F.max_pool3d(mt.ones(0, 1, 2, 2, 2), 2, return_indices=True)[1].shape == (0, 1, 1, 1, 1)


def test_logdet_gradient_at_singular_matrices():
    x = mt.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    sign, logabsdet = mt.linalg.slogdet(x)
    logabsdet.backward()
    assert logabsdet.item() == -INF and x.grad.tolist() == [[-INF, INF], [INF, -INF]]
    z = mt.zeros(2, 2, requires_grad=True)
    mt.logdet(z).backward()
    assert z.grad[1, 1].item() == INF and np.isnan(z.grad.numpy()[0]).all()


def test_det_of_nan_matrix():
    x = mt.tensor([[NAN, 1.0], [1.0, 1.0]], requires_grad=True)
    d = mt.linalg.det(x)
    d.backward()
    assert math.isnan(d.item()) and np.isnan(x.grad.numpy()).all()
    sign, logabsdet = mt.linalg.slogdet(x.detach())
    assert sign.item() == 0.0 and math.isnan(logabsdet.item())


def _kl_pairs(lib):
    D = lib.distributions
    t = lib.tensor
    return [D.kl_divergence(D.Uniform(t([0.0, -1.0]), t([1.0, 3.0])), D.Normal(t([0.5, 2.0]), t([1.0, 2.0]))),
            D.kl_divergence(D.Exponential(t([0.5, 2.0])), D.Normal(t([0.5, -2.0]), t([1.0, 2.0]))),
            D.kl_divergence(D.Normal(t([0.5, -2.0]), t([1.0, 2.0])), D.Laplace(t([0.0, 1.0]), t([2.0, 0.5])))]


def test_kl_pairs_added():
    # Uniform(0, 1) || Normal(0.5, 1): log(sqrt(2 pi)) + (1/12) / 2
    expected = [0.5 * math.log(2 * math.pi) + 1 / 24, None, None]
    got = _kl_pairs(mt)
    assert got[0][0].item() == pytest.approx(expected[0], rel=1e-6)
    assert all(bool(mt.isfinite(k).all()) for k in got)


SPECIAL_X = [-2.0, -1e-3, 0.0, 1.5, 30.0, -40.0]


@pytest.mark.parametrize("name", ["erfcx", "i1", "i0e", "i1e", "log_ndtr"])
def test_special_gradients_by_finite_differences(name):
    x = mt.tensor([-2.0, -0.7, 0.3, 1.5, 4.0], dtype=mt.float64)
    assert mt.autograd.gradcheck(getattr(mt.special, name), (x.requires_grad_(),))
    f = getattr(mt.special, name)
    z = mt.tensor([0.0], dtype=mt.float64, requires_grad=True)
    f(z).backward()
    assert z.grad.item() == pytest.approx({"erfcx": -2 / math.sqrt(math.pi), "i1": 0.5, "i0e": 0.0, "i1e": 0.5,
                                           "log_ndtr": math.sqrt(2 / math.pi)}[name])


def test_xlog1py():
    x = mt.tensor([0.0, 2.0, 0.0], dtype=mt.float64, requires_grad=True)
    y = mt.tensor([-1.0, 1.0, NAN], dtype=mt.float64, requires_grad=True)
    out = mt.special.xlog1py(x, y)
    assert out.tolist()[:2] == [0.0, 2 * math.log(2)] and math.isnan(out[2].item())
    out[:2].sum().backward()
    assert x.grad.tolist()[:2] == [0.0, math.log(2)] and y.grad.tolist()[1] == 1.0
    assert mt.special.xlog1py(2, mt.tensor([1.0])).item() == pytest.approx(2 * math.log(2))


def test_cuda_special_names_exist():
    special = pytest.importorskip("cupyx.scipy.special", reason="CuPy is not installed")
    for name in ("erfcx", "i0", "i1", "i0e", "i1e", "log_ndtr"):
        assert hasattr(special, name), name


class _Slow(Dataset):
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> mt.Tensor:
        time.sleep(0.5)
        return mt.tensor(float(i))


def test_dataloader_timeout():
    assert len(list(DataLoader(list(range(5)), batch_size=2, timeout=5, num_workers=1))) == 3
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.05 seconds"):
        list(DataLoader(_Slow(), timeout=0.05, num_workers=1))
    with pytest.raises(AssertionError, match="requires timeout == 0"):
        list(DataLoader(_Slow(), timeout=1))
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(_Slow(), timeout=-1)


@pytest.mark.torch
def test_valid_edges_match_pytorch():
    torch = pytest.importorskip("torch")
    assert torch.zeros(3).index_fill(0, torch.tensor([-1]), 1.0).tolist() == [0.0, 0.0, 1.0]
    assert torch.topk(torch.tensor(5.0), 0)[0].item() == 5.0
    x = torch.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    torch.linalg.slogdet(x)[1].backward()
    assert x.grad.tolist() == [[-INF, INF], [INF, -INF]]
    z = torch.zeros(2, 2, requires_grad=True)
    torch.logdet(z).backward()
    assert z.grad[1, 1].item() == INF and torch.isnan(z.grad[0]).all()
    assert math.isnan(torch.linalg.det(torch.tensor([[NAN, 1.0], [1.0, 1.0]])).item())
    assert torch.linalg.slogdet(torch.tensor([[NAN, 1.0], [1.0, 1.0]]))[0].item() == 0.0
    for ours, theirs in zip(_kl_pairs(mt), _kl_pairs(torch)):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    for name in ("erfcx", "i1", "i0e", "i1e", "log_ndtr"):
        a = mt.tensor(SPECIAL_X, dtype=mt.float64, requires_grad=True)
        b = torch.tensor(SPECIAL_X, dtype=torch.float64, requires_grad=True)
        ya, yb = getattr(mt.special, name)(a), getattr(torch.special, name)(b)
        ya.sum().backward()
        yb.sum().backward()
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-10, err_msg=name)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, err_msg=name)
    for shape in ((0, 3, 3),):
        for fn in ("qr", "eigh", "pinv"):
            t = torch.ones(*shape, requires_grad=True)
            r = getattr(torch.linalg, fn)(t)
            sum(v.sum() for v in (r if isinstance(r, tuple) else (r,))).backward()
            assert t.grad.shape == shape
