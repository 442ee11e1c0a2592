"""Seeding: one generator per device, as in PyTorch; ``default_generator`` is the CPU's as a ``Generator``."""
from __future__ import annotations

from typing import Any

from .backends import _SEED, get_backend, seed_all, thread_seed
from .device import device
from .generator import Generator

__all__ = ["default_generator", "initial_seed", "manual_seed", "seed"]


class _DefaultGenerator(Generator):
    """PyTorch's ``torch.default_generator``: the CPU's global stream (what the random functions draw from
    without ``generator=``) seen as a ``Generator``; seeding it seeds the CPU alone, as PyTorch's."""

    def __init__(self) -> None:
        super().__init__("cpu")

    def manual_seed(self, seed: int) -> Generator:
        super().manual_seed(seed)  # the type check and the modulo 2**64
        seed_all(self._seed, "cpu")
        return self

    def initial_seed(self) -> int:
        return initial_seed()

    def stream(self, on: device) -> Any:
        self._check_device(on)
        return get_backend("cpu").get_rng()

    def _drawn(self) -> Any:
        return get_backend("cpu").get_rng()


default_generator = _DefaultGenerator()


def manual_seed(seed: int) -> Generator:
    """Seed the CPU generator and that of every device, in use now or later (NumPy and CuPy draw different streams for
    one seed: tests comparing devices make data on the host and move it). Returns ``default_generator``, as PyTorch."""
    seed_all(int(seed) % 2**64)
    return default_generator


def seed() -> int:
    """Seed every generator from fresh entropy and return the seed used."""
    import secrets
    s = secrets.randbits(63)
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the calling thread's generator: in a DataLoader worker, the worker's seed (the
    iterator's base seed + worker id); elsewhere the last ``manual_seed`` or ``seed()`` (0 at import)."""
    own = thread_seed()
    return _SEED[0] if own is None else own
