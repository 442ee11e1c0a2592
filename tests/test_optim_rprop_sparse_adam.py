"""Rprop and SparseAdam against float64 NumPy references written here from PyTorch's algorithms (and against
PyTorch itself where it is installed): trajectories over several steps, state_dict round trips, PyTorch's
signatures and errors."""
from __future__ import annotations

import inspect
import itertools
import math

import numpy as np
import pytest
from test_optim import DTYPES, TOL, check_trajectory, draw, param, run

import minitensor as mt
from minitensor import optim


# ----------------------------------------------------------------------------------- references
def ref_rprop(p, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    """s = sign(g prev); step *= etaplus / etaminus / 1 by s, clipped; g = 0 where s < 0;
    p -= sign(g) step; prev = g."""
    p = p.astype(np.float64)
    prev, size, out = np.zeros_like(p), np.full_like(p, lr), []
    for grad in grads:
        g = -grad if maximize else grad.copy()
        s = np.sign(g * prev)
        size = np.clip(size * np.where(s > 0, etas[1], np.where(s < 0, etas[0], 1.0)), *step_sizes)
        g = np.where(s < 0, 0.0, g)
        p = p - np.sign(g) * size
        prev = g
        out.append(p)
    return out


def sparse_grad(rng, shape, sparse_dim, nnz):
    """(indices, values) of a COO gradient with repeated indices (so coalescing sums them), and its dense
    sum and the mask of the entries it names."""
    indices = np.stack([rng.integers(0, n, nnz) for n in shape[:sparse_dim]])
    values = rng.standard_normal((nnz,) + shape[sparse_dim:])
    dense, mask = np.zeros(shape), np.zeros(shape, bool)
    np.add.at(dense, tuple(indices), values)
    mask[tuple(indices)] = True
    return indices, values, dense, mask


def ref_sparse_adam(p, steps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
    """Adam's moments and step on the named entries only; t counts every step."""
    b1, b2 = betas
    p = p.astype(np.float64)
    m, v, out = np.zeros_like(p), np.zeros_like(p), []
    for t, (dense, mask) in enumerate(steps, start=1):
        g = -dense if maximize else dense
        m = np.where(mask, b1 * m + (1 - b1) * g, m)
        v = np.where(mask, b2 * v + (1 - b2) * g * g, v)
        step = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        p = np.where(mask, p - step * m / (np.sqrt(v) + eps), p)
        out.append(p)
    return out


# ----------------------------------------------------------------------------------- Rprop
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("etas,step_sizes,maximize", list(itertools.product(
    [(0.5, 1.2), (0.3, 2.0)], [(1e-6, 50), (0.02, 0.15)], [False, True])))
def test_rprop_trajectory(dtype, etas, step_sizes, maximize):
    """(0.02, 0.15) clips the step sizes from both sides over the 7 steps."""
    kw = dict(lr=0.1, etas=etas, step_sizes=step_sizes, maximize=maximize)
    check_trajectory(lambda ps: optim.Rprop(ps, **kw), lambda p, g: ref_rprop(p, g, **kw), dtype)


def test_rprop_skips_the_step_after_a_sign_change_and_keeps_zeros():
    p = param(np.zeros(4))
    opt = optim.Rprop([p], lr=0.5, etas=(0.5, 2.0))
    for g in ([1.0, -1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 0.0]):
        p.grad = mt.tensor(np.array(g))
        opt.step()
    # element 0: same sign (step 0.5 then 1.0); 1: sign flipped (step size halved, no move); 2: zero product
    # keeps 0.5; 3: zero gradient does not move
    np.testing.assert_array_equal(p.array, [-1.5, 0.5, -0.5, -0.5])
    np.testing.assert_array_equal(opt.state[p]["step_size"].array, [1.0, 0.25, 0.5, 0.5])
    np.testing.assert_array_equal(opt.state[p]["prev"].array, [1.0, 0.0, 1.0, 0.0])


# ----------------------------------------------------------------------------------- SparseAdam
SPARSE_CASES = [((6, 3), 1), ((4, 5), 2), ((3, 2, 2), 1)]


def run_sparse_adam(dtype, shape, sparse_dim, kw, seed=0, n_steps=6, empty_at=3):
    """The optimizer's and the reference's trajectories; step ``empty_at`` has a gradient with no entries."""
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal(shape)
    p = param(p0, dtype)
    opt = optim.SparseAdam([p], **kw)
    got, steps = [], []
    for t in range(n_steps):
        indices, values, _, _ = sparse_grad(rng, shape, sparse_dim, 0 if t == empty_at else 5)
        values = values.astype(dtype)
        dense, mask = np.zeros(shape), np.zeros(shape, bool)
        np.add.at(dense, tuple(indices), values.astype(np.float64))
        mask[tuple(indices)] = True
        p.grad = mt.sparse_coo_tensor(mt.tensor(indices), mt.tensor(values), shape)
        opt.step()
        got.append(p.array.copy())
        steps.append((dense, mask))
    return opt, p, got, ref_sparse_adam(p0, steps, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,sparse_dim", SPARSE_CASES)
@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_trajectory(dtype, shape, sparse_dim, maximize):
    kw = dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6, maximize=maximize)
    opt, p, got, want = run_sparse_adam(dtype, shape, sparse_dim, kw)
    for step, (g, r) in enumerate(zip(got, want), start=1):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, r, err_msg=f"step {step}", **TOL[dtype])
    assert opt.state[p]["step"] == 6 and isinstance(opt.state[p]["step"], int)


def test_sparse_adam_rejects_dense_gradients_and_sparse_parameters():
    p = param(np.ones(3))
    opt = optim.SparseAdam([p])
    p.grad = mt.ones(3, dtype=mt.float64)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam"):
        opt.step()
    sparse = mt.sparse_coo_tensor(mt.tensor([[0]]), mt.tensor([1.0]), (3,)).requires_grad_()
    with pytest.raises(ValueError, match=r"Sparse params at indices \[\[0, 1\]\]: SparseAdam requires dense"):
        optim.SparseAdam([param(np.ones(2)), sparse])


@pytest.mark.parametrize("make,message", [
    (lambda p: optim.Rprop(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.Rprop(p, etas=(1.0, 1.2)), "Invalid eta values: 1.0, 1.2"),
    (lambda p: optim.Rprop(p, etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
    (lambda p: optim.SparseAdam(p, lr=0.0), "Invalid learning rate: 0.0"),
    (lambda p: optim.SparseAdam(p, eps=0.0), "Invalid epsilon value: 0.0"),
    (lambda p: optim.SparseAdam(p, betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
])
def test_invalid_hyperparameters_raise_pytorchs_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make([param(np.ones(2))])


# ----------------------------------------------------------------------- state, signatures
def test_rprop_state_dict_round_trip_continues_the_trajectory():
    p0, grads = draw(5)
    a = param(p0)
    kw = dict(lr=0.1, step_sizes=(0.02, 0.15))
    full = run(optim.Rprop([a], **kw), [a], [grads], np.float64)
    a = param(p0)
    first = optim.Rprop([a], **kw)
    run(first, [a], [grads[:3]], np.float64)
    saved = first.state_dict()
    assert set(saved["state"][0]) == {"step", "prev", "step_size"} and saved["state"][0]["step"].item() == 3
    a2 = param(a.array)
    second = optim.Rprop([a2], lr=5.0)
    second.load_state_dict(saved)
    rest = run(second, [a2], [grads[3:]], np.float64)
    for (f,), (r,) in zip(full[3:], rest):
        np.testing.assert_array_equal(r, f)


def test_sparse_adam_state_dict_round_trip_continues_the_trajectory():
    kw = dict(lr=0.05)
    _, _, full, _ = run_sparse_adam(np.float64, (6, 3), 1, kw)
    rng = np.random.default_rng(0)
    p = param(rng.standard_normal((6, 3)))
    opt = optim.SparseAdam([p], **kw)
    grads = [sparse_grad(rng, (6, 3), 1, 0 if t == 3 else 5)[:2] for t in range(6)]
    for indices, values in grads[:2]:
        p.grad = mt.sparse_coo_tensor(mt.tensor(indices), mt.tensor(values), (6, 3))
        opt.step()
    p2 = param(p.array)
    second = optim.SparseAdam([p2], lr=1.0)
    second.load_state_dict(opt.state_dict())
    assert second.state[p2]["step"] == 2 and isinstance(second.state[p2]["step"], int)
    for t, (indices, values) in enumerate(grads[2:], start=2):
        p2.grad = mt.sparse_coo_tensor(mt.tensor(indices), mt.tensor(values), (6, 3))
        second.step()
        np.testing.assert_array_equal(p2.array, full[t], err_msg=f"step {t + 1}")


def signature_text(cls: type) -> str:
    parts: list[str] = []
    for p in inspect.signature(cls).parameters.values():
        if p.kind is p.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        parts.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
    return "(" + ", ".join(parts) + ")"


def test_signatures_and_defaults_are_pytorchs():
    assert signature_text(optim.Rprop) == ("(params, lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-06, 50), *, "
                                           "capturable=False, foreach=None, maximize=False, differentiable=False)")
    assert signature_text(optim.SparseAdam) == "(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, maximize=False)"
    p = param(np.ones(2))
    assert optim.Rprop([p], foreach=True, capturable=False, differentiable=False).defaults["etas"] == (0.5, 1.2)


# ------------------------------------------------------------------------------------- PyTorch
@pytest.mark.torch
def test_signatures_match_pytorch():
    torch = pytest.importorskip("torch")
    for name in ("Rprop", "SparseAdam"):
        assert signature_text(getattr(optim, name)) == signature_text(getattr(torch.optim, name))


@pytest.mark.torch
@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.1, etas=(0.3, 2.0), step_sizes=(0.02, 0.15), maximize=True)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_rprop_matches_pytorch(kw, dtype):
    torch = pytest.importorskip("torch")
    p0, grads = draw(4, n_steps=12)
    p = param(p0, dtype)
    got = run(optim.Rprop([p], **kw), [p], [grads], dtype)
    tp = torch.tensor(p0.astype(dtype), requires_grad=True)
    topt = torch.optim.Rprop([tp], **kw)
    for step, (g, (mine,)) in enumerate(zip(grads, got), start=1):
        tp.grad = torch.tensor(g.astype(dtype))
        topt.step()
        np.testing.assert_allclose(mine, tp.detach().numpy(), err_msg=f"step {step}", **TOL[dtype])
    assert set(topt.state_dict()["state"][0]) == {"step", "prev", "step_size"}


@pytest.mark.torch
@pytest.mark.parametrize("shape,sparse_dim", SPARSE_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_adam_matches_pytorch(shape, sparse_dim, dtype):
    torch = pytest.importorskip("torch")
    kw = dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6, maximize=True)
    _, _, got, _ = run_sparse_adam(dtype, shape, sparse_dim, kw)
    rng = np.random.default_rng(0)
    tp = torch.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
    topt = torch.optim.SparseAdam([tp], **kw)
    for t, mine in enumerate(got):
        indices, values, _, _ = sparse_grad(rng, shape, sparse_dim, 0 if t == 3 else 5)
        tp.grad = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values.astype(dtype)), shape)
        topt.step()
        np.testing.assert_allclose(mine, tp.detach().numpy(), err_msg=f"step {t + 1}", **TOL[dtype])
