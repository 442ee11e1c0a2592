"""The CPU's scans (``ufunc.accumulate``) and the generic log-step scan that CuPy runs agree with NumPy's
sequential references, so both bodies of cummax, cummin and logcumsumexp are checked on any machine."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor.backends.generic.reduce import ReduceOps


class GenericScans(ReduceOps):
    """The generic bodies on NumPy (the CPU backend overrides their ``_scan``)."""
    xp = np


@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=9),
                    elements=st.floats(-50, 50) | st.just(np.nan)), data=st.data())
def test_generic_and_cpu_scans_match_numpy(x, data):
    axis = data.draw(st.integers(0, x.ndim - 1))
    cpu = mt.device("cpu").backend
    for backend in (GenericScans(), cpu):
        for name, accumulate in (("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate)):
            values, indices = getattr(backend, name)(x, axis)
            np.testing.assert_array_equal(values, accumulate(x, axis=axis))
            ref_values, ref_indices = getattr(cpu, name)(x, axis)
            np.testing.assert_array_equal(indices, ref_indices)
        finite = np.nan_to_num(x)
        np.testing.assert_allclose(backend.logcumsumexp(finite, axis), np.logaddexp.accumulate(finite, axis=axis),
                                   rtol=1e-13)
