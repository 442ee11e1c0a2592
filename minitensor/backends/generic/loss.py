"""Fused, numerically stable losses (log-sum-exp inside), each returning the unreduced loss.

The caller reduces ('mean' | 'sum' | 'none') and hands the backward the gradient of each unreduced
element. Class layouts follow PyTorch: logits and log-probabilities are (N, C, *) with the classes on
axis 1, class-index targets are (N, *) integers, class weights are (C,).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

Array = Any

_BCE_LOG_FLOOR = -100.0  # PyTorch clamps BCE's logs here so that log(0) stays finite
_BCE_GRAD_EPS = 1e-12  # and bounds x (1 - x) below by this in BCE's gradient


def _on_row(a: Array) -> Array:
    """An (N, *) array shaped (N, 1, *) to broadcast against (N, C, *) arrays (a view, cheaper than
    ``expand_dims``)."""
    return a.reshape(a.shape[:1] + (1,) + a.shape[1:])


def _on_class_axis(a: Array, ndim: int) -> Array:
    """A (C,) array shaped (1, C, 1, ...) to broadcast against (N, C, *) arrays."""
    return a.reshape((1, -1) + (1,) * (ndim - 2))


class LossOps:
    xp: Any
    log_softmax: Callable[..., Array]  # from ActivationOps
    sigmoid: Callable[..., Array]

    # ------------------------------------------------------------------------- class-index targets
    def class_target_weights(self, target: Array, weight: Array | None, ignore_index: int,
                             dtype: Any) -> Array:
        """(N, *) weight of each target's class (1 without ``weight``), 0 where target == ignore_index.

        Their sum is the divisor of PyTorch's 'mean' reduction for nll_loss and cross_entropy."""
        xp = self.xp
        kept = target != ignore_index
        if weight is None:
            return kept.astype(dtype)
        w = xp.take(weight, xp.where(kept, target, 0))
        w *= kept
        return w

    @staticmethod
    def _class_weighted(a: Array, weight: Array | None) -> Array:
        """a (N, C, *) times weight (C,) along the class axis (a itself without weight)."""
        return a if weight is None else a * _on_class_axis(weight, a.ndim)

    def _target_positions(self, target: Array, ignore_index: int) -> tuple[Array, ...]:
        """The index of each target's class in an (N, C, *) array: a[index] is (N, *), a[n, target[n], ...];
        class 0 stands in for ignored targets. Each element of the target names one position, so the
        positions are distinct (``+=`` through them needs no ``add.at``)."""
        xp = self.xp
        safe = xp.where(target == ignore_index, 0, target)
        grid = [xp.arange(n).reshape((n,) + (1,) * (target.ndim - 1 - d)) for d, n in enumerate(target.shape)]
        return (grid[0], safe, *grid[1:])

    def _picked_log_probs(self, log_probs: Array, target: Array, ignore_index: int) -> Array:
        """(N, *) log_probs[n, target[n], ...], with class 0 standing in for ignored targets."""
        return log_probs[self._target_positions(target, ignore_index)]

    def _add_at_targets(self, gx: Array, target: Array, ignore_index: int, values: Array) -> Array:
        """gx[n, target[n], ...] += values[n, ...] (values are 0 on ignored rows)."""
        gx[self._target_positions(target, ignore_index)] += values
        return gx

    def nll_loss(self, log_probs: Array, target: Array, weight: Array | None,
                 ignore_index: int) -> Array:
        """(N, *) losses -w[t] log_probs[t] (0 where ignored, even where log_probs is NaN: PyTorch skips
        those rows), for log_probs (N, C, *)."""
        w_t = self.class_target_weights(target, weight, ignore_index, log_probs.dtype)
        return self.xp.where(target != ignore_index, -self._picked_log_probs(log_probs, target, ignore_index)
                             * w_t, 0)

    def nll_loss_backward(self, g: Array, target: Array, weight: Array | None, ignore_index: int,
                          num_classes: int) -> Array:
        """(N, C, *) gradient: -g w[t] at each target's class, 0 elsewhere."""
        w_t = self.class_target_weights(target, weight, ignore_index, g.dtype)
        gx = self.xp.zeros((target.shape[0], num_classes) + target.shape[1:], dtype=g.dtype)
        return self._add_at_targets(gx, target, ignore_index, -(g * w_t))

    def softmax_cross_entropy(self, logits: Array, target: Array, weight: Array | None,
                              ignore_index: int, label_smoothing: float) -> tuple[Array, Array]:
        """-> (losses (N, *), log_probs (N, C, *)), log_probs kept for the backward.

        With eps = label_smoothing, w_t = w[t] and C classes (PyTorch's definition):
        loss = (1 - eps) w_t (-log p_t) + eps / C * sum_c w_c (-log p_c), 0 where t == ignore_index."""
        log_probs = self.log_softmax(logits, 1)
        losses = self.nll_loss(log_probs, target, weight, ignore_index)
        if label_smoothing:
            losses *= 1 - label_smoothing
            smooth = self.xp.sum(self._class_weighted(log_probs, weight), axis=1)
            smooth = self.xp.where(target != ignore_index, smooth, 0)  # masked, as PyTorch: a row of -inf
            smooth *= -label_smoothing / logits.shape[1]
            losses += smooth
        return losses, log_probs

    def softmax_cross_entropy_backward(self, g: Array, log_probs: Array, target: Array,
                                       weight: Array | None, ignore_index: int,
                                       label_smoothing: float) -> Array:
        """(N, C, *) gradient w.r.t. the logits, g being that of each row's loss:
        g [(1 - eps) w_t (p - onehot_t) + eps / C (p sum_c w_c - w)], 0 on ignored rows."""
        xp = self.xp
        eps, n_classes = label_smoothing, log_probs.shape[1]
        g_pick = g * self.class_target_weights(target, weight, ignore_index, g.dtype)
        g_pick *= 1 - eps
        p_scale = g_pick
        if eps:
            g_smooth = g * (target != ignore_index)
            g_smooth *= eps / n_classes
            p_scale = g_pick + g_smooth * (n_classes if weight is None else xp.sum(weight))
        gx = xp.exp(log_probs)
        gx *= _on_row(p_scale)
        if eps:
            gx -= self._class_weighted(_on_row(g_smooth), weight)
        return self._add_at_targets(gx, target, ignore_index, -g_pick)

    # ------------------------------------------------------------------------ probability targets
    def _smoothed(self, target: Array, label_smoothing: float) -> Array:
        """(1 - eps) t + eps / C: PyTorch's label smoothing of probability targets."""
        if not label_smoothing:
            return target
        return target * (1 - label_smoothing) + label_smoothing / target.shape[1]

    def softmax_cross_entropy_probs(self, logits: Array, target: Array, weight: Array | None,
                                    label_smoothing: float) -> tuple[Array, Array]:
        """-> (losses (N, *), log_probs (N, C, *)) for target probabilities (N, C, *):
        loss = -sum_c w_c t'_c log p_c with t' the smoothed target."""
        log_probs = self.log_softmax(logits, 1)
        wt = self._class_weighted(self._smoothed(target, label_smoothing), weight)
        return -self.xp.sum(wt * log_probs, axis=1), log_probs

    def softmax_cross_entropy_probs_backward(self, g: Array, log_probs: Array, target: Array,
                                             weight: Array | None, label_smoothing: float,
                                             needs: tuple[bool, bool]
                                             ) -> tuple[Array | None, Array | None]:
        """-> (d/dlogits = g (p sum_c w_c t'_c - w t'), d/dtarget = -g (1 - eps) w log p)."""
        xp = self.xp
        g1 = _on_row(g)
        g_logits = g_target = None
        if needs[0]:
            wt = self._class_weighted(self._smoothed(target, label_smoothing), weight)
            g_logits = xp.exp(log_probs)
            g_logits *= xp.sum(wt, axis=1, keepdims=True)
            g_logits -= wt
            g_logits *= g1
        if needs[1]:
            g_target = self._class_weighted(log_probs * g1, weight)
            g_target *= label_smoothing - 1
        return g_logits, g_target

    # ------------------------------------------------------------------------ binary and regression
    def binary_cross_entropy(self, x: Array, t: Array) -> Array:
        """-(t log x + (1 - t) log(1 - x)) elementwise, each log clamped at -100 as PyTorch."""
        xp = self.xp
        log_x = xp.maximum(xp.log(x), _BCE_LOG_FLOOR)
        log_1mx = xp.maximum(xp.log1p(-x), _BCE_LOG_FLOOR)
        return -(log_1mx + t * (log_x - log_1mx))

    def binary_cross_entropy_backward(self, gy: Array, x: Array, t: Array, needs: tuple[bool, bool]
                                      ) -> tuple[Array | None, Array | None]:
        """-> (gy (x - t) / max(x (1 - x), 1e-12), -gy logit(x)): the target's gradient unclamped, as PyTorch's
        (+-inf at x = 0 or 1), the input's bounded."""
        xp = self.xp
        gx = gt = None
        if needs[0]:
            gx = gy * (x - t) / xp.maximum(x * (1 - x), _BCE_GRAD_EPS)
        if needs[1]:
            with np.errstate(divide="ignore", invalid="ignore"):
                gt = -gy * xp.log(x / (1 - x))
        return gx, gt

    def _log_sigmoid(self, x: Array) -> Array:
        """log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), finite for any finite x."""
        xp = self.xp
        return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))

    def bce_with_logits(self, x: Array, t: Array, pos_weight: Array | None) -> Array:
        """(1 - t) x - (1 + (pos_weight - 1) t) log sigmoid(x) elementwise: BCE of sigmoid(x), stable."""
        log_sig = self._log_sigmoid(x)
        if pos_weight is not None:
            log_sig *= (pos_weight - 1) * t + 1
        return (1 - t) * x - log_sig

    def bce_with_logits_backward(self, gy: Array, x: Array, t: Array, pos_weight: Array | None,
                                 needs: tuple[bool, bool]) -> tuple[Array | None, Array | None]:
        """-> (gy ((1 - t) - l sigmoid(-x)), gy (-x - (pos_weight - 1) log sigmoid(x))),
        l = 1 + (pos_weight - 1) t."""
        gx = gt = None
        if needs[0]:
            s = self.sigmoid(-x)
            if pos_weight is not None:
                s *= (pos_weight - 1) * t + 1
            gx = gy * ((1 - t) - s)
        if needs[1]:
            d = -x if pos_weight is None else -x - (pos_weight - 1) * self._log_sigmoid(x)
            gt = gy * d
        return gx, gt

    def mse_loss(self, x: Array, t: Array) -> Array:
        """(x - t)^2 elementwise (broadcasting)."""
        d = x - t
        d *= d
        return d

    def mse_loss_backward(self, gy: Array, x: Array, t: Array) -> Array:
        """d/dx = 2 gy (x - t); d/dt is its negative."""
        d = x - t
        d *= 2
        d *= gy
        return d

    def l1_loss(self, x: Array, t: Array) -> Array:
        """|x - t| elementwise (broadcasting)."""
        return self.xp.abs(x - t)

    def l1_loss_backward(self, gy: Array, x: Array, t: Array) -> Array:
        """d/dx = gy sign(x - t) (0 at x == t, as PyTorch); d/dt is its negative. PyTorch's sign of a NaN
        difference (a NaN, inf - inf) is 0, not NumPy's NaN."""
        with np.errstate(invalid="ignore"):
            d = x - t
        return gy * ((d > 0).astype(gy.dtype) - (d < 0).astype(gy.dtype))

    def smooth_l1_loss(self, x: Array, t: Array, beta: float) -> Array:
        """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = x - t); |d| for beta = 0."""
        a = self.xp.abs(x - t)
        if beta == 0:
            return a
        return self.xp.where(a < beta, 0.5 * a * a / beta, a - 0.5 * beta)

    def smooth_l1_loss_backward(self, gy: Array, x: Array, t: Array, beta: float) -> Array:
        """d/dx = gy clip(d / beta, -1, 1) (sign(d) for beta = 0); d/dt is its negative."""
        d = x - t
        return gy * (self.xp.sign(d) if beta == 0 else self.xp.clip(d / beta, -1, 1))

    def huber_loss(self, x: Array, t: Array, delta: float) -> Array:
        """0.5 d^2 where |d| <= delta, delta (|d| - 0.5 delta) elsewhere: delta * smooth_l1 at beta = delta."""
        y = self.smooth_l1_loss(x, t, delta)
        y *= delta
        return y

    def huber_loss_backward(self, gy: Array, x: Array, t: Array, delta: float) -> Array:
        """d/dx = gy clip(d, -delta, delta)."""
        return gy * self.xp.clip(x - t, -delta, delta)
