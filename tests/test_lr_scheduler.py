"""minitensor.optim.lr_scheduler: lr sequences against closed forms written here (PyTorch's documented
formulas), OneCycleLR's schedule, ReduceLROnPlateau's patience, cooldown and thresholds, state dicts."""
from __future__ import annotations

import io
import math
import warnings
from bisect import bisect_right

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
from minitensor import optim
from minitensor.optim import lr_scheduler as sched

FEW = settings(max_examples=30, deadline=None)


def make_optimizer(lrs=(0.1,), cls=optim.SGD, **kw):
    """An optimizer with one single-parameter group per lr."""
    groups = [{"params": [mt.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    return cls(groups, **kw)


def lr_sequence(scheduler, n):
    """get_last_lr() for epochs 0 .. n - 1 (step() between them), checking it is what the groups hold."""
    out = []
    for _ in range(n):
        lrs = scheduler.get_last_lr()
        assert lrs == [g["lr"] for g in scheduler.optimizer.param_groups]
        out.append(lrs)
        scheduler.step()
    return np.array(out)


def saved_and_loaded(state_dict):
    """``state_dict`` through minitensor's checkpoint format (in memory)."""
    from minitensor.serialization import load, save
    buffer = io.BytesIO()
    save(state_dict, buffer)
    buffer.seek(0)
    return load(buffer)


def assert_close(got, want):
    np.testing.assert_allclose(got, np.asarray(want, dtype=np.float64), rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------------------- simple schedules
@FEW
@given(step_size=st.integers(1, 5), gamma=st.floats(0.05, 0.99), base=st.floats(1e-4, 1.0))
def test_step_lr(step_size, gamma, base):
    s = sched.StepLR(make_optimizer((base, 2 * base)), step_size=step_size, gamma=gamma)
    want = [[b * gamma ** (e // step_size) for b in (base, 2 * base)] for e in range(15)]
    assert_close(lr_sequence(s, 15), want)


def test_multistep_lr_with_a_repeated_milestone():
    s = sched.MultiStepLR(make_optimizer((1.0,)), milestones=[6, 2, 6, 9], gamma=0.5)
    ms = sorted([6, 2, 6, 9])
    want = [[0.5 ** bisect_right(ms, e)] for e in range(12)]
    assert_close(lr_sequence(s, 12), want)


@FEW
@given(gamma=st.floats(0.5, 0.999), base=st.floats(1e-4, 1.0))
def test_exponential_lr(gamma, base):
    s = sched.ExponentialLR(make_optimizer((base,)), gamma=gamma)
    assert_close(lr_sequence(s, 20), [[base * gamma ** e] for e in range(20)])


@FEW
@given(t_max=st.integers(1, 12), eta_min=st.floats(0.0, 0.01), base=st.floats(0.02, 1.0))
def test_cosine_annealing_follows_the_closed_form_through_restarts(t_max, eta_min, base):
    s = sched.CosineAnnealingLR(make_optimizer((base,)), T_max=t_max, eta_min=eta_min)
    n = 3 * t_max + 2
    want = [[eta_min + (base - eta_min) * (1 + math.cos(math.pi * e / t_max)) / 2] for e in range(n)]
    np.testing.assert_allclose(lr_sequence(s, n), want, rtol=1e-9, atol=1e-12)


def test_cosine_annealing_known_values():
    s = sched.CosineAnnealingLR(make_optimizer((1.0,)), T_max=4)
    assert_close(lr_sequence(s, 5)[:, 0], [1.0, (1 + math.sqrt(0.5)) / 2, 0.5, (1 - math.sqrt(0.5)) / 2, 0.0])


@pytest.mark.parametrize("start,end,total", [(1 / 3, 1.0, 5), (0.1, 0.9, 3), (1.0, 0.2, 4), (0.5, 0.5, 2)])
def test_linear_lr(start, end, total):
    s = sched.LinearLR(make_optimizer((0.2, 0.05)), start_factor=start, end_factor=end, total_iters=total)
    want = [[b * (start + (end - start) * min(e, total) / total) for b in (0.2, 0.05)]
            for e in range(total + 4)]
    np.testing.assert_allclose(lr_sequence(s, total + 4), want, rtol=1e-12)


def test_linear_lr_defaults_and_errors():
    s = sched.LinearLR(make_optimizer((0.3,)))
    assert s.start_factor == 1 / 3 and s.end_factor == 1.0 and s.total_iters == 5
    assert_close(s.get_last_lr(), [0.1])
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        sched.LinearLR(make_optimizer(), start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        sched.LinearLR(make_optimizer(), end_factor=1.5)


def test_lambda_lr_one_function_per_group():
    s = sched.LambdaLR(make_optimizer((1.0, 0.5)), [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)])
    assert_close(lr_sequence(s, 6), [[0.9 ** e, 0.5 / (e + 1)] for e in range(6)])
    with pytest.raises(ValueError, match="same length as optimizer.param_groups"):
        sched.LambdaLR(make_optimizer((1.0, 0.5)), [lambda e: 1.0])


def test_schedulers_chain_on_one_optimizer():
    opt = make_optimizer((1.0,))
    step_lr = sched.StepLR(opt, step_size=2, gamma=0.5)
    exp_lr = sched.ExponentialLR(opt, gamma=0.9)
    got = []
    for _ in range(8):
        got.append(opt.param_groups[0]["lr"])
        step_lr.step()
        exp_lr.step()
    assert_close(got, [0.5 ** (e // 2) * 0.9 ** e for e in range(8)])


def test_sequential_lr_warmup_then_decay():
    opt = make_optimizer((1.0,))
    warmup = sched.LinearLR(opt, start_factor=0.5, total_iters=2)
    decay = sched.ExponentialLR(opt, gamma=0.9)
    s = sched.SequentialLR(opt, [warmup, decay], milestones=[2])
    # warmup 0.5, 0.75; at the milestone the decay restarts from base_lr: 1, 0.9, 0.81, ...
    assert_close(lr_sequence(s, 6)[:, 0], [0.5, 0.75, 1.0, 0.9, 0.81, 0.729])
    with pytest.raises(ValueError, match="one more than the number of milestone points"):
        sched.SequentialLR(opt, [warmup, decay], milestones=[2, 3])


def test_step_with_epoch_warns_and_uses_the_closed_form():
    s = sched.StepLR(make_optimizer((1.0,)), step_size=3, gamma=0.1)
    with pytest.warns(UserWarning, match="epoch parameter"):
        s.step(7)
    assert s.last_epoch == 7
    assert_close(s.get_last_lr(), [0.1 ** 2])


def test_initial_lr_and_resuming():
    opt = make_optimizer((0.4,))
    s = sched.ExponentialLR(opt, gamma=0.5)
    assert opt.param_groups[0]["initial_lr"] == 0.4 and s.base_lrs == [0.4] and s.last_epoch == 0
    with pytest.raises(KeyError, match="initial_lr"):
        sched.ExponentialLR(make_optimizer((0.4,)), gamma=0.5, last_epoch=3)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        sched.StepLR(object(), step_size=1)


@pytest.mark.parametrize("make", [
    lambda o: sched.StepLR(o, step_size=2, gamma=0.5),
    lambda o: sched.MultiStepLR(o, milestones=[2, 5], gamma=0.3),
    lambda o: sched.CosineAnnealingLR(o, T_max=5, eta_min=0.001),
    lambda o: sched.LinearLR(o, start_factor=0.25, total_iters=4),
    lambda o: sched.OneCycleLR(o, max_lr=1.0, total_steps=12),
], ids=["step", "multistep", "cosine", "linear", "onecycle"])
def test_scheduler_state_dict_round_trip(make):
    full_opt = make_optimizer((0.1,), momentum=0.9)
    full = make(full_opt)
    want = lr_sequence(full, 10)
    opt = make_optimizer((0.1,), momentum=0.9)
    first = make(opt)
    head = lr_sequence(first, 4)
    saved_opt, saved = saved_and_loaded(opt.state_dict()), saved_and_loaded(first.state_dict())
    assert "optimizer" not in saved and saved["last_epoch"] == 4
    opt2 = make_optimizer((123.0,), momentum=0.9)
    resumed = make(opt2)
    opt2.load_state_dict(saved_opt)
    resumed.load_state_dict(saved)
    tail = lr_sequence(resumed, 6)
    assert_close(np.concatenate([head, tail]), want)
    if resumed._get_closed_form_lr() is not None:  # the closed form still works on the loaded state
        with pytest.warns(UserWarning, match="epoch parameter"):
            resumed.step(7)
            full.step(7)
        assert_close(resumed.get_last_lr(), full.get_last_lr())


# ------------------------------------------------------------------------------------ OneCycleLR
def ref_one_cycle(points, total, pct=0.3, strategy="cos"):
    """A 1cycle curve for steps 0 .. total - 1 through ``points`` (3, or 4 with three phases): phases end on
    steps pct*total - 1 (then 2 pct*total - 2 with three phases) and total - 1; each anneals between its two
    points by half a cosine or linearly."""
    if len(points) == 4:
        ends = [pct * total - 1, 2 * pct * total - 2, total - 1]
    else:
        ends = [pct * total - 1, total - 1]

    def anneal(a, b, x):
        return b + (a - b) / 2 * (1 + math.cos(math.pi * x)) if strategy == "cos" else a + (b - a) * x

    out = []
    for step in range(total):
        start = 0.0
        for i, end in enumerate(ends):
            if step <= end or i == len(ends) - 1:
                out.append(anneal(points[i], points[i + 1], (step - start) / (end - start)))
                break
            start = end
    return out


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle_lr_schedule(strategy, three_phase):
    total = 20
    opt = make_optimizer((0.1,), momentum=0.9)
    s = sched.OneCycleLR(opt, max_lr=2.0, total_steps=total, anneal_strategy=strategy,
                         three_phase=three_phase)
    got = lr_sequence(s, total)[:, 0]
    initial, min_lr = 2.0 / 25, 2.0 / 25 / 1e4
    points = [initial, 2.0, initial, min_lr] if three_phase else [initial, 2.0, min_lr]
    np.testing.assert_allclose(got, ref_one_cycle(points, total, strategy=strategy), rtol=1e-12)
    # key points: start at max_lr / div_factor, peak at step pct * total - 1, end at initial / final_div
    assert got[0] == pytest.approx(2.0 / 25)
    assert got[5] == pytest.approx(2.0)
    if three_phase:
        assert got[10] == pytest.approx(2.0 / 25)
    assert got[-1] == pytest.approx(2.0 / 25 / 1e4)
    with pytest.raises(ValueError, match="Tried to step 21 times"):
        s.step()


@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle_momentum_cycles_inversely(three_phase):
    opt = make_optimizer((0.1,), momentum=0.9)
    s = sched.OneCycleLR(opt, max_lr=1.0, epochs=4, steps_per_epoch=5, base_momentum=0.8, max_momentum=0.9,
                         three_phase=three_phase)
    assert s.total_steps == 20
    momenta = []
    for _ in range(20):
        momenta.append(opt.param_groups[0]["momentum"])
        s.step()
    # momentum falls from max to base while the lr rises, then rises back (and stays at max in phase 3)
    points = [0.9, 0.8, 0.9, 0.9] if three_phase else [0.9, 0.8, 0.9]
    np.testing.assert_allclose(momenta, ref_one_cycle(points, 20), rtol=1e-12)
    assert momenta[0] == pytest.approx(0.9) and momenta[5] == pytest.approx(0.8)


def test_one_cycle_drives_adam_beta1_and_per_group_max_lr():
    opt = make_optimizer((0.1, 0.1), cls=optim.Adam, betas=(0.5, 0.99))
    s = sched.OneCycleLR(opt, max_lr=[1.0, 0.5], total_steps=10)
    assert [g["betas"] for g in opt.param_groups] == [(0.95, 0.99), (0.95, 0.99)]
    assert_close(s.get_last_lr(), [1.0 / 25, 0.5 / 25])
    s.step(), s.step()
    assert [g["betas"][0] for g in opt.param_groups] == pytest.approx([0.85, 0.85])
    assert [g["betas"][1] for g in opt.param_groups] == [0.99, 0.99]
    assert_close(s.get_last_lr(), [1.0, 0.5])


def test_one_cycle_argument_errors():
    opt = make_optimizer((0.1,), momentum=0.9)
    with pytest.raises(ValueError, match="either total_steps OR"):
        sched.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="positive integer total_steps"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="pct_start"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="step")
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        sched.OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=10)
    with pytest.raises(ValueError, match="momentum or beta1"):
        sched.OneCycleLR(make_optimizer((0.1,), cls=optim.Adagrad), max_lr=1.0, total_steps=10)


# ----------------------------------------------------------------------------- ReduceLROnPlateau
def plateau_lrs(metrics, **kw):
    opt = make_optimizer((1.0,))
    s = sched.ReduceLROnPlateau(opt, **kw)
    out = []
    for m in metrics:
        s.step(m)
        out.append(opt.param_groups[0]["lr"])
        assert s.get_last_lr() == [out[-1]]
    return out


def test_plateau_patience():
    # best set at epoch 1; epochs 2, 3 are bad (within patience 2); the third bad epoch (4) reduces
    assert plateau_lrs([10] * 7, factor=0.5, patience=2) == [1, 1, 1, 0.5, 0.5, 0.5, 0.25]
    assert plateau_lrs([10, 9, 8, 7, 6, 6, 6, 6], factor=0.5, patience=2) == [1, 1, 1, 1, 1, 1, 1, 0.5]


def test_plateau_cooldown():
    # after the cut at epoch 4 the next 2 epochs are cooldown, so counting restarts at epoch 7
    assert plateau_lrs([10] * 10, factor=0.5, patience=2, cooldown=2) == \
        [1, 1, 1, .5, .5, .5, .5, .5, .25, .25]


def test_plateau_threshold_modes():
    # 'rel' with threshold 0.1 needs < 0.9 * best: 9.5 after 10 is not an improvement
    assert plateau_lrs([10, 9.5, 9.5], factor=0.5, patience=1, threshold=0.1) == [1, 1, 0.5]
    # 'abs' with threshold 0.1 needs < best - 0.1: 9.5 is, and then 9.45 is not
    assert plateau_lrs([10, 9.5, 9.45, 9.45], factor=0.5, patience=1, threshold=0.1,
                       threshold_mode="abs") == [1, 1, 1, 0.5]
    # mode 'max': a rising metric is an improvement, a falling one is not
    assert plateau_lrs([1, 2, 3, 2, 1], mode="max", factor=0.5, patience=1) == [1, 1, 1, 1, 0.5]


def test_plateau_min_lr_eps_and_tensor_metrics():
    assert plateau_lrs([1.0] * 6, factor=0.1, patience=0, min_lr=0.005) == \
        pytest.approx([1, 0.1, 0.01, 0.005, 0.005, 0.005])
    # a cut smaller than eps is skipped
    assert plateau_lrs([1.0] * 3, factor=0.5, patience=0, eps=0.6) == [1, 1, 1]
    lrs = plateau_lrs([mt.tensor(3.0), mt.tensor(3.0)], patience=0)
    assert lrs == [1, pytest.approx(0.1)]


def test_plateau_errors_and_state_dict():
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        sched.ReduceLROnPlateau(make_optimizer(), factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown"):
        sched.ReduceLROnPlateau(make_optimizer(), mode="avg")
    with pytest.raises(ValueError, match="threshold mode pct is unknown"):
        sched.ReduceLROnPlateau(make_optimizer(), threshold_mode="pct")
    with pytest.raises(ValueError, match="min_lr must have the same length"):
        sched.ReduceLROnPlateau(make_optimizer((0.1, 0.2)), min_lr=[0.0])
    opt = make_optimizer((1.0,))
    s = sched.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    for m in (5, 5):
        s.step(m)
    saved = s.state_dict()
    opt2 = make_optimizer((1.0,))
    s2 = sched.ReduceLROnPlateau(opt2)
    s2.load_state_dict(saved)
    s2.step(5)  # the second bad epoch in a row, as in the original run: lr halves
    assert opt2.param_groups[0]["lr"] == 0.5 and s2.best == 5 and s2.patience == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step(4)


# ------------------------------------- MultiplicativeLR, ConstantLR, PolynomialLR, ChainedScheduler
def test_multiplicative_lr_multiplies_the_previous_lr():
    s = sched.MultiplicativeLR(make_optimizer((0.5, 1.0)), lr_lambda=[lambda e: 0.9, lambda e: 1.0 / (e + 1)])
    want = [[0.5 * 0.9 ** e, 1.0 / math.factorial(e + 1) * 1] for e in range(8)]
    assert_close(lr_sequence(s, 8), want)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        sched.MultiplicativeLR(make_optimizer((0.5, 1.0)), lr_lambda=[lambda e: 0.9])
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got int"):
        sched.MultiplicativeLR(make_optimizer(), lr_lambda=3)


@FEW
@given(factor=st.floats(0.01, 1.0), total=st.integers(1, 6))
def test_constant_lr(factor, total):
    s = sched.ConstantLR(make_optimizer((0.2,)), factor=factor, total_iters=total)
    assert_close(lr_sequence(s, 10), [[0.2 * (factor if e < total else 1.0)] for e in range(10)])
    with pytest.warns(UserWarning, match="epoch parameter"):
        s.step(total - 1)
    assert_close(s.get_last_lr(), [0.2 * factor])
    with pytest.raises(ValueError, match="between 0 and 1"):
        sched.ConstantLR(make_optimizer(), factor=1.5)


@pytest.mark.parametrize("power, total", [(1.0, 5), (0.5, 1), (2.0, 4), (3.0, 6), (1.7, 3)])
def test_polynomial_lr(power, total):
    want = [[0.3 * (1 - min(e, total) / total) ** power] for e in range(10)]
    s = sched.PolynomialLR(make_optimizer((0.3,)), total_iters=total, power=power)
    np.testing.assert_allclose(lr_sequence(s, 10), want, rtol=1e-9, atol=1e-15)


def test_chained_scheduler_composes_its_schedulers():
    opt = make_optimizer((1.0,))
    chain = sched.ChainedScheduler([sched.ConstantLR(opt, factor=0.1, total_iters=2),
                                    sched.ExponentialLR(opt, gamma=0.9)])
    assert_close(lr_sequence(chain, 6), [[(0.1 if e < 2 else 1.0) * 0.9 ** e] for e in range(6)])
    state = chain.state_dict()
    assert "optimizer" not in state and len(state["_schedulers"]) == 2
    with pytest.raises(ValueError, match="at least one scheduler to be chained"):
        sched.ChainedScheduler([])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        sched.ChainedScheduler([sched.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="same optimizer"):
        sched.ChainedScheduler([sched.ExponentialLR(opt, 0.5), sched.ExponentialLR(make_optimizer(), 0.5)])


# ---------------------------------------------------------------- CyclicLR, CosineAnnealingWarmRestarts
def ref_triangular(it, base, peak, half, scale=lambda cycle: 1.0):
    """Smith's formula for a symmetric cycle of 2 * half steps."""
    cycle = math.floor(1 + it / (2 * half))
    x = abs(it / half - 2 * cycle + 1)
    return base + (peak - base) * max(0.0, 1 - x) * scale(cycle)


@pytest.mark.parametrize("mode, scale", [("triangular", lambda c: 1.0), ("triangular2", lambda c: 0.5 ** (c - 1))])
def test_cyclic_lr_triangular_modes_and_momentum(mode, scale):
    opt = make_optimizer((0.0,), momentum=0.5)
    s = sched.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=3, mode=mode, base_momentum=0.8,
                       max_momentum=0.9)
    momenta = []
    lrs = []
    for _ in range(20):
        lrs.append(s.get_last_lr()[0])
        momenta.append(opt.param_groups[0]["momentum"])
        s.step()
    want = [ref_triangular(i, 0.1, 1.0, 3, scale) for i in range(20)]
    np.testing.assert_allclose(lrs, want, rtol=1e-12)
    rise = [(lr - 0.1) / 0.9 for lr in want]  # the momentum goes down as the lr goes up
    np.testing.assert_allclose(momenta, [0.9 - 0.1 * r for r in rise], rtol=1e-12)


def test_cyclic_lr_exp_range_asymmetric_and_errors():
    s = sched.CyclicLR(make_optimizer((0.0,)), base_lr=0.1, max_lr=1.0, step_size_up=1, step_size_down=3,
                       mode="exp_range", gamma=0.9, cycle_momentum=False)
    got = lr_sequence(s, 9)[:, 0]
    rise = [0, 1, 2 / 3, 1 / 3, 0, 1, 2 / 3, 1 / 3, 0]
    np.testing.assert_allclose(got, [0.1 + 0.9 * r * 0.9 ** i for i, r in enumerate(rise)], rtol=1e-12,
                               atol=1e-15)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        sched.CyclicLR(make_optimizer(), 0.1, 1.0, mode="square")
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        sched.CyclicLR(make_optimizer(cls=optim.Adagrad), 0.1, 1.0)
    adam = make_optimizer(cls=optim.Adam)
    sched.CyclicLR(adam, 0.1, 1.0, base_momentum=0.7, max_momentum=0.95)
    assert adam.param_groups[0]["betas"][0] == 0.95


def ref_warm_restarts(epoch, base, T_0, T_mult, eta_min):
    """SGDR written as the definition: subtract whole periods T_0, T_0 T_mult, ... from the epoch."""
    T_i, T_cur = T_0, epoch
    while T_cur >= T_i:
        T_cur -= T_i
        T_i *= T_mult
    return eta_min + (base - eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2


@FEW
@given(T_0=st.integers(1, 5), T_mult=st.integers(1, 3), eta_min=st.floats(0.0, 0.05))
def test_cosine_warm_restarts_steps_and_fractional_epochs(T_0, T_mult, eta_min):
    s = sched.CosineAnnealingWarmRestarts(make_optimizer((0.1,)), T_0=T_0, T_mult=T_mult, eta_min=eta_min)
    got = lr_sequence(s, 25)[:, 0]
    np.testing.assert_allclose(got, [ref_warm_restarts(e, 0.1, T_0, T_mult, eta_min) for e in range(25)],
                               rtol=1e-9, atol=1e-12)
    for epoch in (0.0, 0.5, T_0 - 0.25, T_0 + 0.5, 7.3, 20.75):  # per-batch stepping: epoch + i / iters
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # step(epoch) is this scheduler's documented use: no warning
            s.step(epoch)
        assert s.last_epoch == math.floor(epoch)
        np.testing.assert_allclose(s.get_last_lr(), [ref_warm_restarts(epoch, 0.1, T_0, T_mult, eta_min)],
                                   rtol=1e-9, atol=1e-12)


def test_cosine_warm_restarts_errors():
    for kw, match in [(dict(T_0=0), "positive integer T_0"), (dict(T_0=2.5), "positive integer T_0"),
                      (dict(T_0=2, T_mult=0), "integer T_mult >= 1"), (dict(T_0=2, eta_min="x"), "eta_min")]:
        with pytest.raises(ValueError, match=match):
            sched.CosineAnnealingWarmRestarts(make_optimizer(), **kw)
    with pytest.raises(ValueError, match="non-negative epoch"):
        sched.CosineAnnealingWarmRestarts(make_optimizer(), T_0=2).step(-1)


@pytest.mark.parametrize("make", [
    lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
    lambda o: sched.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2"),
    lambda o: sched.PolynomialLR(o, total_iters=6, power=2.0),
    lambda o: sched.ConstantLR(o, factor=0.5, total_iters=5),
    lambda o: sched.MultiplicativeLR(o, lr_lambda=lambda e: 0.95),
], ids=["warm-restarts", "cyclic", "polynomial", "constant", "multiplicative"])
def test_new_schedulers_state_dict_round_trip(make):
    test_scheduler_state_dict_round_trip(make)


# ------------------------------------------------------------------------------- optional: torch
TORCH_CASES = {
    "warm-restarts": ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.01)),
    "warm-restarts-1": ("CosineAnnealingWarmRestarts", dict(T_0=4)),
    "cyclic": ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=5)),
    "cyclic-exp": ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.97)),
    "polynomial": ("PolynomialLR", dict(total_iters=7, power=1.5)),
    "constant": ("ConstantLR", dict(factor=0.3, total_iters=4)),
    "multiplicative": ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.9 if e % 2 else 1.05)),
}


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:Detected call of")
@pytest.mark.parametrize("case", list(TORCH_CASES))
def test_new_schedulers_against_torch(case):
    torch = pytest.importorskip("torch")
    name, kw = TORCH_CASES[case]

    def run(lib_sched, opt):
        s = getattr(lib_sched, name)(opt, **kw)
        out = []
        for i in range(30):
            out.append(s.get_last_lr() + [opt.param_groups[0]["momentum"]])
            if name == "CosineAnnealingWarmRestarts" and i >= 20:
                s.step(i * 0.37)  # fractional epochs, jumping back and forth across restarts
            else:
                s.step()
        return out

    theirs = run(torch.optim.lr_scheduler, torch.optim.SGD(
        [{"params": [torch.zeros(2, requires_grad=True)], "lr": lr} for lr in (0.1, 0.05)], momentum=0.9))
    ours = run(sched, make_optimizer((0.1, 0.05), momentum=0.9))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:Detected call of")
def test_chained_scheduler_against_torch():
    torch = pytest.importorskip("torch")

    def run(lib, opt):
        chain = lib.ChainedScheduler([lib.ConstantLR(opt, factor=0.2, total_iters=3),
                                      lib.PolynomialLR(opt, total_iters=8, power=2.0)])
        return [chain.step() or chain.get_last_lr() for _ in range(10)]

    theirs = run(torch.optim.lr_scheduler, torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1))
    np.testing.assert_allclose(run(sched, make_optimizer((0.1,))), theirs, rtol=1e-12)
