"""``gradcheck(check_forward_ad=True)``: forward-mode tangents against central finite differences.

For each float64 input that requires grad and each direction u (every basis vector of a small input, else
``directions`` random ones, seeded), the tangents ``autograd.forward_ad`` gives the outputs when that input is
the dual (input, u) must match (f(x + eps u) - f(x - eps u)) / (2 eps) within ``atol + rtol * |numerical|``,
element by element: the Jacobian column by column, as PyTorch's check.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..autograd import forward_ad as fwAD
from ..autograd import no_grad
from ..tensor import Tensor, _wrap


def _outputs(fn: Callable[..., Any], args: Sequence[Any]) -> list[Any]:
    out = fn(*args)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def forward_gradcheck(fn: Callable[..., Any], inputs: tuple[Any, ...], diff: list[int], *, eps: float,
                      atol: float, rtol: float, fast_mode: bool, directions: int = 8,
                      seed: int = 0) -> str | None:
    """None when the forward-mode tangents match; else the message of the first mismatch."""
    rng = np.random.default_rng(seed)
    for i in diff:
        x = inputs[i]
        x0 = np.array(x.detach().cpu().array, dtype=np.float64)
        if fast_mode or x0.size > 400:
            us = [rng.standard_normal(x0.shape) for _ in range(directions)]
        else:
            us = [np.eye(x0.size)[j].reshape(x0.shape) for j in range(x0.size)]
        for u in us:
            def at(x_new: np.ndarray) -> list[np.ndarray]:
                args = list(inputs)
                args[i] = _wrap(x._device.backend.asarray(x_new), x._device)
                with no_grad():
                    return [np.asarray(o.detach().cpu().array, dtype=np.float64) for o in _outputs(fn, args)]
            plus, minus = at(x0 + eps * u), at(x0 - eps * u)
            with fwAD.dual_level():
                args = list(inputs)
                args[i] = fwAD.make_dual(x, _wrap(x._device.backend.asarray(u), x._device))
                tangents = [fwAD.unpack_dual(o).tangent if isinstance(o, Tensor) else None
                            for o in _outputs(fn, args)]
            for k, (p, m, t) in enumerate(zip(plus, minus, tangents)):
                num = (p - m) / (2 * eps)
                ana = np.zeros_like(num) if t is None else np.asarray(t.detach().cpu().array, dtype=np.float64)
                bad = np.abs(ana - num) > atol + rtol * np.abs(num)
                if bad.any():
                    at_ = np.unravel_index(np.argmax(bad), num.shape) if num.ndim else ()
                    return (f"gradcheck (forward AD): output {k} along a direction of input {i}: "
                            f"{int(bad.sum())} of {bad.size} entries differ; at {tuple(int(a) for a in at_)}: "
                            f"forward AD {ana[at_]:.8g} vs numerical {num[at_]:.8g}")
    return None
