"""The random source behind shuffling and ``random_split``.

PyTorch takes a ``torch.Generator``; minitensor takes any of:

- a ``minitensor.Generator`` (PyTorch's), on the CPU: its stream, advanced as it is drawn from;
- ``None``: a fresh NumPy generator seeded from minitensor's global CPU generator at each use, so
  ``minitensor.manual_seed(s)`` makes every shuffle reproducible, as ``torch.manual_seed`` does;
- an ``int``: the seed of a private ``np.random.default_rng(seed)`` (two loaders given the same seed
  shuffle identically, epoch after epoch);
- a ``np.random.Generator`` (or any object with its ``permutation`` and ``integers`` methods), used and
  advanced as it is.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...creation import randint
from ...device import cpu
from ...generator import Generator

GeneratorLike = Any  # None | int | np.random.Generator


def resolve_generator(generator: GeneratorLike) -> Any:
    """The object to draw from: None stays None (draw per use), an int becomes a seeded NumPy Generator."""
    if generator is None or isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, Generator):
        return generator.stream(cpu)  # PyTorch's error for a CUDA generator: the data utilities draw on the host
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return np.random.default_rng(int(generator))
    if callable(getattr(generator, "permutation", None)) and callable(getattr(generator, "integers", None)):
        return generator
    raise TypeError(f"generator must be None, a minitensor.Generator, an int seed or a np.random.Generator, got "
                    f"{type(generator).__name__}")


def active_generator(resolved: Any) -> Any:
    """``resolved`` itself, or for None a NumPy Generator seeded from minitensor's global CPU generator."""
    if resolved is not None:
        return resolved
    seed = int(randint(0, 2**62, ()).item())
    return np.random.default_rng(seed)
