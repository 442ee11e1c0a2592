"""Indices PyTorch reads as index tensors besides lists: a ``range``, lists of bools, tuples of lists, and
a short list holding lists (read as a tuple, with the deprecation warning). pytorch/examples'
mnist_forward_forward writes ``x_[range(x.shape[0]), y] = x.max()``."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt


def idioms(lib):
    """Each idiom's result as plain lists (get and set), under ``lib``."""
    base = np.arange(20, dtype=np.float32).reshape(5, 4)
    x = lib.tensor(base)
    y = lib.tensor([3, 0, 1, 2, 3])
    out = {"range_get": x[range(x.shape[0]), y].tolist(), "range_alone": x[range(1, 4, 2)].tolist(),
           "range_empty": list(x[range(0)].shape), "bools": x[[True, False, True, False, False]].tolist(),
           "tuple_of_lists": x[([0, 4], [1, 3])].tolist(), "range_in_slice": x[:, range(2)].tolist()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out["nested_list"] = x[[[0, 1], [2, 3]]].tolist()
    x_ = x.clone()
    x_[range(x.shape[0]), y] = x.max()  # mnist_forward_forward's overlay of the label
    out["range_set"] = x_.tolist()
    z = x.clone()
    z[[False, True, False, True, False]] = 0.0
    z[([0, 0], [0, 1])] = lib.tensor([-1.0, -2.0])
    out["bools_tuple_set"] = z.tolist()
    return out


def test_sequence_indices():
    got = idioms(mt)
    assert got["range_get"] == [3.0, 4.0, 9.0, 14.0, 19.0]
    assert got["range_alone"] == [[4.0, 5.0, 6.0, 7.0], [12.0, 13.0, 14.0, 15.0]]
    assert got["range_empty"] == [0, 4] and got["bools"] == [[0.0, 1.0, 2.0, 3.0], [8.0, 9.0, 10.0, 11.0]]
    assert got["tuple_of_lists"] == [1.0, 19.0] and got["nested_list"] == [2.0, 7.0]
    assert got["range_in_slice"] == [[4 * i, 4 * i + 1] for i in range(5)]
    assert [row[c] for row, c in zip(got["range_set"], [3, 0, 1, 2, 3])] == [19.0] * 5
    assert got["range_set"][0][:3] == [0.0, 1.0, 2.0]
    assert got["bools_tuple_set"][1] == [0.0] * 4 and got["bools_tuple_set"][0][:3] == [-1.0, -2.0, 2.0]


def test_range_index_has_a_gradient():
    x = mt.randn(3, 4, requires_grad=True)
    x[range(3), [0, 1, 2]].sum().backward()
    assert x.grad.tolist() == np.eye(3, 4).tolist()


@pytest.mark.torch
def test_sequence_indices_match_torch():
    torch = pytest.importorskip("torch")
    assert idioms(mt) == idioms(torch)
