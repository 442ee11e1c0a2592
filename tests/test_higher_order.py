"""Higher-order gradients (``create_graph=True``): second derivatives of every op family against finite
differences of the first (``gradgradcheck``, float64), the API around them, and the errors of the ops that
have no double backward (raised at the second backward, never a wrong gradient)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import Function
from minitensor.autograd.function import once_differentiable
from minitensor.backends import get_backend
from minitensor.testing import GradcheckError, gradgradcheck

FAST = settings(max_examples=6, deadline=None)
POS_WEIGHT = mt.tensor([1.5, 0.5, 2.0, 1.0], dtype=mt.float64)


def t64(rng: np.random.Generator, *shape: int, positive: bool = False, device: str = "cpu") -> mt.Tensor:
    a = rng.standard_normal(shape)
    return mt.tensor(np.abs(a) + 0.5 if positive else a, dtype=mt.float64, device=device, requires_grad=True)


def ints(values: list, device: str = "cpu") -> mt.Tensor:
    return mt.tensor(values, device=device)


# Each family: (function, input shapes or (shape, positive)); the functions square their outputs where the
# op is linear (a linear op's second derivative is zero whatever the backward does).
FAMILIES = {
    "arithmetic": (lambda a, b: a * b + a / b - b ** 3 + (-a) ** 2, [(3, 4), ((4,), True)]),
    "pow": (lambda a, b: a ** b + 2.0 ** a, [((3,), True), (3,)]),
    "math": (lambda a: a.exp().log1p().sqrt() + a.sin() * a.cos() + a.atan() + a.erf() + a.sinh() + a.abs() ** 3
             + a.clamp(-0.5, 0.5) ** 2 + a.expm1() + a.erfc() + a.asinh() + a.reciprocal() ** 2, [(6,)]),
    "maximum": (lambda a, b: mt.maximum(a, b) * mt.minimum(a, b) + mt.clamp_min(a, b) ** 2, [(5,), (5,)]),
    "reductions": (lambda a: a.sum(1) ** 2 + a.mean(0).sum() ** 2 + a.prod(1) + a.amax(1) ** 2 + a.logsumexp(1)
                   + a.norm(dim=1) ** 3 + a.max() ** 2 + a.min(1).values ** 2, [(3, 4)]),
    "moments": (lambda a: a.var(1) ** 2 + a.std(0).sum() ** 2, [(3, 4)]),
    "scans": (lambda a: a.cumsum(1) ** 2 + a.cumprod(1) + a.logcumsumexp(1), [(3, 4)]),
    "shape": (lambda a: (a.reshape(4, 3).t() @ a.reshape(4, 3)) + a.permute(1, 0)[:3, :3] ** 2
              + mt.cat([a, a], 0)[1:4, :3] * mt.stack([a, a])[0, :, :3] + a.flip(0)[:, :3] ** 2, [(3, 4)]),
    "indexing": (lambda a: (a[[0, 2, 0]] ** 2).sum() + (a[:, 1:3].sum() * a[1]).sum()
                 + (a.gather(1, ints([[0, 1], [2, 2], [3, 0]])) ** 2).sum()
                 + mt.where(a > 0, a ** 2, a ** 3)[:, :2].sum(), [(3, 4)]),
    "index_put": (lambda a, v: a.index_put((ints([0, 2]),), v) ** 2, [(3, 4), (4,)]),
    "matmul": (lambda a, b: (a @ b) ** 2 + ((a[0] @ b) ** 2).sum() + mt.einsum("ij,jk->ik", a, b) ** 2,
               [(3, 4), (4, 2)]),
    "products": (lambda a, b: mt.bmm(a, b) ** 2 + mt.outer(a[0, 0], b[0, :, 0]).sum() ** 2, [(2, 3, 4), (2, 4, 2)]),
    "linear": (lambda x, w, b: F.linear(x, w, b) ** 2, [(3, 4), (2, 4), (2,)]),
    "conv1d": (lambda x, w: F.conv1d(x, w, padding=1) ** 2, [(2, 2, 5), (3, 2, 3)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1) ** 2, [(2, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "conv2d_groups": (lambda x, w: F.conv2d(x, w, groups=2, dilation=2) ** 2, [(1, 4, 5, 5), (4, 2, 2, 2)]),
    "conv3d": (lambda x, w: F.conv3d(x, w, padding=1) ** 2, [(1, 1, 3, 3, 3), (2, 1, 2, 2, 2)]),
    "conv_transpose1d": (lambda x, w: F.conv_transpose1d(x, w, stride=2) ** 2, [(1, 2, 4), (2, 1, 3)]),
    "conv_transpose2d": (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1) ** 2,
                         [(1, 2, 3, 3), (2, 3, 3, 3), (3,)]),
    "conv_transpose3d": (lambda x, w: F.conv_transpose3d(x, w) ** 2, [(1, 1, 2, 2, 2), (1, 1, 2, 2, 2)]),
    "pooling": (lambda x: F.max_pool2d(x, 2) ** 2 + F.avg_pool2d(x, 2) ** 2 + F.adaptive_avg_pool2d(x, 2) ** 2
                + F.adaptive_max_pool2d(x, 2) ** 2 + (F.avg_pool2d(x, 3, 1, 1) ** 2).sum(), [(1, 2, 4, 4)]),
    "pooling_1d_3d": (lambda x: F.max_pool3d(x, 2) ** 2 + F.avg_pool3d(x, 2) ** 2
                      + F.max_pool1d(x[0, 0], 2).sum() ** 2 + F.avg_pool1d(x[0, 0], 2).sum() ** 2,
                      [(1, 1, 4, 4, 4)]),
    "activations": (lambda x: F.relu(x) ** 2 + F.leaky_relu(x, 0.1) ** 2 + F.elu(x) ** 2 + F.gelu(x) + F.softplus(x)
                    + F.silu(x) + F.celu(x) ** 2 + F.selu(x) ** 2 + F.mish(x) + F.logsigmoid(x) + F.softsign(x)
                    + F.hardtanh(x) ** 2 + F.gelu(x, approximate="tanh") + mt.tanh(x) + mt.sigmoid(x)
                    + F.leaky_relu(x, -0.2) ** 2 + F.elu(x, -0.5) ** 2 + F.hardswish(x), [(8,)]),
    "softmax": (lambda x: F.softmax(x, 1) ** 2 + F.log_softmax(x, 1) ** 2 + F.softmin(x, 0) ** 2, [(3, 4)]),
    "regression_losses": (lambda x, t: F.mse_loss(x, t) ** 2 + F.l1_loss(x, t) * F.smooth_l1_loss(x, t)
                          + F.huber_loss(x, t) ** 2 + F.mse_loss(x, t, reduction="none").sum(0) ** 2,
                          [(3, 4), (3, 4)]),
    "binary_losses": (lambda x, t: F.binary_cross_entropy(x.sigmoid(), t.sigmoid()) ** 2
                      + F.binary_cross_entropy_with_logits(x, t.sigmoid(), pos_weight=POS_WEIGHT) ** 2,
                      [(3, 4), (3, 4)]),
    "class_losses": (lambda x, t: F.cross_entropy(x, ints([0, 2, 1]), label_smoothing=0.1) ** 2
                     + F.nll_loss(F.log_softmax(x, 1), ints([1, 2, 3]), reduction="sum") ** 2
                     + F.cross_entropy(x, t.softmax(1)) ** 2 + F.kl_div(x.log_softmax(1), t.softmax(1),
                                                                         reduction="batchmean") ** 2,
                     [(3, 4), (3, 4)]),
    "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True) ** 2
                   + F.batch_norm(x, mt.zeros(3, dtype=mt.float64), mt.ones(3, dtype=mt.float64), w, b) ** 2,
                   [(4, 3, 2), (3,), (3,)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b) ** 2, [(3, 4), (4,), (4,)]),
    "group_instance_norm": (lambda x, w, b: F.group_norm(x, 2, w, b) ** 2 + F.instance_norm(x) ** 2,
                            [(2, 4, 3), (4,), (4,)]),
    "embedding": (lambda w: F.embedding(ints([[0, 2], [2, 1]]), w, padding_idx=1) ** 3, [(4, 3)]),
    "dropout": (lambda x: (mt.manual_seed(0), F.dropout(x, 0.5))[1] ** 2, [(10,)]),
    "interpolate": (lambda x: (F.interpolate(x, scale_factor=2, mode="bilinear") ** 2).sum()
                    + (F.interpolate(x, size=5, mode="nearest") ** 2).sum()
                    + (F.interpolate(x, size=4, mode="bicubic", align_corners=True) ** 2).sum(), [(1, 1, 3, 3)]),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True) ** 2,
                  [(1, 3, 4), (1, 3, 4), (1, 3, 4)]),
    "distances": (lambda a, b: F.cosine_similarity(a, b) ** 2 + F.pairwise_distance(a, b) ** 2, [(3, 4), (3, 4)]),
    "fold_unfold": (lambda x: F.fold(x, (3, 3), 2) ** 2 + (F.unfold(F.fold(x, (3, 3), 2), 2) ** 2).sum(),
                    [(1, 4, 4)]),
    "sorting": (lambda a: a.sort(1).values ** 2 + a.topk(2, 1).values.sum() ** 2 + a.median(1).values.sum() ** 2
                + a.quantile(0.3, 1).sum() ** 2, [(3, 4)]),
    "scatter": (lambda a, s: a.scatter(1, ints([[0, 1], [2, 3], [1, 0]]), s) ** 2
                + a.index_add(0, ints([0, 2, 0]), s.repeat(1, 2)[:, :4]) ** 2, [(3, 4), (3, 2)]),
    "pdist_cdist": (lambda a, b: F.pdist(a).sum() ** 2 + mt.cdist(a, b) ** 2 + mt.cdist(a, b, p=1) ** 2,
                    [(3, 4), (2, 4)]),
    "special": (lambda a: mt.xlogy(a, a) + mt.logit(a.sigmoid()) ** 3 + mt.sinc(a) + mt.lgamma(a.exp()),
                [(4,)]),
    "rearranging": (lambda x: (F.pixel_shuffle(x, 2) ** 2).sum() + (x.roll(1, 1).unfold(2, 2, 1) ** 2).sum()
                    + (x.repeat(1, 1, 2, 1) ** 2).sum(), [(1, 4, 2, 2)]),
    "linalg": (lambda a, b: mt.linalg.inv(a) ** 2 + mt.linalg.det(a) ** 2 + mt.linalg.solve(a, b).sum() ** 2,
               [(3, 3), (3, 2)]),
}


def _inputs(rng: np.random.Generator, shapes: list, device: str = "cpu") -> list[mt.Tensor]:
    out = []
    for s in shapes:
        shape, positive = (s, False) if isinstance(s[0], int) else s
        out.append(t64(rng, *shape, positive=positive, device=device))
    return out


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_second_derivatives_match_finite_differences(family):
    f, shapes = FAMILIES[family]
    assert gradgradcheck(f, _inputs(np.random.default_rng(0), shapes), atol=1e-5, rtol=1e-4)


def test_the_rnn_family_and_multihead_attention():
    mt.manual_seed(0)
    lstm, gru, rnn = mt.nn.LSTM(4, 3).double(), mt.nn.GRU(4, 3).double(), mt.nn.RNN(4, 3).double()
    mha = mt.nn.MultiheadAttention(4, 2).double()
    x = t64(np.random.default_rng(1), 3, 2, 4)
    assert gradgradcheck(lambda x: lstm(x)[0].sum() ** 2 + gru(x)[0].sum() ** 2 + rnn(x)[0].sum() ** 2, [x])
    assert gradgradcheck(lambda x: mha(x, x, x)[0] ** 2, [x])
    h, = mt.autograd.grad(lstm(x)[0].sum() ** 2, x, create_graph=True)
    mt.autograd.grad(h.sum(), list(lstm.parameters()))  # the parameters get second derivatives too


# ------------------------------------------------------------------------------------------------ shapes
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@FAST
@given(shape=shapes, seed=st.integers(0, 99))
def test_pointwise_ops_any_shape(shape, seed):
    rng = np.random.default_rng(seed)
    f = lambda a, b: (a * b).tanh() + a.exp() * b.sigmoid() + F.gelu(a) * b ** 2  # noqa: E731
    assert gradgradcheck(f, [t64(rng, *shape), t64(rng, *shape[-1:])])


@FAST
@given(shape=shapes, seed=st.integers(0, 99), data=st.data())
def test_reductions_and_softmax_any_dim(shape, seed, data):
    rng = np.random.default_rng(seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    keep = data.draw(st.booleans())
    f = lambda a: (a.sum(dim, keep) ** 2 + a.logsumexp(dim, keep) * a.mean(dim, keep)  # noqa: E731
                   + a.norm(dim=dim, keepdim=keep) ** 3).sum() + (F.softmax(a, dim) ** 2).sum()
    assert gradgradcheck(f, [t64(rng, *shape)])


@FAST
@given(n=st.integers(1, 3), k=st.integers(1, 3), m=st.integers(1, 3), batch=st.sampled_from([(), (2,)]),
       seed=st.integers(0, 99))
def test_matmul_any_shapes(n, k, m, batch, seed):
    rng = np.random.default_rng(seed)
    assert gradgradcheck(lambda a, b: mt.tanh(a @ b), [t64(rng, *batch, n, k), t64(rng, k, m)])


@FAST
@given(stride=st.integers(1, 2), padding=st.integers(0, 1), kernel=st.integers(1, 3), seed=st.integers(0, 99))
def test_conv2d_any_geometry(stride, padding, kernel, seed):
    rng = np.random.default_rng(seed)
    x, w = t64(rng, 1, 2, 4, 4), t64(rng, 2, 2, kernel, kernel)
    assert gradgradcheck(lambda x, w: F.conv2d(x, w, stride=stride, padding=padding).tanh(), [x, w])


# ---------------------------------------------------------------------------------------------------- API
def test_grad_with_create_graph_gives_differentiable_gradients():
    x = mt.tensor([0.5, -1.0, 2.0], dtype=mt.float64, requires_grad=True)
    g, = mt.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.grad_fn is not None
    h, = mt.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(h.detach().numpy(), 6 * x.detach().numpy())
    third, = mt.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(third.numpy(), [6.0, 6.0, 6.0])


def test_create_graph_keeps_the_graph_and_a_linear_gradient_has_none():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    y = (x * 3).sum()
    g, = mt.autograd.grad(y, x, create_graph=True)
    assert not g.requires_grad  # d(3x)/dx is a constant: nothing to differentiate again
    g2, = mt.autograd.grad(y, x)  # the graph was retained (retain_graph defaults to create_graph)
    np.testing.assert_allclose(g2.numpy(), [3.0, 3.0])


def test_backward_create_graph_accumulates_out_of_place():
    x = mt.tensor([2.0], dtype=mt.float64, requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    (x ** 2).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    np.testing.assert_allclose(x.grad.detach().numpy(), [12.0 + 4.0])
    h, = mt.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(h.numpy(), [12.0 + 2.0])


def test_grad_outputs_with_a_graph_of_their_own():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    v = mt.tensor([3.0, 4.0], dtype=mt.float64, requires_grad=True)
    g, = mt.autograd.grad(x ** 2, x, grad_outputs=v, create_graph=True)  # 2 x v
    gx, gv = mt.autograd.grad(g.sum(), [x, v])
    np.testing.assert_allclose(gx.numpy(), 2 * v.detach().numpy())
    np.testing.assert_allclose(gv.numpy(), 2 * x.detach().numpy())


def test_hooks_see_the_recorded_gradient():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.requires_grad) or g * 2)
    y = (x ** 3).sum()
    y.backward(create_graph=True)
    assert seen == [True]
    h, = mt.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(h.numpy(), 2 * 2 * 6 * x.detach().numpy())  # the hook doubles both


def test_allow_unused_and_materialize_grads_under_create_graph():
    x, z = (mt.tensor([1.0], dtype=mt.float64, requires_grad=True) for _ in range(2))
    g, gz = mt.autograd.grad((x ** 2).sum(), [x, z], create_graph=True, allow_unused=True)
    assert gz is None and g.grad_fn is not None
    _, gz = mt.autograd.grad((x ** 2).sum(), [x, z], create_graph=True, materialize_grads=True)
    assert gz.item() == 0.0


def test_the_autograd_names():
    assert mt.autograd.gradgradcheck(lambda x: x.exp() * x, [mt.tensor([0.3, -0.2], dtype=mt.float64,
                                                                      requires_grad=True)])
    with pytest.raises(GradcheckError):  # a wrong double backward is caught
        gradgradcheck(lambda x: _WrongSecond.apply(x), [mt.tensor([0.3, 1.2], dtype=mt.float64, requires_grad=True)])


class _Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x * x * g


class _WrongSecond(Function):
    """x^3 whose backward is right in value but has the wrong derivative (2x^3 / x... written as x^2 * 3
    with x^2 detached)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * (x * x).detach() * g


class _Once(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


def test_custom_functions_are_twice_differentiable_unless_marked():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    assert gradgradcheck(lambda x: _Cube.apply(x) * x, [x])
    g, = mt.autograd.grad((_Once.apply(x) * x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked with @once_differentiable"):
        mt.autograd.grad(g.sum(), x)


def test_an_op_without_a_double_backward_raises_at_the_second_backward():
    a0 = np.random.default_rng(4).standard_normal((3, 3))
    x = mt.tensor(a0 @ a0.T + 3 * np.eye(3), dtype=mt.float64, requires_grad=True)
    g, = mt.autograd.grad(mt.linalg.eigh(x)[0].pow(2).sum(), x, create_graph=True)  # the first one works
    np.testing.assert_allclose(g.detach().numpy(), 2 * x.detach().numpy(), atol=1e-12)  # d tr(X^2) = 2 X
    with pytest.raises(NotImplementedError, match="double backward of Eigh is not implemented"):
        mt.autograd.grad(g.sum(), x)


def test_special_functions_chain_to_any_order():
    x = mt.tensor([1.5, 2.5], dtype=mt.float64, requires_grad=True)
    assert gradgradcheck(lambda x: mt.lgamma(x) * x + mt.digamma(x), [x])


def test_the_recording_facade_refuses_numpy():
    from minitensor.autograd.recording import Rec, Unrecordable
    r = Rec(mt.ones(2, dtype=mt.float64))
    with pytest.raises(Unrecordable):
        np.asarray(r)
    assert isinstance(np.ones(2) * r, Rec)  # NumPy's operators defer to the facade's


def test_under_autocast():
    x = mt.tensor([[0.5, -1.0], [2.0, 0.1]], requires_grad=True)
    w = mt.tensor([[1.0, 2.0], [0.5, -0.3]], requires_grad=True)
    with mt.autocast("cpu", dtype=mt.bfloat16):
        g, = mt.autograd.grad(mt.tanh(x @ w).sum(), x, create_graph=True)
    h, = mt.autograd.grad(g.float().sum(), w)
    xt, wt = x.detach().numpy(), w.detach().numpy()
    t = np.tanh(xt @ wt)
    # d/dw sum_ij (1 - t_ij^2) w_kj over i, k: -2 t (1 - t^2) x^T (row sums of w) + (1 - t^2) ones
    expected = xt.T @ (-2 * t * (1 - t * t) * wt.sum(0)) + (1 - t * t).sum(0)[None, :].repeat(2, 0)
    np.testing.assert_allclose(h.numpy(), expected, rtol=0.05, atol=0.05)


def test_a_cuda_device_records_through_its_own_backend(lend_backend):
    """A fake cuda device over a NumPy backend: the recording backend is that device's, and the results are
    the CPU's."""
    class FakeCuda(type(get_backend("cpu"))):  # type: ignore[misc]
        name = "cuda"

    dev = mt.device("cuda", 6)
    lend_backend(dev, FakeCuda())
    rng = np.random.default_rng(3)
    x0, w0 = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    results = []
    for d in ("cpu", dev):
        x = mt.tensor(x0, dtype=mt.float64, device=d, requires_grad=True)
        w = mt.tensor(w0, dtype=mt.float64, device=d, requires_grad=True)
        y = F.gelu(F.conv2d(x, w, padding=1)).pow(2).sum()
        g, = mt.autograd.grad(y, x, create_graph=True)
        assert g.device == x.device
        results.append([a.cpu().numpy() for a in mt.autograd.grad((g * g).sum(), [x, w])])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    x = mt.tensor(x0[0, 0], dtype=mt.float64, requires_grad=True)  # a copy to the device is recorded too
    g, = mt.autograd.grad(x.to(dev).exp().sum(), x, create_graph=True)
    h, = mt.autograd.grad(g.sum(), x)
    assert h.device == x.device
    np.testing.assert_allclose(h.numpy(), np.exp(x0[0, 0]))


def test_under_the_profiler_and_anomaly_detection():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    expected = (2 + x.detach().numpy()) * np.exp(x.detach().numpy())  # (x e^x)''
    with mt.profiler.profile():
        g, = mt.autograd.grad((x.exp() * x).sum(), x, create_graph=True)
        h, = mt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), expected)
    with mt.autograd.detect_anomaly():
        g, = mt.autograd.grad((x.exp() * x).sum(), x, create_graph=True)
        h, = mt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), expected)


def test_a_gradient_penalty_on_each_device_matches_the_cpus(device):
    """WGAN-GP's penalty through conv, leaky ReLU, linear and a device's own kernels (cuda: the CUDA backend,
    on a GPU or the strict CuPy double): the critic's gradients equal the CPU's in float64."""
    rng = np.random.default_rng(4)
    x0, w0, v0 = rng.standard_normal((3, 2, 6, 6)), rng.standard_normal((4, 2, 3, 3)), rng.standard_normal((1, 36))
    results = []
    for d in ("cpu", device):
        x = mt.tensor(x0, dtype=mt.float64, device=d, requires_grad=True)
        w = mt.tensor(w0, dtype=mt.float64, device=d, requires_grad=True)
        v = mt.tensor(v0, dtype=mt.float64, device=d, requires_grad=True)
        h = F.leaky_relu(F.conv2d(x, w, stride=2, padding=1), 0.2).flatten(1)
        score = F.linear(F.tanh(h), v).sum()
        g, = mt.autograd.grad(score, x, create_graph=True)
        penalty = ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        results.append([a.cpu().numpy() for a in mt.autograd.grad(penalty, [w, v])])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
