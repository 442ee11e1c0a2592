"""minitensor.onnx.export: each supported layer and op, and the examples' MLP and CNN, exported, checked
by onnx's checker and run in onnxruntime against our own outputs, at the traced batch size and at another
one (the dynamic batch axis). Skipped where onnx or onnxruntime is absent (``pip install 'minitensor[onnx]'``);
the import and error tests at the end need neither."""
from __future__ import annotations

import io
import subprocess
import sys
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
from minitensor import nn
from minitensor.autograd import function as _function
from minitensor.onnx import TrainingMode
from minitensor.onnx.errors import OnnxExporterError, UnsupportedOperatorError
from examples.models import cnn, dcgan_discriminator, dcgan_generator, mlp, TransformerLM


@pytest.fixture
def ort() -> Any:
    pytest.importorskip("onnx")
    return pytest.importorskip("onnxruntime")


class Lambda(nn.Module):
    def __init__(self, fn: Callable[..., mt.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs: mt.Tensor) -> Any:
        return self.fn(*xs)


def _run(ort: Any, proto: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnx
    onnx.checker.check_model(proto, full_check=True)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _ours(model: nn.Module, *xs: mt.Tensor) -> list[np.ndarray]:
    model.eval()
    with mt.no_grad():
        out = model(*xs)
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def roundtrip(ort: Any, model: nn.Module, make: Callable[[int], tuple[mt.Tensor, ...]],
              batches: tuple[int, ...] = (2, 5), rtol: float = 1e-5, atol: float = 1e-5, **kwargs: Any) -> Any:
    """Export at batch batches[0] with dim 0 of every input and output free, then run every batch size."""
    xs = make(batches[0])
    names = [f"x{i}" for i in range(len(xs))]
    proto = mt.onnx.export(model, xs, None, input_names=names, output_names=["y"],
                           dynamic_axes={n: {0: "batch"} for n in names + ["y"]}, **kwargs)
    for n in batches:
        xs = make(n)
        got = _run(ort, proto, {name: x.numpy() for name, x in zip(names, xs)})
        for g, want in zip(got, _ours(model, *xs)):
            assert g.shape == want.shape and g.dtype == want.dtype
            np.testing.assert_allclose(g, want, rtol=rtol, atol=atol)
    return proto


def images(c: int, h: int = 8, w: int | None = None) -> Callable[[int], tuple[mt.Tensor, ...]]:
    return lambda n: (mt.randn(n, c, h, w or h),)


def rows(*shape: int) -> Callable[[int], tuple[mt.Tensor, ...]]:
    return lambda n: (mt.randn(n, *shape),)


def _trained_bn(bn: nn.Module) -> nn.Module:
    """Running statistics away from (0, 1), so that using them is visible."""
    bn.running_mean.copy_(mt.randn(bn.num_features))
    bn.running_var.copy_(mt.rand(bn.num_features) + 0.5)
    return bn


LAYERS = {
    "linear": (lambda: nn.Linear(5, 3), rows(5)),
    "linear_3d": (lambda: nn.Linear(5, 3), rows(4, 5)),
    "linear_no_bias_3d": (lambda: nn.Linear(5, 3, bias=False), rows(4, 5)),
    "conv": (lambda: nn.Conv2d(3, 4, 3, stride=2, padding=1), images(3)),
    "conv_groups_dilation": (lambda: nn.Conv2d(4, 6, 3, padding=2, dilation=2, groups=2, bias=False), images(4)),
    "conv_same_even_kernel": (lambda: nn.Conv2d(2, 3, 4, padding="same"), images(2, 7)),
    "conv_transpose": (lambda: nn.ConvTranspose2d(3, 2, 4, stride=2, padding=1), images(3)),
    "conv_transpose_output_padding": (lambda: nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1,
                                                                groups=2), images(4, 5)),
    "max_pool": (lambda: nn.MaxPool2d(2), images(3)),
    "max_pool_padded_ceil": (lambda: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), images(2, 9)),
    "avg_pool": (lambda: nn.AvgPool2d(2), images(3)),
    "avg_pool_padded": (lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), images(2, 9)),
    "adaptive_avg_pool_1": (lambda: nn.AdaptiveAvgPool2d(1), images(3, 5)),
    "adaptive_avg_pool_divides": (lambda: nn.AdaptiveAvgPool2d((2, 3)), images(3, 4, 6)),
    "batch_norm_1d": (lambda: _trained_bn(nn.BatchNorm1d(5)), rows(5)),
    "batch_norm_2d": (lambda: _trained_bn(nn.BatchNorm2d(3)), images(3)),
    "batch_norm_no_affine": (lambda: _trained_bn(nn.BatchNorm2d(3, affine=False)), images(3)),
    "layer_norm": (lambda: nn.LayerNorm(5), rows(4, 5)),
    "layer_norm_2d_no_affine": (lambda: nn.LayerNorm((4, 5), elementwise_affine=False), rows(4, 5)),
    "dropout_eval": (lambda: nn.Dropout(0.5), rows(5)),
    "flatten": (lambda: nn.Flatten(), images(3)),
    "unflatten": (lambda: nn.Unflatten(1, (2, 3)), rows(6)),
    "identity": (lambda: nn.Identity(), rows(3)),
    "relu_inplace": (lambda: nn.Sequential(nn.Linear(5, 5), nn.ReLU(inplace=True), nn.Linear(5, 2)), rows(5)),
    "mha": (lambda: nn.MultiheadAttention(8, 2, batch_first=True),
            lambda n: (mt.randn(n, 3, 8), mt.randn(n, 4, 8), mt.randn(n, 4, 8))),
    "transformer_encoder_layer": (lambda: nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), rows(3, 8)),
    "transformer_encoder_layer_pre_norm_gelu": (
        lambda: nn.TransformerEncoderLayer(8, 2, 16, activation="gelu", norm_first=True), rows(3, 8)),
}
ACTIVATIONS = [nn.ReLU(), nn.LeakyReLU(0.2), nn.LeakyReLU(-0.1), nn.ELU(), nn.ELU(0.5), nn.GELU(),
               nn.GELU("tanh"), nn.SiLU(), nn.Softplus(), nn.Softplus(beta=2, threshold=1), nn.Sigmoid(), nn.Tanh(),
               nn.Hardtanh(-0.5, 0.7), nn.ReLU6(), nn.Softmax(dim=1), nn.LogSoftmax(dim=-1)]


@pytest.mark.parametrize("name", LAYERS)
def test_layer(ort, name):
    make_model, make_input = LAYERS[name]
    mt.manual_seed(0)
    model = make_model()
    if name == "mha":  # (attn_output, averaged weights); the MHA's query, key and value inputs
        model = Lambda(lambda q, k, v, m=model: m(q, k, v)[0])
    roundtrip(ort, model, make_input)


@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda a: repr(a))
def test_activation(ort, act):
    x = lambda n: (mt.randn(n, 6) * 3,)  # noqa: E731  (reaches the Softplus threshold and Hardtanh's ends)
    roundtrip(ort, act, x)


@pytest.mark.parametrize("opset", [18, 19])
def test_gelu_before_opset_20_is_written_with_erf_or_tanh(ort, opset):
    for act in (nn.GELU(), nn.GELU("tanh")):
        proto = roundtrip(ort, act, rows(6), opset_version=opset)
        assert "Gelu" not in {n.op_type for n in proto.graph.node}


FUNCTIONAL = {
    "add_alpha_sub_scalar": lambda x: mt.add(x, x * 2, alpha=0.5) - 1.5,
    "mul_div_pow_neg": lambda x: -((x * x) / 3.0) ** 2,
    "matmul_const": lambda x: x @ mt.ones(6, 2),
    "reshape_view": lambda x: x.reshape(x.shape[0], 2, 3).view(x.shape[0], 6),
    "permute_transpose": lambda x: x.reshape(x.shape[0], 2, 3).permute(2, 0, 1).transpose(0, 1),
    "flatten_unsqueeze_squeeze": lambda x: x.unsqueeze(1).flatten(1).unsqueeze(-1).squeeze(-1),
    "softmax_log_softmax": lambda x: mt.softmax(x, dim=-1) + mt.log_softmax(x, dim=1),
    "cat_stack": lambda x: mt.cat([x, x * 2], dim=1) + mt.stack([x, x], dim=1).flatten(1),
    "slices": lambda x: x[:, 1:5:2] + x[:, None, -2:].squeeze(1) + x[..., 0:1],
    "int_index_ellipsis": lambda x: x.reshape(x.shape[0], 2, 3)[..., 1],
    "expand_repeat": lambda x: x[:, :1].expand(x.shape[0], 4) + x[:, 2:4].repeat(1, 2),
    "reductions": lambda x: x.sum(1, keepdim=True) + x.mean(-1, keepdim=True) + x.amax(1, keepdim=True) - x,
    "clamp_maximum": lambda x: mt.maximum(x.clamp(-0.5, 0.5), x * 0.1) + x.clamp(min=0),
    "math": lambda x: (x.abs() + 1).sqrt() + x.exp().log() + x.sin() * x.cos() + (x.abs() + 1).rsqrt()
    + x.square(),
    "where_const_mask_tril": lambda x: mt.where(mt.arange(6) % 2 == 0, x, x * 0.0)
    + mt.tril(x.reshape(x.shape[0], 2, 3)).flatten(1),
    "var_std_norms_logsumexp_prod": lambda x: x.var(1, keepdim=True) + x.std(1, correction=0, keepdim=True)
    + x.norm(dim=1, keepdim=True) + x.norm(p=1) + mt.logsumexp(x, 1, keepdim=True)
    + (x.abs() + 0.5).prod(1, keepdim=True) + x.abs().log1p().expm1(),
    "max_min_along_dim": lambda x: (x.max(1).values + x.min(1, keepdim=True).values.squeeze(1),
                                    x.max(1).indices, x.min(1, keepdim=True).indices),
    "index_select_gather": lambda x: x.index_select(1, mt.tensor([4, 0, 0])).sum(1)
    + mt.gather(x, 1, mt.tensor([[1, 3, 3]])).sum(1),
    "pad_cast_clone": lambda x: mt.nn.functional.pad(x, (1, 2), value=0.5).double().float().clone(),
}

FUNCTIONAL["clamp_tensor_bounds"] = lambda x: x.clamp(min=x * 0.5 - 1, max=mt.ones(6)) + mt.clamp_min(x, 0.2)

@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional(ort, name):
    roundtrip(ort, Lambda(FUNCTIONAL[name]), rows(6))


@settings(max_examples=15, deadline=None)
@given(dims=st.lists(st.integers(1, 4), min_size=1, max_size=3), start=st.integers(1, 3), data=st.data())
def test_shape_chains_keep_the_batch_dim_free(dims, start, data):
    """flatten from a drawn dim, unflatten back, permute the non-batch dims, view as (N, -1): exported at one
    batch size, right at another."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    perm = [0] + [1 + p for p in data.draw(st.permutations(range(len(dims))))]
    start = min(start, len(dims))

    def fn(x: mt.Tensor) -> mt.Tensor:
        y = x.flatten(start).unflatten(start, dims[start - 1:]).permute(*perm)
        return y.reshape(y.shape[0], -1) * 2

    roundtrip(ort, Lambda(fn), rows(*dims), batches=(2, 3))


def test_embedding_takes_int64_indices(ort):
    mt.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 2))
    proto = roundtrip(ort, model, lambda n: (mt.randint(0, 10, (n, 3)),))
    assert proto.graph.input[0].type.tensor_type.elem_type == 7  # INT64


@pytest.mark.parametrize("make", [mlp, cnn, dcgan_discriminator], ids=["mlp", "cnn", "dcgan_discriminator"])
def test_examples_models(ort, make):
    mt.manual_seed(0)
    roundtrip(ort, make(28), images(1, 28), batches=(3, 1, 7))


def test_dcgan_generator(ort):
    mt.manual_seed(0)
    model = dcgan_generator(8)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            _trained_bn(m)
    roundtrip(ort, model, lambda n: (mt.randn(n, 100),))


def test_transformer_lm_at_its_traced_shape(ort):
    """Sequence length is frozen (the causal mask is a constant); the batch dim (1) stays free."""
    mt.manual_seed(0)
    model = TransformerLM(20, d_model=16, nhead=2, d_hid=32, nlayers=2)
    src = mt.randint(0, 20, (5, 2))
    proto = mt.onnx.export(model, (src,), None, dynamic_axes={"src": {1: "batch"}})
    for batch in (2, 3):
        src = mt.randint(0, 20, (5, batch))
        got, = _run(ort, proto, {"src": src.numpy()})
        np.testing.assert_allclose(got, _ours(model, src)[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rnn", [nn.RNN, nn.LSTM, nn.GRU], ids=lambda r: r.__name__)
def test_recurrent_layers_at_their_traced_shape(ort, rnn):
    """A Python loop over time steps from a zero state of the traced batch: exported at the traced shape."""
    mt.manual_seed(0)
    model = Lambda(lambda x, m=rnn(4, 3, num_layers=2, batch_first=True): m(x)[0])
    roundtrip(ort, model, rows(5, 4), batches=(2,))


def test_keyword_arguments_default_names_and_none_outputs(ort):
    """Inputs are named after forward's parameters; a non-tensor keyword is frozen; a None output drops."""
    mt.manual_seed(0)
    model = nn.MultiheadAttention(4, 2)
    q, kv = mt.randn(3, 2, 4), mt.randn(5, 2, 4)
    proto = mt.onnx.export(model, (q, kv, kv), None, kwargs={"need_weights": False})
    assert [i.name for i in proto.graph.input] == ["query", "key", "value"] and len(proto.graph.output) == 1
    got, = _run(ort, proto, {"query": q.numpy(), "key": kv.numpy(), "value": kv.numpy()})
    np.testing.assert_allclose(got, _ours(Lambda(lambda *a: model(*a)[0]), q, kv, kv)[0], rtol=1e-5, atol=1e-6)


def test_float64_model(ort):
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.LayerNorm(4)).double()  # (onnxruntime has no float64 Erf)
    proto = roundtrip(ort, model, lambda n: (mt.randn(n, 3, dtype=mt.float64),), rtol=1e-9, atol=1e-9)
    assert proto.graph.input[0].type.tensor_type.elem_type == 11  # DOUBLE


def test_parameters_are_initializers_named_as_in_the_state_dict(ort):
    model = mlp(8, hidden=4)
    proto = mt.onnx.export(model, (mt.randn(2, 1, 8, 8),), None)
    stored = {t.name for t in proto.graph.initializer}
    assert set(model.state_dict()) <= stored
    assert [i.name for i in proto.graph.input] == ["input"] and [o.name for o in proto.graph.output] == ["output"]
    from onnx import numpy_helper
    weight = next(t for t in proto.graph.initializer if t.name == "1.weight")
    np.testing.assert_array_equal(numpy_helper.to_array(weight), model[1].weight.detach().numpy())


def test_export_params_false_and_keep_initializers_as_inputs(ort):
    model = nn.Linear(3, 2)
    x = mt.randn(4, 3)
    proto = mt.onnx.export(model, x, None, input_names=["x"], export_params=False)
    assert {i.name for i in proto.graph.input} == {"x", "weight", "bias"} and not proto.graph.initializer
    feeds = {"x": x.numpy(), "weight": model.weight.detach().numpy(), "bias": model.bias.detach().numpy()}
    np.testing.assert_allclose(_run(ort, proto, feeds)[0], _ours(model, x)[0], rtol=1e-5)
    proto = mt.onnx.export(model, x, None, input_names=["x"], keep_initializers_as_inputs=True)
    assert {i.name for i in proto.graph.input} == {"x", "weight", "bias"}
    assert {t.name for t in proto.graph.initializer} == {"weight", "bias"}


def test_f_is_a_path_or_a_binary_file(ort, tmp_path):
    import onnx
    model, x = nn.Linear(3, 2), mt.randn(2, 3)
    path = tmp_path / "m.onnx"
    proto = mt.onnx.export(model, (x,), path)
    buffer = io.BytesIO()
    mt.onnx.export(model, (x,), buffer)
    assert onnx.load(str(path)) == proto == onnx.load_from_string(buffer.getvalue())
    mt.onnx.export(model, (x,), str(path))
    assert onnx.load(str(path)) == proto
    with pytest.raises(TypeError, match="binary file object"):
        mt.onnx.export(model, (x,), 3)


def test_dynamic_axes_forms(ort):
    model, x = nn.Linear(3, 2), mt.randn(2, 3)
    proto = mt.onnx.export(model, (x,), None, input_names=["x"], output_names=["y"], dynamic_axes={"x": [0]})
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "x_dynamic_axes_1" and dims[1].dim_value == 3
    with pytest.warns(UserWarning, match="'z'"):
        mt.onnx.export(model, (x,), None, input_names=["x"], dynamic_axes={"z": [0]})
    with pytest.raises(ValueError, match="axis 2"):
        mt.onnx.export(model, (x,), None, input_names=["x"], dynamic_axes={"x": [2]})
    static = mt.onnx.export(model, (x,), None)  # no free dims: the output's shape is known
    assert [d.dim_value for d in static.graph.output[0].type.tensor_type.shape.dim] == [2, 2]


def test_several_outputs_and_an_output_that_is_an_input(ort):
    model = Lambda(lambda x: (x.relu(), x, x.relu()))
    x = mt.randn(2, 3)
    proto = mt.onnx.export(model, (x,), None, input_names=["x"], output_names=["a", "b", "c"])
    got = _run(ort, proto, {"x": x.numpy()})
    for g, want in zip(got, _ours(model, x)):
        np.testing.assert_array_equal(g, want)


def test_unsupported_op_is_named(ort):
    with pytest.raises(UnsupportedOperatorError, match="'minitensor::MSELoss' to ONNX opset version 20"):
        mt.onnx.export(Lambda(lambda x: nn.functional.mse_loss(x, x * 2)), (mt.randn(2, 3),), None)
    assert _function.tracer is None  # the hook is off again after the failed trace
    with pytest.raises(UnsupportedOperatorError, match="NoGrad.*comparison"):
        mt.onnx.export(Lambda(lambda x: mt.where(x > 0, x, 0.0)), (mt.randn(2, 3),), None)
    assert issubclass(UnsupportedOperatorError, OnnxExporterError) and issubclass(OnnxExporterError, RuntimeError)


def test_in_place_writes(ort):
    """Writes between constants are folded; a write the trace cannot follow raises instead of exporting a
    stale value."""
    def const_written(x: mt.Tensor) -> mt.Tensor:
        m = mt.zeros(3)
        m[1] = 5.0
        return x + m

    def traced_written(x: mt.Tensor) -> mt.Tensor:
        y = x * 2
        y[:, 0] = 0.0
        return y

    def traced_into_const(x: mt.Tensor) -> mt.Tensor:
        m = mt.zeros(x.shape[0], 3)
        m[:, 0] = x[:, 0]
        return m

    def view_written(x: mt.Tensor) -> mt.Tensor:
        y = x * 2
        nn.functional.relu_(y[:, :1])
        return y + 1

    roundtrip(ort, Lambda(const_written), rows(3))
    # a view written in place whose base is not read again
    roundtrip(ort, Lambda(lambda x: nn.functional.relu_((x * 2).unsqueeze(-1))), rows(3))
    for fn, what in ((traced_written, "setitem"), (traced_into_const, "setitem"), (view_written, "in-place write")):
        with pytest.raises(UnsupportedOperatorError, match=what):
            mt.onnx.export(Lambda(fn), (mt.randn(2, 3),), None)


def test_training_mode_is_refused_for_dropout_and_batch_norm_and_modes_are_restored(ort):
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3), nn.Dropout(0.5))
    model.train()
    mt.onnx.export(model, (mt.randn(4, 3),), None)  # EVAL, the default
    assert all(m.training for m in model.modules())
    model.eval()
    with pytest.raises(UnsupportedOperatorError, match="minitensor::BatchNorm.*training"):
        mt.onnx.export(model, (mt.randn(4, 3),), None, training=TrainingMode.TRAINING)
    assert not any(m.training for m in model.modules())  # restored after the failed trace too
    with pytest.raises(UnsupportedOperatorError, match="minitensor::Dropout"):
        mt.onnx.export(nn.Dropout(0.5), (mt.randn(4, 3),), None, training=TrainingMode.PRESERVE)


def test_max_pool_indices_are_refused_only_when_used(ort):
    x = mt.randn(1, 1, 4, 4)
    mt.onnx.export(Lambda(lambda x: nn.functional.max_pool2d(x, 2, return_indices=True)[0]), (x,), None)
    with pytest.raises(UnsupportedOperatorError, match="MaxPool2d"):
        mt.onnx.export(Lambda(lambda x: nn.functional.max_pool2d(x, 2, return_indices=True)), (x,), None)


def test_opset_range_and_dynamic_shapes(ort):
    model, x = nn.Linear(3, 2), mt.randn(2, 3)
    assert mt.onnx.export(model, (x,), None).opset_import[0].version == 20
    with pytest.raises(ValueError, match="opset_version 17"):
        mt.onnx.export(model, (x,), None, opset_version=17)
    with pytest.raises(NotImplementedError, match="dynamic_axes"):
        mt.onnx.export(model, (x,), None, dynamic_shapes={"x": {0: "batch"}})


def test_is_in_onnx_export(ort):
    seen = []
    mt.onnx.export(Lambda(lambda x: seen.append(mt.onnx.is_in_onnx_export()) or x * 2), (mt.randn(2),), None)
    assert seen == [True] and not mt.onnx.is_in_onnx_export()


def test_import_minitensor_does_not_import_onnx():
    code = "import sys, minitensor, minitensor.onnx; assert 'onnx' not in sys.modules, 'onnx was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_onnx_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'minitensor\[onnx\]'"):
        mt.onnx.export(nn.Linear(2, 2), (mt.randn(1, 2),), None)
