"""``minitensor.get_rng_state`` / ``set_rng_state`` (the CPU generator's state as a uint8 tensor) and
``minitensor.random.fork_rng`` (a block whose draws leave the generators as they were)."""
from __future__ import annotations

import pytest

import minitensor as mt


def test_state_round_trips_and_replays_the_draws():
    mt.manual_seed(3)
    mt.rand(5)
    state = mt.get_rng_state()
    assert state.dtype == mt.uint8 and state.ndim == 1 and state.device.type == "cpu"
    first = mt.randn(4)
    mt.rand(100)  # move on
    mt.set_rng_state(state)
    assert mt.randn(4).tolist() == first.tolist()
    assert mt.random.get_rng_state().tolist() != state.tolist()  # the stream moved past the saved point
    mt.random.set_rng_state(state)
    assert mt.random.get_rng_state().tolist() == state.tolist()


def test_state_survives_reseeding_and_is_the_default_generators():
    mt.manual_seed(11)
    state = mt.get_rng_state()
    expected = mt.rand(3).tolist()
    mt.manual_seed(12)
    mt.set_rng_state(state)
    assert mt.rand(3).tolist() == expected
    mt.default_generator.set_state(state)
    assert mt.rand(3).tolist() == expected


def test_set_rng_state_refuses_other_tensors():
    with pytest.raises(TypeError, match="ByteTensor"):
        mt.set_rng_state(mt.zeros(4))
    with pytest.raises(RuntimeError, match="not a state"):
        mt.set_rng_state(mt.zeros(4, dtype=mt.uint8))


def test_fork_rng_restores_the_state():
    mt.manual_seed(5)
    before = mt.get_rng_state()
    with mt.random.fork_rng():
        inside = mt.rand(3).tolist()
    assert mt.get_rng_state().tolist() == before.tolist()
    assert mt.rand(3).tolist() == inside  # the block's draws happen again after it
    with pytest.raises(ValueError):  # restored on the way out of an error too
        with mt.random.fork_rng(devices=[]):
            mt.rand(7)
            raise ValueError
    mt.manual_seed(5)
    mt.rand(3)
    after_error = mt.rand(2).tolist()
    mt.manual_seed(5)
    with mt.random.fork_rng(devices=[]):
        mt.rand(3)
        mt.rand(7)
    mt.rand(3)
    assert mt.rand(2).tolist() == after_error


def test_fork_rng_disabled_leaves_the_draws():
    mt.manual_seed(8)
    before = mt.get_rng_state()
    with mt.random.fork_rng(enabled=False):
        mt.rand(3)
    assert mt.get_rng_state().tolist() != before.tolist()


@pytest.mark.torch
def test_names_are_where_pytorch_has_them():
    torch = pytest.importorskip("torch")
    for module, mine in ((torch, mt), (torch.random, mt.random)):
        for name in ("get_rng_state", "set_rng_state"):
            assert hasattr(module, name) and hasattr(mine, name)
    assert hasattr(torch.random, "fork_rng") and hasattr(mt.random, "fork_rng")
    assert torch.get_rng_state().dtype == torch.uint8 and mt.get_rng_state().dtype == mt.uint8
