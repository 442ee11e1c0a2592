"""The CPU's embedding gradient (backends/cpu/embedding.py: a Numba row scatter, or without Numba a sort and a
segmented sum) against a float64 NumPy reference, with repeated, missing and padding indices; the generic body
for frequency scaling and indices out of range."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.backends import get_backend
from minitensor.backends.cpu import numba_kernels
from minitensor.backends.generic.embedding import EmbeddingOps

CPU = get_backend("cpu")


def reference(gy, indices, num, padding_idx=None):
    gw = np.zeros((num, gy.shape[-1]))
    np.add.at(gw, indices.reshape(-1), gy.reshape(-1, gy.shape[-1]).astype(np.float64))
    if padding_idx is not None:
        gw[padding_idx] = 0
    return gw


@pytest.fixture(params=["numba", "numpy"])
def path(request, monkeypatch):
    """Both bodies: the Numba kernel (where Numba is installed) and the sort + reduceat one."""
    if request.param == "numpy":
        monkeypatch.setattr(numba_kernels, "load", lambda module: None)
    return request.param


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("padding_idx", [None, 3])
@pytest.mark.parametrize("strided", [False, True])
def test_matches_the_float64_reference(dtype, tol, padding_idx, strided, path):
    r = np.random.default_rng(0)
    indices = r.integers(0, 9, (12, 7))  # repeats, and some of the 10 rows never used
    gy = r.standard_normal((12, 7, 5)).astype(dtype)
    if strided:  # a gradient that is a transposed view
        gy = np.ascontiguousarray(gy.transpose(1, 0, 2)).transpose(1, 0, 2)
    got = CPU.embedding_backward(gy, indices, 10, padding_idx, False)
    assert got.dtype == dtype and got.shape == (10, 5)
    np.testing.assert_allclose(got, reference(gy, indices, 10, padding_idx), rtol=tol, atol=tol)
    assert not got[9].any()


def test_frequency_scaling_and_empty_input_take_the_generic_body():
    r = np.random.default_rng(1)
    indices, gy = r.integers(0, 4, (6,)), r.standard_normal((6, 3))
    np.testing.assert_array_equal(CPU.embedding_backward(gy, indices, 4, None, True),
                                  EmbeddingOps.embedding_backward(CPU, gy, indices, 4, None, True))
    assert CPU.embedding_backward(np.zeros((0, 3)), np.zeros(0, np.int64), 4, None, False).shape == (4, 3)


def test_nn_embedding_forward_and_backward():
    mt.manual_seed(0)
    emb = mt.nn.Embedding(6, 4, padding_idx=0).double()
    idx = mt.tensor([[1, 2, 1], [0, 5, 1]])
    out = emb(idx)
    np.testing.assert_array_equal(out.detach().numpy(), emb.weight.detach().numpy()[idx.numpy()])
    gy = np.random.default_rng(2).standard_normal((2, 3, 4))
    out.backward(mt.tensor(gy))
    np.testing.assert_allclose(emb.weight.grad.numpy(), reference(gy, idx.numpy(), 6, 0), rtol=1e-12, atol=1e-12)


def test_indices_out_of_range_never_reach_the_kernel(path):
    """The kernel writes where the indices point without checks: an index >= num_embeddings goes to the
    generic body, which raises (the forward would have refused it already)."""
    with pytest.raises(IndexError):
        CPU.embedding_backward(np.ones((3, 2), np.float32), np.array([0, 5, 1]), 4, None, False)
