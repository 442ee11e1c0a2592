"""The per-element maths of the fused optimizer updates, written once for the CPU loops
(``cpu/numba_kernels/optim.py``) and the CUDA kernels (``cuda/numba_kernels/optim.py``).

Each ``*_element(i, ...)`` updates index ``i`` of the parameter and of every state array in place. The
arithmetic follows ``generic/optim.py`` operation by operation, in the same order, so that the results match
the NumPy bodies: the scalars arrive precomputed and rounded to the array's dtype. An absent state array
(no momentum buffer, no AMSGrad maximum, not centered) is ``grad``, which an element never writes.

This module is plain Python and imports no numba: ``compile_elements`` hands back the functions compiled
by the caller's decorator (``numba.njit`` on the CPU, ``cuda.jit(device=True)`` on the GPU).
"""
from __future__ import annotations

import math
import types
from typing import Any, Callable


def effective_grad(p, g, weight_decay, maximize):
    """(-g if maximize else g) + weight_decay * p."""
    if maximize:
        g = -g
    if weight_decay != 0:  # skipped rather than multiplied by 0, which would turn an infinite p into NaN
        g = p * weight_decay + g
    return g


def sgd_element(i, param, grad, momentum_buf, lr, momentum, one_minus_dampening, weight_decay, nesterov,
                maximize, first_step):
    """b = g (first step) or momentum b + (1 - dampening) g ; g = g + momentum b (nesterov) or b ;
    param -= lr g. ``momentum_buf`` is ``grad`` (untouched) when momentum == 0."""
    p = param[i]
    g = effective_grad(p, grad[i], weight_decay, maximize)
    if momentum != 0:
        if first_step:
            b = g
        else:
            b = momentum_buf[i] * momentum + g * one_minus_dampening
        momentum_buf[i] = b
        if nesterov:
            g = b * momentum + g
        else:
            g = b
    param[i] = p - g * lr


def adam_element(i, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step_size, beta1, one_minus_beta1,
                 beta2, one_minus_beta2, bias_correction2_sqrt, eps, weight_decay, param_decay, amsgrad,
                 maximize):
    """Adam / AdamW: param *= param_decay (1 - lr wd for AdamW, else 1) ; g = ±grad + weight_decay param
    (weight_decay = 0 for AdamW) ; m, v moving averages ; v_max = max(v_max, v) (amsgrad) ;
    param -= step_size m / (sqrt(v or v_max) / sqrt(1 - beta2^t) + eps), step_size = lr / (1 - beta1^t).
    ``max_exp_avg_sq`` is ``grad`` (untouched) without amsgrad."""
    p = param[i] * param_decay
    g = effective_grad(p, grad[i], weight_decay, maximize)
    m = exp_avg[i] * beta1 + g * one_minus_beta1
    v = exp_avg_sq[i] * beta2 + (g * g) * one_minus_beta2
    exp_avg[i] = m
    exp_avg_sq[i] = v
    if amsgrad:
        v = max(max_exp_avg_sq[i], v)
        max_exp_avg_sq[i] = v
    denom = math.sqrt(v) / bias_correction2_sqrt + eps
    param[i] = p - (m / denom) * step_size


def rmsprop_element(i, param, grad, square_avg, momentum_buf, grad_avg, lr, alpha, one_minus_alpha, eps,
                    weight_decay, momentum, centered, maximize):
    """v = alpha v + (1 - alpha) g^2 ; gbar = alpha gbar + (1 - alpha) g (centered) ;
    d = g / (sqrt(v - gbar^2 if centered else v) + eps) ; b = momentum b + d, param -= lr b (momentum > 0)
    or param -= lr d. ``momentum_buf`` / ``grad_avg`` are ``grad`` (untouched) when unused."""
    p = param[i]
    g = effective_grad(p, grad[i], weight_decay, maximize)
    v = square_avg[i] * alpha + (g * g) * one_minus_alpha
    square_avg[i] = v
    if centered:
        gbar = grad_avg[i] * alpha + g * one_minus_alpha
        grad_avg[i] = gbar
        v = v - gbar * gbar
    d = g / (math.sqrt(v) + eps)
    if momentum > 0:
        d = momentum_buf[i] * momentum + d
        momentum_buf[i] = d
    param[i] = p - d * lr


def adagrad_element(i, param, grad, state_sum, clr, eps, weight_decay, maximize):
    """s += g^2 ; param -= clr g / (sqrt(s) + eps), clr = lr / (1 + (t - 1) lr_decay)."""
    p = param[i]
    g = effective_grad(p, grad[i], weight_decay, maximize)
    s = state_sum[i] + g * g
    state_sum[i] = s
    param[i] = p - (g / (math.sqrt(s) + eps)) * clr


ELEMENTS = ("sgd_element", "adam_element", "rmsprop_element", "adagrad_element")


def compile_elements(compile_function: Callable[[Callable], Any]) -> types.SimpleNamespace:
    """``effective_grad`` and the ``*_element`` functions, each passed through ``compile_function``
    (e.g. ``numba.njit(inline="always")`` or ``cuda.jit(device=True)``).

    A compiler resolves a function's globals when it compiles it, and a compiled function can call only
    compiled ones: each element is therefore rebuilt over a copy of this module's globals in which
    ``effective_grad`` is the compiled one, and this module's own functions stay plain Python."""
    namespace = dict(globals())
    namespace["effective_grad"] = compile_function(effective_grad)
    compiled = {"effective_grad": namespace["effective_grad"]}
    for name in ELEMENTS:
        f = globals()[name]
        rebound = types.FunctionType(f.__code__, namespace, f.__name__, f.__defaults__, f.__closure__)
        rebound.__doc__, rebound.__qualname__, rebound.__module__ = f.__doc__, f.__qualname__, f.__module__
        compiled[name] = compile_function(rebound)
    return types.SimpleNamespace(**compiled)
