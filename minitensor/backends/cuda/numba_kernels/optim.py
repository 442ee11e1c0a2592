"""In-place optimizer updates, one kernel per optimizer: each thread updates whole elements (the parameter
and every state array at that index), so one launch does the work of the ``OptimOps`` method it replaces.

The per-element maths lives in ``minitensor/backends/optim_elements.py`` (shared with the CPU loops),
compiled here as device functions; each kernel grid-strides over the elements. It follows
``generic/optim.py`` operation by operation, in the same order, so that the results match the NumPy backend to
rounding (on a GPU the compiler may fuse a multiply-add into one FMA). Scalars that the reference computes
in double precision on the host (``1 - beta1``, ``lr / (1 - beta1^t)``, ...) arrive precomputed and rounded
to the array's dtype, as NumPy rounds a Python float operand.

An absent state array (no momentum buffer, no AMSGrad maximum, not centered) is replaced by ``grad``, which
the kernel then never reads in that role nor writes: every variant is the same compiled kernel.
"""
from __future__ import annotations

from numba import cuda

from ...optim_elements import compile_elements

_elements = compile_elements(cuda.jit(device=True))
effective_grad = _elements.effective_grad
sgd_element = _elements.sgd_element
adam_element = _elements.adam_element
rmsprop_element = _elements.rmsprop_element
adagrad_element = _elements.adagrad_element


@cuda.jit
def sgd_kernel(param, grad, momentum_buf, lr, momentum, one_minus_dampening, weight_decay, nesterov,
               maximize, first_step):
    """``sgd_element`` over a grid-stride loop."""
    for i in range(cuda.grid(1), param.size, cuda.gridsize(1)):
        sgd_element(i, param, grad, momentum_buf, lr, momentum, one_minus_dampening, weight_decay,
                    nesterov, maximize, first_step)


@cuda.jit
def adam_kernel(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step_size, beta1, one_minus_beta1, beta2,
                one_minus_beta2, bias_correction2_sqrt, eps, weight_decay, param_decay, amsgrad, maximize):
    """``adam_element`` over a grid-stride loop."""
    for i in range(cuda.grid(1), param.size, cuda.gridsize(1)):
        adam_element(i, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step_size, beta1,
                     one_minus_beta1, beta2, one_minus_beta2, bias_correction2_sqrt, eps, weight_decay,
                     param_decay, amsgrad, maximize)


@cuda.jit
def rmsprop_kernel(param, grad, square_avg, momentum_buf, grad_avg, lr, alpha, one_minus_alpha, eps,
                   weight_decay, momentum, centered, maximize):
    """``rmsprop_element`` over a grid-stride loop."""
    for i in range(cuda.grid(1), param.size, cuda.gridsize(1)):
        rmsprop_element(i, param, grad, square_avg, momentum_buf, grad_avg, lr, alpha, one_minus_alpha,
                        eps, weight_decay, momentum, centered, maximize)


@cuda.jit
def adagrad_kernel(param, grad, state_sum, clr, eps, weight_decay, maximize):
    """``adagrad_element`` over a grid-stride loop."""
    for i in range(cuda.grid(1), param.size, cuda.gridsize(1)):
        adagrad_element(i, param, grad, state_sum, clr, eps, weight_decay, maximize)
