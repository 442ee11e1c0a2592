"""F.embedding / nn.Embedding with sparse=True: weight's gradient is sparse COO, one entry per lookup in
lookup order (PyTorch's), summing to the dense gradient; accumulation across backward calls, into a dense
.grad, zero_grad; SparseAdam training a sparse embedding against a float64 NumPy reference; PyTorch (marked
torch)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

RNG = np.random.default_rng(0)


def weight(rows=6, dim=3):
    return mt.nn.Parameter(mt.tensor(RNG.standard_normal((rows, dim))))


def test_sparse_gradient_is_one_entry_per_lookup_and_sums_to_the_dense_one():
    idx = mt.tensor([[0, 2, 2], [5, 0, 1]])
    gy = RNG.standard_normal((2, 3, 3))
    dense_w, sparse_w = weight(), weight()
    (F.embedding(idx, dense_w) * mt.tensor(gy)).sum().backward()
    (F.embedding(idx, sparse_w, sparse=True) * mt.tensor(gy)).sum().backward()
    g = sparse_w.grad
    assert g.is_sparse and not g.is_coalesced() and g.shape == (6, 3) and g.dtype == mt.float64
    assert g._indices().tolist() == [[0, 2, 2, 5, 0, 1]]
    np.testing.assert_array_equal(g._values().numpy(), gy.reshape(-1, 3))
    np.testing.assert_allclose(g.to_dense().numpy(), dense_w.grad.numpy(), rtol=1e-15)


def test_padding_idx_entries_are_left_out():
    w = weight()
    F.embedding(mt.tensor([1, 3, 1, 4]), w, padding_idx=1, sparse=True).sum().backward()
    assert w.grad._indices().tolist() == [[3, 4]]
    w.grad = None
    F.embedding(mt.tensor([1, 1]), w, padding_idx=1, sparse=True).sum().backward()
    assert w.grad._nnz() == 0 and tuple(w.grad._values().shape) == (0, 3) and w.grad.shape == (6, 3)


def test_accumulation_zero_grad_and_dense_grads():
    w = weight()
    idx = mt.tensor([2, 0])
    (F.embedding(idx, w, sparse=True) * 2).sum().backward()
    F.embedding(mt.tensor([2]), w, sparse=True).sum().backward()  # appended: a second list of entries
    assert w.grad._indices().tolist() == [[2, 0, 2]]
    np.testing.assert_array_equal(w.grad.to_dense().numpy()[[0, 2]], [[2.0] * 3, [3.0] * 3])
    y, z = F.embedding(idx, w, sparse=True), F.embedding(idx, w, sparse=True)  # fan-in in one graph
    w.grad = None
    (y + z).sum().backward()
    assert w.grad._nnz() == 4
    mt.optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)  # zeroed: no entries, still sparse
    assert w.grad.is_sparse and w.grad._nnz() == 0
    w.grad = None  # a weight used sparsely and densely in one graph: its gradient is dense (PyTorch's)
    (F.embedding(idx, w, sparse=True).sum() + (w * 2).sum()).backward()
    assert not w.grad.is_sparse and w.grad.numpy()[[0, 1, 2]].tolist() == [[3.0] * 3, [2.0] * 3, [3.0] * 3]
    w.grad = mt.zeros(6, 3, dtype=mt.float64)  # a dense .grad plus a sparse gradient stays dense
    F.embedding(idx, w, sparse=True).sum().backward()
    assert not w.grad.is_sparse and w.grad.numpy()[[0, 2]].tolist() == [[1.0] * 3] * 2


def test_scale_grad_by_freq_is_refused_with_sparse_gradients():
    w = weight()
    y = F.embedding(mt.tensor([0, 0]), w, scale_grad_by_freq=True, sparse=True)
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
        y.sum().backward()
    with pytest.raises(NotImplementedError, match="max_norm"):
        F.embedding(mt.tensor([0]), w, max_norm=1.0)


def test_sparse_adam_trains_a_sparse_embedding_as_the_lazy_adam_reference():
    """Rows looked up in a step get Adam's update with that step's bias corrections; the others keep
    their values and moments."""
    lr, (b1, b2), eps = 0.05, (0.9, 0.99), 1e-8
    emb = mt.nn.Embedding(8, 4, sparse=True, dtype=mt.float64)
    w0 = emb.weight.detach().numpy().copy()
    opt = mt.optim.SparseAdam(emb.parameters(), lr=lr, betas=(b1, b2), eps=eps)
    batches = [RNG.integers(0, 8, 5) for _ in range(6)]
    targets = [RNG.standard_normal((5, 4)) for _ in range(6)]
    w, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    for t, (idx, target) in enumerate(zip(batches, targets), start=1):
        opt.zero_grad()
        ((emb(mt.tensor(idx)) - mt.tensor(target)) ** 2).sum().backward()
        opt.step()
        g = np.zeros_like(w)
        np.add.at(g, idx, 2 * (w[idx] - target))
        rows = np.unique(idx)
        m[rows] = b1 * m[rows] + (1 - b1) * g[rows]
        v[rows] = b2 * v[rows] + (1 - b2) * g[rows] ** 2
        w[rows] -= lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m[rows] / (np.sqrt(v[rows]) + eps)
        np.testing.assert_allclose(emb.weight.detach().numpy(), w, rtol=1e-12, atol=1e-14, err_msg=f"step {t}")


@pytest.mark.torch
def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    w0 = RNG.standard_normal((8, 4)).astype(np.float32)
    batches = [RNG.integers(0, 8, (2, 3)) for _ in range(5)]
    out = []
    for lib in (mt, torch):
        emb = lib.nn.Embedding(8, 4, padding_idx=3, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w0))
        opt = lib.optim.SparseAdam(emb.parameters(), lr=0.1)
        grads = []
        for idx in batches:
            opt.zero_grad()
            (emb(lib.tensor(idx)) ** 3).sum().backward()
            grads.append((emb.weight.grad._indices().numpy().copy(), emb.weight.grad._values().numpy().copy()))
            opt.step()
        out.append((emb.weight.detach().numpy(), grads))
    (mine, my_grads), (theirs, their_grads) = out
    for (i1, v1), (i2, v2) in zip(my_grads, their_grads):
        np.testing.assert_array_equal(i1, i2)
        np.testing.assert_allclose(v1, v2, rtol=1e-6)
    np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)
