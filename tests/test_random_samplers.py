"""normal (its four overloads), poisson, the in-place samplers (exponential_, geometric_, cauchy_,
log_normal_, random_) and utils.data.WeightedRandomSampler: the laws by Kolmogorov-Smirnov distances and
moments from fixed seeds (bounds a few times the sampling error, far below a wrong law's), reproducibility
from manual_seed and from a Generator, shapes, dtypes, gradients and PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import minitensor as mt
from minitensor.utils.data import BatchSampler, WeightedRandomSampler

N = 20000
KS_BOUND = 0.02  # the KS distance of N draws from their own law: about 0.01 at the 5% level


def ks(sample, cdf):
    return stats.kstest(np.asarray(sample, dtype=np.float64).ravel(), cdf).statistic


def test_normal_overloads_shapes_dtypes_and_law():
    mean, std = mt.full((N,), 2.0), mt.full((N,), 3.0)
    assert ks(mt.normal(mean, std).numpy(), stats.norm(2, 3).cdf) < KS_BOUND
    assert ks(mt.normal(mean, 0.5).numpy(), stats.norm(2, 0.5).cdf) < KS_BOUND
    assert ks(mt.normal(-1.0, std).numpy(), stats.norm(-1, 3).cdf) < KS_BOUND
    assert ks(mt.normal(1.0, 2.0, (N,)).numpy(), stats.norm(1, 2).cdf) < KS_BOUND
    assert ks(mt.normal(1.0, 2.0, (N,)).numpy(), stats.norm(0, 2).cdf) > 0.1  # a wrong mean is seen
    assert ks(mt.normal(1.0, 2.0, (N,)).numpy(), stats.norm(1, 2.4).cdf) > 0.03  # and a wrong spread
    # per-element parameters: each column follows its own mean and std
    cols = mt.normal(mt.tensor([[0.0, 10.0, -5.0]]).expand(N, 3), mt.tensor([1.0, 0.1, 4.0])).numpy()
    np.testing.assert_allclose(cols.mean(0), [0, 10, -5], atol=0.1)
    np.testing.assert_allclose(cols.std(0), [1, 0.1, 4], rtol=0.03)
    assert mt.normal(mt.zeros(2, 1), mt.ones(3)).shape == (2, 3)
    assert mt.normal(0.0, 1.0, (2, 3)).dtype is mt.float32
    assert mt.normal(0.0, 1.0, size=(2,), dtype=mt.float64).dtype is mt.float64
    assert mt.normal(mt.zeros(3, dtype=mt.float64), mt.ones(3)).dtype is mt.float64
    assert mt.normal(0.0, mt.ones(2, dtype=mt.float64)).dtype is mt.float64
    assert mt.normal(0.0, 1.0, (3,), requires_grad=True).requires_grad
    assert mt.normal(mt.zeros(0), 1.0).shape == (0,)
    assert (mt.normal(mt.tensor([5.0]), 0.0) == 5.0).all()


def test_normal_gives_its_parameters_zero_gradients_as_pytorch():
    m, s = mt.zeros(3, requires_grad=True), mt.ones(3, requires_grad=True)
    y = mt.normal(m, s)
    assert y.requires_grad
    (y * 2).sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3
    r = mt.tensor([1.0, 2.0], requires_grad=True)
    mt.poisson(r).sum().backward()
    assert r.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("call, error, message", [
    (lambda: mt.normal(mt.zeros(4), mt.ones(2, 2)), RuntimeError,
     r"size of tensor a \(4\) must match the size of tensor b \(2\) at non-singleton dimension 1"),
    (lambda: mt.normal(mt.zeros(3), -1.0), RuntimeError, "normal expects std >= 0.0, but found std -1"),
    (lambda: mt.normal(0.0, -1.0, (2,)), RuntimeError, "normal expects std >= 0.0, but found std -1"),
    (lambda: mt.normal(mt.zeros(3), mt.tensor([1.0, -1, 1])), RuntimeError,
     "normal expects all elements of std >= 0.0"),
    (lambda: mt.normal(mt.zeros(3, dtype=mt.int64), 1.0), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda: mt.normal(0.0, 1.0), TypeError, "invalid combination of arguments"),
    (lambda: mt.normal(mt.zeros(3), 1.0, (3,)), TypeError, "invalid combination of arguments"),
    (lambda: mt.poisson(mt.tensor([1, 2])), NotImplementedError, "\"poisson_cpu\" not implemented for 'Long'"),
    (lambda: mt.poisson(mt.tensor([-1.0, 2.0])), RuntimeError,
     "invalid Poisson rate, expected rate to be non-negative"),
    (lambda: mt.poisson(mt.tensor([float("nan")])), RuntimeError, "invalid Poisson rate"),
    (lambda: mt.zeros(3).exponential_(0.0), RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0"),
    (lambda: mt.zeros(3, dtype=mt.int64).exponential_(), RuntimeError,
     "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you "
     "specified Long"),
    (lambda: mt.zeros(3).geometric_(1.0), RuntimeError, r"geometric_ expects p to be in \(0, 1\), but got p=1"),
    (lambda: mt.zeros(3).geometric_(0.0), RuntimeError, r"geometric_ expects p to be in \(0, 1\), but got p=0"),
    (lambda: mt.zeros(3, dtype=mt.bool).geometric_(0.5), NotImplementedError, "\"geometric_cpu\" not implemented"),
    (lambda: mt.zeros(3).cauchy_(0.0, 0.0), RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=0"),
    (lambda: mt.zeros(3, dtype=mt.uint8).cauchy_(), RuntimeError, "you specified unsigned char"),
    (lambda: mt.zeros(3).log_normal_(1.0, -1.0), RuntimeError, "log_normal_ expects std > 0.0, but found std=-1"),
    (lambda: mt.zeros(3, dtype=mt.int64).log_normal_(), NotImplementedError,
     "\"log_normal_cpu\" not implemented for 'Long'"),
    (lambda: mt.zeros(3).random_(5, 2), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"),
    (lambda: mt.zeros(3, dtype=mt.int8).random_(0, 300), RuntimeError, "to - 1 is out of bounds for signed char"),
    (lambda: mt.zeros(3, dtype=mt.int8).random_(-300, 3), RuntimeError, "from is out of bounds for signed char"),
    (lambda: mt.zeros(3, dtype=mt.bool).random_(0, 3), RuntimeError, "to - 1 is out of bounds for bool"),
    (lambda: mt.zeros(3, dtype=mt.float16).random_(0, 2**30), RuntimeError, "to - 1 is out of bounds for c10::Half"),
    (lambda: mt.zeros(3, requires_grad=True).exponential_(), RuntimeError, "a leaf Variable that requires grad"),
])
def test_errors_as_pytorch(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_poisson_counts():
    rates = mt.tensor([0.0, 0.5, 4.0, 100.0]).repeat(N // 4, 1)
    k = mt.poisson(rates)
    assert k.dtype is mt.float32 and k.shape == rates.shape
    a = k.numpy()
    assert (a[:, 0] == 0).all() and (a == np.round(a)).all()
    np.testing.assert_allclose(a.mean(0)[1:], [0.5, 4.0, 100.0], rtol=0.04)
    np.testing.assert_allclose(a.var(0)[1:], [0.5, 4.0, 100.0], rtol=0.1)
    observed = np.bincount(a[:, 2].astype(int), minlength=20)[:12] / len(a)
    np.testing.assert_allclose(observed, stats.poisson(4.0).pmf(np.arange(12)), atol=0.015)
    assert mt.poisson(mt.ones(2, dtype=mt.float64)).dtype is mt.float64


def test_in_place_samplers_follow_their_laws():
    x = mt.empty(N)
    assert x.exponential_(2.0) is x
    assert x.min().item() >= 0 and ks(x.numpy(), stats.expon(scale=0.5).cdf) < KS_BOUND
    assert ks(x.numpy(), stats.expon(scale=0.6).cdf) > 0.04
    assert ks(x.cauchy_(1.0, 2.0).numpy(), stats.cauchy(1, 2).cdf) < KS_BOUND
    assert ks(x.log_normal_(0.5, 0.75).numpy(), stats.lognorm(s=0.75, scale=np.exp(0.5)).cdf) < KS_BOUND
    assert ks(mt.empty(N, dtype=mt.float64).exponential_().numpy(), stats.expon().cdf) < KS_BOUND
    k = mt.empty(N, dtype=mt.int64).geometric_(0.2).numpy()
    assert k.min() >= 1
    observed = np.bincount(k, minlength=12)[1:12] / N
    np.testing.assert_allclose(observed, stats.geom(0.2).pmf(np.arange(1, 12)), atol=0.01)
    assert abs(k.mean() - 5.0) < 0.15
    half = mt.empty(N, dtype=mt.float16).exponential_()
    assert half.dtype is mt.float16 and bool(half.isfinite().all())


@pytest.mark.parametrize("dtype, low, high", [
    (mt.float32, 0, 2**24), (mt.float16, 0, 2**11), (mt.float64, 0, 2**53), (mt.int8, 0, 127),
    (mt.uint8, 0, 255), (mt.int32, 0, 2**31 - 1), (mt.int64, 0, 2**63 - 1), (mt.bool, 0, 1),
])
def test_random_default_ranges_per_dtype(dtype, low, high):
    x = mt.zeros(4000, dtype=dtype).random_()
    a = x.numpy().astype(np.float64)
    assert x.dtype is dtype and a.min() >= low and a.max() <= high and (a == np.round(a)).all()
    assert a.max() > low + (high - low) * 0.9 and a.min() < low + (high - low) * 0.1  # the whole range is used


def test_random_from_to():
    a = mt.zeros(4000, dtype=mt.int8).random_(-5, 5).numpy()
    assert set(a.tolist()) == set(range(-5, 5))
    assert set(mt.zeros(4000).random_(3).numpy().tolist()) == {0.0, 1.0, 2.0}
    b = mt.zeros(4000, dtype=mt.uint8).random_(250, None).numpy()
    assert set(b.tolist()) == set(range(250, 256))
    c = mt.zeros(4000, dtype=mt.int64).random_(**{"from": 2, "to": 4}).numpy()
    assert set(c.tolist()) == {2, 3}
    d = mt.zeros(4000, dtype=mt.int64).random_(-2**63, None).numpy()
    assert (d < 0).mean() > 0.4 and (d > 0).mean() > 0.4
    counts = np.bincount(mt.zeros(N, dtype=mt.int64).random_(10).numpy(), minlength=10)
    assert stats.chisquare(counts).pvalue > 1e-3


SAMPLERS = [
    lambda t, g: t.exponential_(1.5, generator=g), lambda t, g: t.geometric_(0.3, generator=g),
    lambda t, g: t.cauchy_(generator=g), lambda t, g: t.log_normal_(generator=g),
    lambda t, g: t.random_(0, 100, generator=g), lambda t, g: t.copy_(mt.poisson(t.abs() + 1, generator=g)),
    lambda t, g: t.copy_(mt.normal(t, 1.0, generator=g)),
    lambda t, g: t.copy_(mt.normal(0.0, 1.0, t.shape, generator=g)),
]


@pytest.mark.parametrize("draw", SAMPLERS)
def test_manual_seed_and_generators_reproduce_draws(draw):
    mt.manual_seed(11)
    a = draw(mt.zeros(50), None).numpy().copy()
    mt.manual_seed(11)
    assert np.array_equal(draw(mt.zeros(50), None).numpy(), a)
    assert not np.array_equal(draw(mt.zeros(50), None).numpy(), a)  # the stream moved on
    g = mt.Generator().manual_seed(3)
    b = draw(mt.zeros(50), g).numpy().copy()
    mt.manual_seed(99)  # the global seed does not touch a generator's stream
    assert np.array_equal(draw(mt.zeros(50), g.manual_seed(3)).numpy(), b)


def test_weighted_random_sampler_draws_by_weight():
    sampler = WeightedRandomSampler([1.0, 0.0, 3.0, 6.0], N)
    drawn = np.fromiter(iter(sampler), dtype=np.int64)
    assert len(sampler) == N and len(drawn) == N
    np.testing.assert_allclose(np.bincount(drawn, minlength=4) / N, [0.1, 0.0, 0.3, 0.6], atol=0.015)
    distinct = list(WeightedRandomSampler(mt.tensor([0.5, 0.0, 2.0, 1.0]), 3, replacement=False))
    assert sorted(distinct) == [0, 2, 3]
    assert WeightedRandomSampler([1, 3], 2).weights.dtype is mt.float64
    g = mt.Generator()
    first = list(WeightedRandomSampler([1.0, 2.0, 3.0], 20, generator=g.manual_seed(5)))
    assert list(WeightedRandomSampler([1.0, 2.0, 3.0], 20, generator=g.manual_seed(5))) == first
    batches = list(BatchSampler(WeightedRandomSampler([1.0, 1.0], 5), 2, drop_last=False))
    assert [len(b) for b in batches] == [2, 2, 1]
    loader = mt.utils.data.DataLoader(mt.utils.data.TensorDataset(mt.arange(4.0)), batch_size=3,
                                      sampler=WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], 6))
    assert [b[0].tolist() for b in loader] == [[2.0] * 3, [2.0] * 3]


@pytest.mark.parametrize("args, kwargs, message", [
    (([1.0, 2.0], 0), {}, "num_samples should be a positive integer value, but got num_samples=0"),
    (([1.0, 2.0], 2.0), {}, "num_samples=2.0"),
    (([1.0, 2.0], True), {}, "num_samples=True"),
    (([1.0, 2.0], 2), {"replacement": 1}, "replacement should be a boolean value, but got replacement=1"),
    (([[1.0, 2.0]], 2), {}, r"weights should be a 1d sequence but given weights have shape \(1, 2\)"),
])
def test_weighted_random_sampler_checks_its_arguments(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        WeightedRandomSampler(*args, **kwargs)


def test_weighted_random_sampler_draw_errors():
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        list(WeightedRandomSampler([1.0, 2.0], 3, replacement=False))
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        list(WeightedRandomSampler([1.0, 0.0, 2.0], 3, replacement=False))
    with pytest.raises(RuntimeError, match="element < 0"):
        list(WeightedRandomSampler([1.0, -1.0], 3))
