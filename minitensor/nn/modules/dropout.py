"""``Dropout``: active in training mode, the identity in eval mode."""
from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class Dropout(Module):
    """While training, zero each element with probability ``p`` and scale the rest by 1 / (1 - p)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """While training, zero whole channels of (N, C, L) or (C, L) with probability ``p``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """While training, zero whole channels of (N, C, H, W) with probability ``p``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """While training, zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability ``p``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """While training, alpha dropout (``F.alpha_dropout``) for SELU networks; the identity in eval mode."""

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """While training, alpha dropout of whole channels (``F.feature_alpha_dropout``)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
