"""Index and mask tensors kept for backward are version-checked, as PyTorch's SavedVariables: writing into
one after the forward makes backward raise instead of scattering the gradient to the new places. Each case
is written once for a module ``m`` (minitensor or torch) so the torch-marked twin runs the same code."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import minitensor as mt

MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"


def _x(m: Any) -> Any:
    return m.arange(12.0).reshape(3, 4).requires_grad_()


def _long(m: Any, *v: int) -> Any:
    return m.tensor(list(v))


def _column(m: Any) -> Any:
    return m.tensor([[0], [1], [2]])


def _src(m: Any, *shape: int) -> Any:
    return m.ones(*shape, requires_grad=True)


def _setitem(m: Any, mask: bool) -> tuple[Any, Any, Any]:
    v = _src(m, 7 if mask else 4)
    x = _x(m) * 1
    i = x.detach() > 4 if mask else _long(m, 0, 2)
    x[i] = v * 2
    return v, x, i


# Each case: m -> (the leaf whose gradient is read, the output, the index tensor then written in place).
WRITTEN_INDEX: dict[str, Callable[[Any], tuple[Any, Any, Any]]] = {
    "long": lambda m: (x := _x(m), x[(i := _long(m, 0, 2))], i),
    "long_after_slice": lambda m: (x := _x(m), x[1:, (i := _long(m, 0, 2))], i),
    "long_after_int": lambda m: (x := _x(m), x[1, (i := _long(m, 0, 2))], i),
    "two_longs": lambda m: (x := _x(m), x[_long(m, 0, 2), (i := _long(m, 1, 3))], i),
    "int32": lambda m: (x := _x(m), x[(i := m.tensor([0, 2], dtype=m.int32))], i),
    "bool_mask": lambda m: (x := _x(m), x[(i := m.tensor([True, False, True]))], i),
    "mask_2d": lambda m: (x := _x(m), x[(i := x.detach() > 4)], i),
    "masked_select": lambda m: (x := _x(m), m.masked_select(x, (i := x.detach() > 4)), i),
    "take": lambda m: (x := _x(m), m.take(x, (i := _long(m, 0, 5))), i),
    "take_negative": lambda m: (x := _x(m), m.take(x, (i := _long(m, -1, 5))), i),
    "take_along_dim_flat": lambda m: (x := _x(m), m.take_along_dim(x, (i := _long(m, 0, 5))), i),
    "put": lambda m: (x := _x(m), x.put((i := _long(m, 0, 2)), _src(m, 2) * 2), i),
    "masked_scatter": lambda m: (x := _x(m), x.masked_scatter((i := x.detach() > 5), _src(m, 12) * 2), i),
    "index_put": lambda m: (v := _src(m, 4), _x(m).index_put(((i := _long(m, 0, 2)),), v * 2), i),
    "index_put_accumulate": lambda m: (v := _src(m, 4), _x(m).index_put(((i := _long(m, 0, 2)),), v * 2,
                                                                        accumulate=True), i),
    "index_put_accumulate_two": lambda m: (v := _src(m, 2), _x(m).index_put((_long(m, 0, 2), (i := _long(m, 1, 1))),
                                                                            v * 2, accumulate=True), i),
    "setitem_long": lambda m: _setitem(m, False),
    "setitem_mask": lambda m: _setitem(m, True),
    "index_select": lambda m: (x := _x(m), x.index_select(0, (i := _long(m, 0, 2))), i),
    "gather": lambda m: (x := _x(m), x.gather(1, (i := _column(m))), i),
    "scatter_add": lambda m: (s := _src(m, 3, 1), _x(m).scatter_add(1, (i := _column(m)), s * 2), i),
    "index_add": lambda m: (s := _src(m, 2, 4), _x(m).index_add(0, (i := _long(m, 0, 2)), s * 2), i),
    "embedding": lambda m: (w := _x(m), m.nn.functional.embedding((i := _long(m, 0, 2)), w), i),
    "masked_fill": lambda m: (x := _x(m), x.masked_fill((i := x.detach() > 4), 0.0), i),
    "where": lambda m: (x := _x(m), m.where((i := x.detach() > 5), x, 0.0), i),
}


def _run(m: Any, make: Callable[[Any], tuple[Any, Any, Any]], write: bool = True) -> Any:
    """The leaf's gradient of sum(y * arange) after the index was (or was not) overwritten with 1s."""
    leaf, y, index = make(m)
    if write:
        index.fill_(1)
    (y * m.arange(float(y.numel())).reshape(y.shape)).sum().backward()
    return leaf.grad.detach().numpy()


@pytest.mark.parametrize("case", WRITTEN_INDEX)
def test_writing_a_saved_index_makes_backward_raise(case):
    with pytest.raises(RuntimeError, match=MODIFIED + r": \[minitensor\.\w+Tensor \[[\d, ]*\]\]"):
        _run(mt, WRITTEN_INDEX[case])


@pytest.mark.parametrize("case", WRITTEN_INDEX)
def test_an_unwritten_index_keeps_its_gradient(case):
    """The saved index costs nothing when left alone: the gradient is the one before this change."""
    _run(mt, WRITTEN_INDEX[case], write=False)  # no error
    leaf, y, _ = WRITTEN_INDEX[case](mt)
    y.sum().backward(retain_graph=True)
    first = leaf.grad.numpy().copy()
    y.sum().backward()  # retain_graph kept the saved index
    np.testing.assert_array_equal(leaf.grad.numpy(), 2 * first)


def test_take_along_dim_with_a_dim_copies_the_index_as_pytorch():
    """PyTorch's take_along_dim(dim=...) gathers by a copy of the broadcast index: no error, and the
    gradient goes to the places the index held at the forward."""
    x = _x(mt)
    i = _column(mt)
    y = mt.take_along_dim(x, i, 1)
    i.fill_(3)
    (y * mt.tensor([[0.0], [1.0], [2.0]])).sum().backward()
    expected = np.zeros((3, 4), np.float32)
    expected[1, 1], expected[2, 2] = 1, 2
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.torch
@pytest.mark.parametrize("case", [*WRITTEN_INDEX, "take_along_dim"])
def test_written_index_matches_torch(case):
    torch = pytest.importorskip("torch")
    cases = {**WRITTEN_INDEX, "take_along_dim": lambda m: (x := _x(m), m.take_along_dim(x, (i := _column(m)), 1), i)}
    outcomes = []
    for m in (torch, mt):
        try:
            outcomes.append(_run(m, cases[case]))
        except RuntimeError as e:
            assert MODIFIED in str(e)
            outcomes.append("raised")
    if isinstance(outcomes[0], str) or isinstance(outcomes[1], str):
        assert outcomes[0] == outcomes[1]
    else:
        np.testing.assert_array_equal(outcomes[1], outcomes[0])
