"""manual_seed returns default_generator (the CPU's global stream as a Generator), and the float32 matmul
precision setting, as PyTorch's."""
from __future__ import annotations

import warnings

import pytest

import minitensor as mt


def test_manual_seed_returns_the_default_generator():
    g = mt.manual_seed(3)
    assert g is mt.default_generator and mt.random.default_generator is g
    assert isinstance(g, mt.Generator) and g.device == mt.device("cpu")
    assert g.initial_seed() == mt.initial_seed() == 3


def test_default_generator_is_the_global_stream():
    mt.manual_seed(5)
    a = mt.rand(4)
    mt.default_generator.manual_seed(5)
    b = mt.rand(4, generator=mt.default_generator)
    c = mt.rand(4)
    mt.manual_seed(5)
    assert mt.equal(a, b) and mt.equal(c, mt.rand(8)[4:])  # the generator's draws advance the global stream


def test_default_generator_state_round_trip():
    mt.manual_seed(0)
    mt.rand(3)
    state = mt.default_generator.get_state()
    x = mt.randn(5)
    mt.default_generator.set_state(state)
    assert mt.equal(x, mt.randn(5))


def test_seed_is_taken_modulo_2_64():
    assert mt.manual_seed(-1).initial_seed() == 2 ** 64 - 1
    assert mt.default_generator.manual_seed(2 ** 64 + 2).initial_seed() == 2 == mt.initial_seed()
    with pytest.raises(TypeError, match="expected a long"):
        mt.default_generator.manual_seed(1.5)
    mt.manual_seed(0)


def test_float32_matmul_precision():
    assert mt.get_float32_matmul_precision() == "highest"
    try:
        for p in ("high", "medium", "highest"):
            mt.set_float32_matmul_precision(p)
            assert mt.get_float32_matmul_precision() == p
        mt.set_float32_matmul_precision("medium")
        with pytest.warns(UserWarning, match="no effect"):
            mt.set_float32_matmul_precision("HIGH")  # PyTorch: a warning, and the setting stays
        assert mt.get_float32_matmul_precision() == "medium"
        with pytest.raises(RuntimeError, match="expects a str"):
            mt.set_float32_matmul_precision(3)
    finally:
        mt.set_float32_matmul_precision("highest")


@pytest.mark.torch
def test_matches_torch():
    torch = pytest.importorskip("torch")
    assert type(torch.manual_seed(4)) is torch.Generator and torch.manual_seed(4) is torch.default_generator
    assert torch.manual_seed(-1).initial_seed() == mt.manual_seed(-1).initial_seed()
    before = torch.get_float32_matmul_precision()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.set_float32_matmul_precision("high")
            torch.set_float32_matmul_precision("low")
        assert torch.get_float32_matmul_precision() == "high" and "no effect" in str(caught[0].message)
        with pytest.raises(RuntimeError):
            torch.set_float32_matmul_precision(3)
    finally:
        torch.set_float32_matmul_precision(before)
        mt.manual_seed(0)
