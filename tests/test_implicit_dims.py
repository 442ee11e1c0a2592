"""Softmax without ``dim`` (old programs: ``nn.Softmax()``, ``F.softmax(x)``): PyTorch's deprecation warning
and its implicit dim (0 for 0-, 1- and 3-d inputs, else 1); ``autograd.grad(only_inputs=...)`` accepted."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt


def implicit_softmaxes(lib):
    """Each softmax-like call without dim, on 1- to 4-d inputs; returns (values, warning texts)."""
    rng = np.random.default_rng(0)
    out, texts = [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for shape in [(5,), (2, 3), (2, 3, 4), (2, 3, 2, 2)]:
            x = lib.tensor(rng.standard_normal(shape), dtype=lib.float32)
            for call in (lib.nn.Softmax(), lib.nn.LogSoftmax(), lib.nn.Softmin(),
                         lib.nn.functional.softmax, lib.nn.functional.log_softmax, lib.nn.functional.softmin):
                out.append(np.asarray(call(x).tolist()))
        texts = sorted({str(w.message) for w in caught if w.category is UserWarning})
    a = lib.ones(2, requires_grad=True)
    grads = lib.autograd.grad((a * a).sum(), a, only_inputs=True)
    return out, texts, grads[0].tolist()


def test_softmax_without_dim_warns_and_picks_pytorchs_dim():
    out, texts, grads = implicit_softmaxes(mt)
    assert texts == [f"Implicit dimension choice for {n} has been deprecated. Change the call to include dim=X as "
                     "an argument." for n in ("log_softmax", "softmax", "softmin")]
    sums = [o.sum(axis=0 if o.ndim in (1, 3) else 1) for o in out[::6]]  # nn.Softmax on each shape
    assert all(np.allclose(s, 1.0) for s in sums) and grads == [2.0, 2.0]
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        a = mt.ones(1, requires_grad=True)
        mt.autograd.grad(a.sum(), a, only_inputs=False)


@pytest.mark.torch
def test_implicit_dims_match_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = implicit_softmaxes(mt), implicit_softmaxes(torch)
    assert ours[1:] == theirs[1:]
    assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(ours[0], theirs[0]))
