"""minitensor.finfo / iinfo: PyTorch's limits of each dtype, checked against known values and torch."""
from __future__ import annotations

import pytest

import minitensor as mt

FLOATS = {  # dtype: (bits, eps, max, smallest_normal, resolution): IEEE 754 values (bfloat16: 8 exponent bits)
    mt.float16: (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 1e-3),
    mt.bfloat16: (16, 2.0 ** -7, (2 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126, 1e-2),
    mt.float32: (32, 2.0 ** -23, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126, 1e-6),
    mt.float64: (64, 2.0 ** -52, (2 - 2.0 ** -52) * 2.0 ** 1023, 2.0 ** -1022, 1e-15),
}
INTS = {mt.uint8: (8, 0, 255), mt.int8: (8, -128, 127), mt.int16: (16, -2 ** 15, 2 ** 15 - 1),
        mt.int32: (32, -2 ** 31, 2 ** 31 - 1), mt.int64: (64, -2 ** 63, 2 ** 63 - 1)}


@pytest.mark.parametrize("d", list(FLOATS), ids=str)
def test_finfo_values(d):
    bits, eps, big, normal, resolution = FLOATS[d]
    f = mt.finfo(d)
    assert (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype) == \
        (bits, eps, big, -big, normal, normal, resolution, d.name)
    assert type(f.eps) is float and type(f.bits) is int
    assert mt.tensor(1.0, dtype=d) + f.eps != 1 and (mt.tensor(1.0, dtype=d) + f.eps / 2).item() == 1
    assert mt.tensor(f.max, dtype=d).isfinite().item()


def test_finfo_default_follows_the_default_dtype():
    assert mt.finfo() == mt.finfo(mt.float32) and mt.finfo().dtype == "float32"
    mt.set_default_dtype(mt.float64)
    try:
        assert mt.finfo().dtype == "float64"
    finally:
        mt.set_default_dtype(mt.float32)


@pytest.mark.parametrize("d", list(INTS), ids=str)
def test_iinfo_values(d):
    i = mt.iinfo(d)
    assert (i.bits, i.min, i.max, i.dtype) == (*INTS[d], d.name)
    assert type(i.max) is int
    assert mt.tensor(i.max, dtype=d).item() == i.max and mt.tensor(i.min, dtype=d).item() == i.min


def test_repr_and_read_only():
    assert repr(mt.finfo(mt.float16)) == ("finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, "
                                          "smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float16)")
    assert repr(mt.iinfo(mt.int32)) == "iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)"
    with pytest.raises(AttributeError, match="not writable"):
        mt.finfo().eps = 1.0
    assert mt.finfo(mt.float16) != mt.finfo(mt.bfloat16)


@pytest.mark.parametrize("call, match", [
    (lambda: mt.finfo(mt.int32), "requires a floating point input type"),
    (lambda: mt.finfo(mt.bool), "requires a floating point input type"),
    (lambda: mt.iinfo(mt.float32), "requires an integer input type"),
    (lambda: mt.iinfo(mt.bool), "bool is not supported"),
    (lambda: mt.finfo(None), "must be minitensor.dtype, not NoneType"),
    (lambda: mt.finfo("float32"), "must be minitensor.dtype, not str"),
])
def test_wrong_kind_is_a_type_error(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.torch
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32",
                                  "int64"])
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    d, td = getattr(mt, name), getattr(torch, name)
    if d.is_floating_point:
        ours, theirs = mt.finfo(d), torch.finfo(td)
        attrs = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")
    else:
        ours, theirs = mt.iinfo(d), torch.iinfo(td)
        attrs = ("bits", "max", "min", "dtype")
    assert [getattr(ours, a) for a in attrs] == [getattr(theirs, a) for a in attrs]
    assert repr(ours) == repr(theirs)
    wrong = torch.iinfo if d.is_floating_point else torch.finfo
    with pytest.raises(TypeError):
        wrong(td)
