"""PyTorch parity of the top-level ATen forms and the other torch.* functions added with them (one table:
the same float64 inputs through both libraries, every output compared)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.torch
RNG = np.random.default_rng(11)


def arrays(*shapes):
    return [RNG.standard_normal(s) for s in shapes]


X3, W3, B4 = arrays((2, 4, 7), (6, 2, 3), (6,))
WT = RNG.standard_normal((4, 3, 3))
LN = arrays((2, 3, 4), (4,), (4,))
BN = arrays((5, 3, 4))[0]
CELL = arrays((2, 3), (2, 4), (2, 4))
LSTM_W, GRU_W, RNN_W = arrays((16, 3), (16, 4), (16,), (16,)), arrays((12, 3), (12, 4), (12,), (12,)), \
    arrays((4, 3), (4, 4), (4,), (4,))
TRI = np.triu(RNG.standard_normal((3, 3))) + 3 * np.eye(3)

# name, call(lib, T) where T makes a tensor of the library from a NumPy array
CASES = [
    ("convolution", lambda lib, T: lib.convolution(T(X3), T(W3), T(B4), [2], [1], [1], False, [0], 2)),
    ("convolution transposed", lambda lib, T: lib.convolution(T(X3), T(WT), None, [2], [1], [1], True, [1], 1)),
    ("constant_pad_nd", lambda lib, T: lib.constant_pad_nd(T(X3), (-1, 2, 1, 0), 0.25)),
    ("native_layer_norm", lambda lib, T: lib.native_layer_norm(T(LN[0]), [3, 4], None, None, 1e-5)),
    ("native_layer_norm affine", lambda lib, T: lib.native_layer_norm(T(LN[0]), [4], T(LN[1]), T(LN[2]), 1e-3)),
    ("native_batch_norm train", lambda lib, T: lib.native_batch_norm(T(BN), None, None, None, None, True, 0.1, 1e-5)),
    ("native_batch_norm eval", lambda lib, T: lib.native_batch_norm(
        T(BN), None, None, T(np.zeros(3)), T(np.ones(3)), False, 0.1, 1e-5)),
    ("native_group_norm", lambda lib, T: lib.native_group_norm(T(X3), None, None, 2, 4, 7, 2, 1e-5)),
    ("max_pool1d_with_indices", lambda lib, T: lib.max_pool1d_with_indices(T(X3), 3, 2, 1, 1, True)),
    ("nuclear_norm", lambda lib, T: lib.nuclear_norm(T(X3))),
    ("nuclear_norm dim", lambda lib, T: lib.nuclear_norm(T(X3), (0, 2), True)),
    ("frobenius_norm", lambda lib, T: lib.frobenius_norm(T(X3), (0, 2), True)),
    ("rnn_tanh_cell", lambda lib, T: lib.rnn_tanh_cell(T(CELL[0]), T(CELL[1]), *map(T, RNN_W))),
    ("rnn_relu_cell", lambda lib, T: lib.rnn_relu_cell(T(CELL[0]), T(CELL[1]), *map(T, RNN_W[:2]))),
    ("lstm_cell", lambda lib, T: lib.lstm_cell(T(CELL[0]), (T(CELL[1]), T(CELL[2])), *map(T, LSTM_W))),
    ("gru_cell", lambda lib, T: lib.gru_cell(T(CELL[0]), T(CELL[1]), *map(T, GRU_W))),
    ("histogramdd", lambda lib, T: lib.histogramdd(T(X3.reshape(-1, 2)), [3, 4],
                                                   weight=T(np.abs(X3.reshape(-1, 2)[:, 0])))),
    ("histogramdd density", lambda lib, T: lib.histogramdd(T(X3.reshape(-1, 2)), 3, range=[-1.0, 1.0, -2.0, 2.0],
                                                           density=True)),
    ("triangular_solve", lambda lib, T: lib.triangular_solve(T(X3[0, :3, :2]), T(TRI), transpose=True)),
    ("narrow_copy", lambda lib, T: lib.narrow_copy(T(X3), 2, 1, 3)),
    ("dist", lambda lib, T: lib.dist(T(X3), T(X3[0]), 3.0)),
]


def flat(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in flat(o)]
    return [out]


@pytest.mark.parametrize("name, call", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(name, call):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = flat(call(mt, lambda a: mt.tensor(a)))
        theirs = flat(call(torch, lambda a: torch.tensor(a)))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.shape == tuple(t.shape), name
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], name
        assert np.allclose(o.numpy(), t.numpy(), atol=1e-10), name


def test_gradients_match_pytorch():
    torch = pytest.importorskip("torch")

    def grads(lib, T):
        x, h, c = (T(a).requires_grad_(True) for a in CELL)
        w = [T(a).requires_grad_(True) for a in LSTM_W]
        hy, cy = lib.lstm_cell(x, (h, c), *w)
        out, _, _ = lib.native_layer_norm(x, [3], None, None, 1e-5)
        (hy.sum() + 2 * cy.sum() + (out * x).sum()).backward()
        return [t.grad for t in (x, h, c, *w)]
    for o, t in zip(grads(mt, mt.tensor), grads(torch, torch.tensor)):
        assert np.allclose(o.numpy(), t.numpy())


def test_removed_messages_and_empty_permuted_strides_are_pytorchs():
    torch = pytest.importorskip("torch")
    A = np.eye(3)
    for name in ("solve", "lstsq", "eig", "symeig", "matrix_rank"):
        args = (2,) if name in ("solve", "lstsq") else (1,)
        with pytest.raises(RuntimeError) as ours:
            getattr(mt, name)(*[mt.tensor(A)] * args[0])
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch, name)(*[torch.tensor(A)] * args[0])
        assert str(ours.value) == str(theirs.value)
    for size, order in [((2, 3, 5, 7), (0, 2, 3, 1)), ((4, 5), (1, 0)), ((2, 3, 4), (2, 0, 1))]:
        assert mt.empty_permuted(size, order).stride() == torch.empty_permuted(size, order).stride()


def test_low_rank_singular_values_match_pytorch():
    torch = pytest.importorskip("torch")
    A = RNG.standard_normal((3, 40, 5)) @ RNG.standard_normal((5, 25))
    ours = mt.svd_lowrank(mt.tensor(A), q=7)[1].numpy()
    theirs = torch.svd_lowrank(torch.tensor(A), q=7)[1].numpy()
    assert np.allclose(ours[:, :5], theirs[:, :5])
    ours = mt.pca_lowrank(mt.tensor(A[0]), q=5)[1].numpy()  # rank 5: exact in both
    assert np.allclose(ours, torch.pca_lowrank(torch.tensor(A[0]), q=5)[1].numpy())
