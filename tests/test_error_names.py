"""Errors that once surfaced raw (a NumPy or Python message about internals) now name the problem with
PyTorch's error type (issue 25, item 13)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

# (id, f(lib, functional), PyTorch's error type, a regex both messages match)
CASES = [
    ("ones_float", lambda t, f: t.ones(2.5), TypeError,
     r"ones\(\): argument 'size' \(position 1\) must be tuple of ints"),
    ("zeros_float_element", lambda t, f: t.zeros(2, 2.5), TypeError, r"zeros\(\): argument .size. .*float"),
    ("lstm_zero_input", lambda t, f: t.nn.LSTM(0, 3), ValueError, "input_size must be greater than zero"),
    ("lstm_float_hidden", lambda t, f: t.nn.LSTM(2, 3.0), TypeError, "hidden_size should be of type int"),
    ("sum_float_dim", lambda t, f: t.ones(2, 2).sum(1.0), TypeError, "float"),
    ("int_floordiv_zero", lambda t, f: t.tensor([3]) // 0, RuntimeError, "ZeroDivisionError"),
    ("int_mod_zero", lambda t, f: t.tensor([3]) % t.tensor(0), RuntimeError, "ZeroDivisionError"),
    ("index_put_out_of_range", lambda t, f: t.zeros(2, 3).index_put((t.tensor([0]), t.tensor([7])), t.tensor(1.0)),
     IndexError, "index 7 is out of bounds for dimension 1 with size 3"),
    ("masked_select_no_broadcast", lambda t, f: t.masked_select(t.ones(2, 3), t.ones(2, 2, dtype=t.bool)),
     RuntimeError, r"size of tensor a \(2\) must match the size of tensor b \(3\) at non-singleton dimension 1"),
    ("kl_div_shapes", lambda t, f: f.kl_div(t.ones(2, 3), t.ones(3, 2), reduction="sum"), RuntimeError,
     r"size of tensor a \(2\) must match the size of tensor b \(3\)"),
    ("movedim_repeated", lambda t, f: t.movedim(t.ones(2, 3), [0, 0], [1, 0]), RuntimeError,
     r"movedim: repeated dim in `source` \(\[0, 0\]\)"),
    ("ldexp_numpy_scalar", lambda t, f: t.ldexp(t.tensor([1.0]), np.int64(2)), TypeError,
     r"ldexp\(\): argument 'other' \(position 2\) must be Tensor, not numpy.int64"),
    ("conv_transpose1d_output_padding",
     lambda t, f: f.conv_transpose1d(t.ones(1, 3, 5), t.ones(3, 2, 3), output_padding=2), RuntimeError,
     "output.padding must be smaller than either stride or dilation"),
    ("div_rounding_typo", lambda t, f: t.div(t.ones(2), 2, rounding_mode="typo"), RuntimeError,
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'typo'"),
    ("float_lshift", lambda t, f: t.tensor([1.0]) << 1, NotImplementedError,
     "\"lshift_cpu\" not implemented for 'Float'"),
    ("cross_entropy_float_2d_target", lambda t, f: f.cross_entropy(t.ones(3, 4), t.ones(3, 5)), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    ("cross_entropy_float_class_target", lambda t, f: f.cross_entropy(t.ones(3, 4), t.ones(3)), RuntimeError,
     "expected target dtype to be Long or Byte, but got Float"),
    ("cross_entropy_spatial_target", lambda t, f: f.cross_entropy(t.ones(3, 4, 2), t.ones(3, 4)), RuntimeError,
     r"Expected target size \[3, 2\], got \[3, 4\]"),
]


@pytest.mark.parametrize("f,error,match", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_error_names_the_problem(f, error, match):
    with pytest.raises(error, match=match):
        f(mt, F)


def test_conv_transpose1d_errors_name_conv_transpose1d():
    with pytest.raises(RuntimeError, match="^conv_transpose1d: the output width"):
        F.conv_transpose1d(mt.ones(1, 3, 5), mt.ones(3, 2, 3), padding=5)
    with pytest.raises(RuntimeError, match="^conv_transpose1d: output_padding"):
        F.conv_transpose1d(mt.ones(1, 3, 5), mt.ones(3, 2, 3), output_padding=2)


def test_integer_division_by_zero_is_still_a_zero_division_error():
    with pytest.raises(ZeroDivisionError):
        mt.tensor([3]) // 0


def test_randint_with_keyword_high():
    x = mt.randint(high=10, size=(300,))
    assert x.shape == (300,) and x.dtype is mt.int64 and bool((x >= 0).all()) and bool((x < 10).all())
    assert mt.randint(3, 5, (4,)).min().item() >= 3


@pytest.mark.torch
@pytest.mark.parametrize("f,error,match", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pytorch_raises_the_same(f, error, match):
    torch = pytest.importorskip("torch")
    with pytest.raises(error, match=match):
        f(torch, torch.nn.functional)
