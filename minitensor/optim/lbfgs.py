"""``LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search, ported from PyTorch's
``torch/optim/lbfgs.py`` (itself from minFunc and Torch7's ``optim``), iteration for iteration.

The work is on one flat vector holding every parameter (the backend's raw arrays, so it runs on either
device): the gradient ``g``, the search direction ``d`` and the history of steps ``s`` and gradient changes
``y``. Scalars (dot products, step lengths, losses) are Python floats; each costs a device sync on CUDA, as
PyTorch's ``.item()``-style comparisons do.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from ..autograd import enable_grad
from ..tensor import Tensor, _wrap
from .optimizer import Optimizer, ParamsT, check_hyperparameter
from ..backends.base import Backend

Array = Any
Objective = Callable[[list[Array], float, Array], tuple[float, Array]]


def _cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                       bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clipped to ``bounds``
    (default: the interval between x1 and x2); the interval's middle when the cubic has no minimum."""
    xmin_bound, xmax_bound = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = math.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(B: Backend, obj_func: Objective, x: list[Array], t: float, d: Array, f: float, g: Array,
                  gtd: float, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, Array, float, int]:
    """A step length t along ``d`` satisfying the strong Wolfe conditions
    f(x + t d) <= f + c1 t gtd and |g(x + t d) . d| <= -c2 gtd: bracketing, then zooming by cubic
    interpolation. Returns (loss, flat gradient, t, function evaluations)."""
    d_norm = float(B.abs(d).max())
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = float(B.matmul(g_new, d))

    # bracket an interval containing a point satisfying the Wolfe criteria
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        # extrapolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = float(B.matmul(g_new, d))
        ls_iter += 1

    if ls_iter == max_ls:  # reached the maximum number of iterations
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]

    # zoom: refine the bracket until a point satisfies the criteria
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # the bracket is too small
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1],
                               bracket_gtd[1])
        # A t too close to a bracket end makes little progress: after twice in a row, or at the end itself,
        # move it 10% of the bracket's length inside.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = float(B.matmul(g_new, d))
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Armijo condition not satisfied or not lower than the lowest point: the new high end
            bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos] = t, f_new, g_new.copy()
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # Wolfe conditions satisfied
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the old high end becomes the new low end
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            # the new point becomes the new low end
            bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos] = t, f_new, g_new.copy()
            bracket_gtd[low_pos] = gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """PyTorch's L-BFGS (minFunc's): ``step(closure)`` runs up to ``max_iter`` iterations, each a
    two-loop-recursion direction d = -H g from the last ``history_size`` pairs (s, y), then a step of
    length lr along d (1 / |g|_1 capped at 1, times lr, at the first iteration), or the strong-Wolfe line
    search's step with ``line_search_fn="strong_wolfe"``. It stops early when max |g| <= tolerance_grad,
    the directional derivative, the step or the loss change falls below tolerance_change, or after
    ``max_eval`` closure calls (default max_iter * 5 // 4).

    One parameter group only. The state (on the first parameter, as PyTorch keeps it): "func_evals",
    "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss", "al"."""

    def __init__(self, params: ParamsT, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        check_hyperparameter(0.0 <= lr, f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]
        self._B = self._params[0].device.backend
        if any(p.device != self._params[0].device for p in self._params):
            raise ValueError("LBFGS needs all its parameters on one device")

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # ---------------------------------------------------------------------------- flat vectors
    def _gather_flat_grad(self) -> Array:
        """Every parameter's gradient, flattened and concatenated (zeros for a parameter without one)."""
        B = self._B
        return B.concatenate([B.zeros((p.numel(),), p.array.dtype) if p.grad is None else p.grad.array.reshape(-1)
                              for p in self._params], 0)

    def _add_grad(self, step_size: float, update: Array) -> None:
        """params += step_size * update (the flat vector split back into the parameters' shapes)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.array += step_size * update[offset:offset + n].reshape(p.shape)
            offset += n

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Array], t: float,
                              d: Array) -> tuple[float, Array]:
        """(loss, flat gradient) at params + t d; the parameters are then restored to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, saved in zip(self._params, x):
            p.array[...] = saved
        return loss, flat_grad

    # ------------------------------------------------------------------------------------ step
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Minimise the loss ``closure()`` (which must zero the gradients, compute the loss, call
        ``backward`` and return the loss); returns the first loss it computed."""
        closure = enable_grad()(closure)
        B = self._B
        group = self.param_groups[0]
        lr, max_iter, max_eval = float(group["lr"]), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if float(B.abs(flat_grad).max()) <= tolerance_grad:  # already optimal
            return orig_loss

        d, prev_flat_grad = _array(state.get("d")), _array(state.get("prev_flat_grad"))
        old_dirs = [_array(y) for y in state.get("old_dirs", [])]
        old_stps = [_array(s) for s in state.get("old_stps", [])]
        t, ro, h_diag, prev_loss = state.get("t"), state.get("ro"), state.get("H_diag"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # ---- the descent direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1.0
            else:
                # update the memory with the last step s and gradient change y
                y = flat_grad - prev_flat_grad
                s = d * t  # type: ignore[operator]
                ys = float(B.matmul(y, s))
                if ys > 1e-10:
                    if len(old_dirs) == history_size:  # limited memory: forget the oldest pair
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)  # type: ignore[union-attr]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)  # type: ignore[union-attr]
                    h_diag = ys / float(B.matmul(y, y))  # the scale of the initial inverse Hessian
                # two-loop recursion: d = -H g
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = float(B.matmul(old_stps[i], q)) * ro[i]  # type: ignore[index]
                    q -= al[i] * old_dirs[i]
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = float(B.matmul(old_dirs[i], r)) * ro[i]  # type: ignore[index]
                    r += (al[i] - be_i) * old_stps[i]

            prev_flat_grad = flat_grad.copy()
            prev_loss = loss

            # ---- the step length
            t = min(1.0, 1.0 / float(B.abs(flat_grad).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float(B.matmul(flat_grad, d))  # the directional derivative
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.array.copy() for p in self._params]

                def obj_func(x: list[Array], t: float, d: Array) -> tuple[float, Array]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(B, obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = float(B.abs(flat_grad).max()) <= tolerance_grad
            else:
                self._add_grad(t, d)  # a fixed step
                opt_cond = False
                if n_iter != max_iter:  # re-evaluate only if another iteration follows
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = float(B.abs(flat_grad).max()) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # ---- stopping conditions
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if float(B.abs(d * t).max()) <= tolerance_change:  # no progress in the parameters
                break
            if abs(loss - prev_loss) < tolerance_change:  # nor in the loss
                break

        device = self._params[0].device
        state.update(d=_tensor(d, device), t=t, old_dirs=[_tensor(y, device) for y in old_dirs],
                     old_stps=[_tensor(s, device) for s in old_stps], ro=ro, H_diag=h_diag,
                     prev_flat_grad=_tensor(prev_flat_grad, device), prev_loss=prev_loss)
        return orig_loss

    def _loaded_state_value(self, param: Tensor, key: str, value: Any) -> Any:
        """LBFGS's flat vectors and lists, copied onto the parameters' device and dtype as they are; 0-d
        tensors (PyTorch's ``t``, ``H_diag``, ``ro`` and ``al`` entries) as the Python floats kept here."""
        if isinstance(value, Tensor) and value.ndim == 0:
            return float(value)
        if isinstance(value, Tensor):
            return _tensor(_array(value.to(param.device)).astype(param.array.dtype, copy=True), param.device)  # type: ignore[union-attr]
        if isinstance(value, list):
            return [self._loaded_state_value(param, key, v) for v in value]
        return value


def _array(value: Tensor | None) -> Array | None:
    return None if value is None else value.array


def _tensor(array: Array | None, device: Any) -> Tensor | None:
    return None if array is None else _wrap(array, device)

