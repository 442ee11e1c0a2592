"""Copies between devices whose arrays are of different types, without a GPU: a fake ``cuda`` device whose
backend keeps its arrays in ``Boxed``, which, as a CuPy array, refuses implicit conversion to NumPy. A copy's
result must be made by the *target's* backend (issue 24: ``np.asarray(cupy_array)`` raises in CuPy 14, and a
CPU result coerced by CuPy's backend would go back to the GPU)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minitensor as mt
from minitensor.backends import get_backend


class Boxed:
    """A device array stand-in: NumPy underneath, no ``__array__`` that NumPy could use silently."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct "
                        "a NumPy array explicitly.")

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)
    base = None  # a fresh array, as CuPy's (the engine asks before it takes a gradient over)


class BoxedBackend(type(get_backend("cpu"))):  # type: ignore[misc]
    """Only what a copy needs: host arrays in (``asarray``) and out (``to_numpy``)."""

    name = "cuda"
    array_type = Boxed

    def asarray(self, a: Any, dtype: Any = None) -> Boxed:
        if type(a) is Boxed:
            return a if dtype is None else Boxed(a.a.astype(dtype))
        if not isinstance(a, (np.ndarray, np.generic, list, tuple, int, float, bool)):
            raise TypeError(f"BoxedBackend.asarray: unsupported {type(a).__name__}")
        return Boxed(np.array(a, dtype=dtype))

    def to_numpy(self, a: Any) -> np.ndarray:
        if type(a) is not Boxed:
            raise TypeError(f"BoxedBackend.to_numpy: not a device array but a {type(a).__name__}")
        return a.a.copy()


@pytest.fixture
def boxed(lend_backend) -> mt.device:
    dev = mt.device("cuda", 5)
    lend_backend(dev, BoxedBackend())
    return dev


def test_a_copy_to_the_device_is_made_by_the_devices_backend(boxed):
    x = mt.tensor([1.0, -2.0, 3.5])
    y = x.to(boxed)
    assert y.device == boxed and type(y.array) is Boxed
    np.testing.assert_array_equal(y.array.a, [1.0, -2.0, 3.5])


def test_a_copy_back_to_the_host_stays_on_the_host(boxed):
    y = mt.tensor([[1.0, 2.0]]).to(boxed).cpu()
    assert y.device == mt.device("cpu") and type(y.array) is np.ndarray
    np.testing.assert_array_equal(y.numpy(), [[1.0, 2.0]])


def test_gradients_flow_back_through_a_round_trip(boxed):
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.to(boxed).to("cpu")
    (y * mt.tensor([2.0, 3.0, 4.0])).sum().backward()
    assert type(x.grad.array) is np.ndarray
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 3.0, 4.0])


def test_a_module_moves_to_the_device_and_back(boxed):
    model = mt.nn.Linear(2, 3)
    weight = model.weight.detach().numpy().copy()
    model.to(boxed)
    assert all(type(p.array) is Boxed and p.device == boxed for p in model.parameters())
    model.cpu()
    assert all(type(p.array) is np.ndarray for p in model.parameters())
    np.testing.assert_array_equal(model.weight.detach().numpy(), weight)
