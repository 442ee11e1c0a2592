"""F.embedding_bag and nn.EmbeddingBag against explicit per-bag float64 NumPy references (every input form,
mode, padding_idx, per_sample_weights, scale_grad_by_freq, empty bags, ties at the maximum; forward and both
gradients, through the CPU's Numba loops and the generic NumPy body), gradients by finite differences, and
PyTorch."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import nn
from tests.helpers import FEW, as_np, assert_close, t64
from minitensor.testing import gradcheck, gradgradcheck
from minitensor.backends.cpu import numba_kernels


def reference(indices, weight, offsets, mode, psw=None, include_last_offset=False, padding_idx=None):
    """One Python step per bag: the bag's rows (padding left out) reduced in float64."""
    indices = np.asarray(indices)
    weight = np.asarray(weight, dtype=np.float64)
    if indices.ndim == 2:
        psw = None if psw is None else np.asarray(psw).reshape(indices.shape)
        bags = [(row, None if psw is None else psw[k]) for k, row in enumerate(indices)]
    else:
        starts = list(offsets[:-1] if include_last_offset else offsets)
        ends = starts[1:] + [len(indices)]  # the last bag runs to the end, include_last_offset or not (PyTorch)
        bags = [(indices[s:e], None if psw is None else np.asarray(psw)[s:e]) for s, e in zip(starts, ends)]
    out = np.zeros((len(bags), weight.shape[1]))
    for b, (idx, w) in enumerate(bags):
        keep = np.ones(len(idx), bool) if padding_idx is None else idx != padding_idx % weight.shape[0]
        rows = weight[idx[keep]]
        if w is not None:
            rows = rows * np.asarray(w, dtype=np.float64)[keep][:, None]
        if len(rows) == 0:
            continue
        out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


def random_bags(seed, n_rows=6, dim=3):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 9))
    indices = rng.integers(0, n_rows, n)
    cuts = np.sort(rng.integers(0, n + 1, int(rng.integers(1, 5))))
    cuts[0] = 0
    return rng, indices, cuts, rng.standard_normal((n_rows, dim))


@FEW
@given(seed=st.integers(0, 2**31), mode=st.sampled_from(["sum", "mean", "max"]), last=st.booleans(),
       pad=st.sampled_from([None, 2, -1]))
def test_offsets_match_per_bag_reference(seed, mode, last, pad):
    rng, indices, offsets, weight = random_bags(seed)
    out = F.embedding_bag(mt.tensor(indices), mt.tensor(weight), mt.tensor(offsets), mode=mode,
                          include_last_offset=last, padding_idx=pad)
    assert_close(out, reference(indices, weight, offsets, mode, None, last, pad), rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_two_d_input_is_fixed_length_bags(mode):
    rng = np.random.default_rng(0)
    idx, weight = rng.integers(0, 5, (4, 3)), rng.standard_normal((5, 2)).astype(np.float32)
    out = F.embedding_bag(mt.tensor(idx), mt.tensor(weight), mode=mode)
    assert out.dtype == mt.float32 and tuple(out.shape) == (4, 2)
    assert_close(out, reference(idx, weight, None, mode), rtol=1e-6)


def test_per_sample_weights_and_empty_bags():
    weight = np.arange(12.0).reshape(4, 3)
    idx, offsets, psw = np.array([1, 2, 3, 0]), np.array([0, 0, 3, 3]), np.array([0.5, -1.0, 2.0, 3.0])
    out = F.embedding_bag(mt.tensor(idx), mt.tensor(weight), mt.tensor(offsets), mode="sum",
                          per_sample_weights=mt.tensor(psw))
    assert_close(out, reference(idx, weight, offsets, "sum", psw), rtol=1e-12)
    assert as_np(out)[0].tolist() == [0, 0, 0] and as_np(out)[2].tolist() == [0, 0, 0]
    for mode in ("mean", "max"):  # empty bags are zeros in every mode
        got = as_np(F.embedding_bag(mt.tensor(idx), mt.tensor(weight), mt.tensor(offsets), mode=mode))
        assert got[0].tolist() == [0, 0, 0] and got[2].tolist() == [0, 0, 0]
    empty = F.embedding_bag(mt.tensor(np.zeros(0, np.int64)), mt.tensor(weight), mt.tensor([0, 0]))
    assert as_np(empty).tolist() == [[0, 0, 0], [0, 0, 0]]


def test_padding_is_left_out_of_the_mean_count():
    weight = np.arange(6.0).reshape(3, 2)
    out = F.embedding_bag(mt.tensor([[0, 1, 1], [0, 0, 0]]), mt.tensor(weight), mode="mean", padding_idx=0)
    assert as_np(out).tolist() == [[2.0, 3.0], [0.0, 0.0]]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_gradients_by_finite_differences(mode):
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((5, 3))
    idx, offsets = mt.tensor([0, 3, 3, 1, 4, 2, 2]), mt.tensor([0, 2, 2, 5])
    assert gradcheck(lambda w: F.embedding_bag(idx, w, offsets, mode=mode, padding_idx=4), [t64(weight)])
    psw = rng.standard_normal(7)
    if mode == "sum":
        assert gradcheck(lambda w, p: F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=p,
                                                      include_last_offset=True), [t64(weight), t64(psw)])


def test_padding_row_gets_no_gradient_and_max_routes_to_the_maximum():
    w = mt.tensor([[0.0, 5.0], [1.0, 1.0], [3.0, -2.0]], requires_grad=True)
    F.embedding_bag(mt.tensor([[0, 1, 2]]), w, mode="max", padding_idx=0).sum().backward()
    assert as_np(w.grad).tolist() == [[0, 0], [0, 1], [1, 0]]


def test_errors():
    w = mt.randn(5, 2)
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(mt.tensor([[1]]), w, mt.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(mt.tensor([1]), w)
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(mt.tensor([1, 2]), w, mt.tensor([1]))
    with pytest.raises(RuntimeError, match="can not be greater than input's length 2"):
        F.embedding_bag(mt.tensor([1, 2]), w, mt.tensor([0, 3]))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum' \\(got mode='mean'\\)"):
        F.embedding_bag(mt.tensor([1, 2]), w, mt.tensor([0]), per_sample_weights=mt.ones(2))
    with pytest.raises(ValueError, match="same shape as the input"):
        F.embedding_bag(mt.tensor([1, 2]), w, mt.tensor([0]), mode="sum", per_sample_weights=mt.ones(3))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(mt.tensor([1]), w, mt.tensor([0]), mode="min")
    with pytest.raises(RuntimeError, match="padding_idx must be within"):
        F.embedding_bag(mt.tensor([1]), w, mt.tensor([0]), padding_idx=5)
    with pytest.raises(RuntimeError, match="Long, Int"):
        F.embedding_bag(mt.tensor([1.0]), w, mt.tensor([0]))
    with pytest.raises(IndexError):
        F.embedding_bag(mt.tensor([7]), w, mt.tensor([0]))


def test_module_and_from_pretrained():
    bag = nn.EmbeddingBag(6, 3, mode="sum", padding_idx=1)
    assert tuple(bag.weight.shape) == (6, 3) and as_np(bag.weight)[1].tolist() == [0, 0, 0]
    assert repr(bag) == "EmbeddingBag(6, 3, mode='sum', padding_idx=1)"
    assert repr(nn.EmbeddingBag(6, 3)) == "EmbeddingBag(6, 3, mode='mean')"
    idx, offsets = mt.tensor([0, 2, 5, 1]), mt.tensor([0, 3])
    out = bag(idx, offsets, per_sample_weights=mt.tensor([1.0, 2.0, 3.0, 4.0]))
    w = as_np(bag.weight).astype(np.float64)
    assert_close(out, reference([0, 2, 5, 1], w, [0, 3], "sum", [1.0, 2.0, 3.0, 4.0], padding_idx=1), rtol=1e-6)
    table = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    pre = nn.EmbeddingBag.from_pretrained(table)
    assert not pre.weight.requires_grad and pre.mode == "mean"
    assert as_np(pre(mt.tensor([[0, 1]]))).tolist() == [[2.0, 3.0]]
    assert nn.EmbeddingBag.from_pretrained(table, freeze=False, mode="max").weight.requires_grad
    assert set(bag.state_dict()) == {"weight"}


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_matches_torch(mode):
    torch = pytest.importorskip("torch")
    for seed in range(8):
        rng, indices, offsets, weight = random_bags(seed, n_rows=7, dim=4)
        psw = rng.standard_normal(len(indices)) if mode == "sum" else None
        for last in (False, True) if len(offsets) > 1 else (False,):  # PyTorch crashes on 0 bags
            kw = dict(mode=mode, include_last_offset=last, padding_idx=3)
            tw = torch.tensor(weight, requires_grad=True)
            tp = None if psw is None else torch.tensor(psw, requires_grad=True)
            ref = torch.nn.functional.embedding_bag(torch.tensor(indices), tw, torch.tensor(offsets),
                                                    per_sample_weights=tp, **kw)
            mw = mt.tensor(weight, requires_grad=True)
            mp = None if psw is None else mt.tensor(psw, requires_grad=True)
            out = F.embedding_bag(mt.tensor(indices), mw, mt.tensor(offsets), per_sample_weights=mp, **kw)
            assert_close(out, ref.detach().numpy(), rtol=1e-12)
            cot = rng.standard_normal(tuple(out.shape))
            ref.backward(torch.tensor(cot))
            out.backward(mt.tensor(cot))
            assert_close(mw.grad, tw.grad.numpy(), rtol=1e-12)
            if mp is not None:
                assert_close(mp.grad, tp.grad.numpy(), rtol=1e-12, atol=1e-12)
    module = torch.nn.EmbeddingBag(6, 3, mode=mode, padding_idx=0, include_last_offset=True)
    ours = nn.EmbeddingBag(6, 3, mode=mode, padding_idx=0, include_last_offset=True)
    assert repr(ours) == repr(module)


def test_include_last_offset_last_bag_runs_to_the_end():
    # offsets (B + 1,): B bags; as PyTorch, the last offset is not read (the last bag still ends at N)
    w = mt.eye(5, dtype=mt.float64)
    out = F.embedding_bag(mt.tensor([0, 1, 2, 3]), w, mt.tensor([0, 2, 3]), mode="sum", include_last_offset=True)
    assert as_np(out).tolist() == [[1, 1, 0, 0, 0], [0, 0, 1, 1, 0]]
    none = F.embedding_bag(mt.tensor([0, 1]), w, mt.tensor([0]), include_last_offset=True)
    assert tuple(none.shape) == (0, 5)


# ------------------------------------------------------------------ forward and backward against loops
def loop_reference(indices, weight, bounds, mode, psw, pad, gy, freq):
    """out (B, D), weight's gradient (V, D) and per_sample_weights' (N,) in float64, one Python step per
    entry, as PyTorch's CPU kernels: bag b is indices[bounds[b]:bounds[b + 1]]; "max" keeps a bag's first
    value and takes a later one only where it is greater (its gradient goes to that row)."""
    weight = np.asarray(weight, dtype=np.float64)
    count = np.bincount(indices, minlength=len(weight))
    bags, dim = len(bounds) - 1, weight.shape[1]
    out, arg = np.zeros((bags, dim)), np.full((bags, dim), -1)
    gw, gp = np.zeros_like(weight), np.zeros(len(indices))
    for b in range(bags):
        kept = [i for i in range(bounds[b], bounds[b + 1]) if indices[i] != pad]
        for i in kept:
            row = weight[indices[i]]
            if mode == "max":
                for d in range(dim):
                    if arg[b, d] < 0 or row[d] > out[b, d]:
                        out[b, d], arg[b, d] = row[d], indices[i]
            else:
                out[b] += row * (1.0 if psw is None else psw[i])
                gp[i] = gy[b] @ row
                scale = (1.0 / count[indices[i]] if freq else 1.0) * (1.0 if psw is None else psw[i])
                gw[indices[i]] += gy[b] * scale / (len(kept) if mode == "mean" else 1)
        if mode == "mean" and kept:
            out[b] /= len(kept)
        for d in range(dim):
            if mode == "max" and arg[b, d] >= 0:
                gw[arg[b, d], d] += gy[b, d]
    return out, gw, gp


def draw_case(seed, form, ties):
    """indices, weight (integers from {-1, 0, 1} with ``ties``: many tied maxima), offsets or None, and the
    bag bounds the reference reads."""
    rng = np.random.default_rng(seed)
    rows, dim = int(rng.integers(1, 7)), int(rng.integers(1, 5))
    weight = rng.integers(-1, 2, (rows, dim)).astype(float) if ties else rng.standard_normal((rows, dim))
    if form == "2d":
        bags, length = int(rng.integers(0, 5)), int(rng.integers(1, 5))
        indices = rng.integers(0, rows, (bags, length))
        return indices, weight, None, [b * length for b in range(bags + 1)], rng
    n = int(rng.integers(0, 13))
    indices = rng.integers(0, rows, n)
    offsets = np.sort(rng.integers(0, n + 1, int(rng.integers(1, 6))))  # repeats: empty bags
    offsets[0] = 0
    starts = list(offsets[:-1] if form == "last" else offsets)
    return indices, weight, offsets, starts + [n] if starts else [0], rng


@contextlib.contextmanager
def body(name):
    """Run the CPU's Numba loops ("numba") or the generic NumPy body ("numpy", as without Numba)."""
    with pytest.MonkeyPatch.context() as mp:
        if name == "numpy":
            mp.setattr(numba_kernels, "load", lambda module: None)
        yield


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), mode=st.sampled_from(["sum", "mean", "max"]),
       form=st.sampled_from(["2d", "offsets", "last"]), pad=st.sampled_from([None, 0, -1]), ties=st.booleans(),
       weighted=st.booleans(), freq=st.booleans(), path=st.sampled_from(["numba", "numpy"]))
def test_forward_and_gradients_match_the_loop_reference(seed, mode, form, pad, ties, weighted, freq, path):
    indices, weight, offsets, bounds, rng = draw_case(seed, form, ties)
    weighted, freq = weighted and mode == "sum", freq and mode != "max"
    psw = rng.standard_normal(indices.shape) if weighted else None
    w = mt.tensor(weight, requires_grad=True)
    p = None if psw is None else mt.tensor(psw, requires_grad=True)
    with body(path):
        out = F.embedding_bag(mt.tensor(indices), w, None if offsets is None else mt.tensor(offsets), mode=mode,
                              include_last_offset=form == "last", padding_idx=pad, per_sample_weights=p,
                              scale_grad_by_freq=freq)
        gy = rng.standard_normal(tuple(out.shape))
        out.backward(mt.tensor(gy))
    flat = indices.reshape(-1)
    want, gw, gp = loop_reference(flat, weight, bounds, mode, None if psw is None else psw.reshape(-1),
                                  None if pad is None else pad % len(weight), gy, freq)
    assert_close(out, want, rtol=1e-12, atol=1e-12)
    assert_close(w.grad, gw, rtol=1e-12, atol=1e-12)
    if p is not None:
        assert_close(p.grad, gp.reshape(indices.shape), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("path", ["numba", "numpy"])
def test_max_ties_go_to_the_first_and_a_nan_stays_only_where_first(path):
    nan = float("nan")
    w = mt.tensor([[1.0, 2.0], [1.0, 3.0], [0.5, 3.0], [nan, 0.0]], requires_grad=True)
    with body(path):
        out = F.embedding_bag(mt.tensor([0, 1, 2, 2, 1, 0, 3, 0, 1, 0, 3]), w, mt.tensor([0, 3, 6, 9]), mode="max")
        out.sum().backward()
    np.testing.assert_array_equal(as_np(out), [[1, 3], [1, 3], [nan, 3], [1, 2]])
    assert as_np(w.grad).tolist() == [[2, 1], [1, 2], [0, 1], [1, 0]]  # PyTorch's numbers


@pytest.mark.parametrize("dtype", [mt.float16, mt.bfloat16, mt.float32])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_low_precision_weights(dtype, mode):
    rng = np.random.default_rng(3)
    weight, idx, offsets = rng.standard_normal((9, 5)), rng.integers(0, 9, 30), np.array([0, 4, 4, 17])
    w = mt.tensor(weight, dtype=dtype, requires_grad=True)
    out = F.embedding_bag(mt.tensor(idx), w, mt.tensor(offsets), mode=mode, padding_idx=2)
    out.backward(mt.ones(*out.shape, dtype=dtype))
    assert out.dtype == dtype and w.grad.dtype == dtype
    exact = as_np(w.detach().float()).astype(np.float64)
    want, gw, _ = loop_reference(idx, exact, [0, 4, 4, 17, 30], mode, None, 2, np.ones(out.shape), False)
    tol = {mt.float16: 2e-3, mt.bfloat16: 1e-2, mt.float32: 1e-6}[dtype]
    assert_close(out.float(), want, rtol=tol, atol=tol)
    assert_close(w.grad.float(), gw, rtol=tol, atol=tol)


def test_per_sample_weights_must_have_weights_dtype():
    with pytest.raises(RuntimeError, match="to have the same type as tensor for argument #1 'per_sample_weights'"):
        F.embedding_bag(mt.tensor([0, 1]), mt.randn(3, 2), mt.tensor([0]), mode="sum",
                        per_sample_weights=mt.ones(2, dtype=mt.float64))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_matches_torch_on_ties_padding_and_2d_weights(dtype, mode):
    """Integer-valued weights (many ties at the maximum), padding and per_sample_weights (2-D input: its
    gradient keeps the input's shape): values and both gradients equal PyTorch's."""
    torch = pytest.importorskip("torch")
    for seed in range(6):
        for form in ("2d", "offsets", "last"):
            indices, weight, offsets, _, rng = draw_case(seed, form, ties=True)
            if offsets is not None and form == "last" and len(offsets) < 2 or indices.size == 0:
                continue  # PyTorch crashes on 0 bags
            psw = rng.standard_normal(indices.shape).astype(dtype) if mode == "sum" else None
            kw = dict(mode=mode, include_last_offset=form == "last", padding_idx=1 % len(weight))
            tw = torch.tensor(weight.astype(dtype), requires_grad=True)
            tp = None if psw is None else torch.tensor(psw, requires_grad=True)
            ref = torch.nn.functional.embedding_bag(torch.tensor(indices), tw, None if offsets is None else
                                                    torch.tensor(offsets), per_sample_weights=tp, **kw)
            mw = mt.tensor(weight.astype(dtype), requires_grad=True)
            mp = None if psw is None else mt.tensor(psw, requires_grad=True)
            out = F.embedding_bag(mt.tensor(indices), mw, None if offsets is None else mt.tensor(offsets),
                                  per_sample_weights=mp, **kw)
            tol = 1e-6 if dtype == "float32" else 1e-12
            assert_close(out, ref.detach().numpy(), rtol=tol, atol=tol)
            cot = rng.standard_normal(tuple(out.shape)).astype(dtype)
            ref.backward(torch.tensor(cot))
            out.backward(mt.tensor(cot))
            assert_close(mw.grad, tw.grad.numpy(), rtol=tol, atol=tol)
            if mp is not None:
                assert_close(mp.grad, tp.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_half_and_bfloat16_match_torch(mode):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    weight, idx, offsets = rng.standard_normal((9, 5)).astype(np.float32), rng.integers(0, 9, 30), [0, 4, 4, 17]
    for ours, theirs, tol in ((mt.float16, torch.float16, 2e-3), (mt.bfloat16, torch.bfloat16, 1e-2)):
        tw = torch.tensor(weight).to(theirs).requires_grad_()
        ref = torch.nn.functional.embedding_bag(torch.tensor(idx), tw, torch.tensor(offsets), mode=mode)
        ref.sum().backward()
        w = mt.tensor(weight, dtype=ours, requires_grad=True)
        out = F.embedding_bag(mt.tensor(idx), w, mt.tensor(offsets), mode=mode)
        out.sum().backward()
        assert_close(out.float(), ref.detach().float().numpy(), rtol=tol, atol=tol)
        assert_close(w.grad.float(), tw.grad.float().numpy(), rtol=tol, atol=tol)


@pytest.mark.torch
def test_scale_grad_by_freq_is_torchs_embedding_one():
    """The sum of a 2-D input's rows through PyTorch's F.embedding(scale_grad_by_freq=True): each row's
    gradient divided by its index's count. (PyTorch's CPU embedding_bag divides a row's gradient by the
    count of another index: docs/differences.md.)"""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    weight, idx = rng.standard_normal((6, 3)), rng.integers(0, 6, (4, 5))
    cot = rng.standard_normal((4, 3))
    tw = torch.tensor(weight, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=2, scale_grad_by_freq=True).sum(1) \
        .backward(torch.tensor(cot))
    w = mt.tensor(weight, requires_grad=True)
    F.embedding_bag(mt.tensor(idx), w, mode="sum", padding_idx=2, scale_grad_by_freq=True).backward(mt.tensor(cot))
    assert_close(w.grad, tw.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_second_order_gradients(mode):
    """The backward is the generic body on the recording backend under create_graph: gradgradcheck holds."""
    rng = np.random.default_rng(4)
    idx, offsets = mt.tensor([0, 1, 1, 2, 4, 3]), mt.tensor([0, 2])
    w, p = t64(rng.standard_normal((5, 3))), t64(rng.standard_normal(6))
    if mode == "sum":
        assert gradgradcheck(lambda w, p: F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=p,
                                                          padding_idx=4) ** 2, [w, p])
    else:
        assert gradgradcheck(lambda w: F.embedding_bag(idx, w, offsets, mode=mode, padding_idx=4) ** 3, [w])
