"""minitensor.optim.swa_utils: AveragedModel (SWA, EMA, custom averages), SWALR and update_bn against their
formulas in NumPy, and against torch.optim.swa_utils with copied weights over a few training steps."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from minitensor.optim import swa_utils as su


def _model(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def _weights(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def _perturb(model, seed):
    rng = np.random.default_rng(seed)
    with mt.no_grad():
        for p in model.parameters():
            p.add_(mt.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
        model[1].running_mean.add_(1.0)


def test_swa_is_the_running_mean_and_buffers_follow_the_model():
    model = _model(mt)
    swa = su.AveragedModel(model)
    seen = []
    for step in range(4):
        _perturb(model, step)
        swa.update_parameters(model)
        seen.append(_weights(model))
    assert swa.n_averaged.item() == 4 and swa.n_averaged.dtype == mt.int64
    ours = _weights(swa.module)
    for name, p in model.named_parameters():
        assert np.allclose(ours[name], np.mean([w[name] for w in seen], axis=0), atol=1e-6), name
    assert np.array_equal(ours["1.running_mean"], seen[-1]["1.running_mean"])  # copied, not averaged
    assert list(swa.state_dict())[0] == "n_averaged" and "module.0.weight" in swa.state_dict()
    x = mt.randn(5, 3)
    swa.eval()
    assert mt.equal(swa(x), swa.module(x))


def test_ema_with_buffers():
    model = _model(mt)
    ema = su.AveragedModel(model, multi_avg_fn=su.get_ema_multi_avg_fn(0.9), use_buffers=True)
    single = su.AveragedModel(model, avg_fn=su.get_ema_avg_fn(0.9), use_buffers=True)
    expect = None
    for step in range(3):
        _perturb(model, step)
        ema.update_parameters(model)
        single.update_parameters(model)
        w = _weights(model)
        expect = w if expect is None else {k: 0.9 * expect[k] + 0.1 * w[k] for k in w}
    for k, v in _weights(ema.module).items():
        if k != "1.num_batches_tracked":
            assert np.allclose(v, expect[k], atol=1e-5), k
            assert np.allclose(_weights(single.module)[k], expect[k], atol=1e-5), k


def test_custom_avg_fn_and_multi_avg_fn_get_what_pytorch_passes():
    calls = []

    def multi(averaged, current, n):
        calls.append((len(averaged), len(current), int(n)))

    model = mt.nn.Linear(2, 2)
    avg = su.AveragedModel(model, multi_avg_fn=multi)
    avg.update_parameters(model)  # the first call copies
    avg.update_parameters(model)
    assert calls == [(2, 2, 1)]
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        su.AveragedModel(model, avg_fn=su.get_swa_avg_fn(), multi_avg_fn=multi)
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="Invalid decay value"):
            su.get_ema_avg_fn(bad)
        with pytest.raises(ValueError, match="Invalid decay value"):
            su.get_ema_multi_avg_fn(bad)


def test_averaged_model_is_a_copy():
    model = mt.nn.Linear(2, 2)
    avg = su.AveragedModel(model)
    assert avg.module.weight is not model.weight and mt.equal(avg.module.weight, model.weight)
    with mt.no_grad():
        model.weight.add_(1)
    assert not mt.equal(avg.module.weight, model.weight)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
def test_swalr_anneals_to_swa_lr(strategy, anneal_epochs):
    opt = mt.optim.SGD([mt.zeros(1, requires_grad=True)], lr=0.5)
    sched = su.SWALR(opt, swa_lr=0.1, anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    alpha = (lambda t: (1 - math.cos(math.pi * t)) / 2) if strategy == "cos" else (lambda t: t)
    lrs = [sched.get_last_lr()[0]]
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    steps = [max(1, k) if anneal_epochs == 0 else k for k in range(7)]
    expect = [0.1 * alpha(min(1, s / max(1, anneal_epochs))) + 0.5 * (1 - alpha(min(1, s / max(1, anneal_epochs))))
              for s in steps]
    assert np.allclose(lrs, expect) and lrs[-1] == pytest.approx(0.1)


def test_swalr_per_group_state_and_errors():
    a, b = mt.zeros(1, requires_grad=True), mt.zeros(1, requires_grad=True)
    opt = mt.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.2}], lr=0.4)
    sched = su.SWALR(opt, swa_lr=[0.01, 0.02], anneal_epochs=2, anneal_strategy="linear")
    assert [g["swa_lr"] for g in opt.param_groups] == [0.01, 0.02]
    sched.step()
    state = sched.state_dict()
    assert "anneal_func" not in state and "optimizer" not in state
    again = su.SWALR(opt, swa_lr=0.5)
    again.load_state_dict(state)
    assert again.anneal_func(0.25) == 0.25 and again.anneal_epochs == 2
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
        su.SWALR(opt, 0.1, anneal_strategy="exp")
    for bad in (-1, 2.5):
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
            su.SWALR(opt, 0.1, anneal_epochs=bad)
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups"):
        su.SWALR(opt, [0.1, 0.2, 0.3])


def test_update_bn_is_the_average_over_the_data():
    model = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.BatchNorm1d(4, momentum=0.3), mt.nn.InstanceNorm1d(2))
    model.eval()
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((8, 3)).astype(np.float32) for _ in range(5)]
    loader = [(mt.tensor(x), mt.zeros(8)) for x in batches]  # (input, target) pairs: the first item is used
    with mt.no_grad():
        model[1].running_mean.fill_(7.0)
    su.update_bn(loader, model[:2])
    w, b = model[0].weight.detach().numpy(), model[0].bias.detach().numpy()
    hidden = [x @ w.T + b for x in batches]
    assert np.allclose(model[1].running_mean.numpy(), np.mean([h.mean(0) for h in hidden], axis=0), atol=1e-6)
    assert np.allclose(model[1].running_var.numpy(), np.mean([h.var(0, ddof=1) for h in hidden], axis=0),
                       atol=1e-5)
    assert model[1].momentum == 0.3 and not model.training and model[1].num_batches_tracked.item() == 5
    su.update_bn([mt.randn(2, 3)], mt.nn.Linear(3, 3))  # no BatchNorm: nothing to do


# --------------------------------------------------------------------------------------------------- torch
def _to_torch(torch, ours, theirs):
    theirs.load_state_dict({k: torch.tensor(v) for k, v in _weights(ours).items()})


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["swa", "ema_buffers"])
def test_matches_torch_over_training_steps(kind):
    torch = pytest.importorskip("torch")
    from torch.optim import swa_utils as tsu
    ours_model, theirs_model = _model(mt), _model(torch)
    _to_torch(torch, ours_model, theirs_model)

    def averaged(lib, utils, model):
        if kind == "swa":
            return utils.AveragedModel(model)
        return utils.AveragedModel(model, multi_avg_fn=utils.get_ema_multi_avg_fn(0.8), use_buffers=True)

    ours_avg, theirs_avg = averaged(mt, su, ours_model), averaged(torch, tsu, theirs_model)
    ours_opt = mt.optim.SGD(ours_model.parameters(), lr=0.3, momentum=0.9)
    theirs_opt = torch.optim.SGD(theirs_model.parameters(), lr=0.3, momentum=0.9)
    ours_sched = su.SWALR(ours_opt, swa_lr=0.05, anneal_epochs=3)
    theirs_sched = tsu.SWALR(theirs_opt, swa_lr=0.05, anneal_epochs=3)
    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((16, 3)).astype(np.float32), rng.standard_normal((16, 2)).astype(np.float32))
            for _ in range(5)]
    for x, y in data:
        for lib, model, opt, avg, sched in ((mt, ours_model, ours_opt, ours_avg, ours_sched),
                                            (torch, theirs_model, theirs_opt, theirs_avg, theirs_sched)):
            opt.zero_grad()
            ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean().backward()
            opt.step()
            avg.update_parameters(model)
            sched.step()
        assert ours_sched.get_last_lr() == pytest.approx(theirs_sched.get_last_lr(), rel=1e-12)
    ours_w, theirs_w = _weights(ours_avg), {k: v.detach().numpy() for k, v in theirs_avg.state_dict().items()}
    assert ours_w.keys() == theirs_w.keys()
    for k in ours_w:
        assert np.allclose(ours_w[k], theirs_w[k], rtol=1e-5, atol=1e-6), k
    su.update_bn([mt.tensor(x) for x, _ in data], ours_avg)
    tsu.update_bn([torch.tensor(x) for x, _ in data], theirs_avg)
    for name in ("module.1.running_mean", "module.1.running_var", "module.1.num_batches_tracked"):
        assert np.allclose(ours_avg.state_dict()[name].numpy(), theirs_avg.state_dict()[name].numpy(),
                           rtol=1e-5, atol=1e-6), name
