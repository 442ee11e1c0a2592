"""``minitensor.return_types`` (PyTorch's ``torch.return_types``): every multi-result op returns its own
named tuple type, which behaves as PyTorch's structseq (tuple, fields, repr, pickling, construction)."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.return_types import topk
from minitensor.utils.data import default_collate

RT = mt.return_types


def _data(lib):
    """A (2, 3) matrix without ties and a symmetric positive definite (3, 3) one, in ``lib``."""
    x = lib.tensor([[3.0, 1.0, 2.0], [4.0, 6.0, 5.0]])
    s = lib.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]])
    return x, s


# (the type's name, a call) for every spelling: functions, Tensor methods, torch.linalg
CALLS = [
    ("topk", lambda L, x, s: x.topk(2)), ("topk", lambda L, x, s: L.topk(x, 2, dim=0)),
    ("sort", lambda L, x, s: x.sort(1)), ("sort", lambda L, x, s: L.sort(x, descending=True)),
    ("max", lambda L, x, s: x.max(1)), ("max", lambda L, x, s: L.max(x, dim=0, keepdim=True)),
    ("min", lambda L, x, s: x.min(1)), ("min", lambda L, x, s: L.min(x, 0)),
    ("median", lambda L, x, s: x.median(1)), ("median", lambda L, x, s: L.median(x, 0)),
    ("nanmedian", lambda L, x, s: x.nanmedian(1)), ("nanmedian", lambda L, x, s: L.nanmedian(x, 0)),
    ("mode", lambda L, x, s: x.mode(1)), ("mode", lambda L, x, s: L.mode(x)),
    ("kthvalue", lambda L, x, s: x.kthvalue(2, 1)), ("kthvalue", lambda L, x, s: L.kthvalue(x, 1, 0)),
    ("cummax", lambda L, x, s: x.cummax(1)), ("cummax", lambda L, x, s: L.cummax(x, 0)),
    ("cummin", lambda L, x, s: x.cummin(1)), ("cummin", lambda L, x, s: L.cummin(x, 0)),
    ("aminmax", lambda L, x, s: x.aminmax()), ("aminmax", lambda L, x, s: L.aminmax(x, dim=1)),
    ("frexp", lambda L, x, s: x.frexp()), ("frexp", lambda L, x, s: L.frexp(x)),
    ("histogram", lambda L, x, s: x.flatten().histogram(3)), ("histogram", lambda L, x, s: L.histogram(x, 4)),
    ("slogdet", lambda L, x, s: s.slogdet()), ("slogdet", lambda L, x, s: L.slogdet(s)),
    ("linalg_slogdet", lambda L, x, s: L.linalg.slogdet(s)),
    ("qr", lambda L, x, s: s.qr()), ("qr", lambda L, x, s: L.qr(s, some=False)),
    ("linalg_qr", lambda L, x, s: L.linalg.qr(s)),
    ("svd", lambda L, x, s: s.svd()), ("svd", lambda L, x, s: L.svd(x)),
    ("svd", lambda L, x, s: L.svd(x, compute_uv=False)),
    ("linalg_svd", lambda L, x, s: L.linalg.svd(x, full_matrices=False)),
    ("linalg_eigh", lambda L, x, s: L.linalg.eigh(s)),
    ("linalg_lstsq", lambda L, x, s: L.linalg.lstsq(s, s)),
    ("linalg_lu_factor", lambda L, x, s: L.linalg.lu_factor(s)),
    ("linalg_lu_factor_ex", lambda L, x, s: L.linalg.lu_factor_ex(s)),
    ("linalg_lu", lambda L, x, s: L.linalg.lu(s)), ("lu_unpack", lambda L, x, s: L.lu_unpack(*L.linalg.lu_factor(s))),
    ("linalg_inv_ex", lambda L, x, s: L.linalg.inv_ex(s)),
    ("linalg_cholesky_ex", lambda L, x, s: L.linalg.cholesky_ex(s)),
    ("linalg_solve_ex", lambda L, x, s: L.linalg.solve_ex(s, s)),
    ("geqrf", lambda L, x, s: L.geqrf(s)),
]
NAMES = sorted({name for name, _ in CALLS})
FIELDS = {"aminmax": ("min", "max"), "frexp": ("mantissa", "exponent"), "histogram": ("hist", "bin_edges"),
          "slogdet": ("sign", "logabsdet"), "linalg_slogdet": ("sign", "logabsdet"), "qr": ("Q", "R"),
          "linalg_qr": ("Q", "R"), "svd": ("U", "S", "V"), "linalg_svd": ("U", "S", "Vh"),
          "linalg_eigh": ("eigenvalues", "eigenvectors"),
          "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
          "linalg_lu_factor": ("LU", "pivots"), "linalg_lu_factor_ex": ("LU", "pivots", "info"),
          "linalg_lu": ("P", "L", "U"), "lu_unpack": ("P", "L", "U"), "linalg_inv_ex": ("inverse", "info"),
          "linalg_cholesky_ex": ("L", "info"), "linalg_solve_ex": ("result", "info"), "geqrf": ("a", "tau")}
# ops whose results are the same numbers in minitensor and PyTorch (no LAPACK sign or rounding choices)
EXACT = ["topk", "sort", "max", "min", "median", "nanmedian", "mode", "kthvalue", "cummax", "cummin", "aminmax",
         "frexp", "histogram"]


@pytest.mark.parametrize("name,call", CALLS)
def test_every_op_returns_its_own_type(name, call):
    r = call(mt, *_data(mt))
    assert type(r) is getattr(RT, name) and isinstance(r, tuple)
    assert type(r).__module__ == "minitensor.return_types" and type(r).__name__ == name
    assert type(r).__match_args__ == FIELDS.get(name, ("values", "indices"))
    assert len(r) == type(r).n_fields == type(r).n_sequence_fields and type(r).n_unnamed_fields == 0
    for i, field in enumerate(type(r).__match_args__):
        assert getattr(r, field) is r[i]


def test_the_module_holds_every_type():
    assert sorted(t.__name__ for t in RT.all_return_types) == NAMES
    assert set(NAMES) <= set(RT.__all__) and "return_types" in mt.__all__
    assert topk is RT.topk and RT.max is not RT.min and RT.sort is not RT.topk


def test_used_as_a_tuple():
    x, _ = _data(mt)
    values, indices = x.max(dim=1)
    r = x.max(1)
    assert r[0] is r.values and r[1] is r.indices and r[-1] is r.indices and len(r) == 2
    assert values.tolist() == [3.0, 6.0] and indices.tolist() == [0, 1] and x.max(1)[0].tolist() == [3.0, 6.0]
    assert r == (r.values, r.indices) and (r.values, r.indices) == r and hash(r) == hash(tuple(r))
    assert r == RT.min(r)  # tuple equality: the type does not count, as PyTorch's structseqs
    for part in (r[:1], r[:], r + (1,), r * 2):
        assert type(part) is tuple
    assert list(r) == [r.values, r.indices] and r.index(r.values) == 0


def test_pattern_matching():
    x, _ = _data(mt)
    match x.topk(1):
        case RT.topk(values=v, indices=i):
            assert v.tolist() == [[3.0], [6.0]] and i.tolist() == [[0], [1]]
        case _:
            pytest.fail("a topk result matches RT.topk")


def test_gradient_through_a_field():
    x = mt.tensor([[3.0, 1.0, 2.0], [4.0, 6.0, 5.0]], requires_grad=True)
    x.topk(2).values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0, 1], [0, 1, 1]])


def test_repr_is_one_field_a_line():
    x, _ = _data(mt)
    r = x.topk(2)
    assert repr(r) == str(r) == \
        f"minitensor.return_types.topk(\nvalues={r.values!r},\nindices={r.indices!r})"
    assert repr(RT.linalg_lstsq((1, 2, 3, 4))) == \
        "minitensor.return_types.linalg_lstsq(\nsolution=1,\nresiduals=2,\nrank=3,\nsingular_values=4)"


@pytest.mark.parametrize("how", [lambda r: pickle.loads(pickle.dumps(r)), copy.copy, copy.deepcopy])
def test_pickling_and_copying_keep_the_type(how):
    x, _ = _data(mt)
    r = x.sort(1, descending=True)
    back = how(r)
    assert type(back) is RT.sort
    assert back.values.tolist() == r.values.tolist() and back.indices.tolist() == r.indices.tolist()
    assert r.__reduce__() == (RT.sort, (tuple(r), {}))


def test_built_from_one_sequence():
    a, b = mt.tensor([1.0]), mt.tensor([0])
    for seq in ((a, b), [a, b], iter([a, b])):
        r = RT.max(seq)
        assert type(r) is RT.max and r.values is a and r.indices is b
    assert RT.max(sequence=(a, b)) == (a, b) and RT.max((a, b), {}) == (a, b)
    with pytest.raises(TypeError, match=r"^minitensor.return_types.max\(\) takes a 2-sequence \(3-sequence given\)$"):
        RT.max((a, b, b))
    with pytest.raises(TypeError, match="^constructor requires a sequence$"):
        RT.max(1)
    with pytest.raises(TypeError):
        RT.max(a, b)  # two arguments: the second is structseq's dict, a is no sequence of two


def test_fields_are_read_only():
    r = RT.kthvalue((1, 2))
    with pytest.raises(AttributeError, match="^readonly attribute$"):
        r.values = 3
    with pytest.raises(AttributeError, match="object has no attribute 'other'"):
        r.other = 3
    with pytest.raises(AttributeError):
        del r.indices
    assert not hasattr(r, "__dict__") and not hasattr(r, "_fields")  # no namedtuple extras, as PyTorch's


def test_nested_structures_keep_or_unpack_the_type_as_pytorch():
    x, _ = _data(mt)
    out = mt.func.vmap(lambda row: row.max(0))(x)  # a pytree node: rebuilt as its type
    assert type(out) is RT.max and out.values.tolist() == [3.0, 6.0]
    batch = default_collate([x.max(1), x.max(1)])  # a plain sequence to default_collate: a list
    assert type(batch) is list and batch[0].shape == (2, 2)


def test_svd_fields():
    _, s = _data(mt)
    U, S, V = mt.svd(s)
    Uh, Sh, Vh = mt.linalg.svd(s)
    np.testing.assert_allclose(V.numpy(), Vh.numpy().T, atol=1e-6)  # torch.svd's V is linalg.svd's Vh^T
    np.testing.assert_allclose((U @ mt.diag(S) @ V.T).numpy(), s.numpy(), atol=1e-5)


# PyTorch as the reference


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_types_match_pytorch(name):
    torch = pytest.importorskip("torch")
    theirs, ours = getattr(torch.return_types, name), getattr(RT, name)
    assert ours.__name__ == ours.__qualname__ == theirs.__name__ == name
    assert ours.__match_args__ == theirs.__match_args__
    for attr in ("n_fields", "n_sequence_fields", "n_unnamed_fields"):
        assert getattr(ours, attr) == getattr(theirs, attr)
    values = tuple(range(theirs.n_fields))
    assert repr(ours(values)) == repr(theirs(values)).replace("torch.", "minitensor.")
    assert ours(values) == theirs(values) and ours(values).__reduce__()[1] == theirs(values).__reduce__()[1]
    for bad in ((1,) * (theirs.n_fields + 1), 5):
        with pytest.raises(TypeError) as want:
            theirs(bad)
        with pytest.raises(TypeError) as got:
            ours(bad)
        assert str(got.value) == str(want.value).replace("torch.", "minitensor.")


@pytest.mark.torch
@pytest.mark.parametrize("name,call", CALLS)
def test_each_call_returns_pytorchs_type(name, call):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch.qr's deprecation
        theirs = call(torch, *_data(torch))
    ours = call(mt, *_data(mt))
    assert type(theirs).__name__ == type(ours).__name__ == name
    assert [tuple(t.shape) for t in theirs] == [tuple(t.shape) for t in ours]
    if name in EXACT:
        assert repr(ours) == repr(theirs).replace("torch.", "minitensor.")
