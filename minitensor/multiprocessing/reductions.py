"""How tensors cross process boundaries in ``minitensor.multiprocessing`` (PyTorch's
``torch.multiprocessing.reductions``): registered with ``ForkingPickler``, the pickler behind ``Queue``,
``Pipe`` and the arguments of a spawned ``Process``. A CPU tensor in shared memory travels as the name of
its block (the receiver maps the same memory: writes are seen by both); any other tensor travels as a copy
of its values. A tensor that is part of a graph is refused, as PyTorch refuses it."""
from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

import numpy as np

from ..device import device
from ..tensor import Tensor, _wrap
from . import sharing

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
             "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
             "before serializing (e.g., putting it on the queue).")


def reduce_tensor(t: Tensor) -> tuple:
    if t.requires_grad and t.grad_fn is not None:
        raise RuntimeError(_NON_LEAF)
    block = sharing.block_of(t.array) if t.device.type == "cpu" else None
    if block is not None:
        offset, strides = sharing.location(t.array, block)
        return rebuild_shared, (type(t), block.name, t.array.shape, t.array.dtype.str, offset, strides,
                                t.requires_grad)
    return rebuild_copy, (type(t), t.device.backend.to_numpy(t.array), str(t.device), t.requires_grad)


def rebuild_shared(cls: type, name: str, shape: tuple[int, ...], dtype: str, offset: int,
                   strides: tuple[int, ...], requires_grad: bool) -> Tensor:
    return _as(cls, _wrap(sharing.attach(name, shape, dtype, offset, strides), device("cpu")), requires_grad)


def rebuild_copy(cls: type, values: np.ndarray, where: str, requires_grad: bool) -> Tensor:
    dev = device(where)
    return _as(cls, _wrap(dev.backend.asarray(values), dev), requires_grad)


def _as(cls: type, t: Tensor, requires_grad: bool) -> Tensor:
    if cls is not Tensor:  # nn.Parameter: PyTorch sends a Parameter as a Parameter
        return cls(t, requires_grad)
    t.requires_grad = requires_grad
    return t


def init_reductions() -> None:
    """Register the reductions with ``ForkingPickler`` (PyTorch's name; done on import)."""
    from ..nn.parameter import Parameter
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
