"""PyTorch's top-of-program switches: the default device (``set_default_device``, ``with device(...)``,
``set_default_tensor_type``), ``can_cast``, ``typename``, anomaly and inference flags, interop threads,
``set_warn_always``, ``set_flush_denormal``, ``is_storage``."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor import global_modes

CPU_BACKEND = mt.device("cpu").backend


@pytest.fixture
def fake_cuda(lend_backend):
    """cuda:0 run by the CPU's backend, so the default device can be tested without a GPU."""
    dev = mt.device("cuda")
    lend_backend(dev, CPU_BACKEND)
    return dev


FACTORIES = [lambda: mt.zeros(2), lambda: mt.ones(2, 3), lambda: mt.empty(1), lambda: mt.full((2,), 1.0),
             lambda: mt.arange(3), lambda: mt.linspace(0, 1, 3), lambda: mt.eye(2), lambda: mt.rand(2),
             lambda: mt.randn(2), lambda: mt.randint(0, 3, (2,)), lambda: mt.randperm(3),
             lambda: mt.tensor([1.0]), lambda: mt.as_tensor([1, 2]), lambda: mt.empty_strided((2,), (1,)),
             lambda: mt.hann_window(3), lambda: mt.tril_indices(3, 3), lambda: mt.asarray(np.ones(2))]


@pytest.mark.parametrize("make", FACTORIES)
def test_factories_create_on_the_default_device(fake_cuda, make):
    assert make().device == mt.device("cpu")
    mt.set_default_device("cuda")
    assert mt.get_default_device() is fake_cuda and make().device is fake_cuda
    mt.set_default_device(None)
    assert mt.get_default_device() == mt.device("cpu") and make().device == mt.device("cpu")


def test_an_explicit_device_like_functions_and_from_numpy_ignore_the_default(fake_cuda):
    host = mt.ones(2)
    mt.set_default_device("cuda")
    assert mt.zeros(2, device="cpu").device == mt.device("cpu")
    assert mt.zeros_like(host).device == mt.device("cpu") and mt.randn_like(host).device == mt.device("cpu")
    assert mt.from_numpy(np.ones(2)).device == mt.device("cpu")
    assert mt.Generator().device == mt.device("cpu")
    # tensor() / as_tensor() of a tensor move it to the default device, as PyTorch's device context does
    assert mt.tensor(host).device is fake_cuda and mt.as_tensor(host).device is fake_cuda


def test_without_a_default_tensor_keeps_its_tensors_device(fake_cuda):
    t = mt.ones(2, device="cuda")
    assert mt.tensor(t).device is fake_cuda and mt.as_tensor(t) is t


def test_device_is_a_context_manager_that_nests(fake_cuda):
    cpu = mt.device("cpu")
    with mt.device("cuda") as d:
        assert d is fake_cuda and mt.zeros(1).device is fake_cuda
        with cpu:
            assert mt.zeros(1).device == cpu and mt.get_default_device() == cpu
        assert mt.zeros(1).device is fake_cuda
    assert mt.zeros(1).device == cpu


def test_the_default_device_is_per_thread(fake_cuda):
    mt.set_default_device("cuda")
    seen = []
    worker = threading.Thread(target=lambda: seen.append(mt.zeros(1).device))
    worker.start()
    worker.join()
    assert seen == [mt.device("cpu")] and mt.zeros(1).device is fake_cuda


def test_set_default_device_takes_an_index_and_refuses_unknown_devices(fake_cuda):
    mt.set_default_device(0)
    assert mt.get_default_device() is fake_cuda
    with pytest.raises(RuntimeError, match="unknown device type"):
        mt.set_default_device("foo")


def test_set_default_tensor_type_sets_dtype_and_device(fake_cuda, monkeypatch):
    with pytest.warns(UserWarning, match="deprecated"):
        mt.set_default_tensor_type("torch.DoubleTensor")
    assert mt.get_default_dtype() == mt.float64 and mt.zeros(1).dtype == mt.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mt.set_default_tensor_type(mt.FloatTensor)
        assert mt.get_default_dtype() == mt.float32
        monkeypatch.setattr("minitensor.backends.cuda.runtime.is_available", lambda: True)
        mt.set_default_tensor_type(mt.cuda.DoubleTensor)
        assert mt.zeros(1).device is fake_cuda and mt.zeros(1).dtype == mt.float64
        mt.set_default_tensor_type("torch.FloatTensor")
        assert mt.zeros(1).device == mt.device("cpu") and mt.zeros(1).dtype == mt.float32


@pytest.mark.parametrize("bad, error, message", [
    ("torch.LongTensor", TypeError, "only floating-point types"),
    (mt.LongTensor, TypeError, "only floating-point types"),
    (mt.float64, TypeError, "invalid type object"),
    ("foo", ModuleNotFoundError, "No module named 'foo'"),
    ("torch.Foo", AttributeError, "has no attribute 'Foo'")])
def test_set_default_tensor_type_refuses_as_pytorch(bad, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=message):
            mt.set_default_tensor_type(bad)
    assert mt.get_default_dtype() == mt.float32


def test_a_cuda_default_type_without_a_gpu_is_a_type_error(monkeypatch):
    monkeypatch.setattr("minitensor.backends.cuda.runtime.is_available", lambda: False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="not available"):
            mt.set_default_tensor_type("torch.cuda.FloatTensor")


def test_can_cast_follows_the_categories():
    f, i, b = mt.float32, mt.int32, mt.bool
    assert not mt.can_cast(f, i) and mt.can_cast(i, f) and mt.can_cast(mt.float64, f)
    assert mt.can_cast(b, mt.uint8) and mt.can_cast(mt.int64, mt.uint8) and not mt.can_cast(f, b)
    assert not mt.can_cast(mt.uint8, b) and mt.can_cast(b, b) and mt.can_cast(mt.float16, mt.bfloat16)
    with pytest.raises(TypeError, match="must be torch.dtype, not int"):
        mt.can_cast(1, i)


def test_typename():
    assert mt.typename(mt.ones(2)) == "torch.FloatTensor"
    assert mt.typename(mt.ones(2, dtype=mt.int64)) == "torch.LongTensor"
    assert mt.typename(3) == "int" and mt.typename("a") == "str"
    assert mt.typename(mt.nn.Linear(1, 1)) == "minitensor.nn.modules.linear.Linear"
    assert mt.typename(mt.nn.Linear) == "minitensor.nn.modules.linear.Linear"


def test_vmap_is_func_vmap():
    assert mt.vmap is mt.func.vmap
    assert mt.vmap(lambda r: r.sum())(mt.ones(3, 2)).tolist() == [2.0, 2.0, 2.0]


def test_inference_mode_flag_and_is_inference():
    x = mt.ones(2)
    assert not mt.is_inference_mode_enabled() and not x.is_inference() and not mt.is_inference(x)
    with mt.inference_mode():
        assert mt.is_inference_mode_enabled() and not mt.is_grad_enabled()
        with mt.inference_mode(False):
            assert not mt.is_inference_mode_enabled()
        # minitensor has no inference tensors: what is made here may enter autograd later
        assert not mt.ones(2).is_inference()
    with mt.no_grad():
        assert not mt.is_inference_mode_enabled()
    assert not mt.is_inference_mode_enabled()

    @mt.inference_mode()
    def inside():
        return mt.is_inference_mode_enabled()
    assert inside() and not mt.is_inference_mode_enabled()
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        mt.is_inference(3)


def test_set_anomaly_enabled_switches_detect_anomaly():
    assert not mt.is_anomaly_enabled() and mt.is_anomaly_check_nan_enabled()
    mt.set_anomaly_enabled(True)
    assert mt.is_anomaly_enabled() and mt.autograd.is_anomaly_enabled() and mt.is_anomaly_check_nan_enabled()
    x = mt.tensor([-1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="nan"):
        mt.sqrt(x)
    mt.set_anomaly_enabled(True, False)  # anomaly mode without the NaN checks
    assert mt.is_anomaly_enabled() and not mt.is_anomaly_check_nan_enabled()
    assert np.isnan(mt.sqrt(x).item())
    mt.set_anomaly_enabled(False)
    assert not mt.is_anomaly_enabled() and mt.is_anomaly_check_nan_enabled()
    with mt.autograd.detect_anomaly(check_nan=False):
        assert mt.is_anomaly_enabled() and not mt.is_anomaly_check_nan_enabled()
    assert not mt.is_anomaly_enabled()


def test_interop_threads_are_set_once(monkeypatch):
    monkeypatch.setattr(global_modes, "_interop", {"threads": 1, "set": False})
    assert mt.get_num_interop_threads() == 1
    with pytest.raises(RuntimeError, match="positive integer"):
        mt.set_num_interop_threads(0)
    mt.set_num_interop_threads(3)
    assert mt.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="set_num_interop_threads called"):
        mt.set_num_interop_threads(2)


def test_warn_always_flush_denormal_and_is_storage():
    assert not mt.is_warn_always_enabled()
    mt.set_warn_always(True)
    assert mt.is_warn_always_enabled()
    mt.set_warn_always(False)
    assert not mt.is_warn_always_enabled()
    assert mt.set_flush_denormal(True) is False and mt.set_flush_denormal(False) is False
    with pytest.raises(RuntimeError, match="expects a bool"):
        mt.set_flush_denormal(1.5)
    assert not mt.is_storage(mt.ones(1)) and not mt.is_storage(3)


@pytest.mark.torch
def test_flags_match_pytorch():
    torch = pytest.importorskip("torch")
    dts = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]
    for a in dts:
        for b in dts:
            assert mt.can_cast(getattr(mt, a), getattr(mt, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))
    for dt in dts:
        assert mt.typename(mt.ones(1, dtype=getattr(mt, dt))) == torch.typename(torch.ones(1, dtype=getattr(torch, dt)))
    assert mt.typename(3) == torch.typename(3) and mt.is_storage(3) == torch.is_storage(3)
    assert mt.is_anomaly_enabled() == torch.is_anomaly_enabled()


def test_modules_made_under_a_default_device_live_there(fake_cuda):
    with mt.device("cuda"):
        layer = mt.nn.Linear(3, 2)
        legacy = mt.Tensor(2, 3)
    assert all(p.device is fake_cuda for p in layer.parameters()) and legacy.device is fake_cuda
    assert mt.nn.Linear(3, 2).weight.device == mt.device("cpu")


def test_packing_keeps_its_lengths_on_the_cpu_under_a_default_device(fake_cuda):
    from minitensor.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    x = mt.ones(3, 2, 4)
    mt.set_default_device("cuda")
    packed = pack_padded_sequence(x, [3, 2])
    assert packed.batch_sizes.device == mt.device("cpu")
    assert pad_packed_sequence(packed)[1].device == mt.device("cpu")
