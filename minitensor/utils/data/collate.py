"""``default_collate``: a list of samples -> one batch, with PyTorch's rules; ``default_convert``: one sample's
NumPy arrays -> Tensors (the DataLoader's default with ``batch_size=None``).

=====================================  ============================================================
sample element                         batch element
=====================================  ============================================================
Tensor of shape S                      Tensor (B, *S) (``minitensor.stack``)
NumPy array of shape S                 Tensor (B, *S), same dtype
NumPy scalar                           Tensor (B,), same dtype
Python int / bool / float              Tensor (B,) of int64 / bool / **float64** (as PyTorch)
str, bytes                             the list of them
Mapping                                same mapping type, each key collated
namedtuple                             same namedtuple, each field collated
tuple / list                           a **list** of collated positions (sequences must match in length)
=====================================  ============================================================
"""
from __future__ import annotations

import collections.abc
import copy
from typing import Any, Sequence

import numpy as np

from ... import functional as _F
from ...dtypes import float64
from ...tensor import Tensor
from ...creation import from_numpy, tensor

_UNSUPPORTED = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                "found {}")


def default_collate(batch: Sequence[Any]) -> Any:
    """Merge a list of B samples into a batch (see the module docstring for the rules)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _F.stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        if elem.dtype.kind in "USOV":
            raise TypeError(_UNSUPPORTED.format(elem.dtype))
        return from_numpy(np.stack(batch) if isinstance(elem, np.ndarray) else np.array(batch))
    if isinstance(elem, (bool, int)):
        return tensor(list(batch))
    if isinstance(elem, float):
        return tensor(list(batch), dtype=float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_type(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(column)) for column in zip(*batch)]
        return columns if isinstance(elem, tuple) else _same_type(elem, columns)
    raise TypeError(_UNSUPPORTED.format(type(elem)))


def _same_type(elem: Any, collated: Any) -> Any:
    """``collated`` rebuilt as ``type(elem)`` when that type can be built from it, else as it is."""
    try:
        return type(elem)(collated)
    except TypeError:
        return collated


def default_convert(data: Any) -> Any:
    """``data`` with every NumPy array and NumPy scalar made a Tensor (string and object arrays kept), through
    mappings, named tuples, tuples (-> lists, as PyTorch) and other sequences; anything else unchanged."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        return data if data.dtype.kind in "USOV" else from_numpy(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            if isinstance(data, collections.abc.MutableMapping):  # a copy keeps the mapping's own attributes
                clone = copy.copy(data)
                clone.update(converted)
                return clone
            return type(data)(converted)  # type: ignore[call-arg]
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # PyTorch's backwards-compatible list
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        items = [default_convert(d) for d in data]
        try:
            if isinstance(data, collections.abc.MutableSequence):
                copied: Any = copy.copy(data)
                copied[:] = items
                return copied
            return type(data)(items)  # type: ignore[call-arg]
        except TypeError:
            return items
    return data
