"""autocast (minitensor.amp): the API (nesting, enabled=False, decorator, threads), the weight-cast cache,
and parity of every op of the policy table against the float32 op, forward and backward."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.amp import autocast_mode
from minitensor.amp.policy import COMPOSED, FP32, LOWER, POLICY, PROMOTE
from minitensor.autograd import function as function_module
from minitensor.autograd.function import ArrayFunction
from minitensor.functional.cast import ToDtype


def test_state_nesting_enabled_false_and_restoring():
    assert not mt.is_autocast_enabled("cpu") and mt.get_autocast_dtype("cpu") == mt.bfloat16
    assert mt.get_autocast_dtype("cuda") == mt.float16
    assert function_module.autocast is None
    assert mt.amp.is_autocast_available("cpu") and mt.amp.is_autocast_available("cuda")
    assert not mt.amp.is_autocast_available("xla")
    with mt.autocast("cpu"):
        assert mt.is_autocast_enabled("cpu") and not mt.is_autocast_enabled()  # no argument: CUDA's
        with mt.amp.autocast("cpu", dtype=mt.float16):
            assert mt.get_autocast_dtype("cpu") == mt.float16
            with mt.autocast("cpu", enabled=False):
                assert not mt.is_autocast_enabled("cpu")
                assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype == mt.float32
            assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype == mt.float16
        assert mt.get_autocast_dtype("cpu") == mt.bfloat16
        assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype == mt.bfloat16
    assert not mt.is_autocast_enabled("cpu") and function_module.autocast is None
    assert (mt.ones(2, 2) @ mt.ones(2, 2)).dtype == mt.float32


def test_decorator_and_errors():
    @mt.autocast("cpu")
    def f(a, b):
        return a @ b

    assert f(mt.ones(2, 2), mt.ones(2, 2)).dtype == mt.bfloat16
    assert not mt.is_autocast_enabled("cpu")
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        mt.autocast("tpu")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        mt.autocast(mt.device("cpu"))
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        ac = mt.autocast("cpu", dtype=mt.float64)
    with ac:
        assert not mt.is_autocast_enabled("cpu")


def test_cuda_autocast_without_cuda_warns_and_is_off(monkeypatch):
    monkeypatch.setattr(mt.cuda, "is_available", lambda: False)
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling autocast."):
        ac = mt.autocast("cuda")
    with ac:
        assert not mt.is_autocast_enabled("cuda")
    with pytest.warns(FutureWarning, match="minitensor.cuda.amp.autocast\\(args...\\)` is deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            mt.cuda.amp.autocast()


def test_state_is_per_thread():
    seen = []
    with mt.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append((mt.is_autocast_enabled("cpu"),
                                                         (mt.ones(2, 2) @ mt.ones(2, 2)).dtype)))
        t.start()
        t.join()
    assert seen == [(False, mt.float32)]


def test_weight_casts_are_cached_per_region_by_identity_and_version(monkeypatch):
    calls = []
    forward = ToDtype.forward
    monkeypatch.setattr(ToDtype, "forward", staticmethod(lambda ctx, B, x, d: calls.append(d) or forward(ctx, B, x, d)))
    w = mt.randn(3, 3, requires_grad=True)
    x = mt.randn(2, 3)
    with mt.autocast("cpu"):
        a = F.linear(x, w)
        b = F.linear(x, w)  # the weight's cast is reused; the (non-leaf) input is cast per use
        assert len(calls) == 3
        with mt.no_grad():
            w.mul_(1.0)  # a new version: a new cast
        F.linear(x, w)
        assert len(calls) == 5
    (a.sum() + b.sum()).backward()
    assert w.grad.dtype == mt.float32
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.broadcast_to(x.sum(0).numpy(), (3, 3)), rtol=2e-2)
    with mt.autocast("cpu"):
        F.linear(x, w)  # a new region: a new cast
    assert len(calls) == 7
    with mt.autocast("cpu", cache_enabled=False):
        F.linear(x, w)
        F.linear(x, w)
    assert len(calls) == 11


def test_addmm_family_runs_in_the_16_bit_dtype_input_included():
    bias, a, b = mt.randn(2, 4), mt.randn(2, 3), mt.randn(3, 4)
    with mt.autocast("cpu"):
        assert mt.addmm(bias, a, b).dtype == mt.bfloat16
        assert mt.baddbmm(bias, a[None], b[None]).dtype == mt.bfloat16
        assert mt.addmm(bias.double(), a.double(), b.double()).dtype == mt.float64  # float64 is never cast
    ref = (bias + a @ b).numpy()
    with mt.autocast("cpu"):
        np.testing.assert_allclose(mt.addmm(bias, a, b).float().numpy(), ref, rtol=3e-2, atol=3e-2)


def test_parameters_stay_float32_and_gradients_flow_in_each_ops_dtype():
    lin = mt.nn.Linear(4, 3)
    x = mt.randn(5, 4, requires_grad=True)
    with mt.autocast("cpu"):
        h = lin(x)
        assert h.dtype == mt.bfloat16
        y = h.softmax(-1)
        assert y.dtype == mt.bfloat16  # softmax is not on the CPU's float32 list
        loss = F.mse_loss(y, mt.zeros(5, 3))
        assert loss.dtype == mt.float32  # the losses are
    loss.backward()
    assert lin.weight.dtype == lin.weight.grad.dtype == x.grad.dtype == mt.float32


# ---------------------------------------------------------------------------------------- parity
def _normal(g, *shape):
    return g.standard_normal(shape)


# Inputs of the (n, k)-shaped cases, one letter each: Normal, Positive, Unit interval, Ratio (positive,
# near 1: products), Sum-to-something probabilities, Binary probabilities, Labels.
SAMPLERS = {
    "N": _normal,
    "P": lambda g, n, k: np.abs(g.standard_normal((n, k))) + 0.5,
    "U": lambda g, n, k: g.uniform(-0.8, 0.8, (n, k)),
    "R": lambda g, n, k: g.uniform(0.7, 2.3, (n, k)),
    "S": lambda g, n, k: g.uniform(0.2, 1.8, (n, k)),
    "B": lambda g, n, k: g.uniform(0.1, 0.9, (n, k)),
    "L": lambda g, n, k: mt.tensor(g.integers(0, k, n)),
}


def _make(case, g, n, k):
    """The inputs of a case: from its letters, or its own function for the cases of other shapes."""
    if isinstance(case, str):
        return [SAMPLERS[c](g, n, k) for c in case]
    return case(g, n, k)


CASES = {
    "MatMul": (lambda g, n, k: [_normal(g, n, k), _normal(g, k, 3)], lambda a, b: a @ b),
    "Linear": (lambda g, n, k: [_normal(g, n, k), _normal(g, 3, k), _normal(g, 3)], F.linear),
    "Conv2d": (lambda g, n, k: [_normal(g, n, 2, k + 2, 4), _normal(g, 3, 2, 3, 3), _normal(g, 3)],
               lambda x, w, b: F.conv2d(x, w, b, padding=1)),
    "ConvTranspose2d": (lambda g, n, k: [_normal(g, n, 2, k, 3), _normal(g, 2, 3, 2, 2)],
                        lambda x, w: F.conv_transpose2d(x, w, stride=2)),
    "ScaledDotProductAttention": (lambda g, n, k: [_normal(g, n, k, 4), _normal(g, n, k, 4), _normal(g, n, k, 4)],
                                  F.scaled_dot_product_attention),
    **{name: ("N", getattr(mt, name.lower())) for name in ("Exp", "Expm1", "Sinh", "Cosh")},
    **{name: ("P", getattr(mt, name.lower())) for name in ("Log", "Log2", "Log10", "Log1p", "Reciprocal", "Rsqrt")},
    **{name: ("U", getattr(mt, name.lower())) for name in ("Tan", "Asin", "Acos", "Erfinv")},
    **{name: ("NN", getattr(mt, name.lower())) for name in ("Add", "Sub", "Mul", "Maximum", "Minimum")},
    **{name: ("NP", getattr(mt, name.lower())) for name in ("Div", "Atan2")},
    # reductions and scans along the last dim, by their method names
    **{name: ("R" if name in ("Prod", "CumProd") else "N", lambda x, m=name.lower(): getattr(x, m)(-1))
       for name in ("Sum", "Prod", "CumSum", "CumProd", "LogSumExp")},
    "Pow": ("P", lambda x: x ** 2.5), "Softplus": ("N", F.softplus), "PNorm": ("N", lambda x: x.norm(dim=-1)),
    "Softmax": ("N", lambda x: F.softmax(x, -1)), "LogSoftmax": ("N", lambda x: F.log_softmax(x, -1)),
    "LogCumSumExp": ("N", lambda x: mt.logcumsumexp(x, -1)), "CrossEntropy": ("NL", F.cross_entropy),
    "NLLLoss": ("NL", F.nll_loss), "CrossEntropyProbs": ("NS", F.cross_entropy),
    "MSELoss": ("NN", F.mse_loss), "L1Loss": ("NN", F.l1_loss), "BinaryCrossEntropy": ("BB", F.binary_cross_entropy),
    "BinaryCrossEntropyWithLogits": ("NB", F.binary_cross_entropy_with_logits),
    "LayerNorm": (lambda g, n, k: [_normal(g, n, k + 1), _normal(g, k + 1), _normal(g, k + 1)],
                  lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b)),
    "BatchNorm": (lambda g, n, k: [_normal(g, n + 1, k), _normal(g, k), _normal(g, k)],
                  lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)),
    "Einsum": ("NN", lambda a, b: mt.einsum("ik,jk->ij", a, b)),
    "SmoothL1Loss": ("NN", F.smooth_l1_loss), "HuberLoss": ("NN", F.huber_loss),
    "Cat": ("NN", lambda a, b: mt.cat([a, b])), "Stack": ("NN", lambda a, b: mt.stack([a, b])),
    "Where": ("NN", lambda a, b: mt.where(a > 0, a, b)),
}
CASES.update({"Mv": (lambda g, n, k: [_normal(g, n, k), _normal(g, k)], mt.mv), "Cdist": ("NN", mt.cdist),
              "Inv": (lambda g, n, k: [_normal(g, k, k) + 3 * np.eye(k)], mt.inverse)})
CASES.update({"KLDiv": ("NB", lambda x, t: F.kl_div(x, t, reduction="batchmean")),
              "PDist": (lambda g, n, k: [_normal(g, n + 1, k)], mt.pdist)})
CASES.update({"Prelu": (lambda g, n, k: [_normal(g, n, k), _normal(g, k)], F.prelu),
              "Trace": (lambda g, n, k: [_normal(g, k, k)], mt.trace),
              "ReflectionPad": (lambda g, n, k: [_normal(g, n, k + 1)], lambda x: F.pad(x, (1, 1), mode="reflect")),
              "ReplicationPad": ("N", lambda x: F.pad(x, (2, 1), mode="replicate")),
              "Linalg": (lambda g, n, k: [_normal(g, k, k) + 3 * np.eye(k), _normal(g, k, n)], mt.linalg.solve),
              "MarginLoss": ("NN", F.soft_margin_loss),
              "Pool3d": (lambda g, n, k: [_normal(g, 1, n, k, 2, 2)], lambda x: F.avg_pool3d(x, (1, 2, 2))),
              "Quantile": ("N", lambda x: mt.quantile(x, 0.3, dim=-1))})
CASES.update({"CTCLoss": (lambda g, n, k: [_normal(g, n + 3, 2, k + 1)],  # (T, N, C): T >= 4 fits both targets
                          lambda x: F.ctc_loss(x.log_softmax(-1), mt.tensor([[1, 1], [1, 0]]), [x.shape[0]] * 2,
                                               [2, 1]))})
# The relative error (in the 2-norm) a 16-bit op may have against float32 (a few ulps, over sums).
TOLERANCE = {mt.bfloat16: 4e-2, mt.float16: 5e-3}
ROUNDINGS = {"ScaledDotProductAttention": 2}  # two GEMMs and a softmax, each rounded to 16 bits: twice the room


RULES = {**POLICY["cpu"], **POLICY["cuda"]}  # every entry of either device's table


def test_the_table_names_functions_and_every_entry_has_a_parity_case():
    names = set()
    stack = [ArrayFunction]
    while stack:
        cls = stack.pop()
        names.add(cls.__name__)
        stack.extend(cls.__subclasses__())
    names |= {cls.__name__ for cls in COMPOSED}  # the keys of ops composed of others (prelu, trace, pads)
    assert set(RULES) <= names, sorted(set(RULES) - names)
    assert set(CASES) == set(RULES) and set(POLICY) == {"cpu", "cuda"}
    assert set(RULES.values()) == {LOWER, FP32, PROMOTE}
    assert all(POLICY[d].get(name, rule) == rule for d in POLICY for name, rule in RULES.items())  # no conflicts


def _rel_err(got, ref):
    """The error relative to the reference's 2-norm, or to that of a result of unit-sized elements when the
    reference is smaller: the inputs are standard normal, so a sum of their products that cancels to near
    zero (a 1x1 einsum) still carries the rounding of terms of size 1."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), np.sqrt(ref.size), 1e-6))


def _run(op, make, rule, low, seed, n, k, autocast):
    """The op's output and its inputs' gradients; inputs are float32, except that an FP32 op gets its
    first input in ``low`` (what autocast would have fed it) and a PROMOTE op gets one of each."""
    g = np.random.default_rng(seed)
    inputs = []
    for i, a in enumerate(_make(make, g, n, k)):
        if isinstance(a, mt.Tensor):
            inputs.append(a)
            continue
        t = mt.tensor(a, dtype=mt.float32)
        if (rule == FP32 and i == 0) or (rule == PROMOTE and i == 1):
            t = t.to(low)
        inputs.append(t.requires_grad_())
    if autocast:
        with mt.autocast("cpu", dtype=low):
            out = op(*inputs)
    else:  # the float32 reference on the same (rounded) values
        out = op(*[t.float() if t.is_floating_point() else t for t in inputs])
    g_out = np.random.default_rng(seed + 1).standard_normal(tuple(out.shape))
    (out.float() * mt.tensor(g_out, dtype=mt.float32)).sum().backward()
    grads = [t.grad for t in inputs if t.is_floating_point() and t.requires_grad]
    return out, [gr.float().numpy() for gr in grads], [t.dtype for t in inputs if t.requires_grad]


@pytest.mark.parametrize("low", [mt.bfloat16, mt.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("name", sorted(RULES))
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 31), n=st.integers(1, 4), k=st.integers(1, 6))
def test_every_table_op_matches_float32_forward_and_backward(name, low, seed, n, k):
    """Each entry of either table, run under CPU autocast with the CPU's table swapped for the one that
    has it (the CUDA-only entries are checked on the CPU)."""
    make, op = CASES[name]
    rule = RULES[name]
    saved = POLICY["cpu"], dict(autocast_mode._RULES)
    POLICY["cpu"] = POLICY["cuda"] if name in POLICY["cuda"] else saved[0]
    autocast_mode._RULES.clear()
    try:
        out, grads, dtypes = _run(op, make, rule, low, seed, n, k, autocast=True)
    finally:
        POLICY["cpu"] = saved[0]
        autocast_mode._RULES.clear()
        autocast_mode._RULES.update(saved[1])
    ref, ref_grads, _ = _run(op, make, rule, low, seed, n, k, autocast=False)
    assert out.dtype == (low if rule == LOWER else mt.float32)
    low_tol = TOLERANCE[low] * ROUNDINGS.get(name, 1)
    tol = low_tol if rule == LOWER else 1e-5
    assert _rel_err(out.detach().float().numpy(), ref.detach().float().numpy()) <= tol
    for gr, rg, dt in zip(grads, ref_grads, dtypes):
        # each gradient comes back in its input's dtype: float32 inputs lose nothing beyond the op's rounding
        assert _rel_err(gr, rg) <= (low_tol if rule == LOWER or dt == low else 1e-5)
