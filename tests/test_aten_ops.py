"""The top-level ATen forms (_aten_ops.py, _rnn_cells.py, _linalg_removed.py) and the other torch.* functions
added with them: against float64 NumPy references and finite differences, and PyTorch where marked."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

RNG = np.random.default_rng(0)


def t64(*shape, requires_grad=False):
    return mt.tensor(RNG.standard_normal(shape), requires_grad=requires_grad)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# ------------------------------------------------------------------ convolution, padding, pooling
@pytest.mark.parametrize("n", [1, 2, 3])
def test_convolution_dispatches_to_conv_and_conv_transpose(n):
    x, w, b = t64(2, 4, *(5,) * n), t64(6, 2, *(3,) * n), t64(6)
    got = mt.convolution(x, w, b, [2] * n, [1] * n, [1] * n, False, [0] * n, 2)
    conv = getattr(F, f"conv{n}d")
    assert np.allclose(got.numpy(), conv(x, w, b, 2, 1, 1, 2).numpy())
    wt = t64(4, 3, *(3,) * n)
    got = mt.convolution(x, wt, None, [2] * n, [1] * n, [1] * n, True, [1] * n, 1)
    want = getattr(F, f"conv_transpose{n}d")(x, wt, None, 2, 1, 1, 1, 1)
    assert got.shape == want.shape and np.allclose(got.numpy(), want.numpy())


def test_convolution_1d_matches_a_numpy_correlation_and_refuses_bad_weights():
    x, w = RNG.standard_normal((1, 1, 6)), RNG.standard_normal((1, 1, 3))
    got = mt.convolution(mt.tensor(x), mt.tensor(w), None, [1], [0], [1], False, [0], 1)
    assert np.allclose(got.numpy()[0, 0], np.correlate(x[0, 0], w[0, 0], "valid"))
    with pytest.raises(RuntimeError, match="weight of 3, 4 or 5 dims"):
        mt.convolution(t64(1, 2), t64(2, 2), None, [1], [0], [1], False, [0], 1)


def test_constant_pad_nd_pads_and_crops():
    x = RNG.standard_normal((2, 3))
    got = mt.constant_pad_nd(mt.tensor(x), (1, 2), 0.5)
    assert np.array_equal(got.numpy(), np.pad(x, ((0, 0), (1, 2)), constant_values=0.5))
    assert np.array_equal(mt.constant_pad_nd(mt.tensor(x), (-1, 0, 1, 1)).numpy(), np.pad(x[:, 1:], ((1, 1), (0, 0))))


def test_max_pool1d_with_indices():
    x = mt.tensor(RNG.standard_normal((3, 8)))
    values, indices = mt.max_pool1d_with_indices(x, 2)
    a = x.numpy().reshape(3, 4, 2)
    assert np.array_equal(values.numpy(), a.max(-1))
    assert np.array_equal(indices.numpy(), a.argmax(-1) + 2 * np.arange(4))


# ------------------------------------------------------------------ native_* normalizations and dropout
def test_native_layer_norm_returns_mean_and_rstd():
    x = RNG.standard_normal((2, 3, 4))
    w, b = RNG.standard_normal(4), RNG.standard_normal(4)
    out, mean, rstd = mt.native_layer_norm(mt.tensor(x), [4], mt.tensor(w), mt.tensor(b), 1e-5)
    m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    assert mean.shape == (2, 3, 1) and np.allclose(mean.numpy(), m) and np.allclose(rstd.numpy(), 1 / np.sqrt(v + 1e-5))
    assert np.allclose(out.numpy(), (x - m) / np.sqrt(v + 1e-5) * w + b)
    xg = mt.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: mt.native_layer_norm(t, [3, 4], None, None, 1e-5)[0], (xg,))


def test_native_batch_norm_train_and_eval():
    x = RNG.standard_normal((5, 3, 4))
    rm, rv = mt.zeros(3, dtype=mt.float64), mt.ones(3, dtype=mt.float64)
    out, mean, invstd = mt.native_batch_norm(mt.tensor(x), None, None, rm, rv, True, 0.1, 1e-5)
    m, v = x.mean((0, 2)), x.var((0, 2))
    assert np.allclose(mean.numpy(), m) and np.allclose(invstd.numpy(), 1 / np.sqrt(v + 1e-5))
    assert np.allclose(out.numpy(), (x - m[:, None]) / np.sqrt(v[:, None] + 1e-5))
    assert np.allclose(rm.numpy(), 0.1 * m) and np.allclose(rv.numpy(), 0.9 + 0.1 * x.var((0, 2), ddof=1))
    out, mean, invstd = mt.native_batch_norm(mt.tensor(x), None, None, rm, rv, False, 0.1, 1e-5)
    assert mean.shape == (0,) and invstd.shape == (0,) and out.shape == (5, 3, 4)


def test_native_group_norm():
    x = RNG.standard_normal((5, 6, 4))
    out, mean, rstd = mt.native_group_norm(mt.tensor(x), None, None, 5, 6, 4, 3, 1e-5)
    g = x.reshape(5, 3, -1)
    assert mean.shape == (5, 3) and np.allclose(mean.numpy(), g.mean(-1))
    assert np.allclose(rstd.numpy(), 1 / np.sqrt(g.var(-1) + 1e-5))
    want = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    assert np.allclose(out.numpy(), want.reshape(x.shape))


def test_native_dropout_mask_and_scale():
    mt.manual_seed(1)
    x = mt.ones(200, 50, dtype=mt.float64)
    out, mask = mt.native_dropout(x, 0.3, True)
    assert mask.dtype == mt.bool and abs(mask.numpy().mean() - 0.7) < 0.02
    assert np.allclose(out.numpy(), mask.numpy() / 0.7)
    out, mask = mt.native_dropout(x, 0.3, False)
    assert mask.numpy().all() and np.array_equal(out.numpy(), x.numpy()) and out.data_ptr() != x.data_ptr()
    out, mask = mt.native_dropout(x, 1.0, True)
    assert not mask.numpy().any() and not out.numpy().any()
    assert mt.native_dropout(x, 0.3, None)[1].numpy().mean() < 0.75  # None trains, as PyTorch


def test_top_level_dropouts():
    mt.manual_seed(2)
    x = mt.ones(4, 50, 3)
    y = x.clone()
    assert mt.dropout_(y, 0.5, True) is y and set(np.unique(y.numpy())) <= {0.0, 2.0}
    f = mt.feature_dropout(x, 0.5, True).numpy()
    assert (f == f[:, :, :1]).all() and set(np.unique(f)) <= {0.0, 2.0}  # whole channels
    z = x.clone()
    assert mt.feature_dropout_(z, 0.5, True) is z
    assert np.array_equal(mt.alpha_dropout(x, 0.5, False).numpy(), x.numpy())
    a = mt.feature_alpha_dropout(x, 0.5, True).numpy()
    assert (a == a[:, :, :1]).all() and len(np.unique(a)) == 2
    for inplace in (mt.alpha_dropout_, mt.feature_alpha_dropout_):
        w = x.clone()
        assert inplace(w, 0.2, True) is w
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        mt.feature_dropout(mt.ones(3), 0.5, True)


# ------------------------------------------------------------------ norms
def test_nuclear_and_frobenius_norms_warn_and_match_numpy():
    a = RNG.standard_normal((2, 3, 4))
    with pytest.warns(UserWarning, match="deprecated"):
        nuc = mt.nuclear_norm(mt.tensor(a))
    assert np.allclose(nuc.numpy(), np.linalg.svd(a, compute_uv=False).sum(-1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert mt.nuclear_norm(mt.tensor(a[0]), True).shape == (1, 1)
        assert np.allclose(mt.nuclear_norm(mt.tensor(a), (0, 2)).numpy(),
                           np.linalg.svd(a.transpose(1, 0, 2), compute_uv=False).sum(-1))
        fro = mt.frobenius_norm(mt.tensor(a), (0, 2), True)
        assert fro.shape == (1, 3, 1) and np.allclose(fro.numpy(), np.sqrt((a ** 2).sum((0, 2), keepdims=True)))
        with pytest.raises(RuntimeError, match="Expected at most 2 dimensions"):
            mt.frobenius_norm(mt.tensor(a), (0, 1, 2))


# ------------------------------------------------------------------ recurrent cells
def test_rnn_cells_match_numpy():
    x, h = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4))
    wi, wh, bi, bh = (RNG.standard_normal(s) for s in ((4, 3), (4, 4), (4,), (4,)))
    T = mt.tensor
    pre = x @ wi.T + bi + h @ wh.T + bh
    assert np.allclose(mt.rnn_tanh_cell(T(x), T(h), T(wi), T(wh), T(bi), T(bh)).numpy(), np.tanh(pre))
    assert np.allclose(mt.rnn_relu_cell(T(x), T(h), T(wi), T(wh), T(bi), T(bh)).numpy(), np.maximum(pre, 0))
    assert np.allclose(mt.rnn_tanh_cell(T(x), T(h), T(wi), T(wh)).numpy(), np.tanh(x @ wi.T + h @ wh.T))


def test_lstm_and_gru_cells_match_numpy():
    x, h, c = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4)), RNG.standard_normal((2, 4))
    T = mt.tensor
    wi, wh, bi, bh = (RNG.standard_normal(s) for s in ((16, 3), (16, 4), (16,), (16,)))
    gates = x @ wi.T + bi + h @ wh.T + bh
    i, f, g, o = np.split(gates, 4, 1)
    cy = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    hy_, cy_ = mt.lstm_cell(T(x), (T(h), T(c)), T(wi), T(wh), T(bi), T(bh))
    assert np.allclose(cy_.numpy(), cy) and np.allclose(hy_.numpy(), _sigmoid(o) * np.tanh(cy))
    with pytest.raises(RuntimeError, match="expected hx to contain 2 tensors"):
        mt.lstm_cell(T(x), T(h), T(wi), T(wh))
    wi, wh, bi, bh = (RNG.standard_normal(s) for s in ((12, 3), (12, 4), (12,), (12,)))
    gi, gh = x @ wi.T + bi, h @ wh.T + bh
    (ir, iz, in_), (hr, hz, hn) = np.split(gi, 3, 1), np.split(gh, 3, 1)
    r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
    n = np.tanh(in_ + r * hn)
    assert np.allclose(mt.gru_cell(T(x), T(h), T(wi), T(wh), T(bi), T(bh)).numpy(), (1 - z) * n + z * h)


def test_cells_have_gradients():
    x, h, c = t64(2, 3, requires_grad=True), t64(2, 4, requires_grad=True), t64(2, 4, requires_grad=True)
    wi, wh = t64(16, 3, requires_grad=True), t64(16, 4, requires_grad=True)
    assert gradcheck(lambda *a: mt.lstm_cell(a[0], (a[1], a[2]), a[3], a[4])[0], (x, h, c, wi, wh))
    wg, whg = t64(12, 3, requires_grad=True), t64(12, 4, requires_grad=True)
    assert gradcheck(lambda *a: mt.gru_cell(*a), (x, h, wg, whg))


def test_cells_agree_with_the_nn_modules():
    cell = mt.nn.GRUCell(3, 4)
    x, h = mt.randn(2, 3), mt.randn(2, 4)
    want = cell(x, h)
    got = mt.gru_cell(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    assert np.allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-6)


# ------------------------------------------------------------------ creation and random
def test_empty_permuted_lays_memory_out_in_the_given_order():
    e = mt.empty_permuted((2, 3, 5, 7), (0, 2, 3, 1))
    assert e.shape == (2, 3, 5, 7) and e.stride() == (105, 1, 21, 3) and e.is_contiguous(mt.channels_last)
    assert mt.empty_permuted((2, 3), (1, 0), dtype=mt.float64, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        mt.empty_permuted((2, 3), (0, 0))
    with pytest.raises(RuntimeError, match="does not match the length of the physical_layout"):
        mt.empty_permuted((2, 3), (0, 1, 2))


def test_binomial_statistics_and_edges():
    mt.manual_seed(3)
    draws = mt.binomial(mt.full((20000,), 10.0, dtype=mt.float64), mt.full((20000,), 0.3, dtype=mt.float64))
    d = draws.numpy()
    assert draws.dtype == mt.float64 and d.min() >= 0 and d.max() <= 10 and np.all(d == np.round(d))
    assert abs(d.mean() - 3.0) < 0.05 and abs(d.var() - 2.1) < 0.1
    edge = mt.binomial(mt.tensor([5.0, 5.0, -1.0, 1.0]), mt.tensor([0.0, 1.0, 0.5, math.nan]))
    assert edge.tolist()[:3] == [0.0, 5.0, 0.0] and math.isnan(edge.tolist()[3])
    assert mt.binomial(mt.full((2, 3), 4.0), mt.tensor([0.0, 1.0, 1.0])).tolist() == [[0, 4, 4], [0, 4, 4]]
    g = mt.Generator().manual_seed(7)
    a = mt.binomial(mt.full((6,), 50.0), mt.full((6,), 0.5), generator=g)
    g.manual_seed(7)
    assert mt.equal(a, mt.binomial(mt.full((6,), 50.0), mt.full((6,), 0.5), generator=g))
    with pytest.raises(ValueError, match="only supports floating-point dtypes for count, got: Long"):
        mt.binomial(mt.tensor([1, 2]), mt.tensor([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        mt.binomial(mt.ones(2), mt.ones(2, dtype=mt.float64))


def test_histogramdd_matches_numpy():
    pts = RNG.standard_normal((50, 2))
    w = RNG.random(50)
    for kwargs in ({"bins": [3, 4]}, {"bins": 5, "range": [-1.0, 1.0, -2.0, 2.0]}, {"bins": [2, 3], "density": True},
                   {"bins": [3, 4], "weight": w}):
        np_kwargs = dict(kwargs)
        if "range" in np_kwargs:
            r = np_kwargs.pop("range")
            np_kwargs["range"] = [r[0:2], r[2:4]]
        if "weight" in np_kwargs:
            np_kwargs["weights"] = np_kwargs.pop("weight")
            kwargs = {**kwargs, "weight": mt.tensor(w)}
        want, want_edges = np.histogramdd(pts, **np_kwargs)
        got = mt.histogramdd(mt.tensor(pts), **kwargs)
        assert np.allclose(got.hist.numpy(), want)
        assert all(np.allclose(g.numpy(), e) for g, e in zip(got.bin_edges, want_edges))
    edges = [mt.tensor([-3.0, 0.0, 3.0], dtype=mt.float64), mt.tensor([-3.0, 3.0], dtype=mt.float64)]
    got = mt.histogramdd(mt.tensor(pts), edges)
    assert np.allclose(got.hist.numpy(), np.histogramdd(pts, bins=[e.numpy() for e in edges])[0])
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        mt.histogramdd(mt.tensor([[0, 1]]), 2)
    with pytest.raises(RuntimeError, match="The size of bins must be equal"):
        mt.histogramdd(mt.tensor([[0.0, 1.0]]), [2, 2, 2])


# ------------------------------------------------------------------ low-rank factorizations
def test_svd_lowrank_recovers_a_low_rank_matrix():
    mt.manual_seed(4)
    A = RNG.standard_normal((30, 4)) @ RNG.standard_normal((4, 20))
    for shape in ((30, 20), (20, 30)):
        M = A if shape == (30, 20) else A.T
        U, S, V = mt.svd_lowrank(mt.tensor(M), q=6)
        assert U.shape == (shape[0], 6) and S.shape == (6,) and V.shape == (shape[1], 6)
        assert np.allclose((U.numpy() * S.numpy()) @ V.numpy().T, M, atol=1e-8)
        assert np.allclose(S.numpy()[:4], np.linalg.svd(M, compute_uv=False)[:4])
    offset = RNG.standard_normal((30, 20))
    U, S, V = mt.svd_lowrank(mt.tensor(A + offset), q=6, M=mt.tensor(offset))
    assert np.allclose((U.numpy() * S.numpy()) @ V.numpy().T, A, atol=1e-8)


def test_pca_lowrank_finds_the_principal_directions():
    mt.manual_seed(5)
    X = RNG.standard_normal((200, 2)) @ np.array([[3.0, 0.0, 0.0], [0.0, 1.0, 0.0]]) + 5.0
    U, S, V = mt.pca_lowrank(mt.tensor(X), q=2)
    Xc = X - X.mean(0)
    assert np.allclose(S.numpy(), np.linalg.svd(Xc, compute_uv=False)[:2])
    vt = np.linalg.svd(Xc)[2]
    assert np.allclose(np.abs(V.numpy().T), np.abs(vt[:2]), atol=1e-6)  # directions, up to sign
    assert mt.pca_lowrank(mt.tensor(X))[1].shape == (3,)
    with pytest.raises(ValueError, match="must be non-negative integer and not greater than"):
        mt.pca_lowrank(mt.tensor(X), q=4)
    with pytest.raises(ValueError, match="niter"):
        mt.pca_lowrank(mt.tensor(X), niter=-1)


# ------------------------------------------------------------------ removed functions
@pytest.mark.parametrize("name, call", [("solve", lambda A: mt.solve(A, A)), ("lstsq", lambda A: mt.lstsq(A, A)),
                                        ("eig", lambda A: mt.eig(A)), ("symeig", lambda A: mt.symeig(A)),
                                        ("matrix_rank", lambda A: mt.matrix_rank(A))])
def test_removed_functions_raise_pointing_to_linalg(name, call):
    with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed") as info:
        call(mt.eye(3))
    assert "torch.linalg" in str(info.value)


def test_triangular_solve_works_deprecated():
    A = np.triu(RNG.standard_normal((2, 3, 3))) + 3 * np.eye(3)
    b = RNG.standard_normal((2, 3, 2))
    with pytest.warns(UserWarning, match="deprecated in favor of torch.linalg.solve_triangular"):
        X, A_copy = mt.triangular_solve(mt.tensor(b), mt.tensor(A))
    assert np.allclose(A @ X.numpy(), b) and np.array_equal(A_copy.numpy(), A)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = mt.triangular_solve(mt.tensor(b), mt.tensor(A), transpose=True)
        assert np.allclose(A.transpose(0, 2, 1) @ r.solution.numpy(), b)
        L = A.transpose(0, 2, 1)
        r = mt.triangular_solve(mt.tensor(b), mt.tensor(L), upper=False, unitriangular=True)
        unit = np.tril(L, -1) + np.eye(3)
        assert np.allclose(unit @ r.solution.numpy(), b)


def test_binomial_with_an_infinite_or_huge_count_draws_instead_of_raising():
    """An int64 cast of inf is negative (NumPy's sampler then raises "n < 0"): counts past 2^62 draw at 2^62
    (PyTorch's CPU sampler does not return for an infinite count)."""
    out = mt.binomial(mt.tensor([float("inf"), 1e30, 4.0]), mt.tensor([0.5, 0.5, 0.0]))
    assert out[0].item() > 1e18 and out[1].item() > 1e18 and out[2].item() == 0.0
