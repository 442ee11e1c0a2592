"""``minitensor.Generator``: PyTorch's ``torch.Generator``, a random stream of its own on one device.

Passed as ``generator=`` to the random creation functions, the in-place fills, ``nn.init`` and the data
utilities (``DataLoader``, ``random_split``, the samplers), it replaces the device's global stream, so a draw
depends only on the generator's seed and what was drawn from it before. The stream is the device
backend's: a NumPy ``Generator`` on the CPU, a CuPy one on CUDA (made at the first draw, from the seed).
"""
from __future__ import annotations

import json
import secrets
from typing import Any

import numpy as np

from .device import as_device, device

__all__ = ["Generator"]

DEFAULT_SEED = 67280421310721  # PyTorch's default_rng_seed_val: a new Generator's seed


class Generator:
    def __init__(self, device: "str | device" = "cpu") -> None:
        self.device = as_device(device)
        self._seed = DEFAULT_SEED
        self._stream: Any = None

    def manual_seed(self, seed: int) -> "Generator":
        """Reset the stream to ``seed`` (taken modulo 2**64, as PyTorch); returns the generator itself."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        self._seed = int(seed) % 2**64
        self._stream = None
        return self

    def seed(self) -> int:
        """Reseed from fresh entropy; returns the seed."""
        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def stream(self, on: device) -> Any:
        """The backend generator to draw from for a tensor on ``on`` (PyTorch's error if that is another
        device type)."""
        self._check_device(on)
        if self._stream is None:
            self._stream = on.backend.xp.random.default_rng(self._seed)
        return self._stream

    def _check_device(self, on: device) -> None:
        if on.type != self.device.type:
            raise RuntimeError(f"Expected a '{on.type}' device type for generator but found '{self.device.type}'")

    def _drawn(self) -> Any:
        """The stream if one was made (None: nothing drawn since the last seeding)."""
        return self._stream

    def get_state(self) -> Any:
        """The state as a uint8 tensor (the seed and the bit generator's state; ``set_state`` takes it back)."""
        from .creation import tensor
        drawn = self._drawn()
        state = {"seed": self.initial_seed(), "stream": None if drawn is None else _bit_state(drawn)}
        return tensor(np.frombuffer(json.dumps(state).encode(), dtype=np.uint8).copy())

    def set_state(self, new_state: Any) -> "Generator":
        from .tensor import Tensor
        if not isinstance(new_state, Tensor) or new_state.dtype.name != "uint8":
            raise TypeError("expected a torch.ByteTensor, but got " + type(new_state).__name__)
        try:
            state = json.loads(new_state.numpy().tobytes().decode())
            seed, stream = int(state["seed"]), state["stream"]
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError("Generator.set_state: the tensor is not a state from get_state()") from e
        self.manual_seed(seed)
        if stream is not None:
            self.stream(self.device).bit_generator.state = stream
        return self

    def __repr__(self) -> str:
        return f"<minitensor.Generator object on {self.device}>"


def _bit_state(stream: Any) -> Any:
    """The JSON-safe state of a NumPy or CuPy generator's bit generator."""
    state = stream.bit_generator.state
    return json.loads(json.dumps(state, default=int))


def stream_of(generator: "Generator | None", on: device) -> Any:
    """The backend generator that ``generator=`` names for a draw on ``on`` (None: the device's own)."""
    if generator is None:
        return None
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a minitensor.Generator, not {type(generator).__name__}")
    return generator.stream(on)
