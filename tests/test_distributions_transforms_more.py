"""The transforms of transforms_more.py: round trips, codomains, shapes, log|det J| against numerical
Jacobians in float64 (central differences), gradients by finite differences, Cat / Stack / Independent /
Reshape against applying their parts by hand, and (marked torch) torch.distributions.transforms."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.distributions as D
from minitensor.testing import gradcheck

RNG = np.random.default_rng(0)


def t64(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


def _numerical_log_det(f, x, pick=lambda y: y.ravel()):
    """log |det d pick(f(x)) / dx| by central differences over x's entries (x one event)."""
    h = 1e-6
    cols = []
    for e in np.eye(x.size):
        e = e.reshape(x.shape)
        cols.append((pick(f(t64(x + h * e)).numpy()) - pick(f(t64(x - h * e)).numpy())) / (2 * h))
    return np.linalg.slogdet(np.stack(cols, -1))[1]


def test_pointwise_transforms():
    x = RNG.standard_normal((2, 3))
    for t in (D.SoftplusTransform(), D.CumulativeDistributionTransform(D.Normal(t64(0.5), t64(2.0)))):
        y = t(t64(x))
        np.testing.assert_allclose(t.inv(y).numpy(), x, rtol=1e-9, atol=1e-12)
        h = 1e-6
        deriv = (t(t64(x + h)).numpy() - t(t64(x - h)).numpy()) / (2 * h)
        np.testing.assert_allclose(t.log_abs_det_jacobian(t64(x), y).numpy(), np.log(deriv), rtol=1e-6)
        assert t.codomain.check(y).all().item() and t.sign == 1 and t.bijective
        gradcheck(lambda v: t(v), [t64(x, grad=True)])
    np.testing.assert_allclose(D.SoftplusTransform()(t64(x)).numpy(), np.logaddexp(0, x), rtol=1e-12)
    a = D.AbsTransform()
    np.testing.assert_array_equal(a(t64(x)).numpy(), np.abs(x))
    assert a.inv(t64([2.0])).item() == 2.0 and not a.bijective


def test_softmax_and_stick_breaking():
    x = RNG.standard_normal((2, 3))
    sm = D.SoftmaxTransform()
    np.testing.assert_allclose(sm(t64(x)).numpy(), np.exp(x) / np.exp(x).sum(-1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(sm(sm.inv(sm(t64(x)))).numpy(), sm(t64(x)).numpy(), rtol=1e-12)
    sb = D.StickBreakingTransform()
    y = sb(t64(x))
    assert y.shape == (2, 4) and sb.codomain.check(y).all().item()
    assert sb.forward_shape((2, 3)) == (2, 4) and sb.inverse_shape((2, 4)) == (2, 3)
    np.testing.assert_allclose(sb.inv(y).numpy(), x, rtol=1e-10)
    np.testing.assert_allclose(sb(t64(np.zeros(3))).numpy(), 0.25, rtol=1e-12)  # x = 0: the simplex's centre
    ladj = sb.log_abs_det_jacobian(t64(x), y).numpy()
    for i in range(2):
        np.testing.assert_allclose(ladj[i], _numerical_log_det(sb, x[i], lambda v: v[:-1]), rtol=1e-6)
    gradcheck(lambda v: sb(v), [t64(x, grad=True)])
    gradcheck(lambda v: sb.log_abs_det_jacobian(v, sb(v)), [t64(x, grad=True)])


def test_cholesky_transforms():
    x = RNG.standard_normal((2, 3, 3))
    lc = D.LowerCholeskyTransform()
    L = lc(t64(x))
    assert lc.codomain.check(L).all().item()
    np.testing.assert_allclose(L.numpy(), np.tril(x, -1) + np.stack([np.diag(np.exp(np.diag(m))) for m in x]))
    np.testing.assert_allclose(lc.inv(L).numpy(), np.tril(x), rtol=1e-12)
    pd = D.PositiveDefiniteTransform()
    P = pd(t64(x))
    assert pd.codomain.check(P).all().item()
    np.testing.assert_allclose(P.numpy(), L.numpy() @ L.numpy().transpose(0, 2, 1), rtol=1e-12)
    np.testing.assert_allclose(pd.inv(P).numpy(), np.tril(x), rtol=1e-9, atol=1e-12)
    gradcheck(lambda v: pd(v), [t64(x, grad=True)])


def test_corr_cholesky_transform():
    cc = D.CorrCholeskyTransform()
    x = RNG.standard_normal((2, 6))
    L = cc(t64(x))
    assert L.shape == (2, 4, 4) and cc.codomain.check(L).all().item()
    corr = L.numpy() @ L.numpy().transpose(0, 2, 1)
    np.testing.assert_allclose(np.diagonal(corr, axis1=1, axis2=2), 1.0, rtol=1e-12)
    assert (np.linalg.eigvalsh(corr) > 0).all()
    np.testing.assert_allclose(cc.inv(L).numpy(), x, rtol=1e-9, atol=1e-12)
    assert cc.forward_shape((2, 6)) == (2, 4, 4) and cc.inverse_shape((2, 4, 4)) == (2, 6)
    with pytest.raises(ValueError, match="flattened lower-diagonal"):
        cc.forward_shape((5,))
    rows, cols = np.tril_indices(4, -1)
    ladj = cc.log_abs_det_jacobian(t64(x), L).numpy()
    for i in range(2):
        np.testing.assert_allclose(ladj[i], _numerical_log_det(cc, x[i], lambda m: m[rows, cols]), rtol=1e-6)
    gradcheck(lambda v: cc(v), [t64(x, grad=True)])


def test_structural_transforms():
    x = RNG.standard_normal((5, 2, 3))
    r = D.ReshapeTransform((2, 3), (6,))
    assert r(t64(x)).shape == (5, 6) and r.inv(r(t64(x))).shape == (5, 2, 3)
    assert r.log_abs_det_jacobian(t64(x), r(t64(x))).shape == (5,)
    assert r.forward_shape((5, 2, 3)) == (5, 6) and r.inverse_shape((5, 6)) == (5, 2, 3)
    with pytest.raises(ValueError, match="different numbers"):
        D.ReshapeTransform((2, 3), (5,))
    ind = D.IndependentTransform(D.ExpTransform(), 1)
    assert ind.domain.event_dim == 1 and repr(ind) == "IndependentTransform(ExpTransform(), 1)"
    np.testing.assert_allclose(ind.log_abs_det_jacobian(t64(x), ind(t64(x))).numpy(), x.sum(-1), rtol=1e-12)
    parts = [D.ExpTransform(), D.AffineTransform(1.0, 2.0), D.SoftplusTransform()]
    c = D.CatTransform(parts, dim=-1, lengths=[1, 1, 1])
    y = c(t64(x))
    want = np.concatenate([np.exp(x[..., :1]), 1 + 2 * x[..., 1:2], np.logaddexp(0, x[..., 2:])], -1)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(c.inv(y).numpy(), x, rtol=1e-10)
    ladj = np.concatenate([x[..., :1], np.full_like(x[..., :1], np.log(2)), -np.logaddexp(0, -x[..., 2:])], -1)
    np.testing.assert_allclose(c.log_abs_det_jacobian(t64(x), y).numpy(), ladj, rtol=1e-12)
    s = D.StackTransform(parts, dim=-1)
    np.testing.assert_allclose(s(t64(x)).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(s.log_abs_det_jacobian(t64(x), s(t64(x))).numpy(), ladj, rtol=1e-12)
    np.testing.assert_allclose(s.inv(s(t64(x))).numpy(), x, rtol=1e-10)
    assert c.bijective and s.bijective and c.domain.check(t64(x)).all().item()
    assert s.codomain.check(s(t64(x))).all().item()
    with pytest.raises(AssertionError, match="must equal"):
        D.StackTransform(parts, dim=0)(t64(x))
    np.testing.assert_array_equal(D.identity_transform(t64(x)).numpy(), x)


@pytest.mark.torch
def test_against_torch():
    torch = pytest.importorskip("torch")
    cases = [("SoftplusTransform", (2, 3)), ("StickBreakingTransform", (2, 3)), ("CorrCholeskyTransform", (2, 6)),
             ("SoftmaxTransform", (2, 3)), ("LowerCholeskyTransform", (2, 3, 3)),
             ("PositiveDefiniteTransform", (2, 3, 3)), ("AbsTransform", (2, 3))]
    for name, shape in cases:
        x = RNG.standard_normal(shape)
        ours, theirs = getattr(D, name)(), getattr(torch.distributions, name)()
        y_mt, y_t = ours(t64(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(y_mt.numpy(), y_t.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(ours.inv(y_mt).numpy(), theirs.inv(y_t).numpy(), rtol=1e-9, atol=1e-12)
        if name in ("SoftplusTransform", "StickBreakingTransform", "CorrCholeskyTransform"):
            np.testing.assert_allclose(ours.log_abs_det_jacobian(t64(x), y_mt).numpy(),
                                       theirs.log_abs_det_jacobian(torch.tensor(x), y_t).numpy(), rtol=1e-12)
        assert repr(ours.codomain) == repr(theirs.codomain)
