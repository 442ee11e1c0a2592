"""Memory formats (``channels_last``, ``channels_last_3d``, ``contiguous_format``, ``preserve_format``): the
strides PyTorch gives (written out here from its formulas: NHWC's strides for an NCHW shape), contiguity
flags, values, gradients, ``Module.to(memory_format=)``, the nn ops on channels-last inputs, saving.
tests/test_memory_format_torch.py compares the same calls with PyTorch."""
from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

CL, CL3, CF, PF = mt.channels_last, mt.channels_last_3d, mt.contiguous_format, mt.preserve_format


def nchw(*shape: int, seed: int = 0, requires_grad: bool = False) -> mt.Tensor:
    values = np.random.default_rng(seed).standard_normal(shape)
    return mt.tensor(values, dtype=mt.float64, requires_grad=requires_grad)


def test_formats_are_one_type_and_print_as_dtypes_do():
    for fmt, name in [(CL, "channels_last"), (CL3, "channels_last_3d"), (CF, "contiguous_format"),
                      (PF, "preserve_format")]:
        assert isinstance(fmt, mt.memory_format)
        assert repr(fmt) == str(fmt) == f"minitensor.{name}"
        assert pickle.loads(pickle.dumps(fmt)) is fmt
    assert repr(mt.float32) == "minitensor.float32"  # the same style


def test_channels_last_strides_are_nhwc_and_values_stay():
    x = nchw(2, 3, 4, 5)
    y = x.contiguous(memory_format=CL)
    assert y.shape == (2, 3, 4, 5) and y.stride() == (60, 1, 15, 3)
    assert y.is_contiguous(memory_format=CL) and not y.is_contiguous()
    assert not x.is_contiguous(memory_format=CL) and x.is_contiguous(memory_format=CF)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert y.contiguous(memory_format=CL) is y and x.contiguous(memory_format=CF) is x
    back = y.contiguous()
    assert back.stride() == (60, 20, 5, 1)
    np.testing.assert_array_equal(back.numpy(), x.numpy())


def test_channels_last_3d_strides():
    y = nchw(2, 3, 4, 5, 6).contiguous(memory_format=CL3)
    assert y.stride() == (360, 1, 90, 18, 3)
    assert y.is_contiguous(memory_format=CL3) and not y.is_contiguous(memory_format=CL)


def test_size_one_dims_make_both_formats_hold():
    one_channel = nchw(2, 1, 3, 3).contiguous(memory_format=CL)
    assert one_channel.stride() == (9, 9, 3, 1)
    assert one_channel.is_contiguous() and one_channel.is_contiguous(memory_format=CL)
    pixel = nchw(2, 3, 1, 1).contiguous(memory_format=CL)
    assert pixel.is_contiguous() and pixel.is_contiguous(memory_format=CL)


@pytest.mark.parametrize("make, message", [
    (lambda: nchw(2, 3, 4).contiguous(memory_format=CL), "required rank 4 tensor to use channels_last format"),
    (lambda: nchw(2, 3, 4, 5).contiguous(memory_format=CL3),
     "required rank 5 tensor to use channels_last_3d format"),
    (lambda: nchw(2, 3, 4).clone(memory_format=CL), "required rank 4 tensor to use channels_last format"),
    (lambda: nchw(2, 3, 4).to(memory_format=CL), "required rank 4 tensor to use channels_last format"),
    (lambda: mt.zeros_like(nchw(2, 3, 4), memory_format=CL), "required rank 4"),
    (lambda: mt.empty(2, 3, 4, memory_format=CL), "required rank 4"),
    (lambda: mt.empty(2, 3, 4, 5, memory_format=PF), "unsupported memory format Preserve"),
    (lambda: nchw(3, 4).t().contiguous(memory_format=PF), "preserve memory format is unsupported"),
])
def test_errors_read_as_pytorchs(make, message):
    with pytest.raises(RuntimeError, match=message):
        make()


def test_is_contiguous_with_preserve_is_the_default_check_and_other_ranks_are_not_channels_last():
    x = nchw(3, 4)
    assert x.is_contiguous(memory_format=PF) and not x.t().is_contiguous(memory_format=PF)
    assert not x.is_contiguous(memory_format=CL)
    assert x.contiguous(memory_format=PF) is x


def test_empty_in_a_format():
    assert mt.empty(2, 3, 4, 5, memory_format=CL).stride() == (60, 1, 15, 3)
    assert mt.empty((2, 1, 4, 5), memory_format=CL).stride() == (20, 1, 5, 1)
    assert mt.empty(2, 3, 4, 5, 6, memory_format=CL3).stride() == (360, 1, 90, 18, 3)
    assert mt.empty(2, 3, 4, 5, memory_format=CF).stride() == (60, 20, 5, 1)


@pytest.mark.parametrize("like", [
    lambda t, **k: mt.zeros_like(t, **k), lambda t, **k: mt.ones_like(t, **k),
    lambda t, **k: mt.empty_like(t, **k), lambda t, **k: mt.full_like(t, 2.5, **k),
    lambda t, **k: mt.rand_like(t, **k), lambda t, **k: mt.randn_like(t, **k),
    lambda t, **k: mt.randint_like(t, 7, **k)])
def test_like_creations_preserve_dense_layouts_by_default(like):
    x = nchw(2, 3, 4, 5)
    y = x.contiguous(memory_format=CL)
    assert like(y).stride() == (60, 1, 15, 3)
    assert like(x, memory_format=CL).stride() == (60, 1, 15, 3)
    assert like(y, memory_format=CF).stride() == (60, 20, 5, 1)
    assert like(x.transpose(0, 2)).stride() == (5, 20, 60, 1)  # dense: the same strides
    assert like(nchw(4, 5, 6)[:, ::2]).stride() == (18, 6, 1)  # not dense: contiguous
    assert like(nchw(2, 6, 4, 5).contiguous(memory_format=CL)[:, ::2]).stride() == (60, 1, 15, 3)


def test_like_values_do_not_depend_on_the_layout():
    x = nchw(2, 3, 4, 5)
    mt.manual_seed(3)
    a = mt.randn_like(x)
    mt.manual_seed(3)
    b = mt.randn_like(x, memory_format=CL)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(mt.full_like(x, 2.5, memory_format=CL).numpy(), np.full((2, 3, 4, 5), 2.5))


def test_clone_formats():
    x = nchw(2, 3, 4, 5)
    y = x.clone(memory_format=CL)
    assert y.stride() == (60, 1, 15, 3) and y.clone().stride() == (60, 1, 15, 3)
    assert mt.clone(y, memory_format=CF).stride() == (60, 20, 5, 1)
    assert x.transpose(1, 3).clone().stride() == x.transpose(1, 3).stride()
    assert nchw(4, 5, 6)[:, ::2].clone().stride() == (18, 6, 1)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    y.add_(1)
    np.testing.assert_array_equal(y.numpy(), x.numpy() + 1)  # a copy: x is unchanged by the write


def test_to_memory_format():
    x = nchw(2, 3, 4, 5)
    y = x.to(memory_format=CL)
    assert y.stride() == (60, 1, 15, 3)
    assert y.to(memory_format=CL) is y and x.to(memory_format=CF) is x and x.to(memory_format=PF) is x
    assert y.to(memory_format=CL, copy=True) is not y
    assert x.to(mt.float32, memory_format=CL).stride() == (60, 1, 15, 3)
    assert x.to("cpu", mt.float32, memory_format=CL).dtype == mt.float32
    assert y.to(mt.float32).stride() == (60, 1, 15, 3)  # preserve keeps channels_last through a cast
    t = nchw(3, 4).t()
    assert t.to(memory_format=CF) is t  # as PyTorch: its strides suggest no other format


@pytest.mark.parametrize("relayout", [
    lambda t: t.contiguous(memory_format=CL), lambda t: t.clone(memory_format=CL),
    lambda t: t.to(memory_format=CL), lambda t: t.to(mt.float32, memory_format=CL),
    lambda t: t.contiguous(memory_format=CL).contiguous()])
def test_gradients_flow_through_the_copies(relayout):
    x = nchw(2, 3, 4, 5, requires_grad=True)
    weights = np.arange(120.0).reshape(2, 3, 4, 5)
    (relayout(x) * mt.tensor(weights, dtype=mt.float32)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), weights)


def test_module_to_lays_out_4d_tensors_only():
    model = mt.nn.Sequential(mt.nn.Conv2d(3, 4, 3), mt.nn.BatchNorm2d(4), mt.nn.Linear(4, 4))
    weight = model[0].weight
    before = weight.detach().numpy().copy()
    assert model.to(memory_format=CL) is model
    assert model[0].weight is weight and weight.stride() == (27, 1, 9, 3)
    np.testing.assert_array_equal(weight.detach().numpy(), before)
    assert model[2].weight.stride() == (4, 1) and model[1].running_mean.stride() == (1,)
    model.to(mt.float64, memory_format=PF)
    assert weight.dtype == mt.float64 and weight.stride() == (27, 1, 9, 3)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        mt.nn.Conv3d(2, 2, 1).to(memory_format=CL)  # as PyTorch: every 4-d and 5-d tensor gets the format
    assert mt.nn.Conv3d(2, 2, 1).to(memory_format=CL3).weight.stride() == (2, 1, 2, 2, 2)


def _grads(fn, x: mt.Tensor) -> tuple[np.ndarray, np.ndarray]:
    leaf = x.detach().requires_grad_()
    out = fn(leaf)
    weights = mt.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=out.dtype)
    (out * weights).sum().backward()
    return out.detach().numpy(), leaf.grad.numpy()


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
@pytest.mark.parametrize("name, fn", [
    ("conv2d", lambda x: F.conv2d(x, mt.ones(4, 3, 3, 3, dtype=x.dtype) * 0.1, padding=1, stride=(1, 2))),
    ("conv2d_3x3_16", lambda x: F.conv2d(x.repeat(1, 6, 1, 1), mt.ones(16, 18, 3, 3, dtype=x.dtype) * 0.05)),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2)),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 2)),
    ("batch_norm", lambda x: F.batch_norm(x, None, None, mt.ones(3, dtype=x.dtype) * 2,
                                          mt.zeros(3, dtype=x.dtype) + 0.5, training=True)),
    ("relu_sum", lambda x: F.relu(x) * x)])
def test_nn_ops_on_channels_last_inputs_match_the_contiguous_results(name, fn, dtype):
    x = nchw(2, 3, 8, 8).to(dtype)
    tol = 1e-5 if dtype == mt.float32 else 1e-12
    out_c, grad_c = _grads(fn, x)
    out_l, grad_l = _grads(fn, x.contiguous(memory_format=CL))
    np.testing.assert_allclose(out_l, out_c, rtol=tol, atol=tol)
    np.testing.assert_allclose(grad_l, grad_c, rtol=tol, atol=tol)


def test_a_channels_last_model_trains_as_the_contiguous_one():
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Conv2d(3, 8, 3, padding=1), mt.nn.BatchNorm2d(8), mt.nn.ReLU(),
                             mt.nn.MaxPool2d(2), mt.nn.Flatten(), mt.nn.Linear(8 * 4 * 4, 2)).double()
    twin = copy.deepcopy(model).to(memory_format=CL)
    x = nchw(4, 3, 8, 8)
    for net, inp in ((model, x), (twin, x.contiguous(memory_format=CL))):
        net(inp).square().sum().backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_save_and_load_keep_the_values():
    y = nchw(2, 3, 4, 5).contiguous(memory_format=CL)
    for fmt in ("minitensor", "torch"):
        buffer = io.BytesIO()
        mt.save({"y": y}, buffer, format=fmt)
        buffer.seek(0)
        loaded = mt.load(buffer)["y"]
        np.testing.assert_array_equal(loaded.numpy(), y.numpy())
        if fmt == "torch":
            assert loaded.stride() == (60, 1, 15, 3)  # the pickle names the strides, as torch.save's


class _ChannelsLastNet(mt.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = mt.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        y = self.conv(x.contiguous(memory_format=CL)).clone(memory_format=CF)
        return F.relu(y.to(memory_format=CL))


def test_onnx_export_is_unaffected_by_the_layouts():
    onnx = pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator
    mt.manual_seed(0)
    model = _ChannelsLastNet().eval()
    x = mt.randn(2, 3, 8, 8)
    plain = mt.onnx.export(model, (x,), None, input_names=["x"], output_names=["y"])
    model.to(memory_format=CL)
    proto = mt.onnx.export(model, (x,), None, input_names=["x"], output_names=["y"])
    onnx.checker.check_model(proto, full_check=True)
    assert [n.op_type for n in proto.graph.node] == [n.op_type for n in plain.graph.node]
    (got,) = ReferenceEvaluator(proto).run(None, {"x": x.numpy()})
    with mt.no_grad():
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-5, atol=1e-5)


def test_layouts_on_each_device(device):
    """The same strides on every device (the CuPy arrays are strided too) and through a transfer."""
    host = nchw(2, 3, 4, 5)
    x = host.to(device)
    y = x.contiguous(memory_format=CL)
    assert y.device == device and y.stride() == (60, 1, 15, 3) and y.is_contiguous(memory_format=CL)
    assert x.clone(memory_format=CL).stride() == (60, 1, 15, 3) and y.clone().stride() == (60, 1, 15, 3)
    assert mt.zeros_like(y).stride() == (60, 1, 15, 3) and mt.randn_like(x, memory_format=CL).device == device
    assert mt.empty(2, 3, 4, 5, device=device, memory_format=CL).stride() == (60, 1, 15, 3)
    assert y.to(mt.float32).stride() == (60, 1, 15, 3)
    back = y.to("cpu")
    assert back.stride() == (60, 1, 15, 3)  # preserve_format through the transfer
    np.testing.assert_array_equal(back.numpy(), host.numpy())
    np.testing.assert_array_equal(host.to(device, memory_format=CL).cpu().numpy(), host.numpy())
    leaf = x.detach().requires_grad_()
    weights = mt.tensor(np.arange(120.0).reshape(2, 3, 4, 5), device=device)
    (leaf.contiguous(memory_format=CL) * weights).sum().backward()
    np.testing.assert_array_equal(leaf.grad.cpu().numpy(), weights.cpu().numpy())
    w = mt.ones(4, 3, 3, 3, dtype=mt.float64, device=device) * 0.1
    np.testing.assert_allclose(F.conv2d(y, w, padding=1).cpu().numpy(), F.conv2d(x, w, padding=1).cpu().numpy(),
                               rtol=1e-12)
