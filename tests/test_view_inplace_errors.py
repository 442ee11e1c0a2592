"""The in-place writes through views that PyTorch refuses, with its messages: an output of unbind / split /
chunk (multi-output views) or a view made in no_grad mode, written by a tracked op; ``detach_()`` on a view;
a write into an expanded or overlapping (unfold) tensor. And what stays allowed."""
from __future__ import annotations

import re
from typing import Any

import pytest

import minitensor as mt

MULTI = ("Output {i} of {op} is a view and is being modified inplace. This view is the output of a function that "
         "returns multiple views. Such functions do not allow the output views to be modified inplace. You "
         "should replace the inplace operation by an out-of-place one.")
HINT = (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
        "moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace "
        "to be tracked) or both outside (if you want the inplace to be tracked).")
NO_GRAD = "A view was created in no_grad mode and is being modified inplace with grad mode enabled." + HINT
DETACH = "Can't detach views in-place. Use detach() instead."
OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.")

PIECES = {  # (the piece, the op name and output index PyTorch's message gives)
    "unbind": (lambda y: y.unbind(0)[1], "Unbind", 1), "split": (lambda y: y.split(1)[2], "Split", 2),
    "chunk": (lambda y: y.chunk(2, 1)[1], "Split", 1), "split_sizes": (lambda y: y.split([1, 2])[1],
                                                                        "SplitWithSizes", 1),
}


def _message(f: Any) -> str:
    with pytest.raises(RuntimeError) as info:
        f()
    return str(info.value)


@pytest.mark.parametrize("piece", PIECES)
def test_a_piece_of_a_multi_output_view_op_refuses_a_tracked_write(piece):
    make, op, i = PIECES[piece]
    x = mt.randn(3, 4, requires_grad=True)
    y = x * 1
    before = y.detach().clone()
    assert _message(lambda: make(y).mul_(2)) == MULTI.format(i=i, op=op)
    assert _message(lambda: make(y).__setitem__(0, 1.0)) == MULTI.format(i=i, op=op)
    assert mt.equal(y.detach(), before)  # refused before the write
    assert "returns multiple views" in _message(lambda: make(y)[:1].add_(1))  # a view of a piece too


@pytest.mark.parametrize("piece", PIECES)
def test_pieces_may_be_written_when_the_write_is_not_tracked(piece):
    make = PIECES[piece][0]
    x = mt.randn(3, 4, requires_grad=True)
    make(x.detach()).mul_(2)
    make(mt.zeros(3, 4)).add_(1)
    y = x * 1
    p = make(y)
    with mt.no_grad():
        p.mul_(2)
    with mt.no_grad():
        make(y).mul_(2)
    # a base without grad, a value with grad: tracked (PyTorch says "created in no_grad mode" there)
    assert "returns multiple views" in _message(lambda: make(mt.zeros(3, 4)).mul_(x[0, 0]))
    assert mt.tensor_split(y, 3)[0].mul_(2) is not None  # tensor_split's pieces are no multi-output views


def test_a_view_made_in_no_grad_mode_refuses_a_tracked_write():
    x = mt.randn(3, 4, requires_grad=True)
    y = x * 1
    with mt.no_grad():
        u = y[0]
    assert _message(lambda: u.mul_(2)) == NO_GRAD  # y requires grad: tracked although u does not
    z = mt.zeros(3, 4)
    with mt.no_grad():
        v = z[0]
    v.mul_(2)  # nothing requires grad: allowed
    assert _message(lambda: v.mul_(x[0])) == NO_GRAD
    with mt.no_grad():
        u = y[0]
    assert re.fullmatch(r"Output 0 of \w+ is a view of a view which was created in no_grad mode and is being "
                        r"modified inplace with grad mode enabled\." + re.escape(HINT), _message(lambda: u[1:].mul_(2)))
    with mt.no_grad():
        u = y[0]
        u.mul_(2)  # both in no_grad: allowed


def test_detach__refuses_views_only():
    x = mt.randn(3, requires_grad=True)
    y = x * 1
    for v in (y[0], y.view(3), mt.zeros(3)[1:], x.detach()[0]):
        assert _message(v.detach_).startswith(DETACH)
    assert y.detach_() is y and not y.requires_grad and y.grad_fn is None
    x.detach().detach_()  # detach() is no graph view


def test_writes_into_overlapping_memory_are_refused():
    e = mt.zeros(3).expand(2, 3)
    for write in (lambda: e.add_(1), lambda: e.mul_(2), lambda: e.copy_(mt.ones(2, 3))):
        assert _message(write) == OVERLAP
    assert _message(lambda: mt.zeros(5).as_strided((3, 3), (0, 1)).add_(1)) == OVERLAP
    # PyTorch writes overlapping unfold / as_strided views element after element (zeros(5).unfold(0, 3, 1)
    # .add_(1) gives 1, 2, 3, 2, 1); minitensor's whole-array writes cannot, so it refuses them
    assert _message(lambda: mt.zeros(5).unfold(0, 3, 1).add_(1)) == OVERLAP
    assert _message(lambda: mt.zeros(5).as_strided((3, 3), (1, 1)).add_(1)) == OVERLAP


@pytest.mark.torch
def test_messages_match_pytorch():
    torch = pytest.importorskip("torch")

    def both(f: Any) -> tuple[str, str]:
        return _message(lambda: f(mt)), _message(lambda: f(torch))

    for piece, (make, _, _) in PIECES.items():
        ours, theirs = both(lambda m: make(m.randn(3, 4, requires_grad=True) * 1).mul_(2))
        assert ours == theirs, piece

    def no_grad_view(m: Any) -> None:
        y = m.randn(3, requires_grad=True) * 1
        with m.no_grad():
            u = y[0]
        u.mul_(2)
    assert len(set(both(no_grad_view))) == 1
    ours, theirs = both(lambda m: (m.randn(3, requires_grad=True) * 1)[0].detach_())
    assert ours == theirs
    ours, theirs = both(lambda m: m.zeros(3).expand(2, 3).add_(1))
    assert ours == theirs
    ours, theirs = both(lambda m: m.zeros(5).as_strided((3, 3), (0, 1)).mul_(2))
    assert ours == theirs
