"""In-place optimizer updates, one kernel per optimizer: each thread updates whole elements (the parameter
and every state array at that index), so one launch does the work of the ``OptimOps`` method it replaces.

The arithmetic follows ``minitensor/backends/ops/optim.py`` operation by operation, in the same order
(``acc * decay + x * scale``, ``param - step``), so that the results match the NumPy backend to rounding
(on a GPU the compiler may fuse a multiply-add into one FMA). Scalars that the reference computes in
double precision on the host (``1 - beta1``, ``lr / (1 - beta1^t)``, ...) arrive precomputed and rounded to
the array's dtype, as NumPy rounds a Python float operand.

An absent state array (no momentum buffer, no AMSGrad maximum, not centered) is replaced by ``grad``, which
the kernel then never reads in that role nor writes: every variant is the same compiled kernel.
"""
from __future__ import annotations

import math

from numba import cuda


@cuda.jit(device=True)
def effective_grad(p, g, weight_decay, maximize):
    """(-g if maximize else g) + weight_decay * p: the L2 penalty folded into the gradient."""
    if maximize:
        g = -g
    if weight_decay != 0:  # skipped rather than multiplied by 0, which would turn an infinite p into NaN
        g = p * weight_decay + g
    return g


@cuda.jit
def sgd_kernel(param, grad, momentum_buf, lr, momentum, one_minus_dampening, weight_decay, nesterov,
               maximize, first_step):
    """b = g (first step) or momentum b + (1 - dampening) g ; g = g + momentum b (nesterov) or b ;
    param -= lr g. ``momentum_buf`` is ``grad`` (untouched) when momentum == 0."""
    for i in range(cuda.grid(1), param.size, cuda.gridsize(1)):
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


@cuda.jit
def adam_kernel(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step_size, beta1, one_minus_beta1, beta2,
                one_minus_beta2, bias_correction2_sqrt, eps, weight_decay, param_decay, amsgrad, maximize):
    """Adam / AdamW: param *= param_decay (1 - lr wd for AdamW, else 1) ; g = ±grad + weight_decay param
    (weight_decay = 0 for AdamW) ; m, v moving averages ; v_max = max(v_max, v) (amsgrad) ;
    param -= step_size m / (sqrt(v or v_max) / sqrt(1 - beta2^t) + eps), step_size = lr / (1 - beta1^t).
    ``max_exp_avg_sq`` is ``grad`` (untouched) without amsgrad."""
    for i in range(cuda.grid(1), param.size, cuda.gridsize(1)):
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


@cuda.jit
def rmsprop_kernel(param, grad, square_avg, momentum_buf, grad_avg, lr, alpha, one_minus_alpha, eps,
                   weight_decay, momentum, centered, maximize):
    """v = alpha v + (1 - alpha) g^2 ; gbar = alpha gbar + (1 - alpha) g (centered) ;
    d = g / (sqrt(v - gbar^2 if centered else v) + eps) ; b = momentum b + d, param -= lr b (momentum > 0)
    or param -= lr d. ``momentum_buf`` / ``grad_avg`` are ``grad`` (untouched) when unused."""
    for i in range(cuda.grid(1), param.size, cuda.gridsize(1)):
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


@cuda.jit
def adagrad_kernel(param, grad, state_sum, clr, eps, weight_decay, maximize):
    """s += g^2 ; param -= clr g / (sqrt(s) + eps), clr = lr / (1 + (t - 1) lr_decay)."""
    for i in range(cuda.grid(1), param.size, cuda.gridsize(1)):
        p = param[i]
        g = effective_grad(p, grad[i], weight_decay, maximize)
        s = state_sum[i] + g * g
        state_sum[i] = s
        param[i] = p - (g / (math.sqrt(s) + eps)) * clr
