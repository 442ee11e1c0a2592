"""PyTorch's legacy CUDA types (``cuda.FloatTensor``...) as the GAN zoo uses them:
``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``, then ``Tensor(np.random.normal(...))``,
``Variable(Tensor(n, 1).fill_(1.0), requires_grad=False)`` and ``imgs.type(Tensor)``."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt


def gan_zoo_preamble(lib, cuda):
    """The zoo's tensor-type alias and what it makes (on the CPU when ``cuda`` is False)."""
    Tensor = lib.cuda.FloatTensor if cuda else lib.FloatTensor
    z = Tensor(np.random.default_rng(0).normal(0, 1, (4, 3)))
    valid = lib.autograd.Variable(Tensor(4, 1).fill_(1.0), requires_grad=False)
    imgs = lib.autograd.Variable(lib.arange(6).reshape(2, 3).type(Tensor))
    labels = lib.autograd.Variable(lib.tensor([1, 0]).type(lib.cuda.LongTensor if cuda else lib.LongTensor))
    return {"z": (tuple(z.shape), str(z.dtype).split(".")[-1], z.device.type),
            "valid": (valid.tolist(), valid.requires_grad),
            "imgs": (imgs.type(), imgs.tolist()), "labels": labels.type(),
            "isinstance": (isinstance(z, Tensor), isinstance(z, lib.cuda.FloatTensor) == cuda,
                           isinstance(z, lib.FloatTensor) != cuda),
            "repr": repr(lib.cuda.ByteTensor).split(".", 1)[1]}


def test_cpu_alias_and_cuda_types():
    seen = gan_zoo_preamble(mt, cuda=False)
    assert seen["z"] == ((4, 3), "float32", "cpu") and seen["valid"] == ([[1.0]] * 4, False)
    assert seen["imgs"] == ("torch.FloatTensor", [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert seen["labels"] == "torch.LongTensor" and seen["isinstance"] == (True, True, True)
    assert seen["repr"] == "cuda.ByteTensor'>"
    assert mt.cuda.LongTensor.dtype is mt.int64 and mt.cuda.LongTensor.device_type == "cuda"
    with pytest.raises(AttributeError):
        mt.cuda.NoSuchTensor


def test_cuda_types_without_a_gpu_raise():
    if mt.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="cuda"):
        mt.cuda.FloatTensor(2, 3)
    with pytest.raises(RuntimeError, match="cuda"):
        mt.ones(2).type(mt.cuda.FloatTensor)


@pytest.mark.gpu
def test_cuda_alias_on_a_gpu():
    if not mt.cuda.is_available():
        pytest.skip("no CUDA device")
    seen = gan_zoo_preamble(mt, cuda=True)
    assert seen["z"] == ((4, 3), "float32", "cuda") and seen["imgs"][0] == "torch.cuda.FloatTensor"
    assert seen["labels"] == "torch.cuda.LongTensor" and seen["isinstance"] == (True, True, True)
    assert mt.ones(2).type(mt.cuda.FloatTensor).cuda().device.type == "cuda"


@pytest.mark.torch
def test_gan_zoo_alias_matches_torch():
    torch = pytest.importorskip("torch")
    assert gan_zoo_preamble(mt, cuda=False) == gan_zoo_preamble(torch, cuda=False)
