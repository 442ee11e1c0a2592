"""IEEE special cases compute silently, as in PyTorch: NumPy's RuntimeWarnings (divide by zero, invalid
value, overflow, the mean of nothing) raised by minitensor's own NumPy calls are ignored, in a process where
every RuntimeWarning is an error; a user's own NumPy calls still warn."""
from __future__ import annotations

import subprocess
import sys

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
