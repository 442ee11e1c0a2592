"""GradScaler (minitensor.amp): skipped steps on inf/NaN, backoff and growth, state_dict, PyTorch's errors
and warnings, the issue's snippet on a machine without CUDA, and the backend's fused unscale."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F


def test_unscale_and_check_inf_backend_call(device):
    B = device.backend
    a, b = B.asarray(np.array([2.0, 4.0], np.float32)), B.asarray(np.array([[8.0]], np.float32))
    found = B.amp_unscale_and_check_inf([a, b], 0.5)
    np.testing.assert_array_equal(B.to_numpy(a), [1.0, 2.0])
    np.testing.assert_array_equal(B.to_numpy(b), [[4.0]])
    assert B.to_numpy(found).tolist() == 0.0  # a 0-d float32 array
    c = B.asarray(np.array([1.0, np.nan], np.float32))
    assert B.to_numpy(B.amp_unscale_and_check_inf([a, c], 1.0)).tolist() == 1.0
    assert B.to_numpy(B.amp_unscale_and_check_inf([B.asarray(np.array([np.inf], np.float32))], 1.0)).tolist() \
        == 1.0


def _model_and_step(scaler, opt_cls=mt.optim.SGD, **opt_kwargs):
    model = nn.Linear(3, 2)
    opt = opt_cls(model.parameters(), lr=0.1, **opt_kwargs)
    x, y = mt.randn(4, 3), mt.randint(0, 2, (4,))

    def step(poison=False):
        opt.zero_grad()
        with mt.autocast("cpu"):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        if poison:
            model.weight.grad[0, 1] = float("inf")
        out = scaler.step(opt)
        scaler.update()
        return out

    return model, opt, step


def test_inf_gradient_skips_the_step_halves_the_scale_and_leaves_the_optimizer_alone():
    scaler = mt.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    model, opt, step = _model_and_step(scaler, momentum=0.9)
    before = [p.detach().clone() for p in model.parameters()]
    step(poison=True)
    assert scaler.get_scale() == 512.0
    assert all(bool((p == q).all()) for p, q in zip(model.parameters(), before))
    assert len(opt.state) == 0  # no momentum buffer was made: the step never ran
    step()
    assert len(opt.state) == 2
    assert not all(bool((p == q).all()) for p, q in zip(model.parameters(), before))
    step()
    assert scaler.get_scale() == 512.0
    step()  # the third clean step in a row
    assert scaler.get_scale() == 1024.0
    assert scaler.state_dict()["_growth_tracker"] == 0


def test_gradients_are_unscaled_before_the_step():
    scaler = mt.amp.GradScaler("cpu", init_scale=256.0)
    model = nn.Linear(3, 1)
    opt = mt.optim.SGD(model.parameters(), lr=0.0)
    x = mt.randn(5, 3)
    model(x).sum().backward()
    expected = model.weight.grad.clone()
    model.zero_grad()
    scaler.scale(model(x).sum()).backward()
    scaler.unscale_(opt)
    np.testing.assert_allclose(model.weight.grad.numpy(), expected.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)


def test_scaled_float16_loss_is_float32_and_the_scale_multiplies():
    scaler = mt.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    loss = mt.tensor(3.0, dtype=mt.float16)
    scaled = scaler.scale(loss)
    assert scaled.dtype == mt.float32 and scaled.item() == 3.0 * 2 ** 16
    a, b = scaler.scale([mt.tensor(1.0), mt.tensor(2.0)])
    assert (a.item(), b.item()) == (2.0 ** 16, 2.0 ** 17)


def test_state_dict_round_trips_and_update_with_new_scale():
    scaler = mt.amp.GradScaler("cpu", init_scale=8.0, growth_factor=3.0, backoff_factor=0.25,
                               growth_interval=7)
    _, _, step = _model_and_step(scaler)
    step()
    sd = scaler.state_dict()
    assert sd == {"scale": 8.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 7,
                  "_growth_tracker": 1}
    other = mt.amp.GradScaler("cpu")
    other.load_state_dict(sd)
    assert other.state_dict() == sd
    assert (other.get_growth_factor(), other.get_backoff_factor(), other.get_growth_interval()) == (3.0, 0.25, 7)
    scaler.update(new_scale=100.0)
    assert scaler.get_scale() == 100.0
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        other.load_state_dict({})


def test_bad_factors_and_update_without_steps():
    with pytest.raises(ValueError, match="growth factor must be > 1.0"):
        mt.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff factor must be < 1.0"):
        mt.amp.GradScaler("cpu", backoff_factor=1.0)
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        mt.amp.GradScaler("cpu").update()


def _snippet(monkeypatch, make_scaler, device_type, dtype):
    """The issue's PyTorch snippet with only the import changed."""
    monkeypatch.setattr(mt.cuda, "is_available", lambda: False)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    optimizer = mt.optim.SGD(model.parameters(), lr=0.1)
    data = mt.randn(32, 4)
    target = (data[:, 0] > 0).long() + (data[:, 1] > 0).long()
    loader = [(data[i:i + 8], target[i:i + 8]) for i in range(0, 32, 8)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = make_scaler()
        losses = []
        for _ in range(20):
            for x, y in loader:
                optimizer.zero_grad()
                with mt.autocast(device_type=device_type, dtype=dtype):
                    loss = F.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
    assert all(p.dtype == mt.float32 and p.grad.dtype == mt.float32 for p in model.parameters())
    assert np.mean(losses[-4:]) < 0.7 * np.mean(losses[:4])
    return scaler, [str(w.message) for w in caught], loss


def test_issue_snippet_without_cuda_disables_the_scaler_with_pytorchs_warnings(monkeypatch):
    scaler, messages, loss = _snippet(monkeypatch, lambda: mt.cuda.amp.GradScaler(), "cuda", mt.float16)
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    assert loss.dtype == mt.float32  # autocast("cuda") is off where CUDA is absent
    assert sum("GradScaler is enabled, but CUDA is not available.  Disabling." in m for m in messages) == 1
    assert sum("minitensor.cuda.amp.GradScaler(args...)` is deprecated" in m for m in messages) == 1
    assert all("CUDA is not available. Disabling autocast." in m for m in messages[2:])


def test_issue_snippet_on_the_cpu_in_bfloat16(monkeypatch):
    scaler, messages, loss = _snippet(monkeypatch, lambda: mt.amp.GradScaler("cpu"), "cpu", mt.bfloat16)
    assert scaler.is_enabled() and not messages
    assert loss.dtype == mt.float32  # cross_entropy runs in float32 under autocast
