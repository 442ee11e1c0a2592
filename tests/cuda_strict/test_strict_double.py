"""The strict CuPy double refuses what the real CuPy 14 refuses; each case is checked against the installed
real CuPy where it can be without a GPU (its names, signatures, ufunc loops and ``_scatter_op``)."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

pytest.importorskip("cupy", reason="the strict double resolves every name against the real CuPy")
ml_dtypes = pytest.importorskip("ml_dtypes")
pytest.importorskip("scipy")

from tests.cuda_strict import cupy_module as cp, real  # noqa: E402
from tests.cuda_strict.convert import IMPLICIT  # noqa: E402


def test_device_arrays_are_not_numpy_arrays_and_refuse_implicit_conversion():
    a = cp.arange(6, dtype=np.float32)
    assert not isinstance(a, np.ndarray)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    assert IMPLICIT.endswith("Please use `.get()` to construct a NumPy array explicitly.")
    np.testing.assert_array_equal(a.get(), np.arange(6, dtype=np.float32))
    np.testing.assert_array_equal(cp.asnumpy(a * 2), np.arange(6) * 2)
    assert float(a[2]) == 2.0 and a[3].item() == 3.0 and int(a.sum()) == 15


def test_a_name_real_cupy_lacks_is_refused():
    name = "busday_count"
    assert hasattr(np, name) and not hasattr(real.cupy, name)
    with pytest.raises(AttributeError):
        getattr(cp, name)
    assert not hasattr(real.cupy.ndarray, "setflags") and hasattr(np.ndarray, "setflags")
    with pytest.raises(AttributeError):
        cp.arange(3).setflags  # NumPy has it; cupy.ndarray does not


def test_host_operands_are_refused_where_cupy_refuses_them():
    a = cp.ones(3, dtype=np.float32)
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.add(a, np.ones(3, dtype=np.float32))
    with pytest.raises(TypeError, match="Unsupported type"):
        a + np.ones(3, dtype=np.float32)
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.concatenate([a, np.ones(3, dtype=np.float32)])
    assert cp.asarray(np.ones(3)).shape == (3,)  # creation takes host data, as CuPy's does


def test_arguments_are_bound_to_the_real_signature():
    with pytest.raises(TypeError):
        cp.sum(cp.ones(3), bogus=1)
    with pytest.raises(TypeError, match="Wrong type"):
        cp.invert(cp.ones(3, dtype=np.float32))
    assert not any(t.startswith("f") for t in real.cupy.invert.types)


def test_ufunc_at_follows_cupy_scatter_op_rules():
    assert real.cupy.multiply._scatter_op is None and real.cupy.add._scatter_op == "add"
    with pytest.raises(NotImplementedError):
        cp.multiply.at(cp.ones(3), cp.asarray([0, 1]), 2.0)
    for dtype in (ml_dtypes.bfloat16, np.bool_, np.int8, np.uint8, np.int16, np.int64):
        with pytest.raises(TypeError, match="add.at"):
            cp.add.at(cp.zeros(3, dtype=dtype), cp.asarray([0, 0]), cp.ones(2, dtype=dtype))
    with pytest.raises(TypeError, match="maximum.at"):
        cp.maximum.at(cp.zeros(3, dtype=np.float16), cp.asarray([0]), cp.ones(1, dtype=np.float16))
    out = cp.zeros(3, dtype=np.float32)
    cp.add.at(out, cp.asarray([0, 0, 2]), cp.ones(3, dtype=np.float32))
    np.testing.assert_array_equal(out.get(), [2, 0, 1])


def test_the_generator_cannot_be_copied_or_pickled():
    rng = cp.random.default_rng(0)
    assert rng.random(3).shape == (3,)
    with pytest.raises(TypeError, match="_thread.lock"):
        copy.deepcopy(rng)
    with pytest.raises(TypeError, match="_thread.lock"):
        pickle.dumps(rng)
    with pytest.raises(AttributeError):
        rng.permutation(3)  # real CuPy's Generator has none
    assert not hasattr(real.cupy.random.Generator, "permutation")


def test_a_copy_of_the_device_state_replays_the_draws():
    """What CupyBackend.copy_rng relies on: the state is a device array of the bit generator."""
    rng = cp.random.default_rng(5)
    saved = rng.bit_generator._state.copy()
    first = rng.random(4).get()
    assert not np.array_equal(first, rng.random(4).get())
    rng.bit_generator._state[...] = saved
    np.testing.assert_array_equal(rng.random(4).get(), first)
