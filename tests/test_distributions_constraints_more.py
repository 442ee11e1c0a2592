"""The constraints added for the newer distributions and transforms: integer, half-open, multinomial,
correlation-Cholesky, cat / stack, square / symmetric / lower-triangular / positive-semidefinite, the
mixture's, and the ``dependent`` placeholders; (marked torch) the same checks and reprs as PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.distributions import constraints as C


def t64(x):
    return mt.tensor(np.asarray(x, dtype=np.float64))


def _cases(c, t):
    """(constraint, value, expected check) for one library's constraints module and tensor maker."""
    psd = np.array([[2.0, 1.0], [1.0, 0.5]])  # singular: semidefinite, not definite
    return [
        (c.nonnegative_integer, t([0.0, 2.0, -1.0, 1.5]), [True, True, False, False]),
        (c.positive_integer, t([1.0, 0.0, 3.0]), [True, False, True]),
        (c.half_open_interval(0.0, 1.0), t([0.0, 0.5, 1.0]), [True, True, False]),
        (c.multinomial(3), t([[1.0, 2.0, 0.0], [2.0, 2.0, 0.0], [-1.0, 1.0, 0.0]]), [True, False, False]),
        (c.corr_cholesky, t([[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.7]]]), [True, False]),
        (c.square, t(np.zeros((3, 2, 2))), [True, True, True]),
        (c.symmetric, t([[[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [0.0, 1.0]]]), [True, False]),
        (c.lower_triangular, t([[[1.0, 0.0], [2.0, 1.0]], [[1.0, 2.0], [0.0, 1.0]]]), [True, False]),
        (c.positive_semidefinite, t([psd, -psd]), [True, False]),
        (c.cat([c.positive, c.real], -1, [1, 2]), t([[1.0, -1.0, 5.0], [-1.0, 0.0, 0.0]]),
         [[True, True, True], [False, True, True]]),
        (c.stack([c.positive, c.unit_interval], -1), t([[1.0, 0.5], [1.0, 2.0]]), [[True, True], [True, False]]),
        (c.MixtureSameFamilyConstraint(c.positive), t([1.0, -1.0]), [True, False]),
    ]


def test_checks():
    for constraint, value, want in _cases(C, t64):
        np.testing.assert_array_equal(constraint.check(value).numpy(), want, err_msg=repr(constraint))
    assert C.positive_semidefinite.event_dim == 2 and C.multinomial(3).is_discrete
    assert not C.positive_definite.check(t64([[2.0, 1.0], [1.0, 0.5]])).item()


def test_dependent():
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="Cannot determine validity"):
        C.dependent.check(t64([1.0]))
    with pytest.raises(NotImplementedError, match="event_dim cannot be determined"):
        _ = C.dependent.event_dim
    d = C.dependent(is_discrete=True, event_dim=1)
    assert d.is_discrete and d.event_dim == 1

    class Thing:
        @C.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return C.interval(0.0, 2.0)

    assert repr(Thing().support) == "Interval(lower_bound=0.0, upper_bound=2.0)"
    assert C.is_dependent(Thing.support) and Thing.support.event_dim == 0 and not Thing.support.is_discrete


@pytest.mark.torch
def test_same_as_torch():
    torch = pytest.importorskip("torch")
    ours = _cases(C, t64)
    theirs = _cases(torch.distributions.constraints, lambda x: torch.tensor(np.asarray(x, dtype=np.float64)))
    for (a, value, _), (b, value_t, _) in zip(ours, theirs):
        np.testing.assert_array_equal(a.check(value).numpy(), b.check(value_t).numpy(), err_msg=repr(b))
        assert repr(a) == repr(b)
