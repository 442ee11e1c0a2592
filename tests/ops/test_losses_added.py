"""The added losses and distances (kl_div, cosine_similarity, pairwise_distance, pdist, the margin and embedding
losses, poisson_nll_loss, gaussian_nll_loss) and their modules: forward against NumPy float64 references
written here, over shapes and reductions (hypothesis), gradients by finite differences (gradcheck),
PyTorch's corner cases and errors. tests/ops/test_losses_added_torch.py compares with PyTorch itself."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=15, deadline=None)
REDUCTIONS = st.sampled_from(["mean", "sum", "none"])
SEEDS = st.integers(0, 2**31)
SIZES = st.integers(1, 4)


def f64(a, requires_grad=False):
    return mt.tensor(np.asarray(a, dtype=np.float64), dtype=mt.float64, requires_grad=requires_grad)


def reduce_ref(losses, reduction):
    return losses.mean() if reduction == "mean" else losses.sum() if reduction == "sum" else losses


def check(fn, arrays, grads, ref, reduction, **kwargs):
    """fn(*tensors, reduction=..., **kwargs) against ref(*arrays), then gradcheck for the inputs in ``grads``."""
    tensors = [f64(a, g) if a.dtype.kind == "f" else mt.tensor(a) for a, g in zip(arrays, grads)]
    out = fn(*tensors, reduction=reduction, **kwargs)
    want = reduce_ref(ref(*arrays), reduction)
    assert out.dtype == mt.float64 and tuple(out.shape) == np.shape(want)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda *t: fn(*t, reduction=reduction, **kwargs), tensors)


def softplus_ref(z):
    return np.logaddexp(0, z)


def pnorm_ref(d, p, axis=-1):
    a = np.abs(d)
    if p == 0:
        return (a != 0).sum(axis).astype(d.dtype)
    if p == math.inf:
        return a.max(axis, initial=0.0)
    return (a ** p).sum(axis) ** (1 / p)


# --------------------------------------------------------------------------------------------- kl_div
@SETTINGS
@given(seed=SEEDS, n=SIZES, c=SIZES, reduction=REDUCTIONS, log_target=st.booleans())
def test_kl_div_matches_its_definition(seed, n, c, reduction, log_target):
    rng = np.random.default_rng(seed)
    x, t = rng.standard_normal((n, c)), rng.random(c) + 0.05  # t broadcasts over the rows
    t = np.log(t) if log_target else t
    ref = (lambda x, t: np.exp(t) * (t - x)) if log_target else (lambda x, t: t * (np.log(t) - x) + 0 * x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(F.kl_div, [x, t], [True, True], ref, reduction, log_target=log_target)


def test_kl_div_zero_targets_contribute_zero_and_batchmean_divides_by_the_batch():
    x, t = f64([[-1.0, -2.0], [-0.5, -3.0]], True), f64([[0.0, 1.0], [0.25, 0.75]])
    loss = F.kl_div(x, t, reduction="batchmean")
    want = (1.0 * (0 + 2.0) + 0.25 * (math.log(0.25) + 0.5) + 0.75 * (math.log(0.75) + 3.0)) / 2
    assert loss.item() == pytest.approx(want, rel=1e-12)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), -t.numpy() / 2)
    assert F.kl_div(f64(-1.0), f64(0.5), reduction="batchmean").item() == pytest.approx(0.5 * (math.log(0.5) + 1))
    assert F.kl_div(x, t, reduction="none")[0, 0].item() == 0.0
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(x, t)
    with warnings.catch_warnings(record=True) as caught:  # the legacy flags choose the reduction: PyTorch's
        warnings.simplefilter("always")  # deprecation warning, without the 'mean' one
        assert F.kl_div(x, t, size_average=False).item() == pytest.approx(2 * want)
    assert [str(w.message) for w in caught] == [
        "size_average and reduce args will be deprecated, please use reduction='sum' instead."]


def test_kl_div_target_gradient_is_nan_at_zero_as_pytorchs_xlogy():
    t = f64([0.0, 0.5], True)
    F.kl_div(f64([-1.0, -1.0]), t, reduction="sum").backward()
    assert math.isnan(t.grad.tolist()[0]) and t.grad.tolist()[1] == pytest.approx(math.log(0.5) + 1 + 1)


# ------------------------------------------------------------------------------------------ distances
@SETTINGS
@given(seed=SEEDS, n=SIZES, d=SIZES, dim=st.sampled_from([0, 1, -1]), eps=st.sampled_from([1e-8, 0.5]))
def test_cosine_similarity_matches_its_definition(seed, n, d, dim, eps):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((n, d)), rng.standard_normal((1, d))
    x1, x2 = f64(a, True), f64(b, True)
    out = F.cosine_similarity(x1, x2, dim, eps)
    a, b = np.broadcast_arrays(a, b)
    norms = [np.maximum(np.linalg.norm(v, axis=dim), eps) for v in (a, b)]
    np.testing.assert_allclose(out.detach().numpy(), (a * b).sum(dim) / norms[0] / norms[1], rtol=1e-10)
    if all((np.linalg.norm(v, axis=dim) > eps).all() for v in (a, b)):  # the floor has no gradient (below)
        assert gradcheck(lambda u, v: F.cosine_similarity(u, v, dim, eps), [x1, x2])
    assert mt.cosine_similarity is F.cosine_similarity and mt.nn.CosineSimilarity(dim, eps)(x1, x2).allclose(out)


def test_cosine_similarity_floors_the_norms_without_their_gradient():
    """PyTorch clamps the norms in place under no_grad: the value uses max(||x||, eps), the gradient flows
    through ||x|| as if unclamped (d/dx1 = x2 / (e n2) - (x1.x2) x1 / (e^2 n2 ||x1||) with e = eps)."""
    x1, x2 = f64([[1e-9, 0.0]], True), f64([[1.0, 2.0]])
    F.cosine_similarity(x1, x2, eps=1e-8).backward()
    n2 = math.sqrt(5)
    want = np.array([1.0, 2.0]) / (1e-8 * n2) - 1e-9 / (1e-16 * n2) * np.array([1.0, 0.0])
    np.testing.assert_allclose(x1.grad.numpy()[0], want, rtol=1e-9)
    assert F.cosine_similarity(mt.zeros(2, 3), mt.ones(2, 3)).tolist() == [0.0, 0.0]


@SETTINGS
@given(seed=SEEDS, n=SIZES, d=SIZES, p=st.sampled_from([1, 2, 3.5, -1, math.inf, -math.inf]),
       keepdim=st.booleans())
def test_pairwise_distance_matches_its_definition(seed, n, d, p, keepdim):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((n, d)), rng.standard_normal(d)
    x1, x2 = f64(a, True), f64(b, True)
    out = F.pairwise_distance(x1, x2, p, 1e-6, keepdim)
    diff = a - b + 1e-6
    want = np.abs(diff).min(-1) if p == -math.inf else pnorm_ref(diff, p)
    np.testing.assert_allclose(out.detach().numpy(), want[:, None] if keepdim else want, rtol=1e-10)
    assert gradcheck(lambda u, v: F.pairwise_distance(u, v, p, 1e-6, keepdim), [x1, x2])
    assert mt.nn.PairwiseDistance(p, keepdim=keepdim)(x1, x2).allclose(out)


@SETTINGS
@given(seed=SEEDS, n=st.integers(0, 5), m=st.integers(1, 4), p=st.sampled_from([0, 0.5, 1, 1.5, 2, 3, math.inf]))
def test_pdist_matches_the_upper_triangle_of_the_distance_matrix(seed, n, m, p):
    x = np.random.default_rng(seed).standard_normal((n, m))
    rows = mt.triu_indices(n, n, 1).numpy() if n else np.zeros((2, 0), int)
    xt = f64(x, True)
    out = F.pdist(xt, p)
    np.testing.assert_allclose(out.detach().numpy(), pnorm_ref(x[rows[0]] - x[rows[1]], p), rtol=1e-10)
    if n > 1 and p != 0:
        assert gradcheck(lambda t: F.pdist(t, p), [xt])
    assert mt.pdist is F.pdist and out.dtype == mt.float64


@pytest.mark.parametrize("p", [0, 0.5, 1, 2, 3, math.inf])
def test_pdist_gradient_at_a_zero_distance_is_zero(p):
    x = f64([[1.0, 2.0], [1.0, 2.0], [0.0, 4.0]], True)
    d = F.pdist(x, p)
    assert d.tolist()[0] == 0.0 and d.requires_grad
    d.backward(f64([1.0, 0.0, 0.0]))
    assert np.all(x.grad.numpy() == 0)


def test_pdist_gives_each_tied_maximum_the_whole_gradient_for_p_inf():
    x = f64([[0.0, 0.0], [1.0, -1.0]], True)
    F.pdist(x, math.inf).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[-1.0, 1.0], [1.0, -1.0]])


def test_distances_take_the_default_float_dtype():
    assert F.pdist(mt.randn(4, 3)).dtype == mt.float32 and F.pdist(mt.randn(3, 0)).tolist() == [0.0] * 3
    assert F.pairwise_distance(mt.tensor([[1, 2]]), mt.tensor([[2, 1]])).dtype == mt.float32
    assert F.cosine_similarity(mt.tensor([[3, 4]]), mt.tensor([[4.0, 3.0]])).tolist() == [pytest.approx(0.96)]
    assert F.cosine_similarity(mt.randn(3, 1, 5), mt.randn(4, 5), dim=-1).shape == (3, 4)


# ---------------------------------------------------------------------------- margin and embedding losses
def _signs(rng, *shape):
    return rng.choice([-1.0, 1.0], size=shape)


@SETTINGS
@given(seed=SEEDS, n=SIZES, reduction=REDUCTIONS, margin=st.sampled_from([0.0, 0.5]))
def test_margin_ranking_loss(seed, n, reduction, margin):
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(n), rng.standard_normal(n), _signs(rng, n)]
    check(F.margin_ranking_loss, args, [True, True, True],
          lambda a, b, y: np.maximum(0, -y * (a - b) + margin), reduction, margin=margin)


@SETTINGS
@given(seed=SEEDS, n=SIZES, c=SIZES, reduction=REDUCTIONS, margin=st.sampled_from([1.0, 0.3]))
def test_hinge_embedding_loss_broadcasts_target(seed, n, c, reduction, margin):
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal((n, c)), _signs(rng, c)]
    check(F.hinge_embedding_loss, args, [True, False],
          lambda x, y: np.where(y == 1, x, np.maximum(0, margin - x)), reduction, margin=margin)


@SETTINGS
@given(seed=SEEDS, n=SIZES, d=SIZES, reduction=REDUCTIONS, margin=st.sampled_from([0.0, -0.3, 0.4]))
def test_cosine_embedding_loss(seed, n, d, reduction, margin):
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal((n, d)), rng.standard_normal((n, d)), _signs(rng, n)]

    def ref(a, b, y):
        cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
        return np.where(y == 1, 1 - cos, np.maximum(0, cos - margin))
    check(F.cosine_embedding_loss, args, [True, True, False], ref, reduction, margin=margin)


@SETTINGS
@given(seed=SEEDS, n=SIZES, c=SIZES, reduction=REDUCTIONS)
def test_soft_margin_loss(seed, n, c, reduction):
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal((n, c)) * 4, _signs(rng, c)]
    check(F.soft_margin_loss, args, [True, False], lambda x, y: softplus_ref(-y * x), reduction)


def test_soft_margin_loss_is_finite_where_exp_overflows():
    x = f64([-1000.0, 1000.0], True)
    loss = F.soft_margin_loss(x, f64([1.0, 1.0]), reduction="sum")
    assert loss.item() == pytest.approx(1000.0)
    loss.backward()
    assert x.grad.tolist() == [-1.0, 0.0]


@SETTINGS
@given(seed=SEEDS, shape=st.lists(SIZES, min_size=1, max_size=3), reduction=REDUCTIONS, weighted=st.booleans())
def test_multilabel_soft_margin_loss(seed, shape, reduction, weighted):
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(shape), (rng.random(shape) > 0.5) * 1.0]
    w = rng.random(shape[-1]) if weighted else None

    def ref(x, t):
        losses = t * softplus_ref(-x) + (1 - t) * softplus_ref(x)
        return (losses if w is None else losses * w).mean(-1)
    check(F.multilabel_soft_margin_loss, args, [True, True], ref, reduction,
          weight=None if w is None else f64(w))


@SETTINGS
@given(seed=SEEDS, n=st.integers(1, 4), c=st.integers(1, 5), p=st.sampled_from([1, 2]), reduction=REDUCTIONS,
       margin=st.sampled_from([1.0, 0.4]), weighted=st.booleans())
def test_multi_margin_loss(seed, n, c, p, reduction, margin, weighted):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((n, c)), rng.integers(0, c, n)
    w = rng.random(c) + 0.5 if weighted else np.ones(c)

    def ref(x, y):
        z = np.maximum(0, margin - x[np.arange(n), y][:, None] + x) ** p * w[y][:, None]
        z[np.arange(n), y] = 0
        return z.sum(1) / c
    check(F.multi_margin_loss, [x, y], [True, False], ref, reduction, p=p, margin=margin,
          weight=f64(w) if weighted else None)


def test_multi_margin_loss_shapes_of_one_sample():
    x = f64([0.2, 1.0, -0.5], True)
    assert F.multi_margin_loss(x, mt.tensor(1), reduction="none").shape == ()
    assert F.multi_margin_loss(x, mt.tensor([1]), reduction="none").shape == (1,)
    assert F.multi_margin_loss(f64(3.0), mt.tensor(0)).item() == 0.0
    assert F.multi_margin_loss(mt.randn(0, 3), mt.tensor([], dtype=mt.int64), reduction="none").shape == (0,)


@SETTINGS
@given(seed=SEEDS, n=SIZES, d=SIZES, p=st.sampled_from([1, 2, 3]), swap=st.booleans(), reduction=REDUCTIONS)
def test_triplet_margin_loss(seed, n, d, p, swap, reduction):
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal((n, d)) for _ in range(3)]

    def ref(a, pos, neg):
        dist = lambda u, v: pnorm_ref(u - v + 1e-6, p)  # noqa: E731
        d_neg = np.minimum(dist(a, neg), dist(pos, neg)) if swap else dist(a, neg)
        return np.maximum(0, 0.5 + dist(a, pos) - d_neg)
    check(F.triplet_margin_loss, args, [True] * 3, ref, reduction, margin=0.5, p=p, swap=swap)


# ------------------------------------------------------------------------------ likelihood losses
@SETTINGS
@given(seed=SEEDS, n=SIZES, c=SIZES, reduction=REDUCTIONS, log_input=st.booleans(), full=st.booleans())
def test_poisson_nll_loss(seed, n, c, reduction, log_input, full):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c)) if log_input else rng.random((n, c)) + 0.1
    t = rng.integers(0, 6, c) + rng.random(c) * 0.5  # around 1, where Stirling's term starts

    def ref(x, t):
        losses = np.exp(x) - t * x if log_input else x - t * np.log(x + 1e-8)
        if full:
            s = np.where(t > 1, t, 1.0)
            losses = losses + np.where(t > 1, s * np.log(s) - s + 0.5 * np.log(2 * np.pi * s), 0)
        return losses
    check(F.poisson_nll_loss, [x, t], [True, True], ref, reduction, log_input=log_input, full=full)


@SETTINGS
@given(seed=SEEDS, n=SIZES, c=SIZES, reduction=REDUCTIONS, full=st.booleans(),
       var_shape=st.sampled_from(["same", "short", "one", "float"]))
def test_gaussian_nll_loss(seed, n, c, reduction, full, var_shape):
    rng = np.random.default_rng(seed)
    x, t = rng.standard_normal((n, c)), rng.standard_normal((n, c))
    v = {"same": (n, c), "short": (n,), "one": (n, 1), "float": ()}[var_shape]
    var = rng.random(v) + 0.05
    var_arg = float(var) if var_shape == "float" else f64(var, True)
    var_b = var[:, None] if var_shape == "short" else var
    want = reduce_ref(0.5 * (np.log(var_b) + (x - t) ** 2 / var_b) + (0.5 * np.log(2 * np.pi) if full else 0),
                      reduction)
    xt, tt = f64(x, True), f64(t, True)
    out = F.gaussian_nll_loss(xt, tt, var_arg, full=full, reduction=reduction)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10)
    inputs = [xt, tt] + ([] if var_shape == "float" else [var_arg])
    assert gradcheck(lambda *a: F.gaussian_nll_loss(*a[:2], a[2] if len(a) > 2 else var_arg, full=full,
                                                    reduction=reduction), inputs)


def test_gaussian_nll_loss_floors_var_at_eps_without_its_gradient():
    var = f64([1e-8], True)
    loss = F.gaussian_nll_loss(f64([1.0]), f64([0.0]), var, eps=1e-6, reduction="sum")
    assert loss.item() == pytest.approx(0.5 * (math.log(1e-6) + 1e6))
    loss.backward()
    assert var.grad.item() == pytest.approx(0.5 * (1e6 - 1e12))  # d/dv at v = eps, passed to var unclamped


# ------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call, error, match", [
    (lambda: F.kl_div(mt.tensor([1, 2]), mt.tensor([0.5, 0.5])), RuntimeError, "Integral inputs"),
    (lambda: F.kl_div(mt.randn(2), mt.rand(2), reduction="avg"), ValueError, "not a valid value"),
    (lambda: F.cosine_similarity(mt.tensor([[1, 2]]), mt.tensor([[2, 1]])), RuntimeError, "common dtype is Long"),
    (lambda: F.cosine_similarity(mt.randn(3, 5), mt.randn(4, 5)), RuntimeError, r"size of tensor a \(3\)"),
    (lambda: F.cosine_similarity(mt.randn(5), mt.randn(5)), IndexError, "Dimension out of range"),
    (lambda: F.pdist(mt.randn(5)), RuntimeError, "only supports 2D tensors, got: 1D"),
    (lambda: F.pdist(mt.tensor([[1, 2]])), RuntimeError, "floating-point dtypes"),
    (lambda: F.pdist(mt.randn(3, 2), p=-1), RuntimeError, "non-negative p"),
    (lambda: F.pdist(mt.randn(3, 2).half()), NotImplementedError, "'Half'"),
    (lambda: F.margin_ranking_loss(mt.randn(3), mt.randn(3), mt.ones(1, 3)), RuntimeError, "same dimension"),
    (lambda: F.cosine_embedding_loss(mt.randn(3, 4), mt.randn(3, 4), mt.ones(3, 1)), RuntimeError,
     "0D or 1D target"),
    (lambda: F.cosine_embedding_loss(mt.randn(3, 4), mt.randn(4), mt.ones(3)), RuntimeError,
     r"1D target tensor expects 2D input tensors, but found inputs with sizes \[3, 4\] and \[4\]"),
    (lambda: F.soft_margin_loss(mt.randn(4), mt.ones(3, 4)), RuntimeError, "doesn't match the broadcast shape"),
    (lambda: F.soft_margin_loss(mt.tensor([1, 2]), mt.tensor([1, -1])), RuntimeError, "output type Long"),
    (lambda: F.multi_margin_loss(mt.randn(3, 4), mt.tensor([0, 1, 2]), p=3), ValueError, "only p == 1 and p == 2"),
    (lambda: F.multi_margin_loss(mt.randn(3, 4), mt.tensor([0, 1, 2]), weight=mt.ones(1, 4)), ValueError,
     "one-dimensional"),
    (lambda: F.multi_margin_loss(mt.randn(3, 4), mt.tensor([0, 1, 2]), weight=mt.ones(3)), RuntimeError,
     "inconsistent weight size, expected 4"),
    (lambda: F.multi_margin_loss(mt.randn(3, 4), mt.tensor([0, 1, 4])), RuntimeError, "target out of range"),
    (lambda: F.multi_margin_loss(mt.randn(3, 4), mt.tensor([0, 1, -1])), RuntimeError, "target out of range"),
    (lambda: F.multi_margin_loss(mt.randn(3, 4), mt.tensor([0.0, 1, 2])), RuntimeError, "Long but found Float"),
    (lambda: F.multi_margin_loss(mt.randn(3, 4), mt.tensor([0, 1])), RuntimeError, r"Expected target size \[3\]"),
    (lambda: F.multi_margin_loss(mt.randn(2, 3, 4), mt.tensor([0, 1])), RuntimeError, "non-empty vector or matrix"),
    (lambda: F.multi_margin_loss(mt.randn(3, 0), mt.tensor([0, 0, 0])), RuntimeError, "non-empty vector or matrix"),
    (lambda: F.triplet_margin_loss(mt.randn(3, 4), mt.randn(3, 4), mt.randn(3, 4), margin=0), ValueError,
     "margin must be greater than 0"),
    (lambda: F.triplet_margin_loss(mt.randn(3, 4), mt.randn(3, 4), mt.randn(4)), RuntimeError,
     "anchor 2D, positive 2D, and negative 1D"),
    (lambda: F.poisson_nll_loss(mt.randn(3), mt.rand(3), reduction="x"), ValueError, "not a valid value"),
    (lambda: F.gaussian_nll_loss(mt.randn(3), mt.randn(3), -1.0), ValueError, "var has negative entry"),
    (lambda: F.gaussian_nll_loss(mt.randn(3), mt.randn(3), -mt.ones(3)), ValueError, "var has negative entry"),
    (lambda: F.gaussian_nll_loss(mt.randn(3, 4), mt.randn(3, 4), mt.ones(4)), ValueError, "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(mt.randn(3, 4), mt.randn(3, 4), mt.ones(1, 1)), ValueError, "incorrect size"),
    (lambda: F.gaussian_nll_loss(mt.randn(3, 4), mt.randn(3, 4), 1), TypeError, "must be Tensor"),
    (lambda: F.gaussian_nll_loss(mt.randn(3), mt.randn(3), mt.ones(3), reduction="x"), ValueError, "not a valid"),
    (lambda: mt.nn.TripletMarginLoss(margin=-1.0), ValueError, "TripletMarginLoss: expected margin"),
    (lambda: mt.nn.MultiMarginLoss(p=3), ValueError, "only p == 1 and p == 2"),
    (lambda: mt.nn.MultiMarginLoss(weight=mt.ones(2, 2)), ValueError, "got 2D instead"),
])
def test_bad_input_raises_pytorchs_error(call, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=match):
            call()


# ------------------------------------------------------------------------------------------ modules
@pytest.mark.parametrize("module, defaults", [
    ("KLDivLoss", {"reduction": "mean", "log_target": False}),
    ("PoissonNLLLoss", {"log_input": True, "full": False, "eps": 1e-8, "reduction": "mean"}),
    ("GaussianNLLLoss", {"full": False, "eps": 1e-6, "reduction": "mean"}),
    ("MarginRankingLoss", {"margin": 0.0, "reduction": "mean"}),
    ("HingeEmbeddingLoss", {"margin": 1.0, "reduction": "mean"}),
    ("CosineEmbeddingLoss", {"margin": 0.0, "reduction": "mean"}),
    ("SoftMarginLoss", {"reduction": "mean"}),
    ("MultiLabelSoftMarginLoss", {"weight": None, "reduction": "mean"}),
    ("MultiMarginLoss", {"p": 1, "margin": 1.0, "weight": None, "reduction": "mean"}),
    ("TripletMarginLoss", {"margin": 1.0, "p": 2.0, "eps": 1e-6, "swap": False, "reduction": "mean"}),
    ("CosineSimilarity", {"dim": 1, "eps": 1e-8}),
    ("PairwiseDistance", {"norm": 2.0, "eps": 1e-6, "keepdim": False}),
])
def test_modules_have_pytorchs_defaults(module, defaults):
    m = getattr(mt.nn, module)()
    assert {k: getattr(m, k) for k in defaults} == defaults and repr(m) == f"{module}()"
    assert module in mt.nn.__all__


def test_loss_modules_call_their_functions_with_their_options():
    x, y = mt.randn(4, 3), mt.randn(4, 3)
    t = mt.tensor([1.0, -1.0, 1.0, -1.0])
    classes = mt.tensor([0, 2, 1, 2])
    pairs = [
        (mt.nn.KLDivLoss(reduction="batchmean", log_target=True)(x, y), F.kl_div(x, y, reduction="batchmean",
                                                                                 log_target=True)),
        (mt.nn.PoissonNLLLoss(full=True, reduction="sum")(x, y.abs()), F.poisson_nll_loss(x, y.abs(), full=True,
                                                                                           reduction="sum")),
        (mt.nn.GaussianNLLLoss(eps=0.1)(x, y, 0.5), F.gaussian_nll_loss(x, y, 0.5, eps=0.1)),
        (mt.nn.MarginRankingLoss(0.5)(x[:, 0], y[:, 0], t), F.margin_ranking_loss(x[:, 0], y[:, 0], t, 0.5)),
        (mt.nn.HingeEmbeddingLoss(2.0, reduction="none")(x[:, 0], t), F.hinge_embedding_loss(x[:, 0], t, 2.0,
                                                                                                reduction="none")),
        (mt.nn.CosineEmbeddingLoss(0.3)(x, y, t), F.cosine_embedding_loss(x, y, t, 0.3)),
        (mt.nn.SoftMarginLoss(reduction="sum")(x[:, 0], t), F.soft_margin_loss(x[:, 0], t, reduction="sum")),
        (mt.nn.MultiLabelSoftMarginLoss(mt.ones(3) * 2)(x, y > 0), F.multilabel_soft_margin_loss(
            x, (y > 0).float(), weight=mt.ones(3) * 2)),
        (mt.nn.MultiMarginLoss(2, 0.5, mt.ones(3))(x, classes), F.multi_margin_loss(x, classes, 2, 0.5, mt.ones(3))),
        (mt.nn.TripletMarginLoss(0.5, p=1.0, swap=True)(x, y, -x), F.triplet_margin_loss(x, y, -x, 0.5, 1.0,
                                                                                          swap=True)),
    ]
    for got, want in pairs:
        assert got.dtype == mt.float32 and got.shape == want.shape and got.allclose(want)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert mt.nn.SoftMarginLoss(size_average=False).reduction == "sum"
    m = mt.nn.MultiLabelSoftMarginLoss(weight=mt.ones(3))
    assert "weight" in dict(m.named_buffers())
