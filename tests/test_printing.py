"""``repr(tensor)`` and ``set_printoptions`` as PyTorch's (torch/_tensor_str.py): the mode (fixed, whole,
scientific), the widths, line wrapping and summarization. Expected strings are PyTorch 2.13's output."""
import math

import pytest

import minitensor as mt
from minitensor.printing import get_printoptions, printoptions


@pytest.fixture(autouse=True)
def default_options():
    mt.set_printoptions(profile="default")
    yield
    mt.set_printoptions(profile="default")


CASES = [
    (lambda T: T.tensor([1.123456789, 2e-5]), "tensor([1.1235e+00, 2.0000e-05])"),
    (lambda T: T.tensor([1.5, 2.]), "tensor([1.5000, 2.0000])"),
    (lambda T: T.tensor([1e10, 1.]), "tensor([1.0000e+10, 1.0000e+00])"),
    (lambda T: T.arange(2000.), "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
                                "        1.9990e+03])"),
    (lambda T: T.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (lambda T: T.tensor(3.5), "tensor(3.5000)"),
    (lambda T: T.tensor(-2.), "tensor(-2.)"),
    (lambda T: T.tensor([math.nan, math.inf, -math.inf, 0.]), "tensor([nan, inf, -inf, 0.])"),
    (lambda T: T.tensor([math.nan, 1.25, -100.5]), "tensor([      nan,    1.2500, -100.5000])"),
    (lambda T: T.arange(12).reshape(3, 4) - 5, "tensor([[-5, -4, -3, -2],\n        [-1,  0,  1,  2],\n"
                                                "        [ 3,  4,  5,  6]])"),
    (lambda T: T.tensor([[True, False], [False, True]]), "tensor([[ True, False],\n        [False,  True]])"),
    (lambda T: T.arange(4.).reshape(2, 1, 2) / 3, "tensor([[[0.0000, 0.3333]],\n\n        [[0.6667, 1.0000]]])"),
    (lambda T: T.arange(40.).reshape(2, 20) * 1000,
     "tensor([[    0.,  1000.,  2000.,  3000.,  4000.,  5000.,  6000.,  7000.,  8000.,\n"
     "          9000., 10000., 11000., 12000., 13000., 14000., 15000., 16000., 17000.,\n"
     "         18000., 19000.],\n"
     "        [20000., 21000., 22000., 23000., 24000., 25000., 26000., 27000., 28000.,\n"
     "         29000., 30000., 31000., 32000., 33000., 34000., 35000., 36000., 37000.,\n"
     "         38000., 39000.]])"),
    (lambda T: T.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda T: T.ones(3, requires_grad=True), "tensor([1., 1., 1.], requires_grad=True)"),
    (lambda T: T.tensor([123456789.0, 1.]), "tensor([1.2346e+08, 1.0000e+00])"),
]


@pytest.mark.parametrize("make,expected", CASES)
def test_default_repr(make, expected):
    assert repr(make(mt)) == expected


def test_options_change_precision_threshold_edgeitems_linewidth():
    mt.set_printoptions(precision=2, threshold=5, edgeitems=2, linewidth=40)
    assert repr(mt.tensor([1.123456, 2.])) == "tensor([1.12, 2.00])"
    assert repr(mt.arange(10)) == "tensor([0, 1,  ..., 8, 9])"
    assert repr(mt.arange(25.).reshape(5, 5)) == ("tensor([[ 0.,  1.,  ...,  3.,  4.],\n"
                                                  "        [ 5.,  6.,  ...,  8.,  9.],\n"
                                                  "        ...,\n"
                                                  "        [15., 16.,  ..., 18., 19.],\n"
                                                  "        [20., 21.,  ..., 23., 24.]])")
    mt.set_printoptions(sci_mode=False)  # options not named keep their values; sci_mode is always set
    assert get_printoptions() == {"precision": 2, "threshold": 5, "edgeitems": 2, "linewidth": 40,
                                  "sci_mode": False}
    assert repr(mt.tensor([1e-5, 1e3])) == "tensor([   0.00, 1000.00])"
    mt.set_printoptions(sci_mode=True, profile="default")
    assert repr(mt.tensor([1.5, 3.])) == "tensor([1.5000e+00, 3.0000e+00])"


def test_profiles_and_the_context_manager():
    mt.set_printoptions(profile="short")
    assert get_printoptions() == {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80,
                                  "sci_mode": None}
    with printoptions(profile="full"):
        assert "..." not in repr(mt.arange(1200))
    assert get_printoptions()["edgeitems"] == 2 and "..." in repr(mt.arange(1200))


def test_edgeitems_zero_shows_the_size():
    mt.set_printoptions(edgeitems=0, threshold=3)
    assert repr(mt.arange(10.)) == "tensor([...], size=(10,))"
    assert repr(mt.arange(2.)) == "tensor([0., 1.], size=(2,))"


@pytest.mark.torch
@pytest.mark.parametrize("options", [{}, {"precision": 2, "threshold": 5, "edgeitems": 2, "linewidth": 40},
                                     {"sci_mode": False}, {"sci_mode": True}])
def test_matches_torch(options):
    torch = pytest.importorskip("torch")
    makers = [make for make, _ in CASES] + [
        lambda T: T.arange(60.).reshape(3, 4, 5) / 7, lambda T: T.arange(3000.).reshape(30, 100),
        lambda T: T.tensor([1.5, -2.25], dtype=T.float16), lambda T: T.tensor([1e-5, 1e-6]),
        lambda T: T.ones(2, 1, 1, 2), lambda T: T.tensor(math.nan), lambda T: T.tensor([0., 0.])]
    try:
        torch.set_printoptions(**options)
        mt.set_printoptions(**options)
        for make in makers:
            assert repr(make(mt)).replace("minitensor.", "") == repr(make(torch)).replace("torch.", "")
    finally:
        torch.set_printoptions(profile="default")
