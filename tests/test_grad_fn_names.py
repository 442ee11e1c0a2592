"""``grad_fn.name()`` gives PyTorch's node names for the common ops (docs/differences.md lists where not)."""
from __future__ import annotations

from typing import Any

import pytest

import minitensor as mt

# (expression over x, y (3x3, requiring grad), c (1x1x4x4 images), k (conv weights), t (class indices)),
# PyTorch 2.13's grad_fn.name()
CASES = [
    ("x + y", "AddBackward0"), ("x - 1", "SubBackward0"), ("x * 2", "MulBackward0"), ("x / y", "DivBackward0"),
    ("-x", "NegBackward0"), ("x ** 2", "PowBackward0"), ("x.exp()", "ExpBackward0"), ("x.tanh()", "TanhBackward0"),
    ("x.sigmoid()", "SigmoidBackward0"), ("x.relu()", "ReluBackward0"), ("x.sum()", "SumBackward0"),
    ("x.sum(0)", "SumBackward1"), ("x.mean()", "MeanBackward0"), ("x.mean(1)", "MeanBackward1"),
    ("x.var()", "VarBackward0"), ("x.norm()", "LinalgVectorNormBackward0"), ("x.permute(1, 0)", "PermuteBackward0"),
    ("x.view(-1)", "ViewBackward0"), ("x.reshape(-1)", "ViewBackward0"), ("x.flatten()", "ViewBackward0"),
    ("x.expand(2, 3, 3)", "ExpandBackward0"), ("x.clone()", "CloneBackward0"), ("x.double()", "ToCopyBackward0"),
    ("x @ y", "MmBackward0"), ("lib.cat([x, y])", "CatBackward0"), ("lib.stack([x, y])", "StackBackward0"),
    ("lib.where(x > 0, x, y)", "WhereBackward0"), ("x.clamp(0, 1)", "ClampBackward1"),
    ("x.softmax(1)", "SoftmaxBackward0"), ("x.log_softmax(1)", "LogSoftmaxBackward0"), ("F.gelu(x)", "GeluBackward0"),
    ("F.linear(x, y, b)", "AddmmBackward0"), ("F.mse_loss(x, y)", "MseLossBackward0"),
    ("F.cross_entropy(x, t)", "NllLossBackward0"), ("F.nll_loss(x.log_softmax(1), t)", "NllLossBackward0"),
    ("F.binary_cross_entropy_with_logits(x, y)", "BinaryCrossEntropyWithLogitsBackward0"),
    ("F.layer_norm(x, (3,))", "NativeLayerNormBackward0"), ("F.embedding(t, x)", "EmbeddingBackward0"),
    ("F.pad(x, (1, 1))", "ConstantPadNdBackward0"), ("x.cumsum(0)", "CumsumBackward0"),
    ("x.logsumexp(1)", "LogsumexpBackward0"), ("F.conv2d(c, k)", "ConvolutionBackward0"),
    ("F.max_pool2d(c, 2)", "MaxPool2DWithIndicesBackward0"), ("F.avg_pool2d(c, 2)", "AvgPool2DBackward0"),
    ("F.batch_norm(c, None, None, training=True)", "NativeBatchNormBackward0"),
    ("x.index_select(0, t)", "IndexSelectBackward0"), ("x.maximum(y)", "MaximumBackward0"),
    # where one minitensor op serves several aten ops, the node is named after the one PyTorch's call reaches
    ("x[0]", "SelectBackward0"), ("x[1:3]", "SliceBackward0"), ("x[:, 0]", "SelectBackward0"),
    ("x[0, 1:3]", "SliceBackward0"), ("x[:]", "SliceBackward0"), ("x[...]", "AliasBackward0"),
    ("x[:, :]", "AliasBackward0"), ("x[:, 0:3]", "AliasBackward0"), ("x[0, :]", "SelectBackward0"),
    ("x[None]", "UnsqueezeBackward0"), ("x[0, None]", "UnsqueezeBackward0"), ("x[None, 0]", "SelectBackward0"),
    ("x[t]", "IndexBackward0"), ("x[:, t]", "IndexBackward0"), ("x[x > 0]", "IndexBackward0"),
    ("x[[0, 1]]", "IndexBackward0"), ("x[..., 1]", "SelectBackward0"), ("x.select(1, 0)", "SelectBackward0"),
    ("x.narrow(1, 0, 3)", "SliceBackward0"), ("x.unbind(0)[0]", "UnbindBackward0"), ("x.split(2)[0]", "SplitBackward0"),
    ("x.chunk(2, 1)[0]", "SplitBackward0"), ("x.split([1, 2])[0]", "SplitWithSizesBackward0"),
    ("x.unsqueeze(0)", "UnsqueezeBackward0"), ("x[None].squeeze()", "SqueezeBackward0"),
    ("x[None].squeeze(0)", "SqueezeBackward1"), ("x[None].squeeze((0, 1))", "SqueezeBackward2"),
    ("x.t()", "TBackward0"), ("x.T", "PermuteBackward0"), ("x.transpose(0, 1)", "TransposeBackward0"),
    ("x.mT", "TransposeBackward0"), ("x.swapaxes(0, 1)", "TransposeBackward0"), ("x.max()", "MaxBackward1"),
    ("x.max(1)[0]", "MaxBackward0"), ("x.min()", "MinBackward1"), ("x.min(0).values", "MinBackward0"),
    ("x.sort()[0]", "SortBackward0"), ("x.topk(2)[0]", "TopkBackward0"), ("x.median()", "MedianBackward0"),
    ("x.median(1)[0]", "MedianBackward1"), ("x.kthvalue(1)[0]", "KthvalueBackward0"), ("x.mode(1)[0]", "ModeBackward0"),
    ("x.cummax(1)[0]", "CummaxBackward0"), ("x.cumprod(0)", "CumprodBackward0"),
    ("x.logcumsumexp(0)", "LogcumsumexpBackward0"), ("x.log1p()", "Log1PBackward0"), ("x.nansum()", "NansumBackward0"),
    ("x.prod()", "ProdBackward0"), ("x.prod(0)", "ProdBackward1"), ("x @ y[0]", "MvBackward0"),
    ("y[0] @ y[1]", "DotBackward0"), ("y[0] @ x", "SqueezeBackward4"), ("c[0] @ c[0]", "UnsafeViewBackward0"),
    ("lib.bmm(c[0], c[0])", "BmmBackward0"), ("F.linear(x, y)", "MmBackward0"),
    ("F.linear(c, lib.ones(2, 4), b[:2])", "ViewBackward0"), ("F.linear(c, lib.ones(2, 4))", "UnsafeViewBackward0"),
    ("F.linear(y[0], x, b)", "AddBackward0"),  # y[0] is strided (y = x.t() * 1 keeps t()'s layout)
    ("F.linear(x[0], y, b)", "ViewBackward0"),
    ("x.sign()", "SignBackward0"), ("x.floor()", "FloorBackward0"), ("x.round()", "RoundBackward0"),
    ("x.round(decimals=1)", "RoundBackward1"), ("x.square()", "PowBackward0"), ("x.flip(0)", "FlipBackward0"),
    ("x.masked_fill(x > 0, 0.0)", "MaskedFillBackward0"), ("lib.addmm(b, x, y)", "AddmmBackward0"),
    ("x.trace()", "TraceBackward0"), ("x.clamp_min(0)", "ClampMinBackward0"), ("x.clamp_max(0)", "ClampMaxBackward0"),
    ("lib.lerp(x, y, 0.3)", "LerpBackward0"), ("F.l1_loss(x, y)", "MeanBackward0"),
    ("F.l1_loss(x, y, reduction='none')", "AbsBackward0"), ("F.dropout(x, 0.5)", "MulBackward0"),
    ("F.selu(x)", "EluBackward0"), ("F.logsigmoid(x)", "LogSigmoidBackward0"), ("F.softsign(x)", "DivBackward0"),
    ("F.threshold(x, 0.1, 0.0)", "ThresholdBackward0"), ("F.glu(c, 3)", "GluBackward0"),
    ("F.prelu(x, lib.tensor([0.25]))", "PreluKernelBackward0"), ("F.group_norm(c, 1)", "NativeGroupNormBackward0"),
    ("F.adaptive_avg_pool2d(c, 1)", "MeanBackward1"), ("F.adaptive_avg_pool2d(c, 2)", "AdaptiveAvgPool2DBackward0"),
    ("F.adaptive_max_pool2d(c, 2)", "AdaptiveMaxPool2DBackward0"), ("F.interpolate(c, scale_factor=2)",
                                                                       "UpsampleNearest2DBackward0"),
    ("F.interpolate(c, scale_factor=2, mode='bilinear')", "UpsampleBilinear2DBackward0"),
    ("F.interpolate(c[0], scale_factor=2, mode='linear')", "UpsampleLinear1DBackward0"),
    ("F.pixel_shuffle(c.reshape(1, 4, 2, 2), 2)", "PixelShuffleBackward0"),
    ("F.pixel_unshuffle(c, 2)", "PixelUnshuffleBackward0"), ("x.take(t)", "TakeBackward0"),
    ("x.masked_select(x > 0)", "MaskedSelectBackward0"), ("x.scatter(1, t[:, None], 0.0)", "ScatterBackward1"),
    ("x.scatter(1, t[:, None], y)", "ScatterBackward0"), ("x.scatter_add(1, t[:, None], y)", "ScatterAddBackward0"),
    ("x.index_fill(0, t, 1.0)", "IndexFillBackward0"), ("1 - x", "RsubBackward1"), ("lib.rsub(x, y)", "RsubBackward0"),
    ("x ** y", "PowBackward1"), ("2 ** x", "PowBackward2"), ("x.pow(2.5)", "PowBackward0"), ("2 / x", "MulBackward0"),
    ("x.div(y, rounding_mode='floor')", "DivBackward2"), ("x % y", "RemainderBackward1"),
    ("x.remainder(2)", "RemainderBackward0"), ("x.fmod(y)", "FmodBackward1"),
    ("lib.addcmul(x, x, y)", "AddcmulBackward0"), ("lib.addcdiv(x, x, y)", "AddcdivBackward0"),
]


def _names(lib: Any) -> list[str]:
    base = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3], [0.1, 0.9, -2.0]])
    env = {"lib": lib, "F": lib.nn.functional, "x": (base * 1).requires_grad_(), "y": (base.t() * 1).requires_grad_(),
           "b": lib.zeros(3, requires_grad=True), "c": lib.ones(1, 1, 4, 4, requires_grad=True),
           "k": lib.ones(2, 1, 3, 3, requires_grad=True), "t": lib.tensor([0, 2, 1])}
    return [eval(expr, env).grad_fn.name() for expr, _ in CASES]


def test_grad_fn_names_are_pytorchs():
    assert _names(mt) == [name for _, name in CASES]


def test_repr_shows_the_name():
    x = mt.ones(2, requires_grad=True)
    assert repr(x * 2) == "tensor([2., 2.], grad_fn=<MulBackward0>)"
    assert repr(x.sum()) == "tensor(2., grad_fn=<SumBackward0>)"


@pytest.mark.torch
def test_the_table_is_what_pytorch_names():
    torch = pytest.importorskip("torch")
    assert _names(torch) == [name for _, name in CASES]
