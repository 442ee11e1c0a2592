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
