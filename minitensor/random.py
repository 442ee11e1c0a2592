"""Seeding: one generator per device, as in PyTorch."""
from __future__ import annotations

from .backends import seed_all


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
