"""Gradient checkpointing (minitensor.utils.checkpoint): gradients equal to the plain run's, activations freed."""
from __future__ import annotations

import gc
import sys
import warnings
import weakref
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.utils.checkpoint import checkpoint, checkpoint_sequential

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import models  # noqa: E402

X = np.random.default_rng(1).standard_normal((6, 4))


def mlp(dropout: float = 0.0) -> nn.Sequential:
    mt.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(dropout), nn.Linear(8, 8), nn.ReLU(),
                         nn.Linear(8, 3)).double()


def grads(model: nn.Module, run, x_requires_grad: bool = True, device: str = "cpu") -> list[np.ndarray]:
    """The parameters' and the input's gradients of sum(run(model, x)**2), drawn after seeding 3."""
    model.to(device)
    x = mt.tensor(X, requires_grad=x_requires_grad, device=device)
    mt.manual_seed(3)
    y = run(model, x)
    (y ** 2).sum().backward()
    out = [p.grad.cpu().numpy() for p in model.parameters()]
    return out + [x.grad.cpu().numpy()] if x_requires_grad else out


def plain(m, x):
    return m(x)


def ckpt(m, x, **kw):
    return checkpoint(m, x, use_reentrant=False, **kw)


def assert_equal(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("reentrant", [False, True])
def test_mlp_gradients_equal_plain_run(reentrant):
    assert_equal(grads(mlp(), plain), grads(mlp(), lambda m, x: checkpoint(m, x, use_reentrant=reentrant)))


def test_dropout_replays_the_masks_unless_rng_not_preserved(device):
    expected = grads(mlp(0.5).train(), plain, device=device)
    assert_equal(expected, grads(mlp(0.5).train(), ckpt, device=device))
    # Without the RNG state the recomputation draws new masks: the first layer's gradients differ.
    other = grads(mlp(0.5).train(), lambda m, x: ckpt(m, x, preserve_rng_state=False), device=device)
    assert not np.array_equal(expected[0], other[0])


def test_rng_stream_after_checkpoint_is_the_plain_runs(device):
    """The forward draws from the real generator, and backward's replay leaves it as it found it: the draws
    between forward and backward, and after, are the plain run's."""
    after = []
    for run in (plain, ckpt):
        m = mlp(0.5).train().to(device)
        x = mt.tensor(X, requires_grad=True, device=device)
        mt.manual_seed(3)
        y = run(m, x).sum()
        between = mt.rand(2, device=device).cpu().numpy()
        y.backward()
        after.append(np.concatenate([between, mt.rand(4, device=device).cpu().numpy()]))
    np.testing.assert_array_equal(*after)


def test_batchnorm_eval_and_train():
    def net():
        mt.manual_seed(0)
        return nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5), nn.Tanh(), nn.Linear(5, 2)).double()
    assert_equal(grads(net().eval(), plain), grads(net().eval(), ckpt))
    # In train mode the gradients match too; the running statistics are updated twice (as PyTorch's).
    assert_equal(grads(net().train(), plain), grads(net().train(), ckpt))


def test_nested_checkpoints():
    def nested(m, x):
        inner = lambda h: checkpoint(m[3:], h, use_reentrant=False)  # noqa: E731
        return checkpoint(lambda h: inner(m[:3](h)), x, use_reentrant=False)
    assert_equal(grads(mlp(0.5).train(), plain), grads(mlp(0.5).train(), nested))


@pytest.mark.parametrize("segments", [1, 2, 3, 6])
def test_checkpoint_sequential_segments(segments):
    run = lambda m, x: checkpoint_sequential(m, segments, x, use_reentrant=False)  # noqa: E731
    assert_equal(grads(mlp(0.5).train(), plain), grads(mlp(0.5).train(), run))
    # a list of functions works as the Sequential does; an input that does not require grad too
    run_list = lambda m, x: checkpoint_sequential(list(m), segments, x, use_reentrant=False)  # noqa: E731
    assert_equal(grads(mlp(), plain, False), grads(mlp(), run_list, False))


def test_checkpoint_sequential_refuses_more_segments_than_functions():
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential(mlp(), 7, mt.tensor(X), use_reentrant=False)
    with pytest.raises(ZeroDivisionError):
        checkpoint_sequential(mlp(), 0, mt.tensor(X), use_reentrant=False)


def test_input_without_grad_still_trains_the_parameters():
    assert_equal(grads(mlp(), plain, False), grads(mlp(), ckpt, False))
    y = checkpoint(mt.sin, mt.tensor(X), use_reentrant=False)  # nothing needs a gradient
    assert not y.requires_grad and y.grad_fn is None


def test_reentrant_without_input_grad_warns_and_gives_no_gradient():
    m = mlp()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(m, mt.tensor(X), use_reentrant=True)
    assert not y.requires_grad


def test_kwargs_non_tensor_args_and_tuple_outputs():
    w = mt.tensor(np.arange(4.0), requires_grad=True)

    def f(x, scale, *, shift):
        h = mt.tanh(x * w) * scale
        return h + shift, h.sum(1), (h > 0)

    def run(ck):
        x = mt.tensor(X, requires_grad=True)
        shift = mt.tensor(np.ones(4), requires_grad=True)
        a, b, c = checkpoint(f, x, 2.0, use_reentrant=False, shift=shift) if ck else f(x, 2.0, shift=shift)
        assert c.dtype == mt.bool and not c.requires_grad
        ((a ** 2).sum() + (b ** 3).sum()).backward()
        out = [t.grad.numpy() for t in (x, shift, w)]
        w.grad = None
        return out
    expected = run(False)
    for u, v in zip(expected, run(True)):
        np.testing.assert_allclose(u, v, rtol=1e-13, atol=1e-13)  # two backward passes sum in another order
    with pytest.raises(ValueError, match="Unexpected keyword arguments: shift"):
        checkpoint(f, mt.tensor(X), 2.0, use_reentrant=True, shift=1.0)


def test_use_reentrant_must_be_passed():
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(mt.sin, mt.tensor(X, requires_grad=True))


def test_no_grad_mode_runs_the_function_plainly():
    with mt.no_grad():
        y = checkpoint(mlp(), mt.tensor(X, requires_grad=True), use_reentrant=False)
    assert y.grad_fn is None


def test_activations_are_freed_and_recomputed():
    """The plain graph keeps the hidden activation alive; the checkpointed one keeps only the input, and
    backward recomputes it (the function runs twice)."""
    lin1, lin2 = mlp()[0], mlp()[3]
    seen: list[weakref.ref] = []

    def f(x):
        h = mt.tanh(lin1(x))
        seen.append(weakref.ref(h.array))
        return lin2(h)

    for run, alive in ((f, True), (lambda x: checkpoint(f, x, use_reentrant=False), False)):
        seen.clear()
        x = mt.tensor(X, requires_grad=True)
        y = run(x)
        gc.collect()
        assert (seen[0]() is not None) is alive
        y.sum().backward()
        assert len(seen) == (1 if alive else 2)


def test_backward_twice_with_retain_graph():
    m = mlp()
    x = mt.tensor(X, requires_grad=True)
    y = checkpoint(m, x, use_reentrant=False).sum()
    y.backward(retain_graph=True)
    once = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * once)


@pytest.mark.torch
def test_torch_parity_of_warnings_errors_and_requires_grad():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as tcheckpoint
    for lib, ck in ((torch, tcheckpoint), (mt, checkpoint)):
        x = lib.ones(3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = ck(lib.sin, x, use_reentrant=True)
        assert not y.requires_grad and "None of the inputs have requires_grad=True" in str(w[0].message)
        assert not ck(lib.sin, x, use_reentrant=False).requires_grad
        assert ck(lib.sin, lib.ones(3, requires_grad=True), use_reentrant=False).requires_grad
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            ck(lib.sin, x, use_reentrant=True, foo=1)


def test_cnn_and_lstm_with_dropout():
    """A CNN and an LSTM (nested tuple output (y, (h, c))) with dropout: gradients equal the plain run's."""
    def cnn():
        mt.manual_seed(0)
        return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.Dropout(0.3), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(3 * 2 * 2, 2)).double().train()
    img = np.random.default_rng(2).standard_normal((6, 1, 4, 4))
    x_img = lambda: mt.tensor(img, requires_grad=True)  # noqa: E731
    results = []
    for run in (plain, ckpt):
        m, x = cnn(), x_img()
        mt.manual_seed(3)
        (run(m, x) ** 2).sum().backward()
        results.append([p.grad.numpy() for p in m.parameters()] + [x.grad.numpy()])
    assert_equal(*results)

    def lstm():
        mt.manual_seed(0)
        return nn.LSTM(4, 5, num_layers=2, dropout=0.5, batch_first=True).double().train()
    seq = np.random.default_rng(3).standard_normal((2, 3, 4))
    results = []
    for run in (plain, ckpt):
        m, x = lstm(), mt.tensor(seq, requires_grad=True)
        mt.manual_seed(3)
        y, (h, c) = run(m, x)
        assert y.requires_grad and h.requires_grad and c.requires_grad
        ((y ** 2).sum() + (h * c).sum()).backward()
        results.append([p.grad.numpy() for p in m.parameters()] + [x.grad.numpy()])
    for u, v in zip(*results):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-14)  # one backward per output: another sum order
    # With the loss on y alone one backward runs through the recomputed graph, in the plain run's order.
    results = []
    for run in (plain, ckpt):
        m, x = lstm(), mt.tensor(seq, requires_grad=True)
        mt.manual_seed(3)
        (run(m, x)[0] ** 2).sum().backward()
        results.append([p.grad.numpy() for p in m.parameters()] + [x.grad.numpy()])
    assert_equal(*results)


def test_examples_cnn_with_dropout_in_segments():
    """The examples' CNN (8x8 images), a Dropout after its Flatten, in 3 checkpointed segments: float64
    gradients bit-equal to the plain run's (one backward per segment, in the plain order)."""
    def net():
        mt.manual_seed(0)
        layers = list(models.cnn(8).children())
        return nn.Sequential(*layers[:7], nn.Dropout(0.5), *layers[7:]).double().train()
    img = np.random.default_rng(4).standard_normal((5, 1, 8, 8))
    results = []
    for run in (plain, lambda m, x: checkpoint_sequential(m, 3, x, use_reentrant=False)):
        m, x = net(), mt.tensor(img, requires_grad=True)
        mt.manual_seed(3)
        (run(m, x) ** 2).sum().backward()
        results.append([p.grad.numpy() for p in m.parameters()] + [x.grad.numpy()])
    assert_equal(*results)
