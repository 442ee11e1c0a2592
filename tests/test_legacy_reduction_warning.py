"""The functional losses' deprecated ``size_average`` / ``reduce`` flags: the reduction they stand for, and
PyTorch's deprecation warning naming it (pytorch/tutorials' spatial transformer calls
``F.nll_loss(..., size_average=False)``)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

RNG = np.random.default_rng(0)
LOGP = np.log(RNG.dirichlet(np.ones(5), 6))  # (6, 5) log-probabilities
TARGET = RNG.integers(0, 5, 6)
PICKED = -LOGP[np.arange(6), TARGET]  # float64 reference per sample
FLAGS = [({"size_average": False}, "sum", PICKED.sum()), ({"size_average": True}, "mean", PICKED.mean()),
         ({"reduce": False}, "none", PICKED), ({"size_average": False, "reduce": True}, "sum", PICKED.sum())]


@pytest.mark.parametrize("flags, name, want", FLAGS)
def test_flags_reduce_as_named_and_warn(flags, name, want):
    with pytest.warns(UserWarning, match=f"please use reduction='{name}' instead"):
        got = F.nll_loss(mt.tensor(LOGP), mt.tensor(TARGET), **flags)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    x, t = mt.tensor([1.0, 2.0]), mt.tensor([0.0, 0.0])
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        F.mse_loss(x, t, **flags)


def test_no_flags_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.nll_loss(mt.tensor(LOGP), mt.tensor(TARGET), reduction="sum")


@pytest.mark.torch
@pytest.mark.parametrize("flags, name, want", FLAGS)
def test_matches_pytorch(flags, name, want):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = torch.nn.functional.nll_loss(torch.tensor(LOGP), torch.tensor(TARGET), **flags)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = F.nll_loss(mt.tensor(LOGP), mt.tensor(TARGET), **flags)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
