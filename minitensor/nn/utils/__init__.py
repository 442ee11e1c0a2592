"""``nn.utils``: gradient clipping, parameter/vector conversion, ``rnn`` (padding and packing sequences),
``parametrize`` / ``parametrizations`` (tensors computed from unconstrained originals), the hook-based
``weight_norm`` / ``spectral_norm``, ``prune`` (masks on a module's tensors), ``fusion`` (BatchNorm folded
into the layer before it)."""
from __future__ import annotations

from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .init import skip_init
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

from . import fusion, parametrizations, parametrize, prune, rnn, stateless

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]
__all__ += ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]
__all__ += ["remove_spectral_norm", "remove_weight_norm", "spectral_norm", "weight_norm"]
__all__ += ["fusion", "parametrizations", "parametrize", "prune", "rnn", "stateless"]
__all__ += ["clip_grad_norm", "clip_grads_with_norm_", "get_total_norm", "skip_init"]
