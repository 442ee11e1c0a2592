"""``nn.init``'s deprecated names without the underscore, ``dirac_`` / ``sparse_``; ``nn.utils``'
``clip_grad_norm`` (deprecated), ``get_total_norm``, ``clip_grads_with_norm_``, ``skip_init`` and
``rnn.invert_permutation``."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.nn import init

OLD_NAMES = {"uniform": (), "normal": (), "constant": (0.5,), "eye": (), "xavier_uniform": (),
             "xavier_normal": (), "kaiming_uniform": (), "kaiming_normal": (), "orthogonal": ()}


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_deprecated_init_names_warn_and_do_what_the_underscore_forms_do(old):
    args = OLD_NAMES[old]
    mt.manual_seed(3)
    expected = getattr(init, old + "_")(mt.empty(4, 5), *args)
    mt.manual_seed(3)
    with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`."):
        got = getattr(init, old)(mt.empty(4, 5), *args)
    assert mt.equal(got, expected) and getattr(init, old).__name__ == old


def test_dirac_and_sparse():
    w = mt.full((4, 2, 3, 3), 7.0)
    with pytest.warns(FutureWarning, match="`nn.init.dirac` is now deprecated"):
        init.dirac(w, 2)
    centre = np.zeros((4, 2))
    centre[[0, 1, 2, 3], [0, 1, 0, 1]] = 1
    assert np.array_equal(w[:, :, 1, 1].numpy(), centre) and w.sum().item() == 4
    x = mt.randn(1, 2, 5, 5)
    conv = nn.Conv2d(2, 2, 3, padding=1, bias=False)
    init.dirac_(conv.weight)
    assert mt.allclose(conv(x), x)  # identity on the channels
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(mt.empty(2, 2))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(mt.empty(3, 2, 3), groups=2)
    s = mt.empty(10, 6)
    with pytest.warns(FutureWarning, match="`nn.init.sparse` is now deprecated"):
        init.sparse(s, 0.25, std=1.0)
    assert ((s == 0).sum(0) >= math.ceil(0.25 * 10)).all().item() and (s != 0).sum().item() >= 6 * 7
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.sparse_(mt.empty(3), 0.1)


def _params_with_grads():
    a, b = nn.Parameter(mt.ones(3)), nn.Parameter(mt.ones(2, 2))
    a.grad, b.grad = mt.tensor([3.0, 0.0, 4.0]), mt.full((2, 2), 6.0)
    return [a, b]


def test_total_norm_and_clipping_with_a_given_norm():
    params = _params_with_grads()
    total = nn.utils.get_total_norm([p.grad for p in params])
    assert total.item() == pytest.approx(13.0)  # sqrt(9 + 16 + 4 * 36)
    assert nn.utils.get_total_norm([p.grad for p in params], norm_type=math.inf).item() == 6.0
    assert nn.utils.get_total_norm([]).item() == 0.0
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.get_total_norm(mt.tensor([math.inf]), error_if_nonfinite=True)
    nn.utils.clip_grads_with_norm_(params, 1.3, total)
    assert mt.allclose(params[0].grad, mt.tensor([0.3, 0.0, 0.4]), atol=1e-6)
    nn.utils.clip_grads_with_norm_(params, 100.0, total)  # never scaled up
    assert mt.allclose(params[0].grad, mt.tensor([0.3, 0.0, 0.4]), atol=1e-6)


def test_clip_grad_norm_is_deprecated_clip_grad_norm_():
    expected = _params_with_grads()
    total = nn.utils.clip_grad_norm_(expected, 1.0, foreach=None)
    params = _params_with_grads()
    with pytest.warns(FutureWarning, match="`minitensor.nn.utils.clip_grad_norm` is now deprecated in favor of "
                                           "`minitensor.nn.utils.clip_grad_norm_`."):
        got = nn.utils.clip_grad_norm(iter(params), 1.0)  # an iterator: read once, all grads still clipped
    assert got.item() == total.item() == pytest.approx(13.0)
    assert all(mt.equal(p.grad, q.grad) for p, q in zip(params, expected))


def test_skip_init():
    layer = nn.utils.skip_init(nn.Linear, 3, 4, bias=False)
    assert isinstance(layer, nn.Linear) and layer.weight.shape == (4, 3) and layer.bias is None
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int)

    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        nn.utils.skip_init(NoDevice, 3)


def test_invert_permutation():
    perm = mt.tensor([2, 0, 3, 1])
    inv = nn.utils.rnn.invert_permutation(perm)
    assert inv.tolist() == [1, 3, 0, 2] and perm[inv].tolist() == [0, 1, 2, 3]
    assert nn.utils.rnn.invert_permutation(None) is None


@pytest.mark.torch
def test_against_pytorch():
    torch = pytest.importorskip("torch")
    w, t = mt.empty(6, 4, 3, 3, 3), torch.empty(6, 4, 3, 3, 3)
    assert np.array_equal(init.dirac_(w, 3).numpy(), torch.nn.init.dirac_(t, 3).numpy())
    grads = [np.random.default_rng(0).standard_normal(s).astype(np.float32) for s in ((3, 4), (5,))]
    for p in (1.0, 2.0, 3.5, math.inf):
        ours = nn.utils.get_total_norm([mt.tensor(g) for g in grads], p).item()
        theirs = torch.nn.utils.get_total_norm([torch.tensor(g) for g in grads], p).item()
        assert ours == pytest.approx(theirs, rel=1e-6)
    perm = [3, 0, 4, 1, 2]
    assert nn.utils.rnn.invert_permutation(mt.tensor(perm)).tolist() == \
        torch.nn.utils.rnn.invert_permutation(torch.tensor(perm)).tolist()
    for old in list(OLD_NAMES) + ["dirac", "sparse"]:
        args = (0.5,) if old in ("constant", "sparse") else ()
        shape = (2, 2, 3) if old == "dirac" else (4, 5)
        with pytest.warns(FutureWarning) as ours:
            getattr(init, old)(mt.empty(*shape), *args)
        with pytest.warns(FutureWarning) as theirs:
            getattr(torch.nn.init, old)(torch.empty(*shape), *args)
        assert str(ours[0].message) == str(theirs[0].message)
    assert callable(torch.nn.utils.skip_init) and callable(torch.nn.utils.clip_grads_with_norm_)
