"""In-place optimizer updates: one call per parameter tensor, no new arrays per step.

Each method updates ``param`` and its preallocated state arrays in place with PyTorch's formulas (the
single-tensor code paths of ``torch.optim``) and never writes to ``grad``, which belongs to the tensor's
``.grad``. Hyper-parameters arrive as plain Python scalars, so NumPy 2's weak scalars keep a float32
parameter float32; every ufunc writes through ``out=`` into an existing array.

Temporaries left (the CUDA backend and the CPU loops replace SGD, Adam, RMSprop and Adagrad with one fused
kernel each; Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop and SparseAdam run these bodies everywhere): one or
two scratch arrays the size of ``param`` per call, plus one for the effective gradient
``(-grad if maximize else grad) + wd * param`` when ``maximize`` or (coupled) weight decay changes it.
SparseAdam's work on the gradient's entries only: a few arrays of its ``nnz`` values.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

from ..compiled import flat, kernel_fits

Array = Any


def _effective_grad(xp: Any, param: Array, grad: Array, weight_decay: float, maximize: bool) -> Array:
    """g = (-grad if maximize else grad) + weight_decay * param (L2 penalty folded into the gradient).

    Returns ``grad`` itself (to be read only) when neither applies, else a new temporary."""
    if weight_decay == 0:
        return xp.negative(grad) if maximize else grad
    g = xp.empty_like(param)  # not xp.multiply's own result: for a 0-d param that is a scalar, not an array
    xp.multiply(param, weight_decay, out=g)
    if maximize:
        xp.subtract(g, grad, out=g)
    else:
        xp.add(g, grad, out=g)
    return g


def _scaled_add(xp: Any, acc: Array, decay: float, x: Array, scale: float, scratch: Array) -> None:
    """acc <- decay * acc + scale * x, in place (``x`` may be ``scratch`` itself)."""
    xp.multiply(x, scale, out=scratch)
    acc *= decay
    acc += scratch


def _adam_moments(xp: Any, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, lr: float, beta1: float,
                  beta2: float, weight_decay: float, decoupled_weight_decay: bool, maximize: bool
                  ) -> tuple[Array, Array]:
    """The moments Adam, NAdam and RAdam share, in place: param *= 1 - lr wd (decoupled), g = ±grad + wd param
    (coupled), m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2. -> (g, a scratch array)."""
    if decoupled_weight_decay and weight_decay != 0:
        param *= 1 - lr * weight_decay
    g = _effective_grad(xp, param, grad, 0 if decoupled_weight_decay else weight_decay, maximize)
    scratch = xp.empty_like(param)
    _scaled_add(xp, exp_avg, beta1, g, 1 - beta1, scratch)
    xp.multiply(g, g, out=scratch)
    _scaled_add(xp, exp_avg_sq, beta2, scratch, 1 - beta2, scratch)
    return g, scratch


def _descend(xp: Any, param: Array, numerator: Array, denom: Array, step_size: float) -> None:
    """param -= step_size * numerator / denom, overwriting ``denom``."""
    xp.divide(numerator, denom, out=denom)
    denom *= step_size
    param -= denom


class OptimOps:
    xp: Any

    def sgd_update(self, param: Array, grad: Array, momentum_buf: Array | None, lr: float, momentum: float,
                   dampening: float, nesterov: bool, weight_decay: float, maximize: bool,
                   first_step: bool) -> None:
        """SGD with optional momentum, dampening, Nesterov and L2 weight decay (PyTorch's update):

            g = ±grad + wd * param
            b = g on the first step, else momentum * b + (1 - dampening) * g      (momentum != 0)
            g = g + momentum * b if nesterov else b                               (momentum != 0)
            param -= lr * g

        ``momentum_buf`` (param's shape) is overwritten on ``first_step``; None when momentum == 0."""
        xp = self.xp
        g = _effective_grad(xp, param, grad, weight_decay, maximize)
        scratch = xp.empty_like(param)
        if momentum != 0:
            if first_step:
                momentum_buf[...] = g  # type: ignore[index]
            else:
                _scaled_add(xp, momentum_buf, momentum, g, 1 - dampening, scratch)
            if nesterov:
                xp.multiply(momentum_buf, momentum, out=scratch)
                scratch += g
                g = scratch
            else:
                g = momentum_buf
        xp.multiply(g, lr, out=scratch)
        param -= scratch

    def adam_update(self, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array,
                    max_exp_avg_sq: Array | None, step: int, lr: float, beta1: float, beta2: float,
                    eps: float, weight_decay: float, amsgrad: bool, decoupled_weight_decay: bool,
                    maximize: bool) -> None:
        """Adam (decoupled_weight_decay=False) or AdamW (True), ``step`` counting from 1:

            param *= 1 - lr * wd                          (AdamW; Adam instead adds wd * param to g)
            m = beta1 m + (1 - beta1) g ;  v = beta2 v + (1 - beta2) g^2
            v_max = max(v_max, v) and v_max replaces v below                       (amsgrad)
            param -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

        ``max_exp_avg_sq`` is None without amsgrad."""
        xp = self.xp
        g, scratch = _adam_moments(xp, param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay,
                                   decoupled_weight_decay, maximize)
        second_moment = exp_avg_sq
        if amsgrad:
            xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            second_moment = max_exp_avg_sq
        bias_correction1 = 1 - beta1 ** step
        bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
        denom = xp.sqrt(second_moment, out=scratch)
        denom /= bias_correction2_sqrt
        denom += eps
        _descend(xp, param, exp_avg, denom, lr / bias_correction1)

    def rmsprop_update(self, param: Array, grad: Array, square_avg: Array, momentum_buf: Array | None,
                       grad_avg: Array | None, lr: float, alpha: float, eps: float, weight_decay: float,
                       momentum: float, centered: bool, maximize: bool) -> None:
        """RMSprop (PyTorch's form: eps added after the square root):

            v = alpha v + (1 - alpha) g^2
            gbar = alpha gbar + (1 - alpha) g ; v~ = v - gbar^2                   (centered)
            d = g / (sqrt(v~ or v) + eps)
            b = momentum b + d ; param -= lr b           (momentum > 0; else param -= lr d)

        ``momentum_buf`` is None when momentum == 0, ``grad_avg`` None unless centered."""
        xp = self.xp
        g = _effective_grad(xp, param, grad, weight_decay, maximize)
        scratch = xp.multiply(g, g, out=xp.empty_like(param))  # out=: a 0-d result stays an array
        _scaled_add(xp, square_avg, alpha, scratch, 1 - alpha, scratch)
        if centered:
            _scaled_add(xp, grad_avg, alpha, g, 1 - alpha, scratch)
            xp.multiply(grad_avg, grad_avg, out=scratch)
            xp.subtract(square_avg, scratch, out=scratch)
            xp.sqrt(scratch, out=scratch)
        else:
            xp.sqrt(square_avg, out=scratch)
        scratch += eps
        if momentum > 0:
            xp.divide(g, scratch, out=scratch)
            momentum_buf *= momentum  # type: ignore[operator]
            momentum_buf += scratch
            xp.multiply(momentum_buf, lr, out=scratch)
            param -= scratch
        else:
            _descend(xp, param, g, scratch, lr)

    def adagrad_update(self, param: Array, grad: Array, state_sum: Array, step: int, lr: float,
                       lr_decay: float, weight_decay: float, eps: float, maximize: bool) -> None:
        """Adagrad, ``step`` counting from 1:

            s += g^2 ;  param -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)"""
        xp = self.xp
        g = _effective_grad(xp, param, grad, weight_decay, maximize)
        scratch = xp.multiply(g, g, out=xp.empty_like(param))  # out=: a 0-d result stays an array
        state_sum += scratch
        xp.sqrt(state_sum, out=scratch)
        scratch += eps
        _descend(xp, param, g, scratch, lr / (1 + (step - 1) * lr_decay))

    # The updates below have no compiled kernel: these vectorised bodies run on every backend as they are.
    def adadelta_update(self, param: Array, grad: Array, square_avg: Array, acc_delta: Array, lr: float,
                        rho: float, eps: float, weight_decay: float, maximize: bool) -> None:
        """Adadelta (PyTorch's form: eps inside both square roots):

            v = rho v + (1 - rho) g^2 ;  delta = sqrt(u + eps) / sqrt(v + eps) * g
            u = rho u + (1 - rho) delta^2 ;  param -= lr delta"""
        xp = self.xp
        g = _effective_grad(xp, param, grad, weight_decay, maximize)
        scratch = xp.multiply(g, g, out=xp.empty_like(param))
        _scaled_add(xp, square_avg, rho, scratch, 1 - rho, scratch)
        delta = xp.add(acc_delta, eps, out=xp.empty_like(param))
        xp.sqrt(delta, out=delta)
        xp.add(square_avg, eps, out=scratch)
        xp.sqrt(scratch, out=scratch)
        delta /= scratch
        delta *= g
        xp.multiply(delta, delta, out=scratch)
        _scaled_add(xp, acc_delta, rho, scratch, 1 - rho, scratch)
        delta *= lr
        param -= delta

    def adamax_update(self, param: Array, grad: Array, exp_avg: Array, exp_inf: Array, step: int, lr: float,
                      beta1: float, beta2: float, eps: float, weight_decay: float, maximize: bool) -> None:
        """Adamax (Adam with the infinity norm), ``step`` counting from 1:

            m = beta1 m + (1 - beta1) g ;  u = max(beta2 u, |g| + eps)
            param -= lr / (1 - beta1^t) * m / u"""
        xp = self.xp
        g = _effective_grad(xp, param, grad, weight_decay, maximize)
        scratch = xp.empty_like(param)
        _scaled_add(xp, exp_avg, beta1, g, 1 - beta1, scratch)
        exp_inf *= beta2
        xp.abs(g, out=scratch)
        scratch += eps
        xp.maximum(exp_inf, scratch, out=exp_inf)
        xp.divide(exp_avg, exp_inf, out=scratch)
        scratch *= lr / (1 - beta1 ** step)
        param -= scratch

    def nadam_update(self, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, step: int, lr: float,
                     beta1: float, beta2: float, eps: float, weight_decay: float, mu: float, mu_next: float,
                     mu_product: float, decoupled_weight_decay: bool, maximize: bool) -> None:
        """NAdam, ``step`` counting from 1; ``mu`` and ``mu_next`` are the momentum coefficients of steps t and
        t + 1 and ``mu_product`` the product of mu over steps 1..t (the optimizer keeps it in its state):

            param *= 1 - lr * wd                          (decoupled; else g += wd * param)
            m = beta1 m + (1 - beta1) g ;  v = beta2 v + (1 - beta2) g^2 ;  d = sqrt(v / (1 - beta2^t)) + eps
            param -= lr (1 - mu) / (1 - mu_product) * g / d + lr mu_next / (1 - mu_product mu_next) * m / d"""
        xp = self.xp
        g, scratch = _adam_moments(xp, param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay,
                                   decoupled_weight_decay, maximize)
        denom = xp.divide(exp_avg_sq, 1 - beta2 ** step, out=scratch)
        xp.sqrt(denom, out=denom)
        denom += eps
        update = xp.divide(g, denom, out=xp.empty_like(param))
        update *= lr * (1 - mu) / (1 - mu_product)
        param -= update
        _descend(xp, param, exp_avg, denom, lr * mu_next / (1 - mu_product * mu_next))

    def radam_update(self, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, step: int, lr: float,
                     beta1: float, beta2: float, eps: float, weight_decay: float, decoupled_weight_decay: bool,
                     maximize: bool) -> None:
        """RAdam (rectified Adam), ``step`` counting from 1. With rho_inf = 2 / (1 - beta2) - 1 and
        rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t):

            param *= 1 - lr * wd                          (decoupled; else g += wd * param)
            m, v as Adam's ;  m^ = m / (1 - beta1^t)
            rho_t > 5: param -= lr m^ r sqrt(1 - beta2^t) / (sqrt(v) + eps),
                       r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
            else:      param -= lr m^                     (SGD with momentum while v is unreliable)"""
        xp = self.xp
        g, scratch = _adam_moments(xp, param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay,
                                   decoupled_weight_decay, maximize)
        bias_correction1, bias_correction2 = 1 - beta1 ** step, 1 - beta2 ** step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2 ** step / bias_correction2
        if rho_t > 5:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            denom = xp.sqrt(exp_avg_sq, out=scratch)
            denom += eps
            _descend(xp, param, exp_avg, denom, lr * rect * math.sqrt(bias_correction2) / bias_correction1)
        else:
            xp.multiply(exp_avg, lr / bias_correction1, out=scratch)
            param -= scratch

    def asgd_update(self, param: Array, grad: Array, ax: Array, eta: float, mu: float, lambd: float,
                    weight_decay: float, maximize: bool) -> None:
        """Averaged SGD, with this step's ``eta`` (step size) and ``mu`` (averaging rate) from the optimizer:

            g = ±grad + wd * param ;  param = param (1 - lambd eta) - eta g
            ax += mu (param - ax)                          (ax = param exactly while mu == 1)"""
        xp = self.xp
        g = _effective_grad(xp, param, grad, weight_decay, maximize)
        param *= 1 - lambd * eta
        scratch = xp.multiply(g, eta, out=xp.empty_like(param))
        param -= scratch
        if mu != 1:
            xp.subtract(param, ax, out=scratch)
            scratch *= mu
            ax += scratch
        else:
            xp.copyto(ax, param)


    def rprop_update(self, param: Array, grad: Array, prev: Array, step_size: Array, etaminus: float,
                     etaplus: float, step_size_min: float, step_size_max: float, maximize: bool) -> None:
        """Rprop (resilient backpropagation), PyTorch's form; only the signs of the gradients are used:

            s = sign(g * prev) ;  step_size *= etaplus (s > 0), etaminus (s < 0), 1 (s = 0), clipped
            g = 0 where s < 0 (the step after a sign change is skipped) ;  param -= sign(g) step_size ;  prev = g

        A NaN product leaves its step size NaN, as PyTorch's masked writes do."""
        xp = self.xp
        g = xp.negative(grad) if maximize else grad
        factor = xp.multiply(g, prev, out=xp.empty_like(param))
        xp.sign(factor, out=factor)
        grew, shrank = factor > 0, factor < 0
        xp.copyto(factor, etaplus, where=grew)
        xp.copyto(factor, etaminus, where=shrank)
        xp.copyto(factor, 1.0, where=factor == 0)
        step_size *= factor
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        xp.copyto(prev, g)
        xp.copyto(prev, 0.0, where=shrank)
        xp.sign(prev, out=factor)
        factor *= step_size
        param -= factor

    def sparse_adam_update(self, param: Array, indices: Array, values: Array, exp_avg: Array, exp_avg_sq: Array,
                           step: int, lr: float, beta1: float, beta2: float, eps: float, maximize: bool) -> None:
        """SparseAdam: Adam on the entries a coalesced sparse gradient holds (``values[k]`` at
        ``indices[:, k]``, unique indices), the others untouched; ``step`` counting from 1:

            m[i] += (1 - beta1) (g - m[i]) ;  v[i] += (1 - beta2) (g^2 - v[i])
            param[i] -= lr sqrt(1 - beta2^t) / (1 - beta1^t) * m[i] / (sqrt(v[i]) + eps)

        The indices are unique, so the gathers and scatters below touch each entry once."""
        xp = self.xp
        at = tuple(indices)
        g = xp.negative(values) if maximize else values
        old_m, old_v = exp_avg[at], exp_avg_sq[at]
        m_update = (g - old_m) * (1 - beta1)
        v_update = (g * g - old_v) * (1 - beta2)
        exp_avg[at] += m_update
        exp_avg_sq[at] += v_update
        m_update += old_m  # the new m[i], v[i]: PyTorch adds the same two terms again rather than gathering
        v_update += old_v
        xp.sqrt(v_update, out=v_update)
        v_update += eps
        m_update /= v_update
        param[at] += -(lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)) * m_update


@functools.lru_cache(maxsize=64)
def _adam_scalars(t: Any, step: int, lr: float, beta1: float, beta2: float, eps: float, weight_decay: float,
                  decoupled_weight_decay: bool) -> tuple[Any, ...]:
    """The fused Adam loop's nine scalars in dtype ``t``: made once per step for all the parameters of a
    group (ten NumPy scalar constructions cost ~1.5 us, a third of a small parameter's update)."""
    param_decay = 1 - lr * weight_decay if decoupled_weight_decay else 1.0
    coupled_weight_decay = 0.0 if decoupled_weight_decay else weight_decay
    return (t(lr / (1 - beta1 ** step)), t(beta1), t(1 - beta1), t(beta2), t(1 - beta2),
            t(math.sqrt(1 - beta2 ** step)), t(eps), t(coupled_weight_decay), t(param_decay))


class FusedOptimOps(OptimOps):
    """The one front end of the fused updates (the CPU's Numba loops, the CUDA Numba kernels): each update is
    one compiled loop over the elements, written in ``backends/optim_elements.py``.

    A backend overrides ``_fused_kernel(name)`` to hand back its loop for "sgd", "adam", "rmsprop" or
    "adagrad" (called with flat arrays and scalars), or None when it has none (Numba absent). The scalars
    reach the loop precomputed and rounded to the array's dtype (as NumPy rounds a Python float operand),
    booleans as ``bool``; an absent state array is replaced by ``grad``, which the loop then leaves alone.
    Arrays the loops do not cover (``compiled.kernel_fits``: a transposed or broadcast gradient, float16)
    take the NumPy body through ``super()``."""

    def _fused_kernel(self, name: str) -> Callable[..., None] | None:
        return None

    def _fused(self, name: str, *arrays: Array) -> Callable[..., None] | None:
        """The loop ``name`` when it covers ``arrays``, else None."""
        loop = self._fused_kernel(name)
        return loop if loop is not None and kernel_fits(*arrays) else None

    def sgd_update(self, param: Array, grad: Array, momentum_buf: Array | None, lr: float, momentum: float,
                   dampening: float, nesterov: bool, weight_decay: float, maximize: bool,
                   first_step: bool) -> None:
        buf = momentum_buf if momentum != 0 else grad
        loop = self._fused("sgd", param, grad, buf)
        if loop is None:
            return super().sgd_update(param, grad, momentum_buf, lr, momentum, dampening, nesterov,
                                      weight_decay, maximize, first_step)
        t = param.dtype.type
        loop(flat(param), flat(grad), flat(buf), t(lr), t(momentum), t(1 - dampening), t(weight_decay),
             bool(nesterov), bool(maximize), bool(first_step))

    def adam_update(self, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array,
                    max_exp_avg_sq: Array | None, step: int, lr: float, beta1: float, beta2: float,
                    eps: float, weight_decay: float, amsgrad: bool, decoupled_weight_decay: bool,
                    maximize: bool) -> None:
        v_max = max_exp_avg_sq if amsgrad else grad
        loop = self._fused("adam", param, grad, exp_avg, exp_avg_sq, v_max)
        if loop is None:
            return super().adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1,
                                       beta2, eps, weight_decay, amsgrad, decoupled_weight_decay, maximize)
        loop(flat(param), flat(grad), flat(exp_avg), flat(exp_avg_sq), flat(v_max),
             *_adam_scalars(param.dtype.type, step, lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay),
             bool(amsgrad), bool(maximize))

    def rmsprop_update(self, param: Array, grad: Array, square_avg: Array, momentum_buf: Array | None,
                       grad_avg: Array | None, lr: float, alpha: float, eps: float, weight_decay: float,
                       momentum: float, centered: bool, maximize: bool) -> None:
        buf = momentum_buf if momentum > 0 else grad
        gbar = grad_avg if centered else grad
        loop = self._fused("rmsprop", param, grad, square_avg, buf, gbar)
        if loop is None:
            return super().rmsprop_update(param, grad, square_avg, momentum_buf, grad_avg, lr, alpha, eps,
                                          weight_decay, momentum, centered, maximize)
        t = param.dtype.type
        loop(flat(param), flat(grad), flat(square_avg), flat(buf), flat(gbar), t(lr), t(alpha), t(1 - alpha),
             t(eps), t(weight_decay), t(momentum), bool(centered), bool(maximize))

    def adagrad_update(self, param: Array, grad: Array, state_sum: Array, step: int, lr: float,
                       lr_decay: float, weight_decay: float, eps: float, maximize: bool) -> None:
        loop = self._fused("adagrad", param, grad, state_sum)
        if loop is None:
            return super().adagrad_update(param, grad, state_sum, step, lr, lr_decay, weight_decay, eps,
                                          maximize)
        t = param.dtype.type
        loop(flat(param), flat(grad), flat(state_sum), t(lr / (1 + (step - 1) * lr_decay)), t(eps),
             t(weight_decay), bool(maximize))
