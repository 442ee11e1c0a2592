"""Normalisation: batch norm and layer norm, forward with saved statistics and fused backward.

Both save the input x with its mean and inverse standard deviation (small arrays) and rebuild
x_hat = (x - mean) * invstd in backward, rather than keeping a second input-sized array alive.
"""
from __future__ import annotations

import math
import string
from typing import Any

Array = Any


def _channels(a: Array, x: Array) -> Array:
    """A (C,) array shaped (1, C, 1, ...) and cast to x's dtype, to broadcast against x (N, C, *)."""
    return a.astype(x.dtype, copy=False).reshape((1, -1) + (1,) * (x.ndim - 2))


class NormOps:
    xp: Any

    def _dot(self, a: Array, b: Array, keep: tuple[int, ...]) -> Array:
        """sum(a * b) over every axis not in ``keep`` (einsum: no a * b temporary; views welcome)."""
        if a.dtype.kind == "V":  # ml_dtypes' bfloat16: NumPy's einsum has no loop for it; sum in float32
            return self._dot(a.astype(self.xp.float32), b.astype(self.xp.float32), keep).astype(a.dtype)
        letters = string.ascii_letters[:a.ndim]
        kept = "".join(letters[i] for i in keep)
        return self.xp.einsum(f"{letters},{letters}->{kept}", a, b)

    def _normalize(self, x: Array, axes: tuple[int, ...], eps: float
                   ) -> tuple[Array, Array, Array, Array]:
        """-> (x_hat, mean, var, invstd) over ``axes`` (statistics keep their dims), with the biased
        variance (two passes, so no cancellation): invstd = 1 / sqrt(mean((x - mean)^2) + eps)."""
        xp = self.xp
        mean = xp.mean(x, axis=axes, keepdims=True)
        x_hat = x - mean
        kept = tuple(i for i in range(x.ndim) if i not in axes)
        count = math.prod(x.shape[i] for i in axes)  # not x.size // mean.size: either may be 0
        var = (self._dot(x_hat, x_hat, kept) / count).reshape(mean.shape)
        invstd = 1 / xp.sqrt(var + eps)
        x_hat *= invstd
        return x_hat, mean, var, invstd

    @staticmethod
    def _affine_(y: Array, weight: Array | None, bias: Array | None) -> Array:
        """y * weight + bias in place (either may be None)."""
        if weight is not None:
            y *= weight
        if bias is not None:
            y += bias
        return y

    def batch_norm_forward(self, x: Array, weight: Array | None, bias: Array | None,
                           running_mean: Array | None, running_var: Array | None, training: bool,
                           momentum: float, eps: float) -> tuple[Array, Array, Array]:
        """-> (y, mean (C,), invstd (C,)) for x (N, C, *), normalising each channel over N and *.

        Training uses the batch statistics and moves the running ones toward them in place:
        r <- (1 - momentum) r + momentum s, with the unbiased batch variance (PyTorch's rule).
        Evaluation uses the running statistics."""
        xp = self.xp
        w = None if weight is None else _channels(weight, x)
        b = None if bias is None else _channels(bias, x)
        if not training:
            invstd = 1 / xp.sqrt(running_var + eps)  # type: ignore[operator]
            y = x - _channels(running_mean, x)
            y *= _channels(invstd, x)
            return self._affine_(y, w, b), running_mean, invstd
        axes = (0,) + tuple(range(2, x.ndim))
        y, mean, var, invstd = self._normalize(x, axes, eps)
        mean, invstd = mean.reshape(-1), invstd.reshape(-1)
        if running_mean is not None:
            running_mean *= 1 - momentum
            running_mean += momentum * mean
        if running_var is not None:
            count = x.size // x.shape[1]
            running_var *= 1 - momentum
            running_var += var.reshape(-1) * (momentum * count / (count - 1))
        return self._affine_(y, w, b), mean, invstd

    def batch_norm_backward(self, gy: Array, x: Array, weight: Array | None, mean: Array,
                            invstd: Array, training: bool, needs: tuple[bool, bool, bool]
                            ) -> tuple[Array | None, Array | None, Array | None]:
        """-> (gx, gweight, gbias), None where ``needs`` is False. With M values per channel:
        gbias = sum(gy), gweight = sum(gy x_hat) and, in training,
        gx = w invstd (gy - gbias / M - x_hat gweight / M); in evaluation gx = w invstd gy."""
        xp = self.xp
        axes = (0,) + tuple(range(2, x.ndim))
        inv = _channels(invstd, x)
        scale = inv if weight is None else inv * _channels(weight, x)
        need_stats = training and needs[0]
        g_sum = xp.sum(gy, axis=axes) if (needs[2] or need_stats) else None
        x_hat = g_xhat_sum = None
        if needs[1] or need_stats:
            x_hat = x - _channels(mean, x)
            x_hat *= inv
            g_xhat_sum = self._dot(gy, x_hat, (1,))
        gx = None
        if needs[0]:
            if training:
                count = x.size // x.shape[1]
                x_hat *= _channels(g_xhat_sum / count, x)
                gx = gy - _channels(g_sum / count, x)
                gx -= x_hat
                gx *= scale
            else:
                gx = gy * scale
        return gx, (g_xhat_sum if needs[1] else None), (g_sum if needs[2] else None)

    def layer_norm_forward(self, x: Array, weight: Array | None, bias: Array | None,
                           normalized_ndim: int, eps: float) -> tuple[Array, Array, Array]:
        """-> (y, mean, invstd) normalising over the last ``normalized_ndim`` dims of x; weight and
        bias have those dims' shape; mean and invstd keep x's ndim with size 1 there."""
        axes = tuple(range(x.ndim - normalized_ndim, x.ndim))
        y, mean, _, invstd = self._normalize(x, axes, eps)
        return self._affine_(y, weight, bias), mean, invstd

    def layer_norm_backward(self, gy: Array, x: Array, weight: Array | None, mean: Array,
                            invstd: Array, normalized_ndim: int, needs: tuple[bool, bool, bool]
                            ) -> tuple[Array | None, Array | None, Array | None]:
        """-> (gx, gweight, gbias). With g = gy w and means over the normalised dims:
        gx = invstd (g - mean(g) - x_hat mean(g x_hat)); gweight, gbias sum gy x_hat, gy over the rest."""
        xp = self.xp
        lead = tuple(range(x.ndim - normalized_ndim))
        norm = tuple(range(x.ndim - normalized_ndim, x.ndim))
        x_hat = x - mean
        x_hat *= invstd
        gw = self._dot(gy, x_hat, norm) if needs[1] else None
        gb = xp.sum(gy, axis=lead) if needs[2] else None
        gx = None
        if needs[0]:
            gx = gy.copy() if weight is None else gy * weight  # g, then gx in the same memory
            count = math.prod(x.shape[-normalized_ndim:])
            x_hat *= (self._dot(gx, x_hat, lead) / count).reshape(mean.shape)
            gx -= xp.mean(gx, axis=norm, keepdims=True)
            gx -= x_hat
            gx *= invstd
        return gx, gw, gb
