"""nn.AdaptiveLogSoftmaxWithLoss: forward, log_prob and predict against a float64 NumPy reference written here,
gradients by finite differences; PyTorch parity marked ``torch``."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.testing import gradcheck
from tests.helpers import assert_close, t64


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def full_log_prob_ref(m: nn.AdaptiveLogSoftmaxWithLoss, x: np.ndarray) -> np.ndarray:
    """log p of every class from the module's weights, in float64."""
    w = {k: v.detach().numpy().astype(np.float64) for k, v in m.state_dict().items()}
    head = x @ w["head.weight"].T + (w["head.bias"] if "head.bias" in w else 0)
    head_lp = _log_softmax(head)
    parts = [head_lp[:, :m.shortlist_size]]
    for i in range(m.n_clusters):
        z = x @ w[f"tail.{i}.0.weight"].T @ w[f"tail.{i}.1.weight"].T
        parts.append(_log_softmax(z) + head_lp[:, m.shortlist_size + i:m.shortlist_size + i + 1])
    return np.concatenate(parts, 1)


def _module(seed: int = 0, **kwargs) -> nn.AdaptiveLogSoftmaxWithLoss:
    mt.manual_seed(seed)
    return nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], div_value=2.0, **kwargs).double()


@pytest.mark.parametrize("head_bias", [False, True])
def test_forward_log_prob_and_loss_match_the_reference(head_bias):
    m = _module(head_bias=head_bias)
    r = np.random.default_rng(1)
    x = r.standard_normal((16, 8))
    target = np.concatenate([[0, 3, 4, 9, 10, 14, 15, 19], r.integers(0, 20, 8)])  # every cluster's edges
    full = full_log_prob_ref(m, x)
    assert np.allclose(np.exp(full).sum(1), 1)  # a distribution over the n_classes
    out = m(t64(x, False), mt.tensor(target))
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    want = full[np.arange(16), target]
    assert_close(out.output, want, rtol=1e-12)
    assert_close(out.loss, -want.mean(), rtol=1e-12)
    assert_close(m.log_prob(t64(x, False)), full, rtol=1e-12)
    # one sample: 0-d target, 1-d input
    one = m(t64(x[3], False), mt.tensor(int(target[3])))
    assert one.output.shape == () and abs(float(one.output) - want[3]) < 1e-12


def test_gradients_by_finite_differences():
    m = _module(head_bias=True)
    r = np.random.default_rng(2)
    x = t64(r.standard_normal((6, 8)))
    target = mt.tensor([1, 5, 11, 16, 19, 7])
    params = list(m.parameters())
    # central differences on a few entries of each parameter, written through its array
    loss = m(x, target).loss
    loss.backward()
    grads = [p.grad.numpy().copy() for p in params]
    eps = 1e-6
    for p, g in zip(params, grads):
        flat = p.detach().numpy().reshape(-1)
        num = np.zeros_like(flat)
        for k in range(0, flat.size, max(1, flat.size // 7)):  # a few entries of each parameter
            old = flat[k]
            flat[k] = old + eps
            up = float(m(x, target).loss)
            flat[k] = old - eps
            down = float(m(x, target).loss)
            flat[k] = old
            num[k] = (up - down) / (2 * eps)
            assert abs(num[k] - g.reshape(-1)[k]) < 1e-6
    assert gradcheck(lambda x: m(x, target).output, [x])


def test_predict_takes_the_argmax_of_the_full_distribution():
    m = _module(head_bias=True)
    x = np.random.default_rng(3).standard_normal((10, 8))
    with mt.no_grad():  # every row's head argmax is a cluster
        m.head.bias.copy_(mt.tensor(np.r_[np.zeros(4), np.full(3, 5.0)]))
    xs = t64(x, False)
    want = full_log_prob_ref(m, x).argmax(1)
    assert_close(m.predict(xs), want)
    with mt.no_grad():  # all rows in the shortlist
        m.head.bias.copy_(mt.tensor(np.r_[np.full(4, 50.0), np.zeros(3)]))
    assert_close(m.predict(xs), full_log_prob_ref(m, x).argmax(1))
    with mt.no_grad():  # mixed: the head's argmax is a cluster for some rows only
        m.head.bias.zero_()
        m.head.weight.zero_()
        m.head.weight[4, 0] = 10.0  # cluster 0's logit large where x[:, 0] > 0
    mixed = m.predict(xs)
    want = full_log_prob_ref(m, x).argmax(1)
    assert (x[:, 0] > 0).any() and (x[:, 0] <= 0).any()
    assert_close(mixed, want)


def test_checks():
    with pytest.raises(ValueError, match="length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [])
    for bad in ([5, 3], [0, 3], [3, 10], [3, 3], [2.5]):
        with pytest.raises(ValueError, match="unique, positive integers"):
            nn.AdaptiveLogSoftmaxWithLoss(4, 10, bad)
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 6])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\], but values in range \[0, 10\]"):
        m(mt.randn(2, 4), mt.tensor([0, 10]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        m(mt.randn(3, 4), mt.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input"):
        m(mt.randn(2, 4, 1), mt.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="0D target tensor expects 1D input"):
        m(mt.randn(2, 4), mt.tensor(1))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        m(mt.randn(2, 4), mt.tensor([[0, 1]]))
    assert [tuple(p.shape) for p in m.parameters()] == [(5, 4), (1, 4), (3, 1), (0, 4), (4, 0)]


@pytest.mark.torch
def test_matches_torch_values_gradients_and_predict():
    torch = pytest.importorskip("torch")
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], div_value=2.0, head_bias=True).double()
    m = _module(head_bias=True)
    assert list(m.state_dict()) == list(t.state_dict()) and repr(m) == repr(t)
    m.load_state_dict({k: mt.tensor(v.numpy()) for k, v in t.state_dict().items()})
    r = np.random.default_rng(4)
    x, target = r.standard_normal((12, 8)), r.integers(0, 20, 12)
    out, tout = m(t64(x, False), mt.tensor(target)), t(torch.tensor(x), torch.tensor(target))
    out.loss.backward()
    tout.loss.backward()
    assert_close(out.output, tout.output.detach().numpy(), rtol=1e-12)
    for (name, p), tp in zip(m.named_parameters(), t.parameters()):
        assert_close(p.grad, tp.grad.numpy(), rtol=1e-10, atol=1e-12), name
    assert_close(m.log_prob(t64(x, False)), t.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    assert_close(m.predict(t64(x, False)), t.predict(torch.tensor(x)).numpy())
