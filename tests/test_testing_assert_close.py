"""``minitensor.testing.assert_close`` / ``assert_allclose`` / ``make_tensor``: PyTorch's rules and messages,
against literal expected texts (no torch) and against ``torch.testing`` itself (marked torch)."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.testing import assert_allclose, assert_close, make_tensor


def message(actual, expected, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        assert_close(actual, expected, **kwargs)
    return str(info.value)


def test_close_tensors_pass_within_the_dtype_defaults():
    x = mt.tensor([1.0, 2.0, 3.0])
    assert_close(x, x + 1e-6)
    assert_close(x.double(), x.double() + 1e-8)
    assert_close(mt.tensor([1, 2]), mt.tensor([1, 2]))
    assert_close(mt.tensor([1.0, 2.0], dtype=mt.float16), mt.tensor([1.0, 2.002], dtype=mt.float16))
    assert_close(mt.tensor([1.0, 2.0], dtype=mt.bfloat16), mt.tensor([1.0, 2.03], dtype=mt.bfloat16))
    assert_close(mt.tensor(3.0), mt.tensor(3.0))
    assert_close(mt.empty(0, 3), mt.empty(0, 3))
    assert_close(mt.tensor([math.inf, -math.inf]), mt.tensor([math.inf, -math.inf]))


def test_mismatch_message():
    expected = ("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                "Greatest absolute difference: 0.5 at index (2,) (up to 1e-05 allowed)\n"
                "Greatest relative difference: 0.1428571492433548 at index (2,) (up to 1.3e-06 allowed)")
    assert message(mt.tensor([1.0, 2.0, 3.0]), mt.tensor([1.0, 2.0, 3.5])) == expected


def test_integers_are_compared_for_equality():
    assert message(mt.tensor([1, 2, 3]), mt.tensor([1, 2, 4])) == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 1 at index (2,)\nGreatest relative difference: 0.25 at index (2,)")
    # with tolerances the difference is taken in float32: a uint8 one does not wrap around
    assert_close(mt.tensor([3], dtype=mt.uint8), mt.tensor([4], dtype=mt.uint8), rtol=0.0, atol=1.0)


def test_scalar_message_for_0d_tensors_and_nan():
    assert message(mt.tensor(1.0), mt.tensor(2.0)) == (
        "Scalars are not close!\n\nExpected 2.0 but got 1.0.\nAbsolute difference: 1.0 (up to 1e-05 allowed)\n"
        "Relative difference: 0.5 (up to 1.3e-06 allowed)")
    nan = mt.tensor(float("nan"))
    assert message(nan, nan.clone()) == ("Scalars are not close!\n\nExpected nan but got nan.\n"
                                         "Absolute difference: nan (up to 1e-05 allowed)\n"
                                         "Relative difference: nan (up to 1.3e-06 allowed)")
    assert_close(nan, nan.clone(), equal_nan=True)


def test_attribute_checks_and_their_switches():
    x = mt.tensor([1.0, 2.0, 3.0])
    assert message(x, x.double()) == ("The values for attribute 'dtype' do not match: minitensor.float32 != "
                                      "minitensor.float64.")
    assert_close(x, x.double(), check_dtype=False)
    assert message(x, x[:2]) == ("The values for attribute 'shape' do not match: minitensor.Size([3]) != "
                                 "minitensor.Size([2]).")
    m = mt.arange(6.0).reshape(2, 3)
    t = m.t().contiguous().t()
    assert_close(m, t)
    assert message(m, t, check_stride=True) == "The values for attribute 'stride()' do not match: (3, 1) != (1, 2)."
    s = m.to_sparse()
    assert message(s, m) == ("The values for attribute 'layout' do not match: minitensor.sparse_coo != "
                             "minitensor.strided.")
    assert_close(s, m, check_layout=False)
    assert_close(s, m.to_sparse())
    assert "Sparse COO values are not close!" in message(s, (m * 2).to_sparse())
    assert "Mismatched elements: 5 / 5 (100.0%)" in message(s, (m * 2).to_sparse())


def test_rtol_and_atol_come_together():
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                                         "atol."):
        assert_close(mt.tensor(1.0), mt.tensor(1.0), rtol=0.1)
    with pytest.raises(ValueError, match="but got no rtol"):
        assert_close(1.0, 1.0, atol=0.1)
    assert_close(mt.tensor([1.0]), mt.tensor([1.5]), rtol=0.0, atol=0.5)


def test_msg_string_and_callable():
    a, e = mt.tensor([1.0, 4.0, 5.0]), mt.tensor([1.0, 2.0, 3.0])
    assert message(a, e, msg="Argh, the tensors are not close!") == "Argh, the tensors are not close!"
    assert message(a, e, msg=lambda m: f"Header\n\n{m}\n\nFooter") == (
        "Header\n\nTensor-likes are not close!\n\nMismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 1.0 at index (1,) (up to 1.3e-06 allowed)\n\nFooter")


def test_nested_sequences_and_mappings():
    assert_close([mt.tensor([1.0]), (2, 3.0)], [mt.tensor([1.0]), [2, 3.0]])
    got = message([mt.tensor([1.0]), {"a": mt.tensor([2.0])}], [mt.tensor([1.0]), {"a": mt.tensor([3.0])}])
    assert got.endswith("\n\nThe failure occurred for item [1]['a']")
    assert message([1, 2], [1, 2, 3]) == "The length of the sequences mismatch: 2 != 3"
    assert message({"a": 1}, {"b": 1}) == ("The keys of the mappings do not match:\nMissing keys in the actual "
                                           "mapping: ['b']\nAdditional keys in the actual mapping: ['a']")


def test_python_scalars_numpy_and_none():
    assert_close(1.0, 1.0 + 1e-8)
    assert message(1.0, 1) == "The (d)types do not match: <class 'float'> != <class 'int'>."
    assert_close(1.0, 1, check_dtype=False)
    assert_close(np.float32(2.0), 2.0)
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    assert message(np.array([1.0, 2.0]), np.array([1.0, 3.0])).startswith("Tensor-likes are not close!")
    assert message(True, False) == "Booleans mismatch: True is not False"
    assert message(None, 1) == "None mismatch: None is not 1"
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type <class "
                                        "'numpy.ndarray'> and <class 'minitensor.tensor.Tensor'>."):
        assert_close(np.array([1.0]), mt.tensor([1.0]))


def test_requires_grad_and_subclasses():
    w = mt.nn.Parameter(mt.tensor([1.0, 2.0]))
    assert_close(w, mt.tensor([1.0, 2.0]))
    assert_close(w * 2, mt.tensor([2.0, 4.0]))
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(w, mt.tensor([1.0, 2.0]), allow_subclasses=False)


def test_assert_allclose_is_deprecated_and_looser():
    with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated since 1.12"):
        assert_allclose(mt.tensor([1.0, 2.0]), [1.0, 2.0001])  # float32: rtol 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert_allclose(mt.tensor([float("nan")]), [float("nan")])  # NaN equal by default
        assert_allclose(mt.tensor([1.0]), mt.tensor([1.0], dtype=mt.float64))  # dtypes not checked
        with pytest.raises(AssertionError, match="custom"):
            assert_allclose(mt.tensor([1.0]), [2.0], msg="custom")


def test_make_tensor_ranges_and_options():
    mt.manual_seed(0)
    f = make_tensor(200, dtype=mt.float32, device="cpu")
    assert f.shape == (200,) and f.dtype == mt.float32 and -9 <= f.min().item() and f.max().item() < 9
    i = make_tensor((50, 4), dtype=mt.int64, device="cpu")
    assert -9 <= i.min().item() and i.max().item() <= 9
    u = make_tensor(200, dtype=mt.uint8, device="cpu")
    assert 0 <= u.min().item() and u.max().item() <= 9
    b = make_tensor(100, dtype=mt.bool, device="cpu")
    assert b.dtype == mt.bool and b.any().item() and not b.all().item()
    g = make_tensor(3, 4, dtype=mt.float64, device="cpu", low=-1, high=1, requires_grad=True)
    assert g.requires_grad and g.shape == (3, 4) and g.abs().max().item() < 1
    n = make_tensor(3, 4, dtype=mt.float32, device="cpu", noncontiguous=True)
    assert n.shape == (3, 4) and not n.is_contiguous()
    c = make_tensor(2, 3, 4, 5, dtype=mt.float32, device="cpu", memory_format=mt.channels_last)
    assert c.is_contiguous(memory_format=mt.channels_last)
    z = make_tensor(500, dtype=mt.int8, device="cpu", low=-1, high=1, exclude_zero=True)
    assert set(z.tolist()) <= {-1, 1}
    wide = make_tensor(100, dtype=mt.float16, device="cpu", low=-1e10, high=1e10)  # clamped to float16's range
    assert bool(mt.isfinite(wide).all())


def test_make_tensor_errors():
    with pytest.raises(ValueError, match=re.escape("`low` must be less than `high`, but got 2 >= 1")):
        make_tensor(2, dtype=mt.float32, device="cpu", low=2, high=1)
    with pytest.raises(ValueError, match="`requires_grad=True` is not supported for boolean and integral dtypes"):
        make_tensor(2, dtype=mt.int32, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match="mutually exclusive"):
        make_tensor(2, 2, dtype=mt.float32, device="cpu", noncontiguous=True, memory_format=mt.contiguous_format)
    with pytest.raises(ValueError, match="cannot be NaN"):
        make_tensor(2, dtype=mt.float32, device="cpu", low=float("nan"))
    with pytest.raises(ValueError, match="only supports"):
        make_tensor(2, dtype=mt.uint8, device="cpu", low=300, high=400)
    with pytest.warns(FutureWarning, match="low==high"):
        make_tensor(2, dtype=mt.float32, device="cpu", low=1, high=1)


# ----- against torch.testing -----

def _to_torch(torch, x):
    if isinstance(x, mt.Tensor):
        t = torch.from_numpy(np.array(x.detach().float().numpy()))
        return t.to(getattr(torch, str(x.dtype).removeprefix("minitensor.")))
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(torch, y) for y in x)
    if isinstance(x, dict):
        return {k: _to_torch(torch, v) for k, v in x.items()}
    return x


def _outcome(fn, *args, **kwargs) -> str:
    try:
        fn(*args, **kwargs)
        return "passed"
    except Exception as error:  # noqa: BLE001  (the type and text are what is compared)
        return f"{type(error).__name__}: {error}".replace("minitensor.tensor.Tensor", "torch.Tensor") \
            .replace("minitensor.", "torch.")


CASES = [(mt.tensor([1.0, 2.0, 3.0]), mt.tensor([1.0, 2.0, 3.5]), {}),
         (mt.tensor([1.0, 2.0]), mt.tensor([1.0, 2.0], dtype=mt.float64), {}),
         (mt.tensor([1.0, 2.0, 3.0]), mt.tensor([1.0, 2.0]), {}),
         (mt.tensor(1.0), mt.tensor(2.0), {}),
         (mt.tensor([1, 2, 3]), mt.tensor([1, 2, 4]), {}),
         (mt.tensor([1.0, float("nan")]), mt.tensor([1.0, float("nan")]), {}),
         (mt.tensor([1.0, float("inf")]), mt.tensor([1.0, 2.0]), {}),
         ([mt.tensor([1.0]), {"a": mt.tensor([2.0])}], [mt.tensor([1.0]), {"a": mt.tensor([3.0])}], {}),
         (1.0, 1, {}), (1.0, 1.1, {}), (2, 3, {}), (np.array([1.0, 2.0]), np.array([1.0, 3.0]), {}),
         ([1, 2], [1, 2, 3], {}), ({"a": 1}, {"b": 1}, {}), (True, False, {}), (None, 1, {}),
         (mt.tensor([1.0]), mt.tensor([1.0]), {"rtol": 1e-3}),
         (mt.tensor([[1.0, 4.0], [5.0, 6.0]]), mt.tensor([[1.0, 2.0], [3.0, 0.0]]), {"msg": lambda m: f"<{m}>"}),
         (mt.tensor([1, 5], dtype=mt.uint8), mt.tensor([2, 3], dtype=mt.uint8), {"rtol": 0.1, "atol": 1.0})]


@pytest.mark.torch
@pytest.mark.parametrize("case", range(len(CASES)))
def test_outcomes_and_messages_match_pytorch(case):
    torch = pytest.importorskip("torch")
    actual, expected, kwargs = CASES[case]
    ours = _outcome(assert_close, actual, expected, **kwargs)
    theirs = _outcome(torch.testing.assert_close, _to_torch(torch, actual), _to_torch(torch, expected), **kwargs)
    assert ours == theirs


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "uint8"])
def test_tolerance_edges_match_pytorch(dtype):
    """Random pairs near the tolerance's edge: the same verdict and message as PyTorch's, value for value."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for _ in range(60):
        if dtype in ("int32", "uint8"):
            a = rng.integers(0, 50, 6)
            e = np.clip(a + rng.integers(-2, 3, 6), 0, 60)
            tol = {"rtol": float(rng.choice([0, 0.01, 0.05])), "atol": float(rng.choice([0, 1, 0.5]))}
        else:
            a = rng.standard_normal(6) * rng.choice([1, 100])
            e = a * (1 + rng.standard_normal(6) * rng.choice([1e-2, 1e-3, 1e-6]))
            if rng.random() < 0.2:
                a[0] = e[0] = np.nan
            if rng.random() < 0.2:
                e[1] = np.inf
            tol = {} if rng.random() < 0.5 else {"rtol": float(rng.choice([1e-3, 1e-2])),
                                                  "atol": float(rng.choice([1e-5, 1e-3]))}
        ta, te = (torch.tensor(v).to(getattr(torch, dtype)) for v in (a, e))
        ma, me = (mt.tensor(t.double().numpy()).to(getattr(mt, dtype)) for t in (ta, te))
        equal_nan = bool(rng.random() < 0.5)
        assert _outcome(assert_close, ma, me, equal_nan=equal_nan, **tol) == \
            _outcome(torch.testing.assert_close, ta, te, equal_nan=equal_nan, **tol)


@pytest.mark.torch
@pytest.mark.parametrize("kwargs", [{"low": 2, "high": 1}, {"low": float("nan")}, {"low": 300, "high": 400},
                                    {"requires_grad": True}, {"noncontiguous": True, "memory_format": "cl"}])
def test_make_tensor_errors_match_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    dtype = "uint8" if "low" in kwargs and kwargs["low"] == 300 or "requires_grad" in kwargs else "float32"
    ours = dict(kwargs, memory_format=mt.channels_last) if "memory_format" in kwargs else kwargs
    theirs = dict(kwargs, memory_format=torch.channels_last) if "memory_format" in kwargs else kwargs
    got = _outcome(make_tensor, 2, 2, dtype=getattr(mt, dtype), device="cpu", **ours)
    expected = _outcome(torch.testing.make_tensor, 2, 2, dtype=getattr(torch, dtype), device="cpu", **theirs)
    assert got.split("memory_format=")[0] == expected.split("memory_format=")[0] and got.startswith("ValueError")
