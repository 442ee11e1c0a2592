"""``CupyBackend.copy_rng`` on the real CuPy classes, without a GPU: a ``cupy.random.Generator`` over an
``XORWOW`` bit generator built as CuPy builds them (a ``threading.Lock`` and a state array; a NumPy array
stands in for the device array). ``copy.deepcopy`` refuses such a generator ("cannot pickle
'_thread.lock'"), which took down checkpointing with ``preserve_rng_state`` and ``fork_rng`` on CUDA."""
from __future__ import annotations

import copy
import threading

import numpy as np
import pytest

cupy = pytest.importorskip("cupy", reason="the real CuPy classes are needed")
pytest.importorskip("numba.cuda", reason="the CUDA backend imports numba-cuda")
from cupy.random import _bit_generator, _generator_api  # noqa: E402

from minitensor.backends.cuda.backend import CupyBackend  # noqa: E402


def cupy_generator(state: np.ndarray) -> object:
    bits = _bit_generator.XORWOW.__new__(_bit_generator.XORWOW)
    bits.__dict__.update(lock=threading.Lock(), _state=state, _seed=3, _size=state.size, _current_device=0)
    rng = _generator_api.Generator.__new__(_generator_api.Generator)
    rng.__dict__.update(bit_generator=bits, _binomial_state=None)
    return rng


def test_a_cupy_generator_cannot_be_deep_copied():
    with pytest.raises(TypeError, match="pickle"):
        copy.deepcopy(cupy_generator(np.zeros(4, np.int8)))


def test_copy_rng_copies_the_state_and_shares_nothing_mutable():
    state = np.arange(8, dtype=np.int8)
    rng = cupy_generator(state)
    clone = CupyBackend.copy_rng(object.__new__(CupyBackend), rng)
    assert type(clone) is type(rng) and type(clone.bit_generator) is type(rng.bit_generator)
    assert clone.bit_generator is not rng.bit_generator and clone.bit_generator.lock is not rng.bit_generator.lock
    assert clone.bit_generator._state is not state
    np.testing.assert_array_equal(clone.bit_generator._state, state)
    state[:] = 0  # the original generator draws on: the copy keeps the state it had
    np.testing.assert_array_equal(clone.bit_generator._state, np.arange(8))
    assert clone.bit_generator._seed == 3 and clone._binomial_state is None
