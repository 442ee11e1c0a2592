"""The view-copy functions (functional/view_copies.py): each the view op's values as a new contiguous tensor
that shares no memory with the input, with the view's gradient."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

X = np.arange(24.0).reshape(2, 3, 4)

# name, args after the input, the NumPy float64 reference of the view
CASES = [
    ("view_copy", ((6, 4),), lambda a: a.reshape(6, 4)),
    ("permute_copy", ((2, 0, 1),), lambda a: a.transpose(2, 0, 1)),
    ("transpose_copy", (0, 2), lambda a: a.swapaxes(0, 2)),
    ("expand_copy", ((5, 2, 3, 4),), lambda a: np.broadcast_to(a, (5, 2, 3, 4))),
    ("squeeze_copy", (), lambda a: a),
    ("unsqueeze_copy", (1,), lambda a: a[:, None]),
    ("select_copy", (1, -1), lambda a: a[:, -1]),
    ("slice_copy", (2, 1, None, 2), lambda a: a[:, :, 1::2]),
    ("diagonal_copy", (0, 1, 2), lambda a: np.diagonal(a, 0, 1, 2)),
    ("unfold_copy", (2, 2, 1), lambda a: np.lib.stride_tricks.sliding_window_view(a, 2, axis=2)),
    ("detach_copy", (), lambda a: a),
    ("alias_copy", (), lambda a: a),
    ("as_strided_copy", ((3, 2), (1, 3)), lambda a: np.lib.stride_tricks.as_strided(a, (3, 2), (8, 24))),
    ("narrow_copy", (1, 1, 2), lambda a: a[:, 1:3]),
]


@pytest.mark.parametrize("name, args, ref", CASES, ids=[c[0] for c in CASES])
def test_view_copies_are_fresh_contiguous_copies(name, args, ref):
    x = mt.tensor(X)
    y = getattr(mt, name)(x, *args)
    assert np.array_equal(y.numpy(), ref(X)) and y.is_contiguous()
    assert not np.shares_memory(y.numpy(), x.numpy())


def test_the_tuple_copies():
    x = mt.tensor(X)
    for name, args, want in [("split_copy", (2, 2), np.split(X, [2], 2)),
                             ("split_with_sizes_copy", ([1, 3], 2), np.split(X, [1], 2)),
                             ("unbind_copy", (1,), [X[:, i] for i in range(3)])]:
        got = getattr(mt, name)(x, *args)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert np.array_equal(g.numpy(), w) and g.is_contiguous() and not np.shares_memory(g.numpy(), X)


def test_t_copy_and_sparse_copies():
    m = mt.tensor(X[0])
    assert np.array_equal(mt.t_copy(m).numpy(), X[0].T) and mt.t_copy(m).stride() == (3, 1)
    s = mt.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    assert np.array_equal(mt.indices_copy(s).numpy(), s.indices().numpy())
    assert np.array_equal(mt.values_copy(s).numpy(), s.values().numpy())


def test_gradients_pass_through_the_copy():
    x = mt.tensor(X, requires_grad=True)
    mt.permute_copy(x, (2, 0, 1)).mul(mt.arange(24.0).reshape(4, 2, 3)).sum().backward()
    assert np.array_equal(x.grad.numpy(), np.arange(24.0).reshape(4, 2, 3).transpose(1, 2, 0))


def test_bad_input():
    with pytest.raises(TypeError, match="argument 'input' \\(position 1\\) must be Tensor, not list"):
        mt.view_copy([1.0], (1,))
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        mt.slice_copy(mt.tensor(X), 0, 0, 1, 0)


@pytest.mark.torch
def test_view_copies_match_pytorch():
    torch = pytest.importorskip("torch")
    for name, args, _ in CASES + [("split_copy", (2, 2), None), ("unbind_copy", (1,), None), ("t_copy", (), None)]:
        x = X[0] if name == "t_copy" else X
        ours, theirs = getattr(mt, name)(mt.tensor(x), *args), getattr(torch, name)(torch.tensor(x), *args)
        for o, t in zip(ours if isinstance(ours, tuple) else [ours], theirs if isinstance(theirs, tuple) else [theirs]):
            assert o.shape == tuple(t.shape) and o.stride() == t.stride(), name
            assert np.array_equal(o.numpy(), t.numpy()), name
