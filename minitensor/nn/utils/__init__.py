"""``nn.utils``: gradient clipping, parameter/vector conversion, and ``rnn`` (padding and
packing sequences)."""
from __future__ import annotations

from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters

from . import rnn, stateless

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]
__all__ += ["rnn", "stateless"]
