"""``minitensor.autograd.gradcheck`` and ``gradgradcheck``: PyTorch's names and keyword arguments for
``minitensor.testing.gradcheck`` / ``gradgradcheck``
(central finite differences in float64 against one backward pass per projection; see that module)."""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["gradcheck", "gradgradcheck"]


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-06, atol: float = 1e-05,
              rtol: float = 0.001, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True when the gradients of ``func`` w.r.t. the float64 inputs that require grad match finite
    differences within ``atol + rtol * |numerical|``; else ``GradcheckError`` (a RuntimeError, as PyTorch's) or
    False. ``nondet_tol`` and ``check_undefined_grad`` are accepted: every backward here is deterministic
    on the CPU and never sees an undefined gradient; gradients always come back in their input's dtype.
    ``check_forward_ad`` checks ``autograd.forward_ad``'s tangents against finite differences too."""
    from ..testing import gradcheck as check  # testing builds on autograd: imported at the call
    unsupported = {"check_batched_grad": check_batched_grad, "check_batched_forward_grad": check_batched_forward_grad,
                   "masked": bool(masked)}
    for name, on in unsupported.items():
        if on:
            raise NotImplementedError(f"gradcheck({name}=True): minitensor has no batched gradients (vmap) or "
                                      "masked tensors; only the backward and forward-AD checks run")
    if check_forward_ad:  # autograd.forward_ad's tangents, column by column (testing/_forward_check.py)
        from ..testing import GradcheckError
        from ..testing._forward_check import forward_gradcheck
        from ..tensor import Tensor
        args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
        diff = [i for i, x in enumerate(args) if isinstance(x, Tensor) and x.requires_grad]
        if not diff:
            raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the "
                             "them have requires_grad=True.")
        message = forward_gradcheck(func, args, diff, eps=eps, atol=atol, rtol=rtol, fast_mode=fast_mode)
        if message is not None:
            if raise_exception:
                raise GradcheckError(message)
            return False
    if not check_backward_ad:
        return True  # nothing left to check
    return check(func, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                 fast_mode=fast_mode)


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-06,
                  atol: float = 1e-05, rtol: float = 0.001, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """True when the second derivatives of ``func`` (the gradients of its gradients, taken with
    ``create_graph=True``) match finite differences of its first derivatives; PyTorch's keywords over
    ``testing.gradgradcheck``. Forward-over-reverse, batched and masked checks are refused as in ``gradcheck``."""
    from ..testing import gradgradcheck as check
    unsupported = {"check_batched_grad": check_batched_grad, "check_fwd_over_rev": check_fwd_over_rev,
                   "masked": bool(masked)}
    for name, on in unsupported.items():
        if on:
            raise NotImplementedError(f"gradgradcheck({name}=True): minitensor has no forward-mode AD, vmap or "
                                      "masked tensors; only the reverse-over-reverse check runs")
    if not check_rev_over_rev:
        return True
    return check(func, inputs, grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                 fast_mode=fast_mode)
