"""The exception type of common misuses is PyTorch's (a program's ``except RuntimeError`` or a test's
``pytest.raises`` depends on it); minitensor's messages say more and are not compared."""
from __future__ import annotations

import warnings

import pytest

import minitensor as mt

CASES = {  # snippet -> PyTorch's exception type
    "lib.ones(2, 3).permute(0, 1, 2)": RuntimeError,
    "lib.ones(2, 3).permute(0)": RuntimeError,
    "lib.ones(2, 3).permute(0, 0)": RuntimeError,
    "lib.ones(2, 3).permute(0, 2)": IndexError,
    "lib.nn.functional.mse_loss(lib.ones(2), lib.ones(3))": RuntimeError,
    "lib.nn.functional.l1_loss(lib.ones(2), lib.ones(3))": RuntimeError,
    "lib.nn.functional.smooth_l1_loss(lib.ones(2), lib.ones(3))": RuntimeError,
    "lib.nn.functional.huber_loss(lib.ones(2), lib.ones(3))": RuntimeError,
    "lib.nn.functional.binary_cross_entropy(lib.ones(2) / 2, lib.ones(3))": ValueError,
    "lib.nn.functional.binary_cross_entropy_with_logits(lib.ones(2), lib.ones(3))": ValueError,
    "lib.ones(2, 3) @ lib.ones(2, 3)": RuntimeError,
    "lib.ones(2, 3) + lib.ones(4)": RuntimeError,
    "lib.ones(2, 3).view(4)": RuntimeError,
    "lib.tensor([1, 2]).mean()": RuntimeError,
    "lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([0, 3]))": IndexError,
    "lib.ones(2)[5]": IndexError,
    "lib.stack([lib.ones(2), lib.ones(3)])": RuntimeError,
    "lib.ones(3).expand(2, 4)": RuntimeError,
    "lib.tensor([[1, 2], [3]])": ValueError,
    "lib.nn.BatchNorm1d(3)(lib.ones(1, 3))": ValueError,
    "lib.nn.functional.embedding(lib.tensor([5]), lib.ones(3, 2))": IndexError,
    "lib.ones(2).item()": RuntimeError,
    "lib.ones(2, requires_grad=True).numpy()": RuntimeError,
}


def _raised(lib, snippet):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the losses warn about the sizes first, as PyTorch's
        try:
            eval(snippet, {"lib": lib})
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            return type(e)
    return None


@pytest.mark.parametrize("snippet", sorted(CASES))
def test_exception_type_is_pytorchs(snippet):
    raised = _raised(mt, snippet)
    assert raised is not None and issubclass(raised, CASES[snippet]), raised


@pytest.mark.torch
@pytest.mark.parametrize("snippet", sorted(CASES))
def test_exception_types_match_pytorch(snippet):
    torch = pytest.importorskip("torch")
    theirs = _raised(torch, snippet)
    assert theirs is not None and issubclass(theirs, CASES[snippet]), theirs
