"""``minitensor.accelerator`` (PyTorch 2.6+'s ``torch.accelerator``), ``minitensor.backends.cudnn`` / ``.mps``
and the Tensor device predicates.

Without a GPU: availability is False and never raises, and the functions that need a device raise PyTorch's
RuntimeError. With one (``gpu``): the accelerator is CUDA and the functions agree with ``minitensor.cuda``.
"""
from __future__ import annotations

import warnings

import pytest

import minitensor as mt
from minitensor import accelerator as acc

HAS_CUDA = mt.cuda.is_available()
needs_no_cuda = pytest.mark.skipif(HAS_CUDA, reason="checks the behaviour without a GPU")
gpu = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")]

NEEDS_DEVICE = {
    "current_device_index": acc.current_device_index,
    "set_device_index": lambda: acc.set_device_index(0),
    "synchronize": acc.synchronize,
    "synchronize_cuda": lambda: acc.synchronize("cuda:0"),
    "current_stream": acc.current_stream,
    "device_index_0": lambda: acc.device_index(0).__enter__(),
    "memory_allocated": acc.memory_allocated,
    "max_memory_allocated": acc.max_memory_allocated,
    "memory_reserved": acc.memory_reserved,
    "max_memory_reserved": acc.max_memory_reserved,
    "reset_peak_memory_stats": acc.reset_peak_memory_stats,
    "empty_cache": acc.empty_cache,
}


def test_every_name_in_all_exists():
    assert set(acc.__all__) >= {"is_available", "current_accelerator", "device_count", "current_device_index",
                                "current_device_idx", "set_device_index", "set_device_idx", "synchronize",
                                "device_index"}
    for name in acc.__all__:
        assert callable(getattr(acc, name)), name


@needs_no_cuda
class TestWithoutAccelerator:
    def test_queries_say_none_and_never_raise(self):
        assert acc.is_available() is False
        assert acc.device_count() == 0
        assert acc.current_accelerator() is None
        assert acc.current_accelerator(check_available=True) is None

    @pytest.mark.parametrize("call", NEEDS_DEVICE.values(), ids=NEEDS_DEVICE.keys())
    def test_device_functions_raise_pytorchs_runtime_error(self, call):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            call()

    def test_device_index_none_is_a_no_op(self):
        with acc.device_index(None):
            pass

    def test_deprecated_aliases_warn_then_behave_as_the_new_names(self):
        with pytest.warns(FutureWarning, match="current_device_index"):
            with pytest.raises(RuntimeError, match="none is available"):
                acc.current_device_idx()
        with pytest.warns(FutureWarning, match="set_device_index"):
            with pytest.raises(RuntimeError, match="none is available"):
                acc.set_device_idx(0)

    def test_the_pytorch_idiom_picks_the_cpu(self):
        device = acc.current_accelerator().type if acc.is_available() else "cpu"
        model = mt.nn.Linear(2, 3).to(device)
        assert model.weight.device == mt.device("cpu") and model.weight.is_cpu


class TestWithAccelerator:
    pytestmark = gpu

    def test_the_accelerator_is_cuda(self):
        assert acc.is_available() is True
        assert acc.current_accelerator() == mt.device("cuda")
        assert acc.current_accelerator(check_available=True).type == "cuda"
        assert acc.device_count() == mt.cuda.device_count() >= 1

    def test_index_functions_follow_minitensor_cuda(self):
        assert acc.current_device_index() == mt.cuda.current_device() == 0
        acc.set_device_index("cuda:0")
        acc.set_device_index(mt.device("cuda", 0))
        acc.set_device_index(-1)  # PyTorch: a negative index is a no-op
        assert acc.current_device_index() == 0
        with acc.device_index(0):
            assert acc.current_device_index() == 0
        assert acc.current_device_index() == 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            assert acc.current_device_idx() == 0

    def test_device_of_another_type_or_without_index_is_refused(self):
        with pytest.raises(ValueError, match="cpu doesn't match the current accelerator"):
            acc.synchronize("cpu")
        with pytest.raises(ValueError, match="with a specified index or an integer"):
            acc.set_device_index("cuda")

    def test_synchronize_waits_for_queued_work_and_memory_counters_read_the_pool(self):
        x = mt.ones(1024, 1024, device=acc.current_accelerator())
        y = (x @ x).sum()
        acc.synchronize()
        acc.synchronize(0)
        assert y.item() == 1024.0 ** 3
        assert acc.memory_allocated() == mt.cuda.memory_allocated() > 0
        assert acc.max_memory_allocated(0) >= acc.memory_allocated(0)
        assert acc.memory_reserved() >= acc.memory_allocated()
        assert acc.current_stream() == mt.cuda.current_stream()


# ------------------------------------------------------------------------------------ torch.backends
def test_cudnn_flags_are_plain_attributes_that_keep_what_is_set():
    cudnn = mt.backends.cudnn
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, False, True)
    assert cudnn.is_available() is False and cudnn.version() is None
    saved = cudnn.benchmark, cudnn.deterministic
    try:
        cudnn.benchmark, cudnn.deterministic = True, True
        assert mt.backends.cudnn.benchmark is True and mt.backends.cudnn.deterministic is True
    finally:
        cudnn.benchmark, cudnn.deterministic = saved


def test_cudnn_flags_context_manager_restores_the_previous_values():
    cudnn = mt.backends.cudnn
    with cudnn.flags(enabled=False, benchmark=True, deterministic=True, allow_tf32=False):
        assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (False, True, True,
                                                                                          False)
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, False, True)


def test_mps_is_never_available():
    assert mt.backends.mps.is_available() is False and mt.backends.mps.is_built() is False


def test_backend_registry_still_works_beside_the_user_facing_modules():
    assert type(mt.backends.get_backend("cpu")).__name__ == "NumpyBackend"
    assert mt.ones(2).device.backend.name == "cpu"


# --------------------------------------------------------------------------------------- predicates
def test_device_predicates_on_the_cpu():
    x = mt.ones(2, 3)
    assert x.is_cpu is True and x.is_cuda is False
    for name in ("is_xpu", "is_mps", "is_meta", "is_ipu", "is_xla", "is_maia", "is_mtia", "is_vulkan",
                 "is_mkldnn", "is_quantized", "is_nested"):
        assert getattr(x, name) is False, name


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
def test_device_predicates_on_cuda():
    x = mt.ones(2, device="cuda")
    assert x.is_cuda is True and x.is_cpu is False and x.is_mps is False
