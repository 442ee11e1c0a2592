"""batch_norm and layer_norm against float64 references, running statistics over several steps, and
gradients by finite differences."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=25, deadline=None)
BN_SHAPES = [(6, 3), (4, 2, 5), (3, 2, 4, 3)]


def f64(a, requires_grad=False):
    return mt.tensor(np.asarray(a, dtype=np.float64), dtype=mt.float64, requires_grad=requires_grad)


def batch_norm_ref(x, mean, var, weight, bias, eps):
    """Per channel (axis 1): (x - mean) / sqrt(var + eps) * weight + bias, written channel by channel."""
    y = np.empty_like(x)
    for c in range(x.shape[1]):
        y[:, c] = (x[:, c] - mean[c]) / np.sqrt(var[c] + eps)
        y[:, c] = y[:, c] * (1.0 if weight is None else weight[c]) + (0.0 if bias is None else bias[c])
    return y


def channel_stats(x):
    """Mean, biased and unbiased variance of each channel, one channel at a time."""
    values = [x[:, c].ravel() for c in range(x.shape[1])]
    mean = np.array([v.mean() for v in values])
    biased = np.array([((v - v.mean()) ** 2).sum() / v.size for v in values])
    unbiased = np.array([((v - v.mean()) ** 2).sum() / (v.size - 1) for v in values])
    return mean, biased, unbiased


@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_forward_and_running_stats_over_steps(shape, affine):
    rng = np.random.default_rng(sum(shape))
    c = shape[1]
    weight = rng.uniform(0.5, 2, c) if affine else None
    bias = rng.normal(size=c) if affine else None
    momentum, eps = 0.3, 1e-3
    running_mean, running_var = mt.zeros(c, dtype=mt.float64), mt.ones(c, dtype=mt.float64)
    ref_mean, ref_var = np.zeros(c), np.ones(c)
    for step in range(4):
        x = rng.normal(loc=step, scale=1 + step, size=shape)
        y = F.batch_norm(f64(x), running_mean, running_var, None if weight is None else f64(weight),
                         None if bias is None else f64(bias), training=True, momentum=momentum, eps=eps)
        mean, biased, unbiased = channel_stats(x)
        np.testing.assert_allclose(y.numpy(), batch_norm_ref(x, mean, biased, weight, bias, eps), rtol=1e-10,
                                   atol=1e-12)
        ref_mean = (1 - momentum) * ref_mean + momentum * mean
        ref_var = (1 - momentum) * ref_var + momentum * unbiased
        np.testing.assert_allclose(running_mean.numpy(), ref_mean, rtol=1e-12)
        np.testing.assert_allclose(running_var.numpy(), ref_var, rtol=1e-12)


@pytest.mark.parametrize("shape", BN_SHAPES)
def test_batch_norm_eval_uses_running_stats_and_leaves_them(shape):
    rng = np.random.default_rng(7)
    c = shape[1]
    rm, rv = rng.normal(size=c), rng.uniform(0.5, 2, c)
    weight, bias = rng.uniform(0.5, 2, c), rng.normal(size=c)
    x = rng.normal(size=shape)
    running_mean, running_var = f64(rm), f64(rv)
    y = F.batch_norm(f64(x), running_mean, running_var, f64(weight), f64(bias), training=False, eps=1e-5)
    np.testing.assert_allclose(y.numpy(), batch_norm_ref(x, rm, rv, weight, bias, 1e-5), rtol=1e-12)
    np.testing.assert_array_equal(running_mean.numpy(), rm)
    np.testing.assert_array_equal(running_var.numpy(), rv)


@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradients(shape, training):
    rng = np.random.default_rng(len(shape))
    c = shape[1]
    x = rng.normal(size=shape)
    rm, rv = f64(rng.normal(size=c)), f64(rng.uniform(0.5, 2, c))
    running = (None, None) if training else (rm, rv)
    gradcheck(lambda a, w, b: F.batch_norm(a, *running, w, b, training=training),
              (f64(x, True), f64(rng.uniform(0.5, 2, c), True), f64(rng.normal(size=c), True)))
    gradcheck(lambda a: F.batch_norm(a, *running, training=training), (f64(x, True),))


def test_batch_norm_float32_keeps_dtype_and_running_stats_dtype():
    x = mt.randn(8, 3, 4)
    rm, rv = mt.zeros(3), mt.ones(3)
    y = F.batch_norm(x, rm, rv, mt.ones(3), mt.zeros(3), training=True)
    assert y.dtype == rm.dtype == rv.dtype == mt.float32
    np.testing.assert_allclose(y.numpy().mean(axis=(0, 2)), 0, atol=1e-6)
    np.testing.assert_allclose(y.numpy().var(axis=(0, 2)), 1, atol=1e-3)


def test_batch_norm_with_weight_updates_all_gradients_in_one_node():
    x = mt.randn(5, 3, requires_grad=True)
    w, b = mt.ones(3, requires_grad=True), mt.zeros(3, requires_grad=True)
    y = F.batch_norm(x, None, None, w, b, training=True)
    assert [id(n.variable) for n, _ in y.grad_fn.next_functions] == [id(x), id(w), id(b)]  # AccumulateGrads
    (y * mt.arange(15.0).reshape(5, 3)).sum().backward()
    assert x.grad.shape == (5, 3) and w.grad.shape == (3,) and b.grad.shape == (3,)
    np.testing.assert_allclose(b.grad.numpy(), np.arange(15.0).reshape(5, 3).sum(0))


def test_batch_norm_errors():
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(mt.randn(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match=r"weight must have shape \(3,\), got \(4,\)"):
        F.batch_norm(mt.randn(4, 3), mt.zeros(3), mt.ones(3), weight=mt.ones(4))
    with pytest.raises(ValueError, match="running_mean"):
        F.batch_norm(mt.randn(4, 3), None, None, training=False)
    with pytest.raises(ValueError, match=r"\(4,\)"):
        F.batch_norm(mt.randn(4), mt.zeros(4), mt.ones(4))


def layer_norm_ref(x, k, weight, bias, eps):
    """Normalise each row over the last k dims, one row at a time."""
    lead = x.shape[:x.ndim - k]
    rows = x.reshape((-1,) + x.shape[x.ndim - k:])
    out = np.empty_like(rows)
    for i, row in enumerate(rows):
        out[i] = (row - row.mean()) / np.sqrt(((row - row.mean()) ** 2).mean() + eps)
        if weight is not None:
            out[i] = out[i] * weight
        if bias is not None:
            out[i] = out[i] + bias
    return out.reshape(lead + x.shape[x.ndim - k:])


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple), data=st.data())
def test_layer_norm_forward_and_gradients(shape, data):
    k = data.draw(st.integers(1, len(shape)))
    affine = data.draw(st.booleans())
    normalized = shape[len(shape) - k:]
    rng = np.random.default_rng(sum(shape) + k)
    x = rng.normal(2, 3, size=shape)
    weight = rng.uniform(0.5, 2, normalized) if affine else None
    bias = rng.normal(size=normalized) if affine else None
    y = F.layer_norm(f64(x), normalized, None if weight is None else f64(weight),
                     None if bias is None else f64(bias), eps=1e-4)
    np.testing.assert_allclose(y.numpy(), layer_norm_ref(x, k, weight, bias, 1e-4), rtol=1e-10, atol=1e-12)
    if affine:
        gradcheck(lambda a, w, b: F.layer_norm(a, normalized, w, b, eps=1e-4),
                  (f64(x, True), f64(weight, True), f64(bias, True)))
    else:
        gradcheck(lambda a: F.layer_norm(a, normalized, eps=1e-4), (f64(x, True),))


def test_layer_norm_int_shape_and_float32():
    x = mt.randn(3, 5) * 10 + 3
    y = F.layer_norm(x, 5)
    assert y.dtype == mt.float32
    np.testing.assert_allclose(y.numpy().mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(y.numpy().std(-1), 1, atol=1e-3)


def test_layer_norm_errors():
    with pytest.raises(ValueError, match=r"normalized_shape=\[4\].*\(2, 3\)"):
        F.layer_norm(mt.randn(2, 3), [4])
    with pytest.raises(ValueError, match=r"weight must have shape \(3,\)"):
        F.layer_norm(mt.randn(2, 3), [3], weight=mt.ones(4))
    with pytest.raises(ValueError, match="normalized_shape"):
        F.layer_norm(mt.randn(3), [2, 3])


def test_float32_input_with_float64_parameters_stays_float32():
    x = mt.randn(6, 3, requires_grad=True)
    w = mt.ones(3, dtype=mt.float64, requires_grad=True)
    rm, rv = mt.zeros(3, dtype=mt.float64), mt.ones(3, dtype=mt.float64)
    for training in (True, False):
        w.grad = None
        y = F.batch_norm(x, rm, rv, w, training=training)
        assert y.dtype == mt.float32
        y.sum().backward()
        assert w.grad.dtype == mt.float64 and x.grad.dtype == mt.float32
    y = F.layer_norm(x, [3], w)
    assert y.dtype == mt.float32


# ------------------------------------------------------------------------------------ normalize
@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_normalize_forward_and_gradients(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    p = data.draw(st.sampled_from([1.0, 2.0, 3.0, float("inf")]))
    x = np.random.default_rng(len(shape)).normal(size=shape)
    norms = np.linalg.norm(np.moveaxis(x, dim, -1), ord=p, axis=-1)
    expected = x / np.expand_dims(np.maximum(norms, 1e-12), dim)
    np.testing.assert_allclose(F.normalize(f64(x), p, dim).numpy(), expected, rtol=1e-12)
    if p != float("inf"):  # max's gradient is not smooth where entries tie in |x|
        gradcheck(lambda t: F.normalize(t, p, dim), (f64(x, True),))


def test_normalize_zero_rows_eps_and_errors():
    x = f64([[0.0, 0.0], [3.0, 4.0]], True)
    y = F.normalize(x)
    np.testing.assert_allclose(y.detach().numpy(), [[0, 0], [0.6, 0.8]])
    y.sum().backward()  # a zero row: x / eps, gradient 1 / eps (PyTorch's), never nan
    np.testing.assert_allclose(x.grad.numpy()[0], [1e12, 1e12])
    out = mt.empty(2, 2, dtype=mt.float64)
    assert F.normalize(x.detach(), p=1, out=out) is out and out[1].tolist() == pytest.approx([3 / 7, 4 / 7])
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.normalize(f64([3.0, 4.0]))


# --------------------------------------------------------------------------- group and instance norm
def group_norm_ref(x, groups, weight, bias, eps):
    """Each (n, group) normalised over its channels and spatial positions, one group at a time."""
    n, c = x.shape[:2]
    y = np.empty_like(x)
    size = c // groups
    for i in range(n):
        for g in range(groups):
            block = x[i, g * size:(g + 1) * size]
            y[i, g * size:(g + 1) * size] = (block - block.mean()) / np.sqrt(block.var() + eps)
    shape = (c,) + (1,) * (x.ndim - 2)
    return y * (1 if weight is None else weight.reshape(shape)) + (0 if bias is None else bias.reshape(shape))


@SETTINGS
@given(n=st.integers(1, 3), groups=st.integers(1, 3), per_group=st.integers(1, 2),
       spatial=st.lists(st.integers(1, 3), max_size=2).map(tuple), affine=st.booleans(), seed=st.integers(0, 99))
def test_group_norm_forward_and_gradients(n, groups, per_group, spatial, affine, seed):
    rng = np.random.default_rng(seed)
    c = groups * per_group
    x = rng.normal(size=(n, c, *spatial))
    if n * per_group * math.prod(spatial) == 1:  # one value per group: refused, as PyTorch (test_nonfinite_edges)
        return
    w, b = (rng.normal(size=c), rng.normal(size=c)) if affine else (None, None)
    got = F.group_norm(f64(x), groups, None if w is None else f64(w), None if b is None else f64(b), eps=1e-3)
    np.testing.assert_allclose(got.numpy(), group_norm_ref(x, groups, w, b, 1e-3), rtol=1e-10, atol=1e-12)
    if affine and per_group * np.prod(spatial, dtype=int) > 1:
        gradcheck(lambda a, ww, bb: F.group_norm(a, groups, ww, bb, eps=1e-3), (f64(x, True), f64(w, True),
                                                                               f64(b, True)))


@pytest.mark.parametrize("shape", [(2, 3, 5), (3, 2, 3, 4)])
def test_instance_norm_forward_gradients_and_running_stats(shape):
    rng = np.random.default_rng(4)
    x, w, b = rng.normal(size=shape), rng.normal(size=shape[1]), rng.normal(size=shape[1])
    got = F.instance_norm(f64(x), weight=f64(w), bias=f64(b))
    np.testing.assert_allclose(got.numpy(), group_norm_ref(x, shape[1], w, b, 1e-5), rtol=1e-10)
    gradcheck(lambda a, ww, bb: F.instance_norm(a, weight=ww, bias=bb), (f64(x, True), f64(w, True), f64(b, True)))
    rm, rv = f64(np.zeros(shape[1])), f64(np.ones(shape[1]))
    F.instance_norm(f64(x), rm, rv, momentum=0.25)
    axes = tuple(range(2, len(shape)))
    np.testing.assert_allclose(rm.numpy(), 0.25 * x.mean(axes).mean(0), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.75 + 0.25 * x.var(axes, ddof=1).mean(0), rtol=1e-12)
    evaluated = F.instance_norm(f64(x), rm, rv, use_input_stats=False).numpy()
    expand = (slice(None),) + (None,) * (len(shape) - 2)
    np.testing.assert_allclose(evaluated, (x - rm.numpy()[expand]) / np.sqrt(rv.numpy()[expand] + 1e-5),
                               rtol=1e-12)


def test_group_and_instance_norm_errors():
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(mt.zeros(2, 3, 4), 2)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.group_norm(mt.zeros(3), 1)
    with pytest.raises(RuntimeError, match="Expected weight to be a vector"):
        F.group_norm(mt.zeros(2, 4, 3), 2, weight=mt.ones(3))
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(mt.zeros(2, 3, 1))
    with pytest.raises(RuntimeError, match="running_mean should contain 6 elements not 4"):
        F.instance_norm(mt.zeros(2, 3, 4), mt.zeros(2), mt.ones(2))
    with pytest.raises(RuntimeError, match="use_input_stats is false"):
        F.instance_norm(mt.zeros(2, 3, 4), use_input_stats=False)
    with pytest.raises(ValueError, match=r"num_channels \(3\) must be divisible by num_groups \(2\)"):
        mt.nn.GroupNorm(2, 3)


def test_group_and_instance_norm_modules():
    nn = mt.nn
    assert repr(nn.GroupNorm(2, 4)) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    assert list(nn.GroupNorm(2, 4).state_dict()) == ["weight", "bias"]
    assert list(nn.GroupNorm(2, 4, affine=False).state_dict()) == []
    assert repr(nn.InstanceNorm1d(3)) == \
        "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"
    assert list(nn.InstanceNorm2d(3, affine=True, bias=False).state_dict()) == ["weight"]
    assert list(nn.InstanceNorm2d(3, track_running_stats=True).state_dict()) == \
        ["running_mean", "running_var", "num_batches_tracked"]
    x = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
    m = nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
    unbatched = m(mt.tensor(x))  # (C, L): one instance per channel
    np.testing.assert_allclose(unbatched.detach().numpy(), group_norm_ref(x[None].astype(np.float64), 3, None, None,
                                                                          1e-5)[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.running_mean.numpy(), 0.1 * x.mean(1), rtol=1e-5)
    m.eval()
    np.testing.assert_allclose(m(mt.tensor(x)).detach().numpy(), (x - m.running_mean.numpy()[:, None])
                               / np.sqrt(m.running_var.numpy()[:, None] + 1e-5), rtol=1e-5)
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        m(mt.zeros(1, 3, 4, 4))
    with pytest.raises(ValueError, match="to match num_features"):
        m(mt.zeros(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm2d(3)(mt.randn(2, 4, 3, 3))
    np.testing.assert_allclose(nn.GroupNorm(1, 3)(mt.tensor(x[None])).detach().numpy(),
                               group_norm_ref(x[None].astype(np.float64), 1, None, None, 1e-5), rtol=1e-5, atol=1e-6)


@pytest.mark.torch
def test_group_and_instance_norm_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x, w, b = rng.normal(size=(3, 4, 5, 2)), rng.normal(size=4), rng.normal(size=4)
    for name, args in (("group_norm", (2,)), ("instance_norm", ())):
        mine = [f64(a, True) for a in (x, w, b)]
        theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
        ym = getattr(F, name)(mine[0], *args, weight=mine[1], bias=mine[2])
        yt = getattr(torch.nn.functional, name)(theirs[0], *args, weight=theirs[1], bias=theirs[2])
        g = rng.normal(size=x.shape)
        ym.backward(f64(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-13)
        for m, t in zip(mine, theirs):
            np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
