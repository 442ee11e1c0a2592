"""LKJCholesky: its density integrates to 1 (D = 2, by quadrature), the correlations of its samples have the
LKJ marginals ((r + 1) / 2 ~ Beta(eta - 1 + D / 2, eta - 1 + D / 2)), finite-difference gradients, and (marked
torch) PyTorch's log_prob on the same values."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

import minitensor as mt
import minitensor.distributions as D
from minitensor.testing import gradcheck


def t64(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


def _chol2(r):
    return t64([[[1.0, 0.0], [v, np.sqrt(1 - v * v)]] for v in np.atleast_1d(r)])


@pytest.mark.parametrize("eta", [0.5, 1.0, 3.0])
def test_lkj_density_integrates_to_one(eta):
    d = D.LKJCholesky(2, t64(eta))
    total = integrate.quad(lambda r: np.exp(d.log_prob(_chol2(r)).item()), -1, 1)[0]
    np.testing.assert_allclose(total, 1.0, rtol=1e-7)


@pytest.mark.parametrize("dim, eta", [(2, 0.7), (3, 1.0), (4, 2.5)])
def test_lkj_samples_have_the_marginals(dim, eta):
    d = D.LKJCholesky(dim, t64(eta))
    mt.manual_seed(6)
    L = d.sample((20_000,))
    assert L.shape == (20_000, dim, dim) and bool(d.support.check(L).all())
    corr = (L @ L.mT).numpy()
    a = eta - 1 + dim / 2
    for i, j in [(1, 0), (dim - 1, 0), (dim - 1, dim - 2)]:  # PyTorch's sampler fails the last two for D >= 3
        assert stats.kstest((corr[:, i, j] + 1) / 2, stats.beta(a, a).cdf).pvalue > 1e-3


def test_lkj_shapes_gradients_and_errors():
    d = D.LKJCholesky(3, t64([0.5, 2.0]))
    assert d.batch_shape == (2,) and d.event_shape == (3, 3)
    assert d.expand((4, 2)).sample((3,)).shape == (3, 4, 2, 3, 3)
    L = d.sample()
    gradcheck(lambda c: D.LKJCholesky(3, c).log_prob(L), [t64([0.5, 2.0], grad=True)])
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        D.LKJCholesky(1)
    with pytest.raises(ValueError, match="support"):
        d.log_prob(t64(np.eye(3) * 2))


@pytest.mark.torch
def test_lkj_against_torch():
    torch = pytest.importorskip("torch")
    for dim, eta in [(2, 1.0), (3, 0.5), (4, 2.5)]:
        d = D.LKJCholesky(dim, t64([eta, 1.3]))
        mt.manual_seed(0)
        L = d.sample((5,))
        want = torch.distributions.LKJCholesky(dim, torch.tensor([eta, 1.3], dtype=torch.float64)).log_prob(
            torch.tensor(L.numpy()))
        np.testing.assert_allclose(d.log_prob(L).numpy(), want.numpy(), rtol=1e-12)
