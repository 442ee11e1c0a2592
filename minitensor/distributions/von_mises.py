"""``VonMises``: the circular normal, density exp(kappa cos(x - loc)) / (2 pi I0(kappa)) on [-pi, pi)
(PyTorch's: its polynomial log-Bessel approximations, and Best & Fisher's rejection sampler in float64)."""
from __future__ import annotations

import math
from typing import Sequence

from ..autograd import no_grad
from ..creation import rand, zeros
from ..dtypes import bool as bool_, float64
from ..functional import acos, where
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .distribution import _Located
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1-9.8.4 (relative error < 2e-7): I0, I1 for x < 3.75 in (x / 3.75)^2, and
# sqrt(x) exp(-x) I0, I1 for x >= 3.75 in 3.75 / x.
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_COEF_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
                  -0.01647633, 0.00392377]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_COEF_LARGE = [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
                  0.01787654, -0.00420059]
MAX_REJECTION_ROUNDS = 1000  # each round accepts >= 65% of what is left: 1000 rounds never run out


def _eval_poly(y: Tensor, coef: list[float]) -> Tensor:
    """sum_i coef[i] y^i by Horner's rule."""
    result: Tensor | float = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    assert isinstance(result, Tensor)
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """log I_order(x), order 0 or 1, for x > 0."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    small = _eval_poly((x / 3.75).pow(2), _I1_COEF_SMALL if order else _I0_COEF_SMALL)
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _I1_COEF_LARGE if order else _I0_COEF_LARGE).log()
    return where(x < 3.75, small.log(), large)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor, shape: Size) -> Tensor:
    """Best & Fisher (1979): all draws propose at once each round; the ones not yet accepted take the round's
    accepted proposals. A bounded loop over rounds, none over elements."""
    x = zeros(shape, dtype=loc.dtype, device=loc.device)
    done = zeros(shape, dtype=bool_, device=loc.device)
    for _ in range(MAX_REJECTION_ROUNDS):
        if bool(done.all()):
            break
        u1, u2, u3 = rand((3, *shape), dtype=loc.dtype, device=loc.device).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        take = accept & ~done
        x = where(take, (u3 - 0.5).sign() * acos(f), x)
        done = done | accept
    else:
        raise RuntimeError("VonMises sampling did not converge")
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(_Located):
    """``loc`` (the mean direction) and ``concentration`` kappa > 0; mean and mode are loc, the circular
    variance 1 - I1(kappa) / I0(kappa)."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Tensor | float, concentration: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        """r = (1 + rho^2) / (2 rho), rho = (tau - sqrt(2 tau)) / (2 kappa), tau = 1 + sqrt(1 + 4 kappa^2) (in
        float64; 1 / kappa + kappa below 1e-5, where rho's form cancels)."""
        kappa = self.concentration.to(float64)
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x = _rejection_sample(self.loc.to(float64), self.concentration.to(float64), self._proposal_r, shape)
        return x.to(self.loc.dtype)

    @lazy_property
    def variance(self) -> Tensor:
        k = self.concentration
        return 1 - (_log_modified_bessel_fn(k, order=1) - _log_modified_bessel_fn(k, order=0)).exp()
