"""ctc_loss and nn.CTCLoss: values and PyTorch's gradient against a float64 brute-force reference written here
(every alignment of tiny inputs enumerated), finite differences through a log_softmax, infinite losses,
argument forms, shapes and errors; the tests marked ``torch`` compare values and gradients with PyTorch on
random batches of varied lengths.

PyTorch's gradient with respect to log_probs is exp(log_probs) - (the posterior occupancy of each class): the
gradient of the loss through a log_softmax in front, which removes the exp term again. So finite differences
run through log_softmax, and the brute-force reference builds that formula from the enumerated alignments."""
import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

REDUCTIONS = ["mean", "sum", "none"]


def f64(a, requires_grad=False):
    return mt.tensor(np.asarray(a, dtype=np.float64), dtype=mt.float64, requires_grad=requires_grad)


def log_softmax(x):
    return x - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)) - x.max(-1, keepdims=True)


def collapse(path, blank):
    """The labelling of an alignment: repeats merged, then blanks removed."""
    return tuple(c for k, c in enumerate(path) if c != blank and (k == 0 or path[k - 1] != c))


def brute_force(lp, target, length, blank):
    """(nll, PyTorch's gradient (T, C) for an output gradient of 1) of one sample by enumerating every
    alignment of the first ``length`` steps: nll = -log sum_{paths -> target} prod_t p_t(path_t);
    grad = exp(lp) - occupancy for t < length, 0 after (nan for t < length when no path fits)."""
    steps, classes = lp.shape
    grad = np.zeros_like(lp)
    probs, occupancy = [], np.zeros((length, classes))
    for path in itertools.product(range(classes), repeat=length):
        if collapse(path, blank) == tuple(target):
            p = math.exp(sum(lp[t, c] for t, c in enumerate(path)))
            probs.append(p)
            occupancy[np.arange(length), path] += p
    z = sum(probs)
    nll = -math.log(z) if z > 0 else math.inf
    grad[:length] = np.exp(lp[:length]) - (occupancy / z if z > 0 else np.nan)
    return nll, grad


def reduce_ref(losses, lengths, reduction):
    if reduction == "mean":
        return (losses / np.maximum(lengths, 1)).mean()
    return losses.sum() if reduction == "sum" else losses


def random_case(rng, steps, batch, classes, longest, blank):
    """log-probabilities, padded targets (labels != blank, repeats likely) and varied lengths."""
    lp = log_softmax(rng.standard_normal((steps, batch, classes)))
    labels = [c for c in range(classes) if c != blank]
    targets = rng.choice(labels, (batch, longest)) if longest else np.zeros((batch, 0), dtype=np.int64)
    in_lengths = rng.integers(0, steps + 1, batch)
    tg_lengths = rng.integers(0, longest + 1, batch)
    return lp, targets, in_lengths, tg_lengths


def concatenated(targets, lengths):
    return np.concatenate([targets[n, :k] for n, k in enumerate(lengths)] + [np.zeros(0, dtype=np.int64)])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(1, 5), batch=st.integers(1, 3), classes=st.integers(2, 3),
       longest=st.integers(0, 3), reduction=st.sampled_from(REDUCTIONS), concat=st.booleans(),
       zero_infinity=st.booleans())
def test_matches_brute_force_enumeration(seed, steps, batch, classes, longest, reduction, concat, zero_infinity):
    rng = np.random.default_rng(seed)
    blank = int(rng.integers(0, classes))
    lp, targets, in_lengths, tg_lengths = random_case(rng, steps, batch, classes, longest, blank)
    refs = [brute_force(lp[:, n], targets[n, :tg_lengths[n]], in_lengths[n], blank) for n in range(batch)]
    losses = np.array([r[0] for r in refs])
    grads = np.stack([r[1] for r in refs], axis=1)  # (T, N, C), for an output gradient of 1 per sample
    infinite = np.isinf(losses)
    if zero_infinity:
        losses[infinite], grads[:, infinite] = 0.0, 0.0
    want = reduce_ref(losses, tg_lengths, reduction)
    x = f64(lp, True)
    t = mt.tensor(concatenated(targets, tg_lengths) if concat else targets)
    lengths = (mt.tensor(in_lengths), mt.tensor(tg_lengths)) if seed % 2 else (in_lengths.tolist(), tg_lengths.tolist())
    out = F.ctc_loss(x, t, *lengths, blank=blank, reduction=reduction, zero_infinity=zero_infinity)
    assert out.dtype == mt.float64 and tuple(out.shape) == np.shape(want)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-14)
    w = rng.standard_normal(np.shape(want))
    (out * f64(w)).sum().backward()
    scale = w / np.maximum(tg_lengths, 1) / batch if reduction == "mean" else np.broadcast_to(w, (batch,))
    np.testing.assert_allclose(x.grad.numpy(), grads * scale[None, :, None], rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_through_log_softmax(reduction):
    rng = np.random.default_rng(5)
    logits = f64(rng.standard_normal((6, 3, 4)), True)
    targets = mt.tensor([[1, 1, 2], [3, 2, 0], [2, 0, 0]])
    fn = lambda x: F.ctc_loss(x.log_softmax(2), targets, [6, 5, 4], [3, 2, 0], blank=0,  # noqa: E731
                              reduction=reduction)
    assert gradcheck(fn, [logits])
    fn = lambda x: F.ctc_loss(x.log_softmax(1), mt.tensor([2, 1]), mt.tensor(6), mt.tensor(2), blank=3,  # noqa: E731
                              reduction=reduction)
    assert gradcheck(fn, [f64(rng.standard_normal((6, 4)), True)])


def test_infinite_losses_nan_gradients_and_zero_infinity():
    lp = f64(log_softmax(np.random.default_rng(1).standard_normal((5, 2, 3))), True)
    targets, in_lengths, tg_lengths = mt.tensor([[1, 1, 1], [1, 2, 1]]), [4, 5], [3, 3]  # sample 0: 5 steps needed
    loss = F.ctc_loss(lp, targets, in_lengths, tg_lengths, reduction="none")
    assert loss[0].item() == math.inf and math.isfinite(loss[1].item())
    loss.sum().backward()
    g = lp.grad.numpy()
    assert np.isnan(g[:4, 0]).all() and (g[4:, 0] == 0).all() and np.isfinite(g[:, 1]).all()
    kept = f64(lp.detach().numpy(), True)
    zeroed = F.ctc_loss(kept, targets, in_lengths, tg_lengths, reduction="none", zero_infinity=True)
    assert zeroed[0].item() == 0.0 and zeroed[1].item() == loss[1].item()
    zeroed.sum().backward()
    assert (kept.grad.numpy()[:, 0] == 0).all()
    np.testing.assert_array_equal(kept.grad.numpy()[:, 1], g[:, 1])
    # no steps: an empty target has loss -0 (probability 1), any other inf; both have a zero gradient
    x = f64(lp.detach().numpy(), True)
    out = F.ctc_loss(x, targets, [0, 0], [0, 2], reduction="none")
    assert out.detach().numpy().tolist() == [0.0, math.inf] and math.copysign(1, out[0].item()) == -1
    out.sum().backward()
    assert (x.grad.numpy() == 0).all()


def test_inputs_shorter_than_the_sequence_get_no_gradient_past_their_end():
    lp = f64(log_softmax(np.random.default_rng(2).standard_normal((7, 2, 4))), True)
    F.ctc_loss(lp, mt.tensor([[1, 2], [3, 3]]), [4, 7], [2, 2]).backward()
    assert (lp.grad.numpy()[4:, 0] == 0).all() and (lp.grad.numpy()[:4, 0] != 0).all()
    # and the steps past the end take no part in the value
    changed = lp.detach().numpy().copy()
    changed[4:, 0] = 0.0
    a = F.ctc_loss(lp.detach(), mt.tensor([[1, 2], [3, 3]]), [4, 7], [2, 2], reduction="none")
    b = F.ctc_loss(f64(changed), mt.tensor([[1, 2], [3, 3]]), [4, 7], [2, 2], reduction="none")
    assert a[0].item() == b[0].item()


def test_argument_forms_agree():
    rng = np.random.default_rng(3)
    lp, targets, _, _ = random_case(rng, 8, 3, 5, 3, 0)
    in_lengths, tg_lengths = np.array([8, 6, 5]), np.array([3, 1, 2])
    x = f64(lp)
    want = F.ctc_loss(x, mt.tensor(targets), mt.tensor(in_lengths), mt.tensor(tg_lengths), reduction="none")
    flat = concatenated(targets, tg_lengths)
    padded_by_minus_one = np.where(np.arange(3) < tg_lengths[:, None], targets, -1)
    for t, il, tl in [
        (targets, in_lengths.tolist(), tg_lengths.tolist()),
        (targets, tuple(in_lengths.tolist()), tuple(tg_lengths.tolist())),
        (flat, mt.tensor(in_lengths, dtype=mt.int32), mt.tensor(tg_lengths, dtype=mt.int32)),
        (padded_by_minus_one, list(in_lengths), list(tg_lengths)),  # NumPy integers in a list
        (targets.astype(np.float32), in_lengths.tolist(), tg_lengths.tolist()),  # cast to int64, as PyTorch
        (targets.astype(np.int32), mt.tensor(in_lengths[None]), mt.tensor(tg_lengths[None])),  # any shape
    ]:
        got = F.ctc_loss(x, mt.tensor(t), il, tl, reduction="none")
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_unbatched_input_and_module():
    rng = np.random.default_rng(4)
    lp = log_softmax(rng.standard_normal((6, 4)))
    batched = F.ctc_loss(f64(lp[:, None]), mt.tensor([[1, 2, 2]]), [6], [3], reduction="none")
    for t, il, tl in [(mt.tensor([1, 2, 2]), [6], [3]), (mt.tensor([[1, 2, 2]]), [6], [3]),
                      (mt.tensor([1, 2, 2]), mt.tensor(6), mt.tensor(3))]:
        out = F.ctc_loss(f64(lp), t, il, tl, reduction="none")
        assert out.shape == () and out.item() == batched.item()
        assert F.ctc_loss(f64(lp), t, il, tl).item() == pytest.approx(batched.item() / 3, rel=1e-14)
    top = mt.ctc_loss(f64(lp[:, None]), mt.tensor([[1, 2, 2]]), [6], [3])  # ATen's signature: 'none' by default
    assert top.shape == (1,) and top.item() == batched.item()
    assert mt.ctc_loss(f64(lp[:, None]), mt.tensor([[1, 2, 2]]), [6], [3], 0, 1).item() == \
        pytest.approx(batched.item() / 3, rel=1e-14)
    module = mt.nn.CTCLoss(blank=3, reduction="sum", zero_infinity=True)
    assert module.blank == 3 and module.reduction == "sum" and module.zero_infinity
    got = module(f64(lp[:, None]), mt.tensor([[1, 1, 1, 1]]), [6], [4])  # 7 steps needed: inf, zeroed
    assert got.shape == () and got.item() == 0.0
    assert mt.nn.CTCLoss()(f64(lp[:, None]), mt.tensor([[1, 2, 2]]), [6], [3]).item() == \
        pytest.approx(batched.item() / 3, rel=1e-14)


def test_float32_and_autocast():
    rng = np.random.default_rng(6)
    lp = log_softmax(rng.standard_normal((9, 2, 5)))
    args = mt.tensor([[1, 2, 3], [4, 4, 0]]), [9, 8], [3, 2]
    want = F.ctc_loss(f64(lp), *args, reduction="none").numpy()
    got = F.ctc_loss(mt.tensor(lp, dtype=mt.float32), *args, reduction="none")
    assert got.dtype == mt.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    with mt.autocast("cpu", dtype=mt.bfloat16):
        assert F.ctc_loss(mt.tensor(lp, dtype=mt.bfloat16), *args).dtype == mt.float32


def _lp(*shape):
    return mt.randn(*shape).log_softmax(-1)


TG = mt.tensor([[1, 2, 2], [3, 1, 0]])
SUFFIX = r" \(while checking arguments for ctc_loss_allocate_outputs\)"


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, mt.tensor([6.0, 5.0]), mt.tensor([3, 2])), RuntimeError,
     "input_lengths must be integral"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, mt.tensor([6, 5]), mt.tensor([True, True])), RuntimeError,
     "target_lengths must be integral"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, (6, 5), mt.tensor([3, 2])), TypeError, "both be tensors"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [6.0, 5.0], [3, 2]), TypeError, "tuple or list of ints"),
    (lambda: F.ctc_loss(_lp(6, 4), TG[0], 6, 3), TypeError, "tuple or list of ints"),
    (lambda: F.ctc_loss(_lp(6, 0, 4), TG[:0], [], []), RuntimeError, "log_probs tensor must not be empty"),
    (lambda: F.ctc_loss(_lp(6, 2, 4).half(), TG, [6, 5], [3, 2]), NotImplementedError,
     "\"ctc_loss_cpu\" not implemented for 'Half'"),
    (lambda: F.ctc_loss(mt.ones(6, 2, 4, dtype=mt.int64), TG, [6, 5], [3, 2]), NotImplementedError,
     "not implemented for 'Long'"),
    (lambda: F.ctc_loss(_lp(1, 6, 2, 4), TG, [6, 5], [3, 2]), RuntimeError,
     "Expected 3-dimensional tensor, but got 5-dimensional tensor for argument #1 'log_probs'" + SUFFIX),  # as PyTorch
    (lambda: F.ctc_loss(_lp(6), TG, [6, 5], [3, 2]), RuntimeError, "but got 2-dimensional tensor"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG[None], [6, 5], [3, 2]), RuntimeError,
     "Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets'" + SUFFIX),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [6, 5], [3, 2], blank=4), RuntimeError, "blank must be in label range"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [6, 5], [3, 2], blank=-1), RuntimeError, "blank must be in label range"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [6], [3, 2]), RuntimeError, "input_lengths must be of size batch_size"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [6, 5], [3, 2, 1]), RuntimeError, "target_lengths must be of size"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [6, 5], [-1, 2]), RuntimeError,
     "Expected target_lengths to have value at least 0, but got value -1" + SUFFIX),
    (lambda: F.ctc_loss(_lp(6, 2, 4), mt.tensor([1, 2, 2, 3]), [6, 5], [3, 2]), RuntimeError,
     "Expected tensor to have size 5 at dimension 0, but got size 4 for argument #2 'targets'" + SUFFIX),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG[:1], [6, 5], [3, 2]), RuntimeError,
     "Expected tensor to have size 2 at dimension 0, but got size 1 for argument #2 'targets'"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [6, 5], [4, 2]), RuntimeError,
     "Expected tensor to have size at least 4 at dimension 1, but got size 3 for argument #2 'targets'"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [7, 5], [3, 2]), RuntimeError,
     "Expected input_lengths to have value at most 6, but got value 7" + SUFFIX),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [-1, 5], [3, 2]), RuntimeError,
     "Expected input_lengths to have value at least 0, but got value -1"),
    (lambda: F.ctc_loss(_lp(6, 4), TG[0], [6], [2]), RuntimeError, "Expected tensor to have size 2 at dimension 0"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), mt.tensor([[1, 7, 1], [1, 1, 1]]), [6, 5], [3, 2]), RuntimeError,
     r"target 7 is out of range for log_probs of 4 classes"),
    (lambda: F.ctc_loss(_lp(6, 2, 4), TG, [6, 5], [3, 2], reduction="x"), ValueError, "not a valid value"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_on_each_device(device):
    """The backend's recursion on the device (CuPy on CUDA) against the CPU's float64 result."""
    rng = np.random.default_rng(7)
    lp, targets, _, _ = random_case(rng, 10, 4, 6, 4, 0)
    in_lengths, tg_lengths = [10, 7, 3, 9], [4, 2, 3, 0]  # sample 2: 3 steps for 3 labels; inf if repeated
    results = []
    for dev in (mt.device("cpu"), device):
        x = mt.tensor(lp, device=dev, requires_grad=True)
        out = F.ctc_loss(x, mt.tensor(targets, device=dev), mt.tensor(in_lengths, device=dev),
                         mt.tensor(tg_lengths, device=dev), reduction="sum", zero_infinity=True)
        out.backward()
        results.append((out.item(), x.grad.cpu().numpy()))
    assert results[1][0] == pytest.approx(results[0][0], rel=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10, atol=1e-13)


# ------------------------------------------------------------------------------------------------ PyTorch
def _run(lib, fn, lp, targets, in_lengths, tg_lengths, tensors, dtype, **kwargs):
    x = lib.tensor(lp.astype(dtype), requires_grad=True)
    lengths = [lib.tensor(np.asarray(v)) if tensors else [int(k) for k in v] for v in (in_lengths, tg_lengths)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(x, lib.tensor(targets), *lengths, **kwargs)
    w = np.random.default_rng(1).standard_normal(tuple(out.shape))
    (out * lib.tensor(w, dtype=out.dtype)).sum().backward()
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.torch
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_values_and_gradients_match_pytorch(seed, reduction):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    steps, batch, classes, longest = int(rng.integers(1, 30)), int(rng.integers(1, 8)), int(rng.integers(2, 9)), \
        int(rng.integers(0, 8))
    blank = int(rng.integers(0, classes)) if seed % 2 else 0
    lp, targets, in_lengths, tg_lengths = random_case(rng, steps, batch, classes, longest, blank)
    lp = lp * rng.uniform(0.5, 3)  # not normalised: PyTorch's exp(lp) term shows in the gradient
    concat, tensors, zero_infinity = seed % 3 == 0, seed % 2 == 0, seed >= 3
    for dtype in ("float64", "float32"):
        t = concatenated(targets, tg_lengths) if concat else targets
        args = (lp, t, in_lengths, tg_lengths, tensors, dtype)
        kwargs = {"blank": blank, "reduction": reduction, "zero_infinity": zero_infinity}
        want, want_grad = _run(torch, torch.nn.functional.ctc_loss, *args, **kwargs)
        got, got_grad = _run(mt, F.ctc_loss, *args, **kwargs)
        assert got.shape == want.shape and got.dtype == want.dtype
        tol = 1e-10 if dtype == "float64" else 2e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)  # inf where PyTorch's is inf
        np.testing.assert_allclose(got_grad, want_grad, rtol=tol, atol=tol)  # nan where PyTorch's is nan


@pytest.mark.torch
def test_infinite_log_probs_and_unbatched_match_pytorch():
    torch = pytest.importorskip("torch")
    lp = log_softmax(np.random.default_rng(8).standard_normal((6, 2, 4)))
    lp[2, 0, 3] = lp[4, 1, 1] = -np.inf  # a class never used (nan in PyTorch's gradient) and a used one
    args = (lp, np.array([[1, 2, 2], [1, 3, 0]]), [6, 5], [3, 2], False, "float64")
    want, want_grad = _run(torch, torch.nn.functional.ctc_loss, *args, reduction="sum")
    got, got_grad = _run(mt, F.ctc_loss, *args, reduction="sum")
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-10, atol=1e-13)
    for reduction in REDUCTIONS:
        args = (lp[:, 1], np.array([1, 3]), [5], [2], False, "float64")
        want, want_grad = _run(torch, torch.nn.functional.ctc_loss, *args, reduction=reduction)
        got, got_grad = _run(mt, F.ctc_loss, *args, reduction=reduction)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-10, atol=1e-13)


@pytest.mark.torch
def test_module_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    lp, targets, _, _ = random_case(rng, 12, 3, 5, 4, 2)
    kwargs = {"blank": 2, "reduction": "mean", "zero_infinity": True}
    args = [targets, np.array([12, 9, 3]), np.array([4, 3, 4])]
    want = torch.nn.CTCLoss(**kwargs)(torch.tensor(lp), *map(torch.tensor, args))
    got = mt.nn.CTCLoss(**kwargs)(mt.tensor(lp), *map(mt.tensor, args))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_double_backward_raises_as_in_pytorch():
    x = f64(log_softmax(np.random.default_rng(10).standard_normal((5, 2, 4))), True)
    loss = F.ctc_loss(x, mt.tensor([[1, 2], [3, 3]]), [5, 5], [2, 2])
    (g,) = mt.autograd.grad(loss, x, create_graph=True)
    # the recorded backward body meets the raise after log(0)'s 0 / 0 (the classes absent from a target)
    with pytest.raises(NotImplementedError, match="double backward of CTCLoss"), np.errstate(invalid="ignore"):
        g.sum().backward()
