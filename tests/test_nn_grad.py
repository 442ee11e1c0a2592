"""nn.grad's convolution gradients, F.conv_tbc and native_channel_shuffle (float64 NumPy references and
finite differences written here; PyTorch parity marked ``torch``)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.nn import functional as F
from minitensor.testing import gradcheck
from tests.helpers import assert_close, t64

CASES = [  # (dims, N, C_in, C_out, spatial, kernel, stride, padding, dilation, groups)
    (1, 2, 4, 6, (9,), (3,), 2, 1, 1, 2),
    (2, 2, 3, 4, (7, 6), (3, 2), (2, 1), (1, 0), (1, 2), 1),
    (2, 1, 4, 4, (8, 8), (3, 3), 3, 2, 1, 4),  # stride 3: the input size is not implied by the output's
    (3, 1, 2, 4, (5, 4, 6), (2, 3, 2), (1, 2, 2), (1, 1, 0), 1, 2),
]
CONVS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _case(case, seed=0):
    dims, n, cin, cout, spatial, kernel, stride, padding, dilation, groups = case
    r = np.random.default_rng(seed)
    x = r.standard_normal((n, cin, *spatial))
    w = r.standard_normal((cout, cin // groups, *kernel))
    options = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    y = CONVS[dims](t64(x, False), t64(w, False), None, **options)
    gy = r.standard_normal(y.shape)
    return dims, x, w, gy, options


@pytest.mark.parametrize("case", CASES)
def test_input_and_weight_gradients_are_the_convolutions_adjoints(case):
    """<gy, conv(x, w)> = <conv_input(gy, w), x> = <conv_weight(x, gy), w>: both are the gradients."""
    dims, x, w, gy, options = _case(case)
    gx = getattr(nn.grad, f"conv{dims}d_input")(x.shape, t64(w, False), t64(gy, False), **options)
    gw = getattr(nn.grad, f"conv{dims}d_weight")(t64(x, False), w.shape, t64(gy, False), **options)
    assert gx.shape == x.shape and gw.shape == w.shape
    # the reference: central differences of the scalar <gy, conv(x, w)> along random directions
    total = float((CONVS[dims](t64(x, False), t64(w, False), None, **options).numpy() * gy).sum())
    r = np.random.default_rng(1)
    for grad, point, slot in ((gx, x, 0), (gw, w, 1)):
        d = r.standard_normal(point.shape)
        args = [x, w]
        args[slot] = point + d  # linear in each argument: the difference is exact
        moved = float((CONVS[dims](t64(args[0], False), t64(args[1], False), None, **options).numpy()
                       * gy).sum())
        assert abs((moved - total) - float((grad.numpy() * d).sum())) < 1e-9 * max(1, abs(moved))


def test_results_are_differentiable_again_and_checks():
    dims, x, w, gy, options = _case(CASES[1])
    assert gradcheck(lambda w, gy: nn.grad.conv2d_input(x.shape, w, gy, **options), [t64(w), t64(gy)])
    assert gradcheck(lambda x, gy: nn.grad.conv2d_weight(x, w.shape, gy, **options), [t64(x), t64(gy)])
    with mt.no_grad():  # no graph in no-grad mode
        assert nn.grad.conv2d_input(x.shape, t64(w), t64(gy), **options).grad_fn is None
    with pytest.raises(RuntimeError, match="grad_output has shape"):
        nn.grad.conv2d_input((2, 3, 9, 9), t64(w, False), t64(gy, False), **options)
    assert F.grad is nn.grad


@pytest.mark.torch
@pytest.mark.parametrize("case", CASES)
def test_nn_grad_matches_torch(case):
    torch = pytest.importorskip("torch")
    dims, x, w, gy, options = _case(case, seed=3)
    for name, ours_args, their_args in (
            ("input", (x.shape, t64(w, False), t64(gy, False)), (x.shape, torch.tensor(w), torch.tensor(gy))),
            ("weight", (t64(x, False), w.shape, t64(gy, False)), (torch.tensor(x), w.shape, torch.tensor(gy)))):
        ours = getattr(nn.grad, f"conv{dims}d_{name}")(*ours_args, **options)
        theirs = getattr(torch.nn.grad, f"conv{dims}d_{name}")(*their_args, **options)
        assert_close(ours, theirs.numpy(), rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------------------- conv_tbc
def _conv_tbc_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    xp = np.pad(x, ((pad, pad), (0, 0), (0, 0)))
    t_out = xp.shape[0] - w.shape[0] + 1
    return b + sum(np.einsum("tbc,cd->tbd", xp[k:k + t_out], w[k]) for k in range(w.shape[0]))


@pytest.mark.parametrize("t, k, pad", [(6, 3, 0), (5, 3, 1), (3, 4, 2), (1, 1, 0)])
def test_conv_tbc_forward_and_gradient(t, k, pad):
    r = np.random.default_rng(t * 10 + k)
    x, w, b = r.standard_normal((t, 2, 3)), r.standard_normal((k, 3, 4)), r.standard_normal(4)
    assert_close(F.conv_tbc(t64(x, False), t64(w, False), t64(b, False), pad), _conv_tbc_ref(x, w, b, pad),
                 rtol=1e-12)
    assert_close(mt.conv_tbc(t64(x, False), t64(w, False), t64(b, False), pad), _conv_tbc_ref(x, w, b, pad),
                 rtol=1e-12)
    assert gradcheck(lambda x, w, b: F.conv_tbc(x, w, b, pad), [t64(x), t64(w), t64(b)])


def test_conv_tbc_checks():
    x, w, b = mt.randn(4, 2, 3), mt.randn(2, 3, 5), mt.randn(5)
    with pytest.raises(RuntimeError, match="Input must have 3 dims"):
        F.conv_tbc(x[0], w, b)
    with pytest.raises(RuntimeError, match="input channels"):
        F.conv_tbc(x, mt.randn(2, 4, 5), b)
    with pytest.raises(RuntimeError, match="Bias size"):
        F.conv_tbc(x, w, mt.randn(4))


def test_conv_tbc_with_a_kernel_as_long_as_the_padded_input_gives_an_empty_output_and_zero_gradients():
    x, w, b = (t64(v) for v in (np.ones((1, 2, 3)), np.ones((4, 3, 4)), np.ones(4)))
    y = F.conv_tbc(x, w, b, 1)  # 1 + 2 - 4 + 1 = 0 steps, as PyTorch's
    assert tuple(y.shape) == (0, 2, 4)
    y.sum().backward()
    for v, shape in ((x, (1, 2, 3)), (w, (4, 3, 4)), (b, (4,))):
        assert tuple(v.grad.shape) == shape and not v.grad.numpy().any()
    with pytest.raises(RuntimeError, match=r"negative dimension -1: \[-1, 2, 4\]"):
        F.conv_tbc(x, t64(np.ones((5, 3, 4))), b, 1)


@pytest.mark.torch
def test_conv_tbc_matches_torch():
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(5)
    x, w, b = r.standard_normal((7, 3, 4)), r.standard_normal((3, 4, 2)), r.standard_normal(2)
    ours = [t64(v) for v in (x, w, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (x, w, b)]
    y, ty = F.conv_tbc(*ours, 1), torch.conv_tbc(*theirs, 1)
    cot = r.standard_normal(ty.shape)
    (y * t64(cot, False)).sum().backward()
    (ty * torch.tensor(cot)).sum().backward()
    assert_close(y, ty.detach().numpy(), rtol=1e-12)
    for o, t in zip(ours, theirs):
        assert_close(o.grad, t.grad.numpy(), rtol=1e-10)


def test_native_channel_shuffle_is_channel_shuffle():
    x = mt.arange(12.0).reshape(1, 6, 2)
    assert mt.native_channel_shuffle(x, 2).reshape(-1).tolist() == [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
    assert F.native_channel_shuffle(x, 3).tolist() == F.channel_shuffle(x, 3).tolist()
