"""The differentiable ops, by family. ``Tensor`` methods and ``minitensor.*`` functions call these."""
from __future__ import annotations

from .activation import log_softmax, relu, sigmoid, softmax, tanh
from .arithmetic import *  # noqa: F401,F403
from .cast import clone, to_device, to_dtype, view_dtype
from .indexing import *  # noqa: F401,F403
from .inplace import copy_, inplace
from .linalg import bmm, dot, linear, matmul, mm, mv
from .math import *  # noqa: F401,F403
from .math import abs, round  # noqa: F401  (names that shadow builtins, re-exported explicitly)
from .reduce import *  # noqa: F401,F403
from .reduce import all, any, max, min, sum  # noqa: F401
from .shape import *  # noqa: F401,F403
from .triangular import tril, triu
