"""matmul (batch broadcasting, the 1-D cases), mm/bmm/mv/dot and linear vs np.matmul and gradcheck."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
import minitensor.nn.functional as F

from helpers import SETTINGS, assert_close, check_grad, randn, seeds, t64


@st.composite
def matmul_shapes(draw):
    """Shapes a, b that np.matmul accepts: 1-D or batched matrices with broadcastable batch dims."""
    m, k, n = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    (ba, bb), _ = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    a = (k,) if draw(st.booleans()) and draw(st.booleans()) else ba + (m, k)
    b = (k,) if draw(st.booleans()) and draw(st.booleans()) else bb + (k, n)
    return a, b


@SETTINGS
@given(ab=matmul_shapes(), seed=seeds)
def test_matmul_matches_numpy_with_gradients(ab, seed):
    sa, sb = ab
    a, b = randn(seed, sa), randn(seed + 1, sb)
    expected = np.matmul(a, b)
    out = t64(a, False) @ t64(b, False)
    assert_close(out, np.asarray(expected), rtol=1e-12)
    assert_close(mt.matmul(t64(a, False), t64(b, False)), np.asarray(expected), rtol=1e-12)
    check_grad(lambda x, y: x @ y, a, b)
    check_grad(lambda x: x.matmul(mt.tensor(b)), a)
    check_grad(lambda y: mt.tensor(a) @ y, b)


@pytest.mark.parametrize("sa, sb, out", [
    ((3,), (3,), ()), ((2, 3), (3,), (2,)), ((3,), (3, 4), (4,)), ((5, 2, 3), (3,), (5, 2)),
    ((3,), (5, 3, 4), (5, 4)), ((5, 1, 2, 3), (4, 3, 2), (5, 4, 2, 2)), ((2, 3), (6, 3, 4), (6, 2, 4)),
])
def test_matmul_1d_and_batched_cases(sa, sb, out):
    a, b = randn(0, sa), randn(1, sb)
    y = t64(a, False) @ t64(b, False)
    assert y.shape == out
    assert_close(y, np.asarray(np.matmul(a, b)), rtol=1e-12)
    check_grad(lambda x, z: x @ z, a, b)


def test_matmul_float32_and_reflected_ndarray():
    a, b = randn(0, (4, 3)), randn(1, (3, 2))
    y = mt.tensor(a, dtype=mt.float32) @ mt.tensor(b, dtype=mt.float32)
    assert y.dtype is mt.float32
    assert_close(y, a @ b, rtol=1e-5, atol=1e-6)
    assert_close(a @ mt.tensor(b), a @ b)  # ndarray @ Tensor -> Tensor.__rmatmul__


def test_matmul_errors_name_both_shapes():
    with pytest.raises(RuntimeError, match=r"\(2, 3\).*\(4, 5\)"):
        mt.ones(2, 3) @ mt.ones(4, 5)
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(4,\)"):
        mt.ones(3) @ mt.ones(4)
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(2\) must match the size of tensor b \(3\) at "
                       r"non-singleton dimension 0$"):  # PyTorch 2.13's text
        mt.ones(2, 2, 3) @ mt.ones(3, 3, 4)
    with pytest.raises(RuntimeError, match="at least 1D"):
        mt.tensor(2.0) @ mt.ones(2)


def test_mm_bmm_mv_dot():
    a, b = randn(0, (2, 3)), randn(1, (3, 4))
    check_grad(mt.mm, a, b)
    assert_close(mt.mm(t64(a, False), t64(b, False)), a @ b)
    ba, bb = randn(2, (5, 2, 3)), randn(3, (5, 3, 4))
    check_grad(mt.bmm, ba, bb)
    assert_close(mt.bmm(t64(ba, False), t64(bb, False)), ba @ bb)
    v = randn(4, (3,))
    check_grad(mt.mv, a, v)
    check_grad(mt.dot, v, v * 2)
    assert_close(mt.dot(t64(v, False), t64(v, False)), v @ v)
    with pytest.raises(RuntimeError, match="2D"):
        mt.mm(mt.ones(2, 3, 4), mt.ones(4, 2))
    with pytest.raises(RuntimeError, match="3D"):
        mt.bmm(mt.ones(2, 3), mt.ones(3, 2))
    with pytest.raises(RuntimeError, match="batch"):
        mt.bmm(mt.ones(2, 2, 3), mt.ones(3, 3, 2))
    with pytest.raises(RuntimeError, match="1D"):
        mt.dot(mt.ones(2, 2), mt.ones(2))


@SETTINGS
@given(seed=seeds, lead=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), fin=st.integers(1, 4),
       fout=st.integers(1, 4), bias=st.booleans())
def test_linear(seed, lead, fin, fout, bias):
    x, w, b = randn(seed, lead + (fin,)), randn(seed + 1, (fout, fin)), randn(seed + 2, (fout,))
    expected = x @ w.T + (b if bias else 0)
    args = (x, w, b) if bias else (x, w)
    assert_close(F.linear(*[t64(a, False) for a in args]), expected, rtol=1e-12)
    check_grad(F.linear, *args)


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"\(2, 3\).*\(4, 5\)"):
        F.linear(mt.ones(2, 3), mt.ones(4, 5))
    with pytest.raises(RuntimeError, match="bias"):
        F.linear(mt.ones(2, 3), mt.ones(4, 3), mt.ones(3))
    with pytest.raises(RuntimeError, match="dtype"):
        F.linear(mt.ones(2, 3), mt.ones(4, 3, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="2D"):  # a 1-D weight is a dot only without a bias, as PyTorch's
        F.linear(mt.ones(3), mt.ones(3), mt.ones(()))
    assert F.linear(mt.ones(3), mt.ones(3)).item() == 3.0


def test_linear_float32_gradients_vs_numpy():
    x, w, b = randn(0, (8, 5)), randn(1, (3, 5)), randn(2, (3,))
    tx, tw, tb = (mt.tensor(a, dtype=mt.float32, requires_grad=True) for a in (x, w, b))
    gy = randn(3, (8, 3))
    F.linear(tx, tw, tb).backward(mt.tensor(gy, dtype=mt.float32))
    assert tx.grad.dtype is mt.float32
    assert_close(tx.grad, gy @ w, rtol=1e-5, atol=1e-5)
    assert_close(tw.grad, gy.T @ x, rtol=1e-5, atol=1e-5)
    assert_close(tb.grad, gy.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa, sb", [((64, 1), (1, 256)), ((3, 5, 1), (1, 4)), ((2, 1, 4, 1), (3, 1, 6)),
                                    ((1, 1), (1, 1))])
def test_matmul_of_a_contracted_dim_of_one_is_numpys_product(sa, sb):
    """The backend's outer-product path (a broadcast multiply) gives np.matmul's values, dtype and shape,
    C-contiguous, from any layout of its operands."""
    B = mt.device("cpu").backend
    rng = np.random.default_rng(0)
    a = rng.standard_normal(sa).astype(np.float32)
    b = np.asfortranarray(rng.standard_normal(sb)).astype(np.float32, order="F")
    got, want = B.matmul(a, b), np.matmul(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):
        B.matmul(np.ones((3, 1)), np.ones((3, 4)))  # 1 != 3 in the contracted dim, as np.matmul refuses


def test_linear_with_one_output_has_the_outer_product_input_gradient():
    rng = np.random.default_rng(1)
    x = mt.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    w = mt.tensor(rng.standard_normal((1, 3)), requires_grad=True)
    g = rng.standard_normal((5, 1))
    F.linear(x, w).backward(mt.tensor(g))
    assert_close(x.grad, g @ w.detach().numpy(), rtol=1e-14)
    assert_close(w.grad, g.T @ x.detach().numpy(), rtol=1e-14)


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk", [(2, 2, 3), (2, 3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]), ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("i,i->", [(3,), (3,)]), ("i,j", [(3,), (2,)]), ("...i,...i->...", [(2, 3), (3,)]),
    ("ijk,k->ij", [(2, 3, 4), (4,)]),
    ("iij->j", [(2, 2, 3)]), ("a...b,b...->a...", [(2, 3), (3, 4, 1)]), ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]),
    ("bii->bi", [(2, 3, 3)]), ("b i j , b j -> b i", [(2, 3, 4), (2, 4)]), ("ij,ij->ij", [(2, 3), (1, 3)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_CASES)
def test_einsum_matches_numpy_with_gradients(equation, shapes):
    arrays = [randn(i, s) for i, s in enumerate(shapes)]
    y = mt.einsum(equation, *[t64(a, False) for a in arrays])
    assert_close(y, np.asarray(np.einsum(equation.replace(" ", ""), *arrays)), rtol=1e-12, atol=1e-12)
    assert_close(mt.einsum(equation, [t64(a, False) for a in arrays]), np.asarray(y.numpy()))  # one list of them
    check_grad(lambda *xs: mt.einsum(equation, *xs), *arrays)


def test_einsum_sums_the_ellipsis_missing_from_the_output():
    a = randn(0, (2, 3, 4))
    assert_close(mt.einsum("i...->i", t64(a, False)), a.sum((1, 2)), rtol=1e-12)
    assert_close(mt.einsum("i...->i", t64(a[:, 0, 0], False)), a[:, 0, 0], rtol=1e-12)
    check_grad(lambda x: mt.einsum("i...->i", x), a)


@pytest.mark.parametrize("call, match", [
    (lambda: mt.einsum("ij,jk", mt.ones(2, 3)), "fewer operands"),
    (lambda: mt.einsum("ij", mt.ones(2, 3), mt.ones(3)), "more operands"),
    (lambda: mt.einsum("ij,jk", mt.ones(2, 3), mt.ones(3, 2, dtype=mt.float64)), "expected scalar type"),
    (lambda: mt.einsum("ij,jk", mt.ones(2, 3), mt.ones(4, 2)), "einsum()"),
    (lambda: mt.einsum("ijk", mt.ones(2, 3)), "einsum()"),
])
def test_einsum_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


@pytest.mark.torch
@pytest.mark.parametrize("equation, shapes", EINSUM_CASES + [("i...->i", [(2, 3, 4)])])
def test_einsum_parity_with_torch(equation, shapes):
    torch = pytest.importorskip("torch")
    arrays = [randn(i, s) for i, s in enumerate(shapes)]
    xs, ts = [t64(a) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays]
    y, ty = mt.einsum(equation, *xs), torch.einsum(equation, *ts)
    assert_close(y, ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    for x, t in zip(xs, ts):
        assert_close(x.grad, t.grad.numpy(), rtol=1e-10, atol=1e-12)


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3), seed=seeds)
def test_linalg_cross_and_vecdot_match_numpy(shapes, seed):
    (sa, sb), _ = shapes
    sa, sb = (1,) * (len(sb) - len(sa)) + sa + (3,), (1,) * (len(sa) - len(sb)) + sb + (3,)
    a, b = randn(seed, sa), randn(seed + 1, sb)
    assert_close(mt.linalg.cross(t64(a, False), t64(b, False)), np.cross(a, b), rtol=1e-12, atol=1e-12)
    assert_close(mt.linalg.vecdot(t64(a, False), t64(b, False)), np.sum(a * b, -1), rtol=1e-12, atol=1e-12)
    check_grad(mt.linalg.cross, a, b)
    check_grad(lambda x, y: mt.linalg.vecdot(x, y, dim=0), a, b)


def test_multi_dot_and_cross_errors():
    v, m, w = randn(0, (3,)), randn(1, (3, 4)), randn(2, (4,))
    assert_close(mt.linalg.multi_dot([t64(v, False), t64(m, False), t64(w, False)]), v @ m @ w, rtol=1e-12)
    check_grad(lambda *xs: mt.linalg.multi_dot(xs), v, m, w)
    with pytest.raises(RuntimeError, match="at least 2 tensors"):
        mt.linalg.multi_dot([mt.ones(2, 2)])
    with pytest.raises(RuntimeError, match="must have length 3"):
        mt.linalg.cross(mt.ones(2), mt.ones(2))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        mt.linalg.cross(mt.ones(4, 3), mt.ones(3))
