"""``set_default_device`` / ``get_default_device``: the device the factory functions use when given none
(pytorch/tutorials' polynomial_autograd.py calls ``torch.set_default_device``)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import minitensor as mt


@pytest.fixture(autouse=True)
def _unset():
    yield
    mt.set_default_device(None)


def test_get_default_device_is_cpu_unless_set():
    assert mt.get_default_device() == mt.device("cpu")
    mt.set_default_device("cuda")  # naming a device loads no backend: this runs without a GPU
    assert mt.get_default_device() is mt.device("cuda:0")
    mt.set_default_device(1)  # an int is a CUDA index
    assert mt.get_default_device() is mt.device("cuda", 1)
    mt.set_default_device(None)
    assert mt.get_default_device() is mt.device("cpu")


def test_default_device_is_per_thread():
    mt.set_default_device("cuda")
    seen = []
    t = threading.Thread(target=lambda: seen.append(mt.get_default_device()))
    t.start()
    t.join()
    assert seen == [mt.device("cpu")] and mt.get_default_device() == mt.device("cuda")


def test_factories_use_the_default_device(device):
    mt.set_default_device(device)
    dev = mt.device(device)
    made = [mt.zeros(2), mt.ones(2, 3), mt.empty(1), mt.full((2,), 1.5), mt.arange(3), mt.linspace(0, 1, 5),
            mt.eye(2), mt.rand(2), mt.randn(()), mt.randint(0, 5, (3,)), mt.randperm(4), mt.tensor([1.0, 2.0]),
            mt.as_tensor([1, 2]), mt.tril_indices(3, 3), mt.hann_window(4)]
    assert [t.device for t in made] == [dev] * len(made)
    np.testing.assert_allclose(mt.linspace(0, 1, 5).cpu().numpy(), np.linspace(0, 1, 5), rtol=1e-6)
    assert mt.tensor([1.0, 2.0]).dtype == mt.float32  # the default dtype is unchanged
    assert mt.zeros(2, device="cpu").device == mt.device("cpu")  # an explicit device wins


def test_tensor_of_a_tensor_goes_to_the_default_device_only_when_one_is_set():
    t = mt.ones(2)
    assert mt.tensor(t).device == t.device and mt.as_tensor(t) is t
    mt.set_default_device("cpu")
    assert mt.as_tensor(t) is t  # already there: shared


def test_polynomial_autograd_tutorial_lines():
    """The tutorial's use: default device set, then linspace / randn with a dtype and no device."""
    mt.set_default_device("cpu")
    x = mt.linspace(-np.pi, np.pi, 2000, dtype=mt.float)
    a = mt.randn((), dtype=mt.float, requires_grad=True)
    loss = (a * x - mt.sin(x)).pow(2).sum()
    loss.backward()
    assert x.device == mt.device("cpu") and a.grad is not None and a.grad.shape == ()


@pytest.mark.torch
def test_matches_pytorch_get_default_device():
    torch = pytest.importorskip("torch")
    try:
        for d in ("cpu", "cuda:1", None):  # bare "cuda" asks a CPU-only PyTorch for its current device
            torch.set_default_device(d)
            mt.set_default_device(d)
            assert str(mt.get_default_device()) == str(torch.get_default_device())
    finally:
        torch.set_default_device(None)
