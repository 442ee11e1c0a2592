"""``minitensor._inductor.config`` (``torch._inductor.config``): PyTorch's defaults read back, settings kept, and
PyTorch's AttributeError for a name its config lacks."""
from __future__ import annotations

import importlib

import pytest

import minitensor as mt


@pytest.fixture
def config():
    module = importlib.import_module("minitensor._inductor.config")
    saved = module.get_config_copy()
    yield module
    for name, value in saved.items():  # the settings are process-wide: restore them
        group, _, leaf = name.rpartition(".")
        setattr(getattr(module, group) if group else module, leaf, value)


def test_defaults_are_pytorchs_and_settings_are_kept(config):
    assert config.coordinate_descent_tuning is False and config.triton.cudagraphs is False
    assert config.cpp.threads == -1 and config.fx_graph_cache is True
    config.coordinate_descent_tuning = True
    config.triton.cudagraphs = True
    assert config.coordinate_descent_tuning is True and config.triton.cudagraphs is True
    assert config.get_config_copy()["triton.cudagraphs"] is True
    assert hasattr(config, "coordinate_descent_tuning") and not hasattr(config, "no_such_knob")


@pytest.mark.parametrize("call, name", [
    (lambda c: setattr(c, "no_such_knob", 1), "no_such_knob"),
    (lambda c: c.no_such_knob, "no_such_knob"),
    (lambda c: setattr(c.triton, "q", 1), "triton.q"),
    (lambda c: c.triton.q, "triton.q"),
    (lambda c: setattr(c, "triton", 1), "triton"),
])
def test_unknown_names_raise_pytorchs_error(config, call, name):
    with pytest.raises(AttributeError, match=rf"^minitensor\._inductor\.config\.{name} does not exist$"):
        call(config)


def test_compile_still_returns_the_model(config):
    config.coordinate_descent_tuning = True  # llm.c's train_gpt2.py, before torch.compile
    model = mt.nn.Linear(2, 2)
    assert mt.compile(model) is model


@pytest.mark.torch
def test_names_and_defaults_match_pytorch(config):
    torch_config = pytest.importorskip("torch._inductor.config")
    for name, value in config.get_config_copy().items():
        group, _, leaf = name.rpartition(".")
        assert getattr(getattr(torch_config, group) if group else torch_config, leaf) == value, name
