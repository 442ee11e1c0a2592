"""``Embedding``: a lookup table of ``num_embeddings`` vectors of size ``embedding_dim``."""
from __future__ import annotations

from typing import Any

from ...autograd import no_grad
from ...tensor import Tensor
from ...creation import empty
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module
from .utils import changed_options


class Embedding(Module):
    """Integer indices of any shape -> input.shape + (embedding_dim,) rows of ``weight``.

    Init: N(0, 1), with the ``padding_idx`` row zeroed (that row also gets no gradient).
    ``Embedding.from_pretrained(t)`` wraps an existing table (frozen by default).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Padding_idx must be within num_embeddings ({num_embeddings}), got {padding_idx}")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Shape of weight {tuple(_weight.shape)} does not match num_embeddings and "
                                 f"embedding_dim ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight.detach(), requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}" + changed_options(self, {
            "padding_idx": None, "max_norm": None, "norm_type": 2, "scale_grad_by_freq": False, "sparse": False})

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding whose weight shares ``embeddings`` (2-D); ``freeze`` turns off its gradient."""
        if embeddings.dim() != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings, _freeze=freeze)
