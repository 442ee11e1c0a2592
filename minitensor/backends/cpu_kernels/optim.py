"""Fused in-place optimizer updates on the CPU: one Numba-compiled loop per optimizer, which updates the
parameter and every state array at each index in one pass (``optim_ops.FusedOptimOps`` calls them).

Each loop takes flat, C-contiguous arrays of one dtype and writes its results in place; it allocates
nothing. The arithmetic follows ``backends/ops/optim.py`` operation by operation, in the same order, so that
the results match the NumPy bodies: the scalars arrive precomputed and rounded to the array's dtype (as
NumPy rounds a Python float operand), and the loops are compiled without fastmath. ``error_model="numpy"``
makes a division by zero give inf or nan instead of raising, which lets LLVM vectorise the loops. Numba
compiles one instance per dtype on first use and caches it on disk.

An absent state array (no momentum buffer, no AMSGrad maximum, not centered) is replaced by ``grad``,
which the loop then never writes.
"""
from __future__ import annotations

import functools
import math

import numba

jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy")


@jit(inline="always")
def effective_grad(p, g, weight_decay, maximize):
    """(-g if maximize else g) + weight_decay * p."""
    if maximize:
        g = -g
    if weight_decay != 0:  # skipped rather than multiplied by 0, which would turn an infinite p into NaN
        g = p * weight_decay + g
    return g


@jit
def sgd_kernel(param, grad, momentum_buf, lr, momentum, one_minus_dampening, weight_decay, nesterov, maximize,
               first_step):
    """b = g (first step) or momentum b + (1 - dampening) g ; g = g + momentum b (nesterov) or b ;
    param -= lr g. ``momentum_buf`` is ``grad`` (untouched) when momentum == 0."""
    for i in range(param.size):
        p = param[i]
        g = effective_grad(p, grad[i], weight_decay, maximize)
        if momentum != 0:
            b = g if first_step else momentum_buf[i] * momentum + g * one_minus_dampening
            momentum_buf[i] = b
            g = b * momentum + g if nesterov else b
        param[i] = p - g * lr


@jit
def adam_kernel(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step_size, beta1, one_minus_beta1, beta2,
                one_minus_beta2, bias_correction2_sqrt, eps, weight_decay, param_decay, amsgrad, maximize):
    """param *= param_decay (AdamW) ; g = ±grad + weight_decay param ; m, v moving averages ;
    v_max = max(v_max, v) (amsgrad) ; param -= step_size m / (sqrt(v or v_max) / bias_correction2_sqrt + eps).
    ``max_exp_avg_sq`` is ``grad`` (untouched) without amsgrad."""
    for i in range(param.size):
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


@jit
def rmsprop_kernel(param, grad, square_avg, momentum_buf, grad_avg, lr, alpha, one_minus_alpha, eps,
                   weight_decay, momentum, centered, maximize):
    """v = alpha v + (1 - alpha) g^2 ; gbar likewise (centered) ; d = g / (sqrt(v - gbar^2 or v) + eps) ;
    b = momentum b + d and param -= lr b (momentum > 0), else param -= lr d."""
    for i in range(param.size):
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


@jit
def adagrad_kernel(param, grad, state_sum, clr, eps, weight_decay, maximize):
    """s += g^2 ; param -= clr g / (sqrt(s) + eps), clr = lr / (1 + (t - 1) lr_decay)."""
    for i in range(param.size):
        p = param[i]
        g = effective_grad(p, grad[i], weight_decay, maximize)
        s = state_sum[i] + g * g
        state_sum[i] = s
        param[i] = p - (g / (math.sqrt(s) + eps)) * clr
