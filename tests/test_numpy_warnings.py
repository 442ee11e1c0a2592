"""IEEE special cases compute silently, as in PyTorch: NumPy's RuntimeWarnings (divide by zero, invalid
value, overflow, the mean of nothing) raised by minitensor's own NumPy calls are ignored, in a process where
every RuntimeWarning is an error; a user's own NumPy calls still warn."""
from __future__ import annotations

import subprocess
import sys

import pytest

SWEEP = r"""
import math
import numpy as np
import minitensor as mt
import minitensor.nn.functional as F
special = [0.0, -0.0, -1.0, 1.0, 1e38, -1e38, math.inf, -math.inf, math.nan]
x = mt.tensor(special, requires_grad=True)
y = mt.tensor(special[::-1])
unary = [mt.log, mt.log2, mt.log10, mt.log1p, mt.sqrt, mt.rsqrt, mt.exp, mt.expm1, mt.reciprocal, mt.acos,
         mt.asin, mt.atanh, mt.acosh, mt.tan, mt.sin, mt.sigmoid, mt.tanh, mt.erfinv, mt.lgamma, mt.digamma,
         F.softplus, F.gelu, F.silu, F.logsigmoid, lambda t: t ** 0.5, lambda t: t ** -1, lambda t: 2.0 ** t,
         lambda t: t * t * t, lambda t: F.softmax(t, 0), lambda t: F.log_softmax(t, 0), lambda t: t.var(),
         lambda t: t.std(), lambda t: t.norm(), lambda t: t.logsumexp(0), lambda t: t.cumprod(0), lambda t: t.cumsum(0),
         lambda t: t / y, lambda t: t % y, lambda t: mt.atan2(t, y), lambda t: mt.fmod(t, y),
         lambda t: mt.xlogy(t, y), lambda t: mt.pow(t, y), lambda t: mt.nanmean(t)]
for f in unary:
    out = f(x)
    if out.requires_grad:
        out.sum().backward()
empty = mt.tensor([])
for f in (mt.mean, mt.var, mt.std, lambda t: t.mean(0)):
    f(empty)
mt.tensor([[math.nan, math.nan]]).nanmedian(1)
mt.ones(1, 3).var(0), mt.ones(2).var(correction=3), mt.zeros(0, 3).std(0)  # no degrees of freedom: nan, inf
for name in ("SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD"):
    p = mt.nn.Parameter(mt.tensor([0.0, 1e38, -1e38]))
    opt = getattr(mt.optim, name)([p], lr=0.1)
    p.grad = mt.tensor([math.inf, math.nan, 1e38])
    opt.step()
    opt.step()
try:
    np.log(np.zeros(1))
except RuntimeWarning:
    print("user warned")
"""


def test_special_values_compute_without_numpy_warnings():
    out = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", SWEEP], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "user warned"  # the filter is minitensor's, not the process's


def test_special_values_stay_silent_when_minitensor_is_first_imported_inside_catch_warnings():
    """pytest imports test modules inside ``warnings.catch_warnings``, which drops the warnings filter that
    minitensor installs at import; a test may then turn every warning into an error (a common way to assert
    "no warning"). PyTorch stays silent there, and so must minitensor's ops, forward and backward."""
    sweep = SWEEP.replace("import minitensor as mt\nimport minitensor.nn.functional as F\n", "")
    script = ("import warnings\nwith warnings.catch_warnings():\n    import minitensor as mt\n"
              "    import minitensor.nn.functional as F\nwarnings.simplefilter('error', RuntimeWarning)\n" + sweep)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "user warned"  # NumPy's state outside minitensor's ops is the user's


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")  # PyTorch's UserWarning: tested below
def test_reductions_without_degrees_of_freedom_give_pytorchs_values():
    """The warning-free paths of mean and var (NumPy warns there whatever its error state): an empty mean is
    nan; var divides sum((x - mean)^2) by max(n - correction, 0), so 0 / 0 = nan and c / 0 = inf."""
    import math

    import numpy as np

    import minitensor as mt
    assert mt.zeros(0, 3).mean(0).dtype == mt.float32
    np.testing.assert_array_equal(mt.zeros(0, 3).mean(0).numpy(), np.full(3, np.nan, np.float32))
    assert mt.zeros(3, 0).mean(0).shape == (0,)
    assert math.isnan(mt.ones(1, 3, dtype=mt.float64).var(0)[0].item())
    assert mt.tensor([1.0, 2.0]).var(correction=3).item() == math.inf
    assert mt.tensor([1.0, 2.0]).var(correction=2).item() == math.inf
    assert math.isnan(mt.tensor([1.0, 1.0]).var(correction=2).item())
    assert math.isnan(mt.tensor([]).mean().item())
    np.testing.assert_array_equal(mt.zeros(0, 3).std(0).numpy(), np.full(3, np.nan, np.float32))


NO_DOF = [("var", lambda t: t.ones(1, 3).var(0)), ("std", lambda t: t.ones(1, 3).std(0)),
          ("var", lambda t: t.zeros(3, 0).var(0)), ("var", lambda t: t.zeros(0, 3).var(0, correction=0)),
          ("std_mean", lambda t: t.std_mean(t.ones(1), 0)), ("var_mean", lambda t: t.var_mean(t.ones(1), 0)),
          ("var", lambda t: t.ones(2, 1).var(dim=(0, 1), correction=2)), (None, lambda t: t.ones(2, 3).var(1)),
          (None, lambda t: t.ones(2, 3).std(correction=5.5 - 0.5)), (None, lambda t: t.ones(3).var(correction=0))]


def _dof_warnings(module, make):
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        make(module)
    return [str(w.message).split("(Triggered")[0].strip() for w in seen if issubclass(w.category, UserWarning)]


def test_no_degrees_of_freedom_warns_as_pytorch():
    import minitensor as mt
    for name, make in NO_DOF:
        expected = [] if name is None else [
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
            "(input numel divided by output numel)."]
        assert _dof_warnings(mt, make) == expected, name


@pytest.mark.torch
def test_no_degrees_of_freedom_warnings_match_pytorch():
    torch = pytest.importorskip("torch")
    import minitensor as mt
    for _, make in NO_DOF:
        assert _dof_warnings(mt, make) == _dof_warnings(torch, make)
