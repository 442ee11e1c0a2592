"""minitensor.optim against float64 NumPy references written here from PyTorch's documented algorithms.

Each trajectory test feeds the same pre-drawn gradients to the optimizer and to the reference for several
steps, so that the comparison measures the update rule alone (float64: to 1e-12; float32: to float32
rounding).
"""
from __future__ import annotations

import copy
import io
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
from minitensor import optim
from minitensor.optim.optimizer import SCALAR_STATE

STEPS = 7
SHAPE = (3, 4)
TOL = {np.float64: dict(rtol=1e-12, atol=1e-12), np.float32: dict(rtol=2e-5, atol=2e-6)}


# ----------------------------------------------------------------------------------- references
def ref_sgd(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    """PyTorch's SGD box: g += wd p; b = g (t = 1) or mu b + (1 - tau) g; g = g + mu b or b; p -= lr g."""
    p, buf, out = p.astype(np.float64), None, []
    for grad in grads:
        g = -grad if maximize else grad.copy()
        if weight_decay:
            g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
        out.append(p)
    return out


def ref_adam(p, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False,
             decoupled=False):
    """Adam / AdamW boxes: bias-corrected moments; amsgrad keeps the running max of v (PyTorch takes the
    max before the bias correction); AdamW multiplies p by 1 - lr wd before the moments."""
    b1, b2 = betas
    p = p.astype(np.float64)
    m, v, vmax, out = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p), []
    for t, grad in enumerate(grads, start=1):
        g = -grad if maximize else grad.copy()
        if decoupled:
            p = p * (1 - lr * weight_decay)
        elif weight_decay:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        if amsgrad:
            vmax = np.maximum(vmax, v)
        second = vmax if amsgrad else v
        m_hat = m / (1 - b1 ** t)
        denom = np.sqrt(second) / math.sqrt(1 - b2 ** t) + eps
        p = p - lr * m_hat / denom
        out.append(p)
    return out


def ref_rmsprop(p, grads, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                maximize=False):
    """RMSprop box: v = a v + (1 - a) g^2; centered subtracts (running mean of g)^2; eps after the sqrt."""
    p = p.astype(np.float64)
    v, gbar, buf, out = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p), []
    for grad in grads:
        g = -grad if maximize else grad.copy()
        if weight_decay:
            g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        v_tilde = v
        if centered:
            gbar = alpha * gbar + (1 - alpha) * g
            v_tilde = v - gbar * gbar
        if momentum > 0:
            buf = momentum * buf + g / (np.sqrt(v_tilde) + eps)
            p = p - lr * buf
        else:
            p = p - lr * g / (np.sqrt(v_tilde) + eps)
        out.append(p)
    return out


def ref_adagrad(p, grads, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                maximize=False):
    """Adagrad box: lr_t = lr / (1 + (t - 1) decay); s += g^2; p -= lr_t g / (sqrt(s) + eps)."""
    p = p.astype(np.float64)
    s, out = np.full_like(p, initial_accumulator_value), []
    for t, grad in enumerate(grads, start=1):
        g = -grad if maximize else grad.copy()
        if weight_decay:
            g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (np.sqrt(s) + eps)
        out.append(p)
    return out


# --------------------------------------------------------------------------------------- helpers
def draw(seed, n_steps=STEPS, shape=SHAPE):
    """A start point and gradients whose scale changes from step to step (so amsgrad's max matters)."""
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal(shape)
    scales = rng.uniform(0.05, 3.0, size=n_steps)
    return p0, [s * rng.standard_normal(shape) for s in scales]


def param(p0, dtype=np.float64):
    return mt.tensor(p0.astype(dtype), requires_grad=True)


def run(opt, params, grads_per_param, dtype):
    """Step ``opt`` with the given gradients (one list per parameter); the params' values after each step."""
    history = []
    for step_grads in zip(*grads_per_param):
        for p, g in zip(params, step_grads):
            p.grad = mt.tensor(g.astype(dtype))
        opt.step()
        history.append([p.array.copy() for p in params])
    return history


def check_trajectory(make_opt, reference, dtype, seed=0):
    p0, grads = draw(seed)
    p = param(p0, dtype)
    opt = make_opt([p])
    got = [h[0] for h in run(opt, [p], [grads], dtype)]
    want = reference(p0, [x.astype(dtype).astype(np.float64) for x in grads])  # the grads the optimizer saw
    for step, (g, r) in enumerate(zip(got, want)):
        assert g.dtype == dtype, f"step {step}: parameter became {g.dtype}"
        np.testing.assert_allclose(g, r, err_msg=f"step {step + 1}", **TOL[dtype])
    for key, value in opt.state[p].items():
        if key not in SCALAR_STATE:  # "step" and the other 0-d CPU scalars keep the step dtype
            assert value.array.dtype == dtype, f"state {key!r} is {value.array.dtype}"


DTYPES = [np.float64, np.float32]


# ----------------------------------------------------------------------------------- trajectories
SGD_CASES = [c for c in itertools.product([0.0, 0.9], [0.0, 0.3], [False, True], [0.0, 0.1], [False, True])
             if not c[2] or (c[0] > 0 and c[1] == 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("momentum,dampening,nesterov,weight_decay,maximize", SGD_CASES)
def test_sgd_trajectory(dtype, momentum, dampening, nesterov, weight_decay, maximize):
    kw = dict(lr=0.05, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
    check_trajectory(lambda ps: optim.SGD(ps, maximize=maximize, **kw),
                     lambda p, g: ref_sgd(p, g, maximize=maximize, **kw), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("amsgrad,weight_decay,maximize", list(itertools.product([False, True], [0.0, 0.1],
                                                                                  [False, True])))
@pytest.mark.parametrize("decoupled", [False, True])
def test_adam_and_adamw_trajectory(dtype, amsgrad, weight_decay, maximize, decoupled):
    kw = dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=weight_decay, amsgrad=amsgrad)
    cls = optim.AdamW if decoupled else optim.Adam
    check_trajectory(lambda ps: cls(ps, maximize=maximize, **kw),
                     lambda p, g: ref_adam(p, g, maximize=maximize, decoupled=decoupled, **kw), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("centered,momentum,weight_decay,maximize",
                         list(itertools.product([False, True], [0.0, 0.7], [0.0, 0.1], [False, True])))
def test_rmsprop_trajectory(dtype, centered, momentum, weight_decay, maximize):
    kw = dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=weight_decay, momentum=momentum, centered=centered)
    check_trajectory(lambda ps: optim.RMSprop(ps, maximize=maximize, **kw),
                     lambda p, g: ref_rmsprop(p, g, maximize=maximize, **kw), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lr_decay,weight_decay,initial_accumulator_value,maximize",
                         list(itertools.product([0.0, 0.5], [0.0, 0.1], [0.0, 0.3], [False, True])))
def test_adagrad_trajectory(dtype, lr_decay, weight_decay, initial_accumulator_value, maximize):
    kw = dict(lr=0.1, lr_decay=lr_decay, weight_decay=weight_decay,
              initial_accumulator_value=initial_accumulator_value, eps=1e-10)
    check_trajectory(lambda ps: optim.Adagrad(ps, maximize=maximize, **kw),
                     lambda p, g: ref_adagrad(p, g, maximize=maximize, **kw), dtype)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), lr=st.floats(1e-4, 1.0), beta1=st.floats(0.0, 0.99),
       beta2=st.floats(0.5, 0.9999), eps=st.floats(1e-10, 1e-2), weight_decay=st.floats(0.0, 0.5),
       shape=st.sampled_from([(1,), (5,), (2, 3), (2, 1, 3)]))
def test_adam_matches_reference_for_any_hyperparameters(seed, lr, beta1, beta2, eps, weight_decay, shape):
    p0, grads = draw(seed, n_steps=4, shape=shape)
    p = param(p0)
    opt = optim.Adam([p], lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay)
    got = run(opt, [p], [grads], np.float64)
    want = ref_adam(p0, grads, lr, (beta1, beta2), eps, weight_decay)
    for (g,), r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


def test_zero_gradient_entries_and_zero_lr():
    """Adam with zero gradients keeps the parameter (0 / (0 + eps)); lr = 0 changes nothing."""
    p = param(np.array([1.0, -2.0]))
    opt = optim.Adam([p], lr=0.1)
    p.grad = mt.zeros(2, dtype=mt.float64)
    opt.step()
    np.testing.assert_array_equal(p.array, [1.0, -2.0])
    q = param(np.array([1.0, -2.0]))
    sgd = optim.SGD([q], lr=0.0, momentum=0.9)
    q.grad = mt.ones(2, dtype=mt.float64)
    sgd.step()
    np.testing.assert_array_equal(q.array, [1.0, -2.0])


# ------------------------------------------------------------------------ in place, no new arrays
ALL_BUFFERS = [
    (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True)),
    (optim.Adam, dict(amsgrad=True, weight_decay=0.1, maximize=True)),
    (optim.AdamW, dict(amsgrad=True)),
    (optim.RMSprop, dict(momentum=0.5, centered=True, weight_decay=0.1)),
    (optim.Adagrad, dict(lr_decay=0.1, weight_decay=0.1, maximize=True)),
]


@pytest.mark.parametrize("cls,kw", ALL_BUFFERS, ids=lambda x: getattr(x, "__name__", ""))
@pytest.mark.parametrize("dtype", DTYPES)
def test_updates_in_place_and_grad_untouched(cls, kw, dtype):
    p0, grads = draw(1)
    p = param(p0, dtype)
    param_array, param_ptr = p.array, p.array.ctypes.data
    opt = cls([p], **kw)
    p.grad = mt.tensor(grads[0].astype(dtype))
    opt.step()
    state_arrays = {k: (v.array, v.array.ctypes.data) for k, v in opt.state[p].items()}
    adam_keys = {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    expected_keys = {optim.SGD: {"momentum_buffer"}, optim.Adam: adam_keys, optim.AdamW: adam_keys,
                     optim.RMSprop: {"step", "square_avg", "momentum_buffer", "grad_avg"},
                     optim.Adagrad: {"step", "sum"}}[cls]
    assert set(state_arrays) == expected_keys
    for g in grads[1:]:
        p.grad = mt.tensor(g.astype(dtype))
        grad_before = p.grad.array.copy()
        opt.step()
        np.testing.assert_array_equal(p.grad.array, grad_before)  # the gradient is never written to
        assert p.array is param_array and p.array.ctypes.data == param_ptr
        assert p.array.dtype == dtype
        for key, (array, ptr) in state_arrays.items():
            assert opt.state[p][key].array is array and array.ctypes.data == ptr, key
    if "step" in opt.state[p]:
        step = opt.state[p]["step"]
        assert isinstance(step, mt.Tensor) and step.shape == () and step.device == mt.device("cpu")
        assert step.item() == len(grads)


def test_backend_methods_write_only_their_outputs():
    """Calling the backend directly: the update lands in the given arrays, and the grad is read only."""
    B = mt.device("cpu").backend
    rng = np.random.default_rng(3)
    param_a = rng.standard_normal(6).astype(np.float32)
    grad = rng.standard_normal(6).astype(np.float32)
    grad.flags.writeable = False  # any write to the gradient raises
    m, v, vmax = np.zeros(6, np.float32), np.zeros(6, np.float32), np.zeros(6, np.float32)
    start = param_a.copy()
    B.adam_update(param_a, grad, m, v, vmax, 1, 0.1, 0.9, 0.999, 1e-8, 0.1, True, False, True)
    want = ref_adam(start, [grad.astype(np.float64)], 0.1, (0.9, 0.999), 1e-8, 0.1, True, True)[0]
    np.testing.assert_allclose(param_a, want, rtol=1e-5, atol=1e-6)
    assert param_a.dtype == m.dtype == v.dtype == vmax.dtype == np.float32
    buf = np.zeros(6, np.float32)
    B.sgd_update(param_a, grad, buf, 0.1, 0.9, 0.0, True, 0.1, False, True)
    B.rmsprop_update(param_a, grad, np.zeros(6, np.float32), np.zeros(6, np.float32), np.zeros(6, np.float32),
                     0.01, 0.99, 1e-8, 0.1, 0.9, True, True)
    B.adagrad_update(param_a, grad, np.zeros(6, np.float32), 1, 0.01, 0.0, 0.1, 1e-10, True)
    assert param_a.dtype == np.float32


# ------------------------------------------------------------------------------ groups, zero_grad
def test_param_groups_with_own_hyperparameters():
    (pa0, ga), (pb0, gb) = draw(10), draw(11)
    a, b = param(pa0), param(pb0)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "nesterov": True}], lr=0.01, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.01, 0.5]
    assert opt.param_groups[0]["nesterov"] is False and opt.param_groups[1]["momentum"] == 0.9
    got = run(opt, [a, b], [ga, gb], np.float64)
    want_a = ref_sgd(pa0, ga, 0.01, momentum=0.9)
    want_b = ref_sgd(pb0, gb, 0.5, momentum=0.9, nesterov=True)
    for (ha, hb), ra, rb in zip(got, want_a, want_b):
        np.testing.assert_allclose(ha, ra, rtol=1e-12)
        np.testing.assert_allclose(hb, rb, rtol=1e-12)


def test_add_param_group_and_named_params():
    a, b = param(np.ones(2)), param(np.ones(3))
    opt = optim.Adam([("w", a)], lr=0.1)
    opt.add_param_group({"params": [("b", b)], "lr": 0.2})
    assert opt.param_groups[0]["param_names"] == ["w"] and opt.param_groups[1]["param_names"] == ["b"]
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)
    a.grad, b.grad = mt.ones(2, dtype=mt.float64), mt.ones(3, dtype=mt.float64)
    opt.step()
    # Adam's first step moves each entry by lr (m_hat / sqrt(v_hat) = sign(g)), up to eps.
    np.testing.assert_allclose(a.array, 1 - 0.1, rtol=1e-7)
    np.testing.assert_allclose(b.array, 1 - 0.2, rtol=1e-7)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="with/without names"):
        optim.SGD([("w", a), b])


def test_zero_grad_modes():
    p = param(np.arange(3.0))
    opt = optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    grad_array = p.grad.array
    opt.zero_grad(set_to_none=False)
    assert p.grad.array is grad_array
    np.testing.assert_array_equal(p.grad.array, 0)
    (p * p).sum().backward()  # accumulates into the zeroed gradient
    np.testing.assert_array_equal(p.grad.array, 2 * np.arange(3.0))
    opt.zero_grad()
    assert p.grad is None


def test_params_without_grad_are_skipped():
    a, b = param(np.ones(2)), param(np.ones(2))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = mt.ones(2, dtype=mt.float64)
    opt.step()
    np.testing.assert_array_equal(b.array, 1.0)
    assert b not in opt.state and a in opt.state
    assert not np.array_equal(a.array, np.ones(2))


def test_closure_runs_with_grad_enabled_and_returns_loss():
    p = param(np.array([3.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with mt.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0
    np.testing.assert_allclose(p.array, [3.0 - 0.25 * 6.0])


def test_adam_reduces_a_quadratic():
    mt.manual_seed(0)
    target = mt.tensor(np.linspace(-2, 2, 10).astype(np.float32))
    w = mt.zeros(10, requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    losses = []
    for _ in range(200):
        opt.zero_grad()
        loss = ((w - target) ** 2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-3 * losses[0]
    assert w.dtype == mt.float32
    np.testing.assert_allclose(w.array, target.array, atol=0.05)


# ------------------------------------------------------------------------------ argument checks
@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad])
def test_invalid_learning_rate(cls):
    with pytest.raises(ValueError, match="^Invalid learning rate: -1$"):
        cls([param(np.ones(1))], lr=-1)


@pytest.mark.parametrize("make,message", [
    (lambda ps: optim.SGD(ps, momentum=-0.1), "Invalid momentum value: -0.1"),
    (lambda ps: optim.SGD(ps, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda ps: optim.SGD(ps, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (lambda ps: optim.SGD(ps, momentum=0.9, dampening=0.1, nesterov=True), "Nesterov momentum requires"),
    (lambda ps: optim.Adam(ps, betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    (lambda ps: optim.Adam(ps, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda ps: optim.Adam(ps, eps=-1e-8), "Invalid epsilon value: -1e-08"),
    (lambda ps: optim.AdamW(ps, weight_decay=-0.01), "Invalid weight_decay value: -0.01"),
    (lambda ps: optim.RMSprop(ps, alpha=-0.5), "Invalid alpha value: -0.5"),
    (lambda ps: optim.RMSprop(ps, momentum=-1), "Invalid momentum value: -1"),
    (lambda ps: optim.Adagrad(ps, lr_decay=-1), "Invalid lr_decay value: -1"),
    (lambda ps: optim.Adagrad(ps, initial_accumulator_value=-1),
     "Invalid initial_accumulator_value value: -1"),
])
def test_invalid_hyperparameters(make, message):
    with pytest.raises(ValueError, match=message):
        make([param(np.ones(1))])


def test_invalid_params():
    p = param(np.ones(2))
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(p)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([])
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}])
    with pytest.raises(TypeError, match="can only optimize Tensors.*ndarray"):
        optim.SGD([np.ones(2)])
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2])
    q = param(np.ones(2))
    q.grad = mt.ones(3, dtype=mt.float64)
    with pytest.raises(RuntimeError, match=r"shape \(2,\) has a gradient of shape \(3,\)"):
        optim.SGD([q]).step()


def test_defaults_match_pytorch():
    p = param(np.ones(1))
    assert optim.SGD([p]).defaults == dict(lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                                           maximize=False, differentiable=False, foreach=None, fused=None)
    adam = optim.Adam([p]).defaults
    assert adam == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False,
                        decoupled_weight_decay=False, capturable=False, differentiable=False, foreach=None,
                        fused=None)
    adamw = optim.AdamW([p]).defaults
    assert adamw["weight_decay"] == 1e-2 and adamw["decoupled_weight_decay"] is True
    assert optim.RMSprop([p]).defaults == dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                                               centered=False, maximize=False, capturable=False,
                                               differentiable=False, foreach=None)
    assert optim.Adagrad([p]).defaults == dict(lr=1e-2, lr_decay=0, eps=1e-10, weight_decay=0,
                                               initial_accumulator_value=0, maximize=False, differentiable=False,
                                               foreach=None, fused=None)
    assert "Parameter Group 0" in repr(optim.Adam([p])) and "amsgrad: False" in repr(optim.Adam([p]))


def test_adagrad_state_exists_before_the_first_step():
    p = param(np.ones(3))
    opt = optim.Adagrad([p], initial_accumulator_value=0.25)
    np.testing.assert_array_equal(opt.state[p]["sum"].array, 0.25)
    assert opt.state[p]["step"].item() == 0
    assert set(opt.state_dict()["state"][0]) == {"step", "sum"}


# ---------------------------------------------------------------------------------- state dict
def snapshot(state_dict):
    """A saved-and-loaded copy: through minitensor's checkpoint format when it exists, else a deep copy."""
    try:
        from minitensor.serialization import load, save
    except ImportError:
        return copy.deepcopy(state_dict)
    buffer = io.BytesIO()
    save(state_dict, buffer)
    buffer.seek(0)
    return load(buffer)


RESUMABLE = [
    (optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    (optim.Adam, dict(lr=0.05, amsgrad=True, weight_decay=0.01)),
    (optim.AdamW, dict(lr=0.05, betas=(0.8, 0.9))),
    (optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
    (optim.Adagrad, dict(lr=0.1, lr_decay=0.2, initial_accumulator_value=0.1)),
]


@pytest.mark.parametrize("cls,kw", RESUMABLE, ids=lambda x: getattr(x, "__name__", ""))
@pytest.mark.parametrize("dtype", DTYPES)
def test_state_dict_round_trip_continues_the_trajectory(cls, kw, dtype):
    (pa0, ga), (pb0, gb) = draw(20), draw(21)
    # the uninterrupted run
    a, b = param(pa0, dtype), param(pb0, dtype)
    full = run(cls([{"params": [a]}, {"params": [b], "lr": 0.02}], **kw), [a, b], [ga, gb], dtype)
    # 3 steps, a save, a fresh optimizer on copies of the parameters, a load, the remaining steps
    a, b = param(pa0, dtype), param(pb0, dtype)
    first = cls([{"params": [a]}, {"params": [b], "lr": 0.02}], **kw)
    run(first, [a, b], [ga[:3], gb[:3]], dtype)
    saved = snapshot(first.state_dict())
    a2, b2 = param(a.array, dtype), param(b.array, dtype)
    second = cls([a2, b2], lr=123.0)  # one group here: load must refuse it
    with pytest.raises(ValueError, match="different number of parameter groups"):
        second.load_state_dict(saved)
    second = cls([{"params": [a2]}, {"params": [b2]}], lr=123.0)
    second.load_state_dict(saved)
    assert [g["lr"] for g in second.param_groups] == [kw["lr"], 0.02]  # saved hyper-parameters win
    assert second.param_groups[0]["params"][0] is a2
    rest = run(second, [a2, b2], [ga[3:], gb[3:]], dtype)
    for step, ((fa, fb), (ra, rb)) in enumerate(zip(full[3:], rest), start=4):
        np.testing.assert_array_equal(ra, fa, err_msg=f"step {step}")
        np.testing.assert_array_equal(rb, fb, err_msg=f"step {step}")


def test_state_dict_format():
    a, b = param(np.ones(2)), param(np.ones(3))
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, amsgrad=True)
    b.grad = mt.ones(3, dtype=mt.float64)
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert set(sd["state"]) == {1}  # a had no gradient: no state
    entry = sd["state"][1]
    assert set(entry) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert all(isinstance(v, mt.Tensor) for v in entry.values()) and entry["step"].item() == 1


def test_load_state_dict_checks_sizes_and_casts_to_the_parameter():
    a = param(np.ones(3))
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    a.grad = mt.ones(3, dtype=mt.float64)
    opt.step()
    saved = opt.state_dict()
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group: group 0 has 1 saved"):
        optim.SGD([param(np.ones(3)), param(np.ones(3))], momentum=0.9).load_state_dict(saved)
    with pytest.raises(ValueError, match=r"'momentum_buffer' has shape \(3,\) but its parameter has shape"):
        optim.SGD([param(np.ones(4))], momentum=0.9).load_state_dict(saved)
    # float64 state into a float32 parameter: cast, and copied (the saved dict is not shared)
    c = param(np.ones(3), np.float32)
    target = optim.SGD([c], momentum=0.9)
    target.load_state_dict(saved)
    buf = target.state[c]["momentum_buffer"]
    assert buf.dtype == mt.float32 and buf.array is not saved["state"][0]["momentum_buffer"].array
    np.testing.assert_array_equal(buf.array, 1.0)


def test_adam_step_counter_round_trips_and_drives_bias_correction():
    p0, grads = draw(30)
    p = param(p0)
    opt = optim.Adam([p], lr=0.05)
    run(opt, [p], [grads[:4]], np.float64)
    saved = snapshot(opt.state_dict())
    assert saved["state"][0]["step"].item() == 4 and saved["state"][0]["step"].dtype == mt.float32
    q = param(p.array)
    resumed = optim.Adam([q], lr=0.05)
    resumed.load_state_dict(saved)
    got = run(resumed, [q], [grads[4:]], np.float64)
    want = ref_adam(p0, grads, 0.05)[4:]
    for (g,), r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
    # a step saved as a plain number (older checkpoints) loads as the counter tensor
    saved["state"][0]["step"] = 4
    r = param(p.array)
    from_number = optim.Adam([r], lr=0.05)
    from_number.load_state_dict(saved)
    assert isinstance(from_number.state[r]["step"], mt.Tensor)
    got = run(from_number, [r], [grads[4:]], np.float64)
    np.testing.assert_allclose(got[0][0], want[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", [lambda p: optim.SGD([p], lr=0.1, weight_decay=0.1),
                                  lambda p: optim.Adam([p], lr=0.1, weight_decay=0.1),
                                  lambda p: optim.RMSprop([p], lr=0.1, weight_decay=0.1),
                                  lambda p: optim.Adagrad([p], lr=0.1, weight_decay=0.1)],
                         ids=["sgd", "adam", "rmsprop", "adagrad"])
def test_weight_decay_on_a_0d_parameter_matches_the_same_update_on_shape_1(make):
    scalar, vector = mt.tensor(1.5, requires_grad=True), mt.tensor([1.5], requires_grad=True)
    for p in (scalar, vector):
        opt = make(p)
        (p * p).sum().backward()
        opt.step()
    assert scalar.shape == () and scalar.item() == vector.item() != 1.5
    if isinstance(opt, optim.SGD):
        assert scalar.item() == pytest.approx(1.5 - 0.1 * (2 * 1.5 + 0.1 * 1.5))
