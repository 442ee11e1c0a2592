"""Gradient checkpointing under autocast (the recomputation replays the forward's autocast state) and
PyTorch's checks: in-place writes to a saved input, a second backward, the determinism check, context_fn,
reentrant mode's refusals."""
from __future__ import annotations

import contextlib
import gc
import warnings
import weakref

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

X = np.random.default_rng(5).standard_normal((6, 4))
MODES = [False, True]  # use_reentrant


def amp_net() -> nn.Sequential:
    mt.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3)).train()


def amp_grads(run, dtype, device) -> list[np.ndarray]:
    """The float32 gradients of one step of amp_net run by ``run`` under autocast(dtype), backward outside it."""
    m = amp_net().to(device)
    x = mt.tensor(X, dtype=mt.float32, requires_grad=True, device=device)
    mt.manual_seed(3)
    with mt.autocast(device.type, dtype=dtype):
        y = run(m, x)
    assert y.dtype == dtype
    (y.float() ** 2).sum().backward()
    return [t.grad.cpu().numpy() for t in (*m.parameters(), x)]


@pytest.mark.parametrize("dtype", [mt.bfloat16, mt.float16])
@pytest.mark.parametrize("reentrant", MODES)
def test_gradients_under_autocast_equal_the_plain_runs(dtype, reentrant, device):
    if device.type == "cuda" and dtype == mt.bfloat16:
        pytest.skip("CUDA autocast: float16")
    expected = amp_grads(lambda m, x: m(x), dtype, device)
    got = amp_grads(lambda m, x: checkpoint(m, x, use_reentrant=reentrant), dtype, device)
    for u, v in zip(expected, got):
        np.testing.assert_array_equal(u, v)


def test_recomputation_uses_the_forwards_autocast_state():
    """A region run under autocast and recomputed outside any autocast context computes in the lower dtype
    again; one run outside autocast and recomputed inside one stays float32."""
    lin = amp_net()[0]
    seen: list[mt.dtype] = []

    def f(x):
        h = lin(x)
        seen.append(h.dtype)
        return h

    x = mt.tensor(X, dtype=mt.float32, requires_grad=True)
    with mt.autocast("cpu"):
        y = checkpoint(f, x, use_reentrant=False)
    y.float().sum().backward()
    assert seen == [mt.bfloat16, mt.bfloat16]
    seen.clear()
    y = checkpoint(f, x, use_reentrant=False)
    with mt.autocast("cpu", dtype=mt.float16):
        y.sum().backward()
    assert seen == [mt.float32, mt.float32]
    assert not mt.is_autocast_enabled("cpu")


@pytest.mark.parametrize("reentrant", MODES)
def test_input_modified_in_place_before_backward_is_refused(reentrant):
    """The region keeps its inputs as saved arrays: a write after the forward is PyTorch's error."""
    a = mt.tensor(X, requires_grad=True)
    x = a * 1
    y = checkpoint(mt.sin, x, use_reentrant=reentrant)
    x.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[minitensor.DoubleTensor \[6, 4\]\], "
                                           r"which is output 0 of MulBackward0, is at version 1; expected version 0"):
        y.sum().backward()
    # an input that does not require grad (a parameter inside does) is checked too
    lin = amp_net()[0].double()
    x = mt.tensor(X)
    y = checkpoint(lin, x, use_reentrant=False)
    x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("reentrant", MODES)
def test_second_backward_without_retain_graph_is_refused(reentrant):
    y = checkpoint(mt.sin, mt.tensor(X, requires_grad=True) * 1, use_reentrant=reentrant).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_backward_frees_the_kept_inputs():
    """As PyTorch's saved inputs: after a backward that does not retain the graph, the region's input is no
    longer kept, though the output (and its graph) still is."""
    x = mt.tensor(X, requires_grad=True) * 2
    ref = weakref.ref(x.array)
    y = checkpoint(mt.tanh, x, use_reentrant=False)
    del x
    gc.collect()
    assert ref() is not None
    y.sum().backward()
    gc.collect()
    assert ref() is None and y.grad_fn is not None


def test_determinism_check_compares_the_recomputed_outputs():
    calls = []

    def f(x):
        calls.append(1)
        h = mt.sin(x)
        return h.float() if len(calls) == 2 else h  # the recomputation returns another dtype

    x = mt.tensor(X, requires_grad=True)
    with pytest.raises(CheckpointError, match="(?s)Recomputed values for the following tensors have different "
                                              "metadata than during the forward pass.*tensor at position 0.*"
                                              "'dtype': minitensor.float64.*'dtype': minitensor.float32"):
        checkpoint(f, x, use_reentrant=False).sum().backward()
    assert issubclass(CheckpointError, RuntimeError)

    def g(x):
        calls.append(1)
        h = mt.sin(x)
        return (h, h * 2, h * 3) if len(calls) % 2 == 0 else (h, h * 2)  # one more output recomputed

    calls.clear()
    with pytest.raises(CheckpointError, match="(?s)A different number of tensors.*during forward: 2.*"
                                              "during recomputation: 3"):
        sum(o.sum() for o in checkpoint(g, x, use_reentrant=False)).backward()
    # determinism_check="none" skips it: the two outputs that exist backpropagate as usual
    calls.clear()
    x.grad = None
    a, b = checkpoint(g, x, use_reentrant=False, determinism_check="none")
    (a.sum() + b.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.cos(X), rtol=1e-14)
    with pytest.raises(ValueError, match=r"determinism_check should be one of \['default', 'none'\], but got x"):
        checkpoint(f, x, use_reentrant=False, determinism_check="x")


def test_context_fn_wraps_the_forward_and_the_recomputation():
    log: list[str] = []

    @contextlib.contextmanager
    def ctx(name):
        log.append(f"{name} in")
        yield
        log.append(f"{name} out")

    x = mt.tensor(X, requires_grad=True)
    y = checkpoint(mt.sin, x, use_reentrant=False, context_fn=lambda: (ctx("forward"), ctx("recompute")))
    assert log == ["forward in", "forward out"]
    y.sum().backward()
    assert log == ["forward in", "forward out", "recompute in", "recompute out"]
    with pytest.raises(ValueError, match="Passing `context_fn` or `debug` is only supported when use_reentrant=False"):
        checkpoint(mt.sin, x, use_reentrant=True, context_fn=lambda: (ctx("a"), ctx("b")))
    with pytest.raises(ValueError, match="debug=True is incompatible with non-default context_fn"):
        checkpoint(mt.sin, x, use_reentrant=False, debug=True, context_fn=lambda: (ctx("a"), ctx("b")))

    @contextlib.contextmanager
    def swallow():
        with contextlib.suppress(ValueError):
            yield

    def fail(x):
        raise ValueError("boom")
    with pytest.raises(RuntimeError, match="the forward context provided by context_fn suppressed an exception"):
        checkpoint(fail, x, use_reentrant=False, context_fn=lambda: (swallow(), contextlib.nullcontext()))


def test_reentrant_refuses_a_region_whose_recomputed_outputs_need_no_gradient():
    y = checkpoint(lambda x: x.detach() * 2, mt.tensor(X, requires_grad=True), use_reentrant=True)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="none of output has requires_grad=True, this checkpoint"):
        y.sum().backward()


def test_checkpoint_sequential_warning_names_it():
    with pytest.warns(UserWarning, match=r"checkpoint.checkpoint_sequential: the use_reentrant parameter should"):
        checkpoint_sequential([mt.sin], 1, mt.tensor(X, requires_grad=True))


@pytest.mark.torch
def test_torch_parity_of_the_checks():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as tcheckpoint
    for lib, ck in ((torch, tcheckpoint), (mt, checkpoint)):
        for reentrant in MODES:
            x = lib.ones(3, requires_grad=True) * 1
            y = ck(lib.sin, x, use_reentrant=reentrant)
            x.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation: .*is at version 1; expected "
                                                   "version 0 instead"):
                y.sum().backward()
            y = ck(lib.sin, lib.ones(3, requires_grad=True) * 1, use_reentrant=reentrant).sum()
            y.backward()
            with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
                y.backward()
        y = ck(lambda t: t.detach() * 2, lib.ones(3, requires_grad=True), use_reentrant=True)
        with pytest.raises(RuntimeError, match="none of output has requires_grad=True"):
            y.sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="debug=True is incompatible with non-default context_fn"):
                ck(lib.sin, lib.ones(3), use_reentrant=False, debug=True,
                   context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext()))
