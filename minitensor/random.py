"""Seeding: one generator per device, as in PyTorch."""
from __future__ import annotations

from .backends import _SEED, seed_all, thread_seed

__all__ = ["initial_seed", "manual_seed", "seed"]


def manual_seed(seed: int) -> None:
    """Seed the CPU generator and that of every device, in use now or later (NumPy and CuPy draw different streams for
    one seed: tests comparing devices make data on the host and move it)."""
    seed_all(int(seed))


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
