"""``nn.utils.prune``: the masks against NumPy (smallest |w|, smallest channel norms, a global threshold, stacked
methods on what the mask before kept), the module's reparametrization (``<name>_orig`` parameter, ``<name>_mask``
buffer, the forward pre-hook, gradients through the mask), ``remove``; PyTorch parity (marked torch) from
identical weights."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.nn.utils import prune


def _linear(w: np.ndarray) -> nn.Linear:
    layer = nn.Linear(w.shape[1], w.shape[0])
    with mt.no_grad():
        layer.weight.copy_(mt.tensor(w))
    return layer


def test_l1_unstructured_masks_the_smallest_magnitudes_and_reparametrizes():
    w = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    layer = _linear(w)
    prune.l1_unstructured(layer, "weight", amount=0.3)  # round(0.3 * 20) = 6 entries
    expected = np.ones(20, np.float32)
    expected[np.argsort(np.abs(w).ravel())[:6]] = 0
    np.testing.assert_array_equal(layer.weight_mask.numpy().ravel(), expected)
    assert sorted(n for n, _ in layer.named_parameters()) == ["bias", "weight_orig"]
    assert [n for n, _ in layer.named_buffers()] == ["weight_mask"]
    assert not isinstance(layer.weight, nn.Parameter)
    np.testing.assert_array_equal(layer.weight.detach().numpy(), w * expected.reshape(4, 5))
    layer(mt.ones(2, 5)).sum().backward()  # the gradient reaches the original through the mask
    np.testing.assert_array_equal(layer.weight_orig.grad.numpy(), 2 * expected.reshape(4, 5))
    with mt.no_grad():  # the pre-hook recomputes the pruned weight before each call
        layer.weight_orig.fill_(1.0)
    layer(mt.ones(1, 5))
    np.testing.assert_array_equal(layer.weight.detach().numpy(), expected.reshape(4, 5))
    assert prune.is_pruned(nn.Sequential(layer)) and not prune.is_pruned(nn.Linear(2, 2))


def test_an_integer_amount_is_a_count_and_too_many_is_an_error():
    layer = _linear(np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3))
    prune.l1_unstructured(layer, "bias", amount=1)
    assert layer.bias_mask.sum().item() == 1
    with pytest.raises(ValueError, match="should be smaller than the number of parameters to prune=6"):
        prune.l1_unstructured(layer, "weight", amount=7)
    assert "weight" in dict(layer.named_parameters())  # the failed pruning is undone
    with pytest.raises(ValueError, match="should either be a float in the range"):
        prune.l1_unstructured(layer, "weight", amount=1.5)


def test_ln_structured_then_l1_stack_in_a_container_on_what_was_kept():
    w = np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32)
    layer = _linear(w)
    prune.ln_structured(layer, "weight", amount=0.5, n=2, dim=0)  # the 3 rows of smallest L2 norm
    rows = np.ones(6, np.float32)
    rows[np.argsort(np.linalg.norm(w, axis=1))[:3]] = 0
    np.testing.assert_array_equal(layer.weight_mask.numpy(), np.repeat(rows[:, None], 4, 1))
    prune.l1_unstructured(layer, "weight", amount=0.25)  # 25 % of the 12 entries still kept: 3
    kept = np.flatnonzero(np.repeat(rows[:, None], 4, 1).ravel())
    expected = np.repeat(rows[:, None], 4, 1).ravel()
    expected[kept[np.argsort(np.abs(w.ravel()[kept]))[:3]]] = 0
    np.testing.assert_array_equal(layer.weight_mask.numpy().ravel(), expected)
    hook, = [h for h in layer._forward_pre_hooks.values() if h._tensor_name == "weight"]
    assert isinstance(hook, prune.PruningContainer)
    assert [type(m).__name__ for m in hook] == ["LnStructured", "L1Unstructured"]


def test_random_methods_prune_the_counts_asked():
    layer = nn.Conv2d(4, 6, 3)
    prune.random_unstructured(layer, "weight", amount=0.3)
    assert layer.weight_mask.numel() - layer.weight_mask.sum().item() == round(0.3 * layer.weight.numel())
    prune.random_structured(layer, "weight", amount=2, dim=1)  # 2 whole input channels
    zero_channels = (layer.weight_mask.sum(dim=(0, 2, 3)) == 0).sum().item()
    assert zero_channels == 2


def test_global_unstructured_and_custom_from_mask():
    rng = np.random.default_rng(2)
    a = _linear(rng.standard_normal((3, 4)).astype(np.float32))
    b = _linear(rng.standard_normal((2, 3)).astype(np.float32))
    both = np.concatenate([a.weight.detach().numpy().ravel(), b.weight.detach().numpy().ravel()])
    prune.global_unstructured([(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=0.5)
    expected = np.ones(18, np.float32)
    expected[np.argsort(np.abs(both))[:9]] = 0
    got = np.concatenate([a.weight_mask.numpy().ravel(), b.weight_mask.numpy().ravel()])
    np.testing.assert_array_equal(got, expected)
    c = nn.Linear(2, 2)
    prune.custom_from_mask(c, "bias", mask=mt.tensor([0.0, 1.0]))
    assert c.bias[0].item() == 0 and c.bias[1].item() == c.bias_orig[1].item()


def test_remove_makes_the_pruned_values_the_parameter():
    w = np.array([[1.0, -3.0], [0.5, 2.0]], np.float32)
    layer = _linear(w)
    orig = layer.weight
    prune.l1_unstructured(layer, "weight", amount=2)
    prune.remove(layer, "weight")
    assert layer.weight is orig and isinstance(layer.weight, nn.Parameter)  # the same parameter object
    np.testing.assert_array_equal(layer.weight.detach().numpy(), [[0.0, -3.0], [0.0, 2.0]])
    assert "weight_orig" not in dict(layer.named_parameters()) and not list(layer.named_buffers())
    assert not layer._forward_pre_hooks
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(layer, "weight")


def test_a_custom_method_by_subclassing():
    class EveryOther(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.flatten()[::2] = 0
            return mask

    layer = nn.Linear(3, 4)
    EveryOther.apply(layer, "bias")
    np.testing.assert_array_equal(layer.bias_mask.numpy(), [0, 1, 0, 1])


@pytest.mark.torch
def test_deterministic_masks_match_pytorch():
    torch = pytest.importorskip("torch")
    tprune = pytest.importorskip("torch.nn.utils.prune")
    w = np.random.default_rng(3).standard_normal((6, 3, 3, 3)).astype(np.float32)
    ours, theirs = nn.Conv2d(3, 6, 3), torch.nn.Conv2d(3, 6, 3)
    with mt.no_grad():
        ours.weight.copy_(mt.tensor(w))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w))
    for lib, m in ((prune, ours), (tprune, theirs)):
        lib.ln_structured(m, "weight", amount=0.5, n=1, dim=0)
        lib.l1_unstructured(m, "weight", amount=0.2)
        lib.ln_structured(m, "weight", amount=1, n=2, dim=1)
    np.testing.assert_array_equal(ours.weight_mask.numpy(), theirs.weight_mask.numpy())
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
