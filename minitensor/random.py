"""Seeding: one generator per device, as in PyTorch; ``default_generator`` is the CPU's as a ``Generator``."""
from __future__ import annotations

import contextlib
from typing import Any, Iterable, Iterator

from .backends import _INSTANCES, _SEED, get_backend, seed_all, thread_seed
from .device import device
from .generator import Generator

__all__ = ["default_generator", "initial_seed", "manual_seed", "seed"]
__all__ += ["fork_rng", "get_rng_state", "set_rng_state"]


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


def get_rng_state() -> Any:
    """The CPU generator's state as a uint8 tensor (``default_generator.get_state()``)."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Restore the CPU generator from a ``get_rng_state()`` tensor."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices: Iterable[Any] | None = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Iterator[None]:
    """Run the block, then put back the CPU generator's state and that of ``devices`` (indices of
    ``device_type``; None: every such device in use), as PyTorch's ``torch.random.fork_rng``."""
    if not enabled:
        yield
        return
    if devices is None:  # every device of that type in use (PyTorch: every visible one)
        backends = [B for (kind, _), B in _INSTANCES.items() if kind == device_type]
    else:
        backends = [device(device_type, int(i)).backend for i in devices]
    cpu_state = get_rng_state()
    saved = [(B, B.copy_rng()) for B in backends]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for B, state in saved:
            B.set_rng(state)
