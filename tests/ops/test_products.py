"""outer / ger, inner, vdot, tensordot, kron, trace, addmm / addmv / addbmm / baddbmm, chain_matmul, cross and
block_diag vs NumPy float64 over shapes, gradcheck, PyTorch's errors; torch parity where torch is installed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, randn, seeds, t64

small = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)


@SETTINGS
@given(sa=small, sb=small, seed=seeds)
def test_kron_matches_numpy(sa, sb, seed):
    a, b = randn(seed, sa), randn(seed + 1, sb)
    assert_close(mt.kron(t64(a, False), t64(b, False)), np.kron(a, b), rtol=1e-12)
    check_grad(mt.kron, a, b)


@SETTINGS
@given(sa=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3), seed=seeds, data=st.data())
def test_tensordot_and_inner_match_numpy(sa, seed, data):
    n = data.draw(st.integers(0, len(sa)))
    sb = sa[len(sa) - n:] + data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    a, b = randn(seed, sa), randn(seed + 1, sb)
    assert_close(mt.tensordot(t64(a, False), t64(b, False), n), np.tensordot(a, b, n), rtol=1e-12, atol=1e-12)
    check_grad(lambda x, y: mt.tensordot(x, y, n), a, b)
    c = randn(seed + 2, sb[:-1] + sa[-1:]) if sb else randn(seed + 2, ())
    assert_close(mt.inner(t64(a, False), t64(c, False)), np.inner(a, c), rtol=1e-12, atol=1e-12)
    check_grad(mt.inner, a, c)


def test_tensordot_with_dim_lists_and_errors():
    a, b = randn(0, (2, 3, 4)), randn(1, (4, 3, 5))
    assert_close(mt.tensordot(t64(a, False), t64(b, False), dims=([1, 2], [1, 0])),
                 np.tensordot(a, b, axes=([1, 2], [1, 0])), rtol=1e-12)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        mt.tensordot(mt.ones(2, 3), mt.ones(4, 5), dims=1)
    with pytest.raises(RuntimeError, match="the last dimension must match"):
        mt.inner(mt.ones(2, 3), mt.ones(4, 2))


def test_outer_vdot_trace():
    u, v, m = randn(0, (3,)), randn(1, (4,)), randn(2, (3, 4))
    assert_close(mt.outer(t64(u, False), t64(v, False)), np.outer(u, v))
    assert_close(t64(u, False).ger(t64(v, False)), np.outer(u, v))
    check_grad(mt.outer, u, v)
    assert_close(mt.vdot(t64(v, False), t64(m[0], False)), np.vdot(v, m[0]), rtol=1e-12)
    check_grad(mt.vdot, v, m[0])
    assert_close(t64(m, False).trace(), np.trace(m), rtol=1e-12)
    check_grad(mt.trace, m)
    assert mt.trace(mt.ones(2, 3, dtype=mt.int32)).dtype is mt.int64
    for call, match in [(lambda: mt.trace(mt.ones(2, 2, 2)), "expected a matrix"),
                        (lambda: mt.vdot(mt.ones(2, 2), mt.ones(2)), "1D tensors expected"),
                        (lambda: mt.vdot(mt.ones(2), mt.ones(3)), "inconsistent tensor size"),
                        (lambda: mt.outer(mt.ones(2, 2), mt.ones(2)), "Expected 1-D argument self")]:
        with pytest.raises(RuntimeError, match=match):
            call()


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, -2.0), (0, 3.0)])
def test_fused_multiply_adds(beta, alpha):
    i2, m1, m2 = randn(0, (1, 4)), randn(1, (3, 2)), randn(2, (2, 4))
    ref = alpha * (m1 @ m2) + (beta * i2 if beta else 0)
    assert_close(mt.addmm(t64(i2, False), t64(m1, False), t64(m2, False), beta=beta, alpha=alpha), ref, rtol=1e-12)
    check_grad(lambda a, b, c: mt.addmm(a, b, c, beta=beta, alpha=alpha), i2, m1, m2)
    vec, iv = randn(3, (2,)), randn(4, (3,))
    assert_close(t64(iv, False).addmv(t64(m1, False), t64(vec, False), beta=beta, alpha=alpha),
                 alpha * (m1 @ vec) + (beta * iv if beta else 0), rtol=1e-12)
    b1, b2, ib = randn(5, (2, 3, 2)), randn(6, (2, 2, 4)), randn(7, (3, 4))
    assert_close(mt.baddbmm(t64(ib, False), t64(b1, False), t64(b2, False), beta=beta, alpha=alpha),
                 alpha * (b1 @ b2) + (beta * ib if beta else 0), rtol=1e-12)
    assert_close(mt.addbmm(t64(ib, False), t64(b1, False), t64(b2, False), beta=beta, alpha=alpha),
                 alpha * (b1 @ b2).sum(0) + (beta * ib if beta else 0), rtol=1e-12)
    check_grad(lambda a, b, c: mt.addbmm(a, b, c, beta=beta, alpha=alpha), ib, b1, b2)


def test_beta_zero_ignores_nan_input():
    y = mt.addmm(mt.full((2, 2), float("nan")), mt.ones(2, 3), mt.ones(3, 2), beta=0)
    assert_close(y, np.full((2, 2), 3.0))


def test_cross_chain_matmul_block_diag():
    a, b = randn(0, (3, 4)), randn(1, (3, 4))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        y = mt.cross(t64(a, False), t64(b, False))
    assert_close(y, np.cross(a, b, axis=0), rtol=1e-12)
    assert_close(t64(a, False).cross(t64(b, False), 0), np.cross(a, b, axis=0), rtol=1e-12)
    check_grad(lambda x, z: mt.cross(x, z, 0), a, b)
    ms = [randn(k, s) for k, s in enumerate([(2, 3), (3, 4), (4, 2)])]
    assert_close(mt.chain_matmul(*[t64(m, False) for m in ms]), ms[0] @ ms[1] @ ms[2], rtol=1e-12)
    blocks = [randn(0, (2, 2)), np.array(3.0), randn(1, (3,))]
    ref = np.zeros((4, 6))
    ref[:2, :2], ref[2, 2], ref[3, 3:] = blocks[0], 3.0, blocks[2]
    assert_close(mt.block_diag(*[t64(x, False) for x in blocks]), ref)
    check_grad(lambda *xs: mt.block_diag(*xs), *blocks)
    assert mt.block_diag(mt.ones(1, dtype=mt.int32), mt.ones(1)).dtype is mt.float32
    with pytest.raises(RuntimeError, match="2 or fewer dimensions"):
        mt.block_diag(mt.ones(2, 2, 2))


@pytest.mark.torch
def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    x, y = randn(0, (2, 3, 4)), randn(1, (4, 3, 2))
    cases = [lambda m, a, b: m.tensordot(a, b, dims=([1, 2], [1, 0])), lambda m, a, b: m.kron(a, b[0]),
             lambda m, a, b: m.inner(a, b.permute(2, 1, 0)), lambda m, a, b: m.trace(a[0]) * b.sum(),
             lambda m, a, b: m.baddbmm(b[0, 0, 0], a, b.permute(1, 0, 2)[:2], beta=0.5, alpha=2.0),
             lambda m, a, b: m.block_diag(a[0], b[0, 0], b[1, 1, 0])]
    for f in cases:
        ours, theirs = [t64(x), t64(y)], [torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)]
        out, tout = f(mt, *ours), f(torch, *theirs)
        assert_close(out, tout.detach().numpy(), rtol=1e-12, atol=1e-12)
        w = randn(2, tuple(tout.shape))
        (out * mt.tensor(w)).sum().backward()
        (tout * torch.tensor(w)).sum().backward()
        for p, q in zip(ours, theirs):
            assert_close(p.grad, q.grad.numpy(), rtol=1e-10, atol=1e-12)
