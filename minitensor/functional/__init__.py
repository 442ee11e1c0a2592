"""The differentiable ops, by family. ``Tensor`` methods and ``minitensor.*`` functions call these."""
from __future__ import annotations

from .activation import log_softmax, relu, sigmoid, softmax, tanh
from .arithmetic import *  # noqa: F401,F403
from .cumulative import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .moments import std, std_mean, var, var_mean  # noqa: F401  (var_mean, std_mean in ADDED_OPS)
from .cast import clone, to_device, to_dtype, view_dtype
from .indexing import *  # noqa: F401,F403
from .along_axis import *  # noqa: F401,F403
from .inplace import copy_, inplace
from .linalg import bmm, dot, linear, matmul, mm, mv
from .math import *  # noqa: F401,F403
from .math import abs, round  # noqa: F401  (names that shadow builtins, re-exported explicitly)
from .reduce import *  # noqa: F401,F403
from .reduce import all, any, max, min, sum  # noqa: F401
from .shape import *  # noqa: F401,F403
from .triangular import tril, triu
from .factorization import cholesky, pinverse
from .solve import det, inverse, logdet, matrix_power, torch_slogdet as slogdet
from .linalg import einsum
from .products import (addbmm, addmm, addmv, baddbmm, block_diag, chain_matmul, cross, ger, inner, kron, outer,
                       tensordot, trace, vdot)
from .reorder import as_strided, meshgrid, repeat_interleave, roll, rot90
from .scatter import argwhere, masked_select, nonzero, scatter, scatter_add, scatter_reduce, take_along_dim
from .triangular import diag, diag_embed, diagonal
from .scatter import (index_add, index_copy, index_fill, masked_scatter, put, select_scatter, slice_scatter,
                      take)
from .stacking import (atleast_1d, atleast_2d, atleast_3d, broadcast_shapes, broadcast_tensors, column_stack, dsplit,
                       dstack, fliplr, flipud, hsplit, hstack, moveaxis, ravel, row_stack, select, swapdims,
                       tensor_split, tile, vsplit, vstack)
from .triangular import diagonal_scatter
from .factorization import torch_qr as qr, torch_svd as svd
from .solve import cholesky_inverse, cholesky_solve
from .lu_decomposition import lu_unpack, torch_lu as lu, torch_lu_solve as lu_solve
from .matrix_functions import matrix_exp
from .householder import geqrf, orgqr
from .norms import torch_norm as norm  # torch.norm: reduce.norm's vector norms, and "nuc" through linalg
from . import sparse  # noqa: F401  (sparse COO tensors: minitensor.sparse_coo_tensor, minitensor.sparse.mm)
from .sparse import layout, sparse_coo, sparse_coo_tensor, strided  # noqa: F401
from .sparse import (sparse_bsc, sparse_bsc_tensor, sparse_bsr, sparse_bsr_tensor,  # noqa: F401  (they raise)
                     sparse_compressed_tensor, sparse_csc, sparse_csc_tensor, sparse_csr, sparse_csr_tensor)
from .sparse_products import spmm  # noqa: F401
from . import sparse_ops  # noqa: F401  (the sparse kernels of +, -, *, /, **, neg, permute)
from . import sparse_unary  # noqa: F401  (the sparse kernels of abs, sqrt, sin, relu, sign, isnan...)
from .searching import (bincount, bucketize, count_nonzero, histc, isin, searchsorted, unique,  # noqa: F401
                        unique_consecutive)
from .order_stats import kthvalue, median, mode, nanmedian, nanquantile, quantile
from . import random  # noqa: F401  (the in-place samplers' bodies, for Tensor's methods)
from .random import normal, poisson
from .distance import cdist
from .reorder import cartesian_prod
from .scatter import index_put
from .special import *  # noqa: F401,F403  (lgamma, digamma, polygamma, i0, sinc, xlogy, logit)

__all__ = ["abs", "add", "all", "amax", "amin", "any", "argmax", "argmin", "bitwise_and", "bitwise_not", "bitwise_or",
           "bitwise_xor", "bmm", "broadcast_to", "cat", "ceil", "chunk", "clamp", "clip", "clone", "concat",
           "concatenate", "copy_", "cos", "div", "dot", "eq", "exp", "expand", "expm1", "flatten", "flip", "floor",
           "floor_divide", "gather", "ge", "getitem", "gt", "index_select", "inplace", "isfinite", "isinf", "isnan",
           "le", "linear", "log", "log10", "log1p", "log2", "log_softmax", "logical_and", "logical_not", "logical_or",
           "logical_xor", "logsumexp", "lt", "masked_fill", "matmul", "max", "maximum", "mean", "min", "minimum", "mm",
           "movedim", "mul", "mv", "narrow", "ne", "neg", "norm", "pad", "permute", "pow", "prod", "reciprocal",
           "relu", "remainder", "repeat", "reshape", "round", "rsqrt", "setitem", "sigmoid", "sign", "sin", "softmax",
           "split", "sqrt", "square", "squeeze", "stack", "std", "sub", "sum", "swapaxes", "tanh", "to_device",
           "to_dtype", "transpose", "tril", "triu", "true_divide", "unbind", "unflatten", "unsqueeze", "var",
           "view_dtype", "where"]
# The ops added for PyTorch programs (issue #14); minitensor/__init__.py re-exports this list too.
ADDED_OPS = ["acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "asin", "asinh",
             "atan", "atan2", "atanh", "copysign", "cosh", "erf", "erfc", "erfinv", "exp2", "fix", "fmod", "frac",
             "hypot", "lerp", "logaddexp", "logaddexp2", "sinh", "tan", "trunc", "allclose", "bitwise_left_shift",
             "bitwise_right_shift", "equal", "isclose", "cummax", "cummin", "cumprod", "cumsum", "logcumsumexp",
             "argsort", "msort", "sort", "topk", "std_mean", "var_mean"]
__all__ += ADDED_OPS

__all__ += ["cholesky", "det", "inverse", "logdet", "matrix_power", "pinverse", "slogdet"]
__all__ += ["einsum"]
__all__ += ["argwhere", "as_strided", "diag", "diag_embed", "diagonal", "masked_select", "meshgrid", "nonzero",
            "repeat_interleave", "roll", "rot90", "scatter", "scatter_add", "scatter_reduce", "take_along_dim"]
__all__ += ["addbmm", "addmm", "addmv", "baddbmm", "block_diag", "chain_matmul", "cross", "ger", "inner", "kron",
            "outer", "tensordot", "trace", "vdot"]
__all__ += ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "column_stack",
            "diagonal_scatter", "dsplit", "dstack", "fliplr", "flipud", "hsplit", "hstack", "index_add", "index_copy",
            "index_fill", "masked_scatter", "moveaxis", "put", "ravel", "row_stack", "select", "select_scatter",
            "slice_scatter", "swapdims", "take", "tensor_split", "tile", "vsplit", "vstack"]
__all__ += ["cholesky_inverse", "cholesky_solve", "qr", "svd"]
__all__ += ["geqrf", "lu", "lu_solve", "lu_unpack", "matrix_exp", "orgqr"]
__all__ += ["layout", "sparse_coo", "sparse_coo_tensor", "spmm", "strided"]
__all__ += ["sparse_bsc", "sparse_bsc_tensor", "sparse_bsr", "sparse_bsr_tensor", "sparse_compressed_tensor",
            "sparse_csc", "sparse_csc_tensor", "sparse_csr", "sparse_csr_tensor"]
from .distance import cosine_similarity, pairwise_distance, pdist  # noqa: E402  (also minitensor.<name>)
__all__ += ["cosine_similarity", "pairwise_distance", "pdist"]
__all__ += ["bincount", "bucketize", "count_nonzero", "histc", "isin", "searchsorted", "unique",
            "unique_consecutive"]
__all__ += ["kthvalue", "median", "mode", "nanmedian", "nanquantile", "quantile"]
__all__ += ["normal", "poisson"]
from .random import binomial  # noqa: E402
__all__ += ["binomial"]
__all__ += ["cdist", "cartesian_prod", "trapezoid", "trapz", "cumulative_trapezoid"]
__all__ += ["index_put", "signbit"]
# PyTorch's pointwise ops, NaN-aware reductions and special functions that programs reach for.
POINTWISE_OPS = ["addcdiv", "addcmul", "clamp_max", "clamp_min", "diff", "digamma", "float_power", "heaviside", "i0",
                 "lgamma", "logit", "nan_to_num", "nanmean", "nansum", "polygamma", "sinc", "xlogy"]
__all__ += POINTWISE_OPS
# PyTorch's other names and smaller pointwise ops (absolute, divide, fmax, gcd, frexp, igamma...).
from .aliases import *  # noqa: F401,F403,E402
from .aliases import __all__ as _aliases_all  # noqa: E402
from .pointwise import *  # noqa: F401,F403,E402
from .pointwise import __all__ as _pointwise_all  # noqa: E402
from .special import igamma, igammac, mvlgamma  # noqa: E402
from .activation import celu, celu_, hardshrink, prelu, rrelu, rrelu_, selu, selu_, threshold, threshold_  # noqa: E402
from .norms import renorm  # noqa: E402
__all__ += [*_aliases_all, *_pointwise_all, "igamma", "igammac", "mvlgamma", "celu", "celu_", "hardshrink", "prelu",
            "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_", "renorm"]
from .conjugation import *  # noqa: F401,F403,E402
from .conjugation import __all__ as _conjugation_all  # noqa: E402
__all__ += _conjugation_all
from .statistics import aminmax, corrcoef, cov, gradient, histogram, histogramdd  # noqa: E402
__all__ += ["aminmax", "corrcoef", "cov", "gradient", "histogram", "histogramdd"]
from .arrange import (addr, combinations, diagflat, index_reduce, split_with_sizes, t, unravel_index,  # noqa: E402
                      vander)
__all__ += ["addr", "combinations", "diagflat", "index_reduce", "split_with_sizes", "t", "unravel_index", "vander"]
from .distance import dist  # noqa: E402  (torch.dist; not in distance's __all__, which nn.functional takes)
from .searching import nonzero_static  # noqa: E402
from .triangular import fill_diagonal  # noqa: E402,F401  (Tensor.fill_diagonal_'s body; no torch.fill_diagonal)
from .view_copies import *  # noqa: F401,F403,E402  (view_copy, permute_copy..., narrow_copy, unsafe_split...)
from .view_copies import __all__ as _view_copies_all  # noqa: E402
__all__ += ["dist", "nonzero_static", *_view_copies_all]
