"""``minitensor.xpu`` answers as a PyTorch built without XPU: programs probing for an Intel GPU take their CPU
branch (pytorch/tutorials' profiler recipe: ``elif torch.xpu.is_available():``)."""
from __future__ import annotations

import pytest

import minitensor as mt

QUERIES = ["is_available", "device_count", "is_initialized", "is_bf16_supported", "memory_allocated",
           "memory_reserved", "empty_cache"]
NEEDS_A_DEVICE = ["current_device", "synchronize", "get_device_name", "get_device_properties", "init",
                  "initial_seed"]


def test_no_xpu_is_available_and_seeding_is_a_no_op():
    assert mt.xpu.is_available() is False and mt.xpu.device_count() == 0 and not mt.xpu.is_initialized()
    assert mt.xpu.memory_allocated() == 0 and mt.xpu.empty_cache() is None
    for seed in (mt.xpu.manual_seed, mt.xpu.manual_seed_all):
        assert seed(0) is None
    mt.xpu.seed()
    mt.xpu.seed_all()


@pytest.mark.parametrize("name", NEEDS_A_DEVICE + ["set_device"])
def test_what_needs_a_device_raises_pytorchs_assertion(name):
    with pytest.raises(AssertionError, match="not compiled with XPU enabled"):
        getattr(mt.xpu, name)(*([0] if name == "set_device" else []))


@pytest.mark.torch
def test_answers_match_a_pytorch_without_xpu():
    torch = pytest.importorskip("torch")
    if torch.xpu.is_available():
        pytest.skip("this PyTorch has an XPU")
    assert [getattr(mt.xpu, n)() for n in QUERIES] == [getattr(torch.xpu, n)() for n in QUERIES]
    for name in NEEDS_A_DEVICE:
        with pytest.raises(AssertionError) as theirs:
            getattr(torch.xpu, name)()
        with pytest.raises(AssertionError) as ours:
            getattr(mt.xpu, name)()
        assert str(ours.value) == str(theirs.value)
