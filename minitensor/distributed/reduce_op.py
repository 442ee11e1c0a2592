"""``ReduceOp``: PyTorch's reduction names for the collectives, and the dtype rules every engine shares.

Booleans reduce as NCCL reduces them in PyTorch: SUM is a logical or (MAX), PRODUCT a logical and (MIN), AVG
is refused. The bitwise ops need integers or booleans.
"""
from __future__ import annotations

import enum

import numpy as np


class ReduceOp:
    """``ReduceOp.SUM``, ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR``, ``AVG`` (members of
    ``ReduceOp.RedOpType``, as in PyTorch). ``PREMUL_SUM`` exists, as in PyTorch, and is refused by every
    engine here."""

    class RedOpType(enum.Enum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


RedOpType = ReduceOp.RedOpType
BITWISE = (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR)


def effective_op(op: object, dtype: np.dtype, engine: str) -> RedOpType:
    """The op the engine runs for ``op`` on arrays of ``dtype`` (booleans: SUM -> MAX, PRODUCT -> MIN), or
    PyTorch's error for a pairing it refuses."""
    if not isinstance(op, RedOpType):
        raise TypeError(f"op must be a ReduceOp (ReduceOp.SUM, AVG, PRODUCT, MIN, MAX...), got {op!r}")
    if op is RedOpType.PREMUL_SUM:
        raise ValueError(f"Cannot use ReduceOp.PREMUL_SUM with {engine}")
    if op in BITWISE and dtype.kind not in "iub":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if dtype.kind == "b":
        if op is RedOpType.AVG:
            raise TypeError("Cannot use ReduceOp.AVG with boolean inputs")
        return {RedOpType.SUM: RedOpType.MAX, RedOpType.PRODUCT: RedOpType.MIN}.get(op, op)
    return op
