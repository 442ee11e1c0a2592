"""dropout: mask statistics, scaling, gradient and determinism under a seed; embedding: lookup and its
scatter-add gradient (repeated indices, padding_idx)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=25, deadline=None)


def f64(a, requires_grad=False):
    return mt.tensor(np.asarray(a, dtype=np.float64), dtype=mt.float64, requires_grad=requires_grad)


# ------------------------------------------------------------------------------------- dropout
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_mask_statistics_and_scaling(p):
    mt.manual_seed(0)
    n = 200_000
    x = mt.tensor(np.random.default_rng(1).uniform(1, 2, n).astype(np.float32))
    y = F.dropout(x, p=p)
    assert y.dtype == mt.float32 and y.shape == x.shape
    dropped = y.numpy() == 0
    # The dropped fraction is Binomial(n, p) / n: 5 standard deviations of slack.
    assert abs(dropped.mean() - p) < 5 * np.sqrt(p * (1 - p) / n)
    kept = ~dropped
    np.testing.assert_allclose(y.numpy()[kept], x.numpy()[kept] / (1 - p), rtol=1e-6)


@SETTINGS
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple), p=st.floats(0.05, 0.95),
       seed=st.integers(0, 2 ** 16))
def test_dropout_gradient_is_the_same_mask_and_scale(shape, p, seed):
    mt.manual_seed(seed)
    x = f64(np.random.default_rng(seed).uniform(1, 2, shape), True)
    y = F.dropout(x, p)
    g = np.random.default_rng(seed + 1).normal(size=shape)
    y.backward(f64(g))
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, g / (1 - p), 0.0), rtol=1e-12)


def test_dropout_gradcheck_with_a_fixed_mask():
    """Reseeding before each call gives gradcheck the same mask every time."""
    def fn(t):
        mt.manual_seed(5)
        return F.dropout(t, 0.3)
    gradcheck(fn, (f64(np.random.default_rng(0).normal(size=(4, 5)), True),))


def test_dropout_is_deterministic_under_manual_seed():
    x = mt.ones(1000)
    mt.manual_seed(123)
    a = F.dropout(x, 0.4).numpy().copy()
    b = F.dropout(x, 0.4).numpy().copy()
    mt.manual_seed(123)
    c = F.dropout(x, 0.4).numpy().copy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)


def test_dropout_identity_cases_return_the_input():
    x = mt.randn(10, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x


def test_dropout_p_one_gives_zeros_and_zero_gradient():
    x = mt.randn(50, requires_grad=True)
    y = F.dropout(x, 1.0)
    np.testing.assert_array_equal(y.detach().numpy(), 0.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)


def test_dropout_validates_p_and_dtype():
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1"):
            F.dropout(mt.randn(3), p)
    with pytest.raises(TypeError, match="floating"):
        F.dropout(mt.tensor([1, 2, 3]), 0.5)


def test_dropout_inplace_writes_into_the_input():
    mt.manual_seed(9)
    x = mt.ones(100)
    expected = F.dropout(x, 0.5).numpy().copy()
    mt.manual_seed(9)
    out = F.dropout(x, 0.5, inplace=True)
    assert out is x
    np.testing.assert_array_equal(x.numpy(), expected)


# ----------------------------------------------------------------------------------- embedding
def embedding_grad_ref(indices, gy, num_embeddings, padding_idx=None, scale_grad_by_freq=False):
    """Row by row: every occurrence adds its gradient row (divided by the index's count if asked)."""
    flat = indices.ravel()
    rows = gy.reshape(-1, gy.shape[-1])
    gw = np.zeros((num_embeddings, gy.shape[-1]))
    for i, row in zip(flat, rows):
        scale = 1.0 / np.count_nonzero(flat == i) if scale_grad_by_freq else 1.0
        gw[i] += row * scale
    if padding_idx is not None:
        gw[padding_idx] = 0
    return gw


@SETTINGS
@given(num=st.integers(1, 6), dim=st.integers(1, 4), index_shape=st.lists(st.integers(1, 4), max_size=3),
       seed=st.integers(0, 2 ** 16), use_padding=st.booleans(), scale=st.booleans())
def test_embedding_forward_and_scatter_add_gradient(num, dim, index_shape, seed, use_padding, scale):
    rng = np.random.default_rng(seed)
    weight = rng.normal(size=(num, dim))
    indices = rng.integers(0, num, size=tuple(index_shape))
    padding_idx = int(rng.integers(0, num)) if use_padding else None
    w = f64(weight, True)
    y = F.embedding(mt.tensor(indices), w, padding_idx=padding_idx, scale_grad_by_freq=scale)
    assert y.shape == tuple(index_shape) + (dim,)
    np.testing.assert_array_equal(y.detach().numpy(), weight[indices])
    gy = rng.normal(size=y.shape)
    y.backward(f64(gy))
    np.testing.assert_allclose(w.grad.numpy(), embedding_grad_ref(indices, gy, num, padding_idx, scale),
                               rtol=1e-12, atol=1e-14)


def test_embedding_repeated_indices_accumulate():
    w = mt.zeros(4, 2, requires_grad=True)
    F.embedding(mt.tensor([1, 1, 1, 3]), w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[0, 0], [3, 3], [0, 0], [1, 1]])


def test_embedding_negative_padding_idx_counts_from_the_end():
    w = mt.ones(4, 2, requires_grad=True)
    F.embedding(mt.tensor([0, 3, 3]), w, padding_idx=-1).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[3], [0, 0])
    np.testing.assert_array_equal(w.grad.numpy()[0], [1, 1])


def test_embedding_gradcheck():
    idx = mt.tensor([[0, 2], [2, 1]])
    gradcheck(lambda w: F.embedding(idx, w), (f64(np.random.default_rng(0).normal(size=(3, 4)), True),))


def test_embedding_keeps_weight_dtype():
    w = mt.randn(5, 3)
    assert F.embedding(mt.tensor([0, 4]), w).dtype == mt.float32
    assert F.embedding(mt.tensor([0, 4], dtype=mt.int32), w).shape == (2, 3)


def test_embedding_errors():
    w = mt.randn(5, 3)
    with pytest.raises(IndexError, match=r"index 5 .*5 rows"):
        F.embedding(mt.tensor([0, 5]), w)
    with pytest.raises(IndexError, match="index -1"):
        F.embedding(mt.tensor([-1, 0]), w)
    with pytest.raises(RuntimeError, match="Long, Int"):
        F.embedding(mt.tensor([0.0, 1.0]), w)
    with pytest.raises(ValueError, match="padding_idx 5"):
        F.embedding(mt.tensor([0]), w, padding_idx=5)
    with pytest.raises(ValueError, match="2-D"):
        F.embedding(mt.tensor([0]), mt.randn(5))
    with pytest.raises(NotImplementedError, match="max_norm"):
        F.embedding(mt.tensor([0]), w, max_norm=1.0)


# ------------------------------------------------------------------------------------- one_hot
@SETTINGS
@given(shape=st.lists(st.integers(0, 4), max_size=3).map(tuple), classes=st.integers(1, 5), seed=st.integers(0, 99))
def test_one_hot_matches_an_identity_lookup(shape, classes, seed):
    idx = np.random.default_rng(seed).integers(0, classes, size=shape)
    got = F.one_hot(mt.tensor(idx, dtype=mt.int64), classes)
    assert got.dtype == mt.int64 and got.shape == shape + (classes,)
    np.testing.assert_array_equal(got.numpy(), np.eye(classes, dtype=np.int64)[idx])
    if idx.size:
        assert F.one_hot(mt.tensor(idx, dtype=mt.int64)).shape == shape + (idx.max() + 1,)


@pytest.mark.parametrize("args, message", [
    ((mt.tensor([1.0, 2.0]),), "LongTensor"), ((mt.tensor([1, 2], dtype=mt.int32),), "LongTensor"),
    ((mt.tensor([1, -1]),), "non-negative"), ((mt.tensor([1, 3]), 3), "smaller than num_classes"),
    ((mt.tensor([1]), 0), "smaller than num_classes"), ((mt.tensor([], dtype=mt.int64),), "empty tensor"),
    ((mt.tensor([], dtype=mt.int64), 0), "empty tensor")])
def test_one_hot_errors_as_pytorch(args, message):
    with pytest.raises(RuntimeError, match=message):
        F.one_hot(*args)


def test_one_hot_of_a_scalar_and_of_an_empty_tensor():
    assert F.one_hot(mt.tensor(2)).tolist() == [0, 0, 1]
    assert F.one_hot(mt.tensor([], dtype=mt.int64).reshape(0, 2), 3).shape == (0, 2, 3)


# ----------------------------------------------------------------------------- channel-wise dropout
@pytest.mark.parametrize("fn, shape, channel_dims", [
    (F.dropout1d, (40, 30, 7), 2), (F.dropout1d, (300, 7), 1), (F.dropout2d, (40, 30, 3, 4), 2),
    (F.dropout3d, (20, 30, 2, 3, 2), 2), (F.dropout3d, (300, 2, 3, 2), 1)])
def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest(fn, shape, channel_dims):
    p = 0.3
    x = mt.tensor(np.random.default_rng(0).uniform(1, 2, shape), requires_grad=True)
    y = fn(x, p)
    ratio = (y / x).detach().numpy().reshape(*shape[:channel_dims], -1)
    per_channel = ratio[..., 0]
    np.testing.assert_allclose(ratio, np.broadcast_to(per_channel[..., None], ratio.shape), rtol=1e-14)
    assert set(np.unique(per_channel.round(12))) <= {0.0, round(1 / (1 - p), 12)}  # one factor per channel
    assert abs((per_channel == 0).mean() - p) < 0.06
    g = np.random.default_rng(1).normal(size=shape)
    y.backward(mt.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), g * (y / x).detach().numpy(), rtol=1e-12)


def test_channel_dropout_identity_inplace_and_errors():
    x = mt.randn(2, 3, 4)
    x4 = mt.randn(1, 2, 3, 3)
    assert F.dropout1d(x, 0.5, training=False) is x and F.dropout2d(x4, 0.0) is x4
    z = mt.ones(4, 8, 5)
    assert F.dropout1d(z, 0.5, inplace=True) is z
    assert set(np.unique(z.numpy())) <= {0.0, 2.0} and (z.numpy() == 0).any()
    assert np.all(z.numpy() == z.numpy()[:, :, :1])
    assert repr(mt.nn.Dropout1d()) == "Dropout1d(p=0.5, inplace=False)"
    assert repr(mt.nn.Dropout2d(0.3, True)) == "Dropout2d(p=0.3, inplace=True)"
    with pytest.raises(RuntimeError, match="Expected 2D or 3D input"):
        F.dropout1d(mt.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout2d(mt.randn(2, 3, 4, 5), 1.5)
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        F.dropout2d(mt.randn(2, 3, 4))
    with pytest.warns(UserWarning, match="2-D input to dropout2d"):
        F.dropout2d(mt.randn(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"), pytest.warns(UserWarning):
        F.dropout2d(mt.randn(3))
    assert mt.nn.Dropout2d(0.9).eval()(x4) is x4
