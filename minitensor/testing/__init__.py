"""``minitensor.testing``: ``assert_close`` / ``make_tensor`` (``_comparison.py``, ``_creation.py``, as PyTorch's);
``gradcheck``: compare autograd's gradients with central finite differences, in float64;
``gradgradcheck``: the same check of the gradients' own gradients (``create_graph=True``).

The check projects the output onto a random vector v (seeded), so one backward pass gives the
vector-Jacobian product g = v^T J for every input, and compares g with finite differences of v . f(x):
element by element for small inputs, along random directions for large ones (``fast_mode``). A wrong
Jacobian is caught with probability 1 over v.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..autograd import enable_grad, grad, no_grad
from ..tensor import Tensor, _wrap


class GradcheckError(AssertionError, RuntimeError):
    """Raised when analytical and numerical gradients disagree (a RuntimeError as PyTorch's, and an
    AssertionError as a failed test's)."""


def _projection(fn: Callable[..., Any], inputs: Sequence[Any], v: list[np.ndarray]) -> float:
    out = fn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = 0.0
    for o, w in zip(outs, v):
        total += float(np.sum(o.detach().cpu().array.astype(np.float64) * w))
    return total


def gradcheck(fn: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, fast_mode: bool | None = None,
              directions: int = 8, seed: int = 0) -> bool:
    """True when ``fn``'s gradients w.r.t. every float64 input with ``requires_grad`` match finite
    differences within ``atol + rtol * |numerical|``; otherwise raise GradcheckError (or return False)."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck: no input requires grad")
    for i in diff:
        if inputs[i].array.dtype != np.float64:
            raise ValueError(f"gradcheck: input {i} is {inputs[i].dtype}; use float64 inputs (finite "
                             "differences are too coarse in lower precision)")
    rng = np.random.default_rng(seed)
    out = fn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    v = [rng.standard_normal(o.shape) for o in outs]
    with_grad = [(o, w) for o, w in zip(outs, v) if o.requires_grad]
    if not with_grad:
        raise GradcheckError("gradcheck: the output does not require grad (no graph was recorded)")
    loss = sum((o * _wrap(o._device.backend.asarray(w.astype(o.array.dtype)), o._device)).sum()
               for o, w in with_grad)
    analytic = grad(loss, [inputs[i] for i in diff], allow_unused=True)
    if fast_mode is None:
        fast_mode = sum(inputs[i].numel() for i in diff) > 400

    def loss_at(i: int, x_new: np.ndarray) -> float:
        args = list(inputs)
        args[i] = _wrap(inputs[i]._device.backend.asarray(x_new), inputs[i]._device)
        with no_grad():
            return _projection(fn, args, v)

    for k, i in enumerate(diff):
        x0 = np.array(inputs[i].detach().cpu().array, dtype=np.float64, order="C")  # reshape(-1) must be a view
        g = np.zeros_like(x0) if analytic[k] is None else analytic[k].detach().cpu().array
        if fast_mode:
            for _ in range(directions):
                u = rng.standard_normal(x0.shape)
                along = (loss_at(i, x0 + eps * u) - loss_at(i, x0 - eps * u)) / (2 * eps)
                ana = float(np.sum(g * u))
                if abs(ana - along) > atol + rtol * abs(along):
                    return _fail(raise_exception, f"gradcheck: input {i} (shape {x0.shape}): directional "
                                                  f"derivative {ana:.8g} (autograd) vs {along:.8g} (numerical)")
            continue
        num = np.zeros_like(x0)
        flat = x0.reshape(-1)
        for j in range(flat.size):
            plus, minus = flat.copy(), flat.copy()
            plus[j] += eps
            minus[j] -= eps
            num.reshape(-1)[j] = (loss_at(i, plus.reshape(x0.shape)) - loss_at(i, minus.reshape(x0.shape))) \
                / (2 * eps)
        bad = np.abs(g - num) > atol + rtol * np.abs(num)
        if bad.any():
            at = np.unravel_index(np.argmax(bad), x0.shape)
            return _fail(raise_exception, f"gradcheck: input {i} (shape {x0.shape}): {int(bad.sum())} of "
                                          f"{bad.size} entries differ; at {tuple(int(a) for a in at)}: "
                                          f"autograd {g[at]:.8g} vs numerical {num[at]:.8g}")
    return True


def gradgradcheck(fn: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                  fast_mode: bool | None = None, directions: int = 8, seed: int = 0) -> bool:
    """``gradcheck`` of the function (inputs, grad_outputs) -> the gradients of ``fn``'s outputs w.r.t. its
    inputs that require grad, taken with ``create_graph=True``: second derivatives against finite differences
    of the first. ``grad_outputs`` default to random float64 tensors (seeded), themselves checked too."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    out = fn(*inputs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(seed + 1)
        grad_outputs = [_wrap(o._device.backend.asarray(rng.standard_normal(o.shape).astype(o.array.dtype)),
                              o._device, requires_grad=True) for o in outs]
    grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else (grad_outputs,)
    n = len(inputs)

    def first_order(*args: Any) -> tuple[Any, ...]:
        xs = [a if i not in diff or a.requires_grad else a.detach().requires_grad_(True)
              for i, a in enumerate(args[:n])]
        with enable_grad():
            result = fn(*xs)
            ys = [o for o in (result if isinstance(result, (tuple, list)) else (result,)) if o.requires_grad]
            return grad(ys, [xs[i] for i in diff], grad_outputs=list(args[n:]), create_graph=True,
                        materialize_grads=True)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode, directions=directions, seed=seed)


def _fail(raise_exception: bool, message: str) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


from ._comparison import assert_allclose, assert_close  # noqa: E402  (after gradcheck: they import tensor)
from ._creation import make_tensor  # noqa: E402

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "assert_allclose", "assert_close", "make_tensor"]
