"""Autocast's op policy, as PyTorch's: one table per device type from a ``Function`` (by class name) to what
autocast does with its floating inputs. ``Function.apply`` consults it (``autocast_mode.cast_inputs``) while
autocast is on for the inputs' device.

- ``LOWER``: GEMM-based ops run in the autocast dtype (float16 / bfloat16): inputs of float32 are cast down.
- ``FP32``: ops that need float32's range or precision run in float32: float16 / bfloat16 inputs are cast up.
- ``PROMOTE``: ops of several tensors run in the widest floating dtype among them.
Ops not in the table (relu, pooling, views, most elementwise ops...) run in whatever dtype they receive.
float64 inputs are never cast, as in PyTorch. RNN cells are made of ``Linear``/``MatMul`` and follow them.

CUDA's FP32 list is long (pointwise exp/log/pow, softmax, the norms, sums and scans); the CPU's is short
(the losses, cdist, inverse, prod, trace, the reflect / replicate pads): under ``autocast("cpu")`` softmax,
layer_norm, group_norm, exp or sum of a bfloat16 tensor stay bfloat16, as PyTorch 2.13 gives them. ``mv``
and ``addmv`` are lowered on CUDA only and ``dot`` on neither (PyTorch's lists), though ``matmul`` of the
same shapes is lowered on both.
"""
from __future__ import annotations

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"


# Keys for ops composed of other ops (no ``Function`` of their own): their front ends cast their inputs by
# ``cast_early(Key, ...)`` first, so that the policy reads the op's name, as PyTorch's does, and not those
# of the ops it is made of.
class Prelu:
    """``prelu``: where(x > 0, x, weight * x)."""


class Trace:
    """``trace``: diagonal(x).sum()."""


class ReflectionPad:
    """``pad(mode="reflect")`` of the last 1 or 2 dims (PyTorch's 3-d reflection_pad3d is not on the list)."""


class ReplicationPad:
    """``pad(mode="replicate")`` of the last 1, 2 or 3 dims."""


class Linalg:
    """The linalg ops on the CPU's float32 list: solve, cholesky (and its solve / inverse), eigh, eigvalsh,
    svd, svdvals, qr, matrix_rank, lstsq, cond, pinverse, cholesky_ex, householder_product (orgqr), geqrf (and
    inv_ex, by inv's rule); they refuse 16-bit matrices outside autocast.
    (det, slogdet, solve_triangular and linalg.pinv are not on it: PyTorch refuses 16 bits there too.)"""


class MarginLoss:
    """The margin_ranking, hinge_embedding, cosine_embedding, soft_margin, multi_margin, multilabel_margin,
    triplet_margin and poisson_nll losses (on both devices' float32 lists)."""


class Pool3d:
    """avg_pool3d, max_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d, fractional_max_pool2d / 3d and
    max_unpool2d / 3d (on the CPU's float32 list)."""


class Quantile:
    """quantile and nanquantile (on the CPU's float32 list; they refuse 16-bit inputs outside autocast)."""


COMPOSED = (Prelu, Trace, ReflectionPad, ReplicationPad, Linalg, MarginLoss, Pool3d, Quantile)


_COMMON: dict[str, str] = {
    # matmul, mm, bmm, addmm/baddbmm/addbmm (their input too: products.py), linear, RNN cells,
    # conv (conv1d is conv2d), attention, einsum
    "MatMul": LOWER, "Linear": LOWER, "Conv2d": LOWER, "ConvTranspose2d": LOWER,
    "ScaledDotProductAttention": LOWER, "Einsum": LOWER, "Prelu": LOWER,
    # the losses
    "CrossEntropy": FP32, "NLLLoss": FP32, "CrossEntropyProbs": FP32,
    "MSELoss": FP32, "L1Loss": FP32, "BinaryCrossEntropy": FP32, "BinaryCrossEntropyWithLogits": FP32,
    "SmoothL1Loss": FP32, "HuberLoss": FP32,
    "KLDiv": FP32, "PDist": FP32,  # kl_div's pointwise terms; pdist's norms (the other added losses compose ops)
    "CTCLoss": FP32,
    "Prod": FP32, "MarginLoss": FP32,
    # several tensors: the widest dtype
    "Add": PROMOTE, "Sub": PROMOTE, "Mul": PROMOTE, "Div": PROMOTE, "Atan2": PROMOTE, "Cat": PROMOTE,
    "Stack": PROMOTE, "Where": PROMOTE, "Maximum": PROMOTE, "Minimum": PROMOTE,
}

POLICY: dict[str, dict[str, str]] = {
    "cuda": {
        **_COMMON, "Mv": LOWER,
        # pointwise maths that over- or underflows in 16 bits
        "Exp": FP32, "Expm1": FP32, "Log": FP32, "Log2": FP32, "Log10": FP32, "Log1p": FP32, "Pow": FP32,
        "Reciprocal": FP32, "Rsqrt": FP32, "Sinh": FP32, "Cosh": FP32, "Tan": FP32, "Asin": FP32,
        "Acos": FP32, "Erfinv": FP32, "Softplus": FP32,
        "Softmax": FP32, "LogSoftmax": FP32,
        # norms (group_norm is made of these ops)
        "LayerNorm": FP32, "BatchNorm": FP32, "PNorm": FP32,
        # reductions and scans that need range
        "Sum": FP32, "CumSum": FP32, "CumProd": FP32, "LogSumExp": FP32, "LogCumSumExp": FP32,
    },
    "cpu": {**_COMMON, "Cdist": FP32, "Inv": FP32, "Trace": FP32, "ReflectionPad": FP32, "ReplicationPad": FP32,
            "Linalg": FP32, "Pool3d": FP32, "Quantile": FP32},
}
