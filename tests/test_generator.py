"""``minitensor.Generator`` (PyTorch's torch.Generator) through every ``generator=`` it is passed to, and
``multinomial`` / ``bernoulli`` against their laws (frequencies over many draws, fixed seeds)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.utils.data import DataLoader, random_split


def test_a_generator_repeats_its_stream_and_ignores_the_global_seed():
    g = mt.Generator()
    assert g.initial_seed() == 67280421310721 and g.device == mt.device("cpu")
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    first = [mt.rand(4, generator=g), mt.randn(2, 3, generator=g), mt.randint(0, 100, (5,), generator=g),
             mt.randperm(7, generator=g)]
    mt.manual_seed(123)  # the global stream does not touch a generator's
    g.manual_seed(5)
    again = [mt.rand(4, generator=g), mt.randn(2, 3, generator=g), mt.randint(0, 100, (5,), generator=g),
             mt.randperm(7, generator=g)]
    for a, b in zip(first, again):
        assert np.array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(mt.rand(4, generator=g).numpy(), first[0].numpy())  # the stream advanced
    assert mt.manual_seed(0) is mt.default_generator and mt.Generator().manual_seed(-1).initial_seed() == 2**64 - 1


def test_get_state_and_set_state_resume_the_stream():
    g = mt.Generator().manual_seed(9)
    mt.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype == mt.uint8
    want = mt.randn(5, generator=g)
    other = mt.Generator().set_state(state)
    assert np.array_equal(mt.randn(5, generator=other).numpy(), want.numpy())
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(mt.zeros(3))
    with pytest.raises(RuntimeError, match="not a state"):
        g.set_state(mt.zeros(3, dtype=mt.uint8))


def test_generator_errors_as_pytorchs():
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        mt.rand(2, generator=mt.Generator("cuda"))
    with pytest.raises(TypeError, match="manual_seed expected a long"):
        mt.Generator().manual_seed(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="minitensor.Generator"):
        mt.rand(2, generator=np.random.default_rng(0))  # type: ignore[arg-type]


def test_fills_init_and_data_utilities_take_a_generator():
    def draws(seed: int) -> list[np.ndarray]:
        g = mt.Generator().manual_seed(seed)
        w = mt.empty(3, 4)
        out = [w.uniform_(-1, 1, generator=g).numpy().copy(), w.normal_(generator=g).numpy().copy()]
        for init in (nn.init.uniform_, nn.init.normal_, nn.init.xavier_uniform_, nn.init.xavier_normal_,
                     nn.init.kaiming_uniform_, nn.init.kaiming_normal_, nn.init.trunc_normal_):
            out.append(init(w, generator=g).numpy().copy())
        out.append(np.concatenate([b.numpy() for b in DataLoader(mt.arange(10), batch_size=3, shuffle=True,
                                                                 generator=g)]))
        out.append(np.array(random_split(range(10), [4, 6], generator=g)[0].indices))
        return out
    first, second, third = draws(1), draws(1), draws(2)
    for a, b in zip(first, second):
        assert np.array_equal(a, b)
    assert any(not np.array_equal(a, c) for a, c in zip(first, third))
    assert sorted(first[-2].tolist()) == list(range(10))


def _frequencies(samples: np.ndarray, categories: int) -> np.ndarray:
    return np.bincount(samples.reshape(-1), minlength=categories) / samples.size


def test_multinomial_with_replacement_follows_the_weights():
    weights = mt.tensor([[1.0, 0.0, 3.0, 4.0], [0.0, 0.0, 0.0, 2.0]])  # unnormalised rows, zeros never drawn
    drawn = mt.multinomial(weights, 40000, replacement=True, generator=mt.Generator().manual_seed(0))
    assert drawn.shape == (2, 40000) and drawn.dtype == mt.int64
    np.testing.assert_allclose(_frequencies(drawn[0].numpy(), 4), [0.125, 0, 0.375, 0.5], atol=0.01)
    assert (drawn[1].numpy() == 3).all()
    one_d = mt.tensor([0.2, 0.8]).multinomial(5, True)
    assert one_d.shape == (5,)


def test_multinomial_without_replacement_is_sequential_drawing():
    """Distinct per row; the first pick follows the weights and the second follows them with the first
    removed (the law of drawing one at a time)."""
    p = np.array([0.5, 0.3, 0.2])
    rows = mt.tensor(np.tile(p, (30000, 1)))
    drawn = mt.multinomial(rows, 2, generator=mt.Generator().manual_seed(1)).numpy()
    assert (drawn[:, 0] != drawn[:, 1]).all()
    np.testing.assert_allclose(_frequencies(drawn[:, 0], 3), p, atol=0.01)
    second_after_0 = drawn[drawn[:, 0] == 0, 1]
    np.testing.assert_allclose(_frequencies(second_after_0, 3), [0, 0.6, 0.4], atol=0.015)
    full = mt.multinomial(mt.tensor([1.0, 2.0, 3.0]), 3)
    assert sorted(full.tolist()) == [0, 1, 2]


@pytest.mark.parametrize("weights, kwargs, error, message", [
    ([[[1.0]]], {}, RuntimeError, "prob_dist must be 1 or 2 dim"),
    ([1.0, 2.0], {"num_samples": 0}, RuntimeError, "cannot sample n_sample <= 0 samples"),
    ([1.0, 2.0], {"num_samples": 3}, RuntimeError, "cannot sample n_sample > prob_dist.size"),
    ([1.0, -2.0], {}, RuntimeError, "element < 0"),
    ([1.0, float("nan")], {}, RuntimeError, "`inf`, `nan`"),
    ([0.0, 0.0], {}, RuntimeError, r"sum of probabilities <= 0"),
    ([0.0, 1.0, 0.0], {"num_samples": 2}, RuntimeError, "not enough non-negative category"),
])
def test_multinomial_refuses_bad_input_as_pytorch(weights, kwargs, error, message):
    kwargs = {"num_samples": 1, **kwargs}
    with pytest.raises(error, match=message):
        mt.multinomial(mt.tensor(weights), **kwargs)
    with pytest.raises(RuntimeError, match="floating-point"):
        mt.multinomial(mt.tensor([1, 2]), 1)


def test_bernoulli_draws_ones_with_the_given_probabilities():
    g = mt.Generator().manual_seed(2)
    p = mt.tensor([0.0, 0.25, 0.9, 1.0], dtype=mt.float64).expand(20000, 4)
    drawn = mt.bernoulli(p, generator=g)
    assert drawn.dtype == mt.float64 and set(np.unique(drawn.numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(drawn.numpy().mean(0), [0, 0.25, 0.9, 1], atol=0.01)
    fixed = mt.zeros(20000).bernoulli(0.3, generator=g)
    assert abs(fixed.numpy().mean() - 0.3) < 0.01
    filled = mt.zeros(20000).bernoulli_(0.7)
    assert abs(filled.numpy().mean() - 0.7) < 0.01
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        mt.bernoulli(mt.tensor([0.5, 1.5]))
