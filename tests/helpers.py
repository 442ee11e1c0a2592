"""Shared strategies and helpers for the core test suite (references are float64 NumPy, written here)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor.testing import gradcheck

# Hypothesis budget for the core suite: enough cases to find shape bugs, small enough for ~90 s in all.
SETTINGS = settings(max_examples=50, deadline=None)
FEW = settings(max_examples=25, deadline=None)

seeds = st.integers(0, 2**32 - 1)
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4)
nonscalar_shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)
broadcast_pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4)


def randn(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def away_from(a: np.ndarray, points: tuple[float, ...] = (0.0,), margin: float = 0.1) -> np.ndarray:
    """``a`` with entries within ``margin`` of a kink pushed away from it (finite differences need
    smooth neighbourhoods)."""
    a = np.array(a, dtype=np.float64)
    for p in points:
        near = np.abs(a - p) < margin
        a[near] = p + np.where(a[near] >= p, margin, -margin) * 2
    return a


def t64(a: Any, requires_grad: bool = True) -> mt.Tensor:
    """A float64 tensor (a copy of ``a``) for gradcheck."""
    return mt.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def as_np(t: mt.Tensor) -> np.ndarray:
    """A tensor's values on the host, from any device (``.numpy()`` refuses a CUDA tensor, as PyTorch's)."""
    return np.asarray(t.detach().cpu().numpy())


def assert_close(actual: Any, expected: Any, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """Values and shapes agree (``actual`` may be a Tensor)."""
    a = as_np(actual) if isinstance(actual, mt.Tensor) else np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol)


def check_grad(fn: Callable[..., mt.Tensor], *arrays: Any, **kwargs: Any) -> None:
    """gradcheck ``fn`` at float64 copies of ``arrays`` (every one requires grad)."""
    assert gradcheck(fn, [t64(a) for a in arrays], **kwargs)


def kernel_launches(run: Callable[[], Any]) -> list[str]:
    """The names of our compiled kernels that ``run()`` launched (through ``backends.compiled``'s hook)."""
    from minitensor.backends import compiled
    names: list[str] = []
    previous, compiled.launch_hook = compiled.launch_hook, lambda name, on_device, kernel, args: (
        names.append(name), kernel(*args))
    try:
        run()
    finally:
        compiled.launch_hook = previous
    return names
