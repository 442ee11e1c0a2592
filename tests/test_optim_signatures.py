"""nanoGPT's ``'fused' in inspect.signature(torch.optim.AdamW).parameters`` and the other implementation
keywords (``foreach``, ``capturable``, ``differentiable``) in the signatures of Adam, AdamW, SGD, RMSprop and
Adagrad: accepted, and the update is the same whichever is asked for."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import minitensor as mt

NAMES = ("Adam", "AdamW", "SGD", "RMSprop", "Adagrad")


def signature_flags(lib):
    return {n: sorted({"fused", "foreach", "capturable", "differentiable"} & set(inspect.signature(
        getattr(lib.optim, n)).parameters)) for n in NAMES}


def nanogpt_step(lib, **flags):
    lib.manual_seed(0)
    w = lib.nn.Parameter(lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float32))
    use_fused = "fused" in inspect.signature(lib.optim.AdamW).parameters
    opt = lib.optim.AdamW([w], lr=0.1, betas=(0.9, 0.95), **({"fused": True} if use_fused else {}), **flags)
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        (w * w).sum().backward()
        opt.step()
    return use_fused, w.detach().numpy().round(5).tolist()


def test_implementation_keywords_are_in_the_signatures_and_change_nothing():
    flags = signature_flags(mt)
    assert flags["AdamW"] == flags["Adam"] == ["capturable", "differentiable", "foreach", "fused"]
    assert flags["SGD"] == flags["Adagrad"] == ["differentiable", "foreach", "fused"]
    assert flags["RMSprop"] == ["capturable", "differentiable", "foreach"]
    assert nanogpt_step(mt) == nanogpt_step(mt, foreach=False, capturable=False, differentiable=False)
    assert nanogpt_step(mt)[0] is True
    with pytest.raises(TypeError, match="unexpected keyword"):
        mt.optim.SGD([mt.nn.Parameter(mt.ones(1))], lr=0.1, fusedd=True)


@pytest.mark.torch
def test_signatures_and_fused_step_match_torch():
    torch = pytest.importorskip("torch")
    assert signature_flags(mt) == signature_flags(torch)
    ours, theirs = nanogpt_step(mt), nanogpt_step(torch)
    assert ours[0] == theirs[0] and np.allclose(ours[1], theirs[1], atol=1e-5)
