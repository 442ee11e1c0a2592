"""The device API that follows PyTorch (``minitensor.cuda``, ``Tensor.to/cuda/cpu/numpy/pin_memory``), DLPack
exchange with NumPy, CuPy and PyTorch, and the DataLoader's ``pin_memory`` / ``device=`` options.

Without a GPU: the CUDA functions' errors, ``Tensor.to``'s signatures, DLPack round trips through NumPy (and
PyTorch's CPU tensors), and the loader options' CPU behaviour. With one (``gpu``): streams and events, the
memory counters, DLPack with CuPy, and the loader's asynchronous copies.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import sys
import time
import types
import warnings
import weakref

import numpy as np
import pytest

import minitensor as mt
from minitensor.backends.cuda import runtime as cuda_runtime
from minitensor.tensor import _wrap
from minitensor.utils.data import DataLoader, Dataset, TensorDataset

HAS_CUDA = mt.cuda.is_available()
needs_no_cuda = pytest.mark.skipif(HAS_CUDA, reason="checks the behaviour without a GPU")
gpu = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")]

DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]
PYTORCH_PIN_WARNING = ("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                       "memory won't be used.")


def shares_memory(a, b) -> bool:
    return bool(np.shares_memory(np.asarray(a), np.asarray(b)))


def sample(dtype, shape=(3, 4), seed=0) -> np.ndarray:
    values = np.random.default_rng(seed).integers(-3, 100, size=shape)
    return (values % 2).astype(dtype) if dtype is np.bool_ else values.astype(dtype)


# ---------------------------------------------------------------------------------- without a GPU
@needs_no_cuda
class TestWithoutCuda:
    def test_availability_is_false_and_never_raises(self):
        assert mt.cuda.is_available() is False
        assert mt.cuda.device_count() == 0
        mt.cuda.manual_seed(3)  # no CUDA backend is loaded: nothing to seed, no error
        mt.cuda.manual_seed_all(3)

    @pytest.mark.parametrize("call", [
        mt.cuda.synchronize, mt.cuda.current_device, lambda: mt.cuda.set_device(0),
        mt.cuda.reset_peak_memory_stats, mt.cuda.Stream, mt.cuda.Event, mt.cuda.current_stream,
        mt.cuda.default_stream, lambda: mt.ones(2).pin_memory(),
    ], ids=["synchronize", "current_device", "set_device", "reset_peak_memory_stats", "Stream",
            "Event", "current_stream", "default_stream", "pin_memory"])
    def test_gpu_functions_say_why_cuda_is_unavailable(self, call):
        with pytest.raises(RuntimeError, match="CUDA is not available: .*(CuPy|driver|GPU|numba-cuda)"):
            call()

    COUNTERS = ["memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"]

    @pytest.mark.parametrize("name", COUNTERS)
    def test_memory_counters_read_0(self, name):
        # PyTorch's answer before CUDA is initialised (a CPU-only build: always), whatever the device named:
        # programs print torch.cuda.max_memory_allocated() unconditionally (LLMs-from-scratch's pretraining)
        counter = getattr(mt.cuda, name)
        assert [counter(), counter(0), counter("cuda:0"), counter(mt.device("cuda")), counter("cpu")] == [0] * 5

    def test_empty_cache_does_nothing(self):
        assert mt.cuda.empty_cache() is None

    @pytest.mark.torch
    @pytest.mark.parametrize("name", COUNTERS)
    def test_memory_counters_match_pytorch_without_cuda(self, name):
        torch = pytest.importorskip("torch")
        if torch.cuda.is_available():
            pytest.skip("PyTorch sees a GPU")
        for device in (None, 0, "cuda:0", "cpu"):
            assert getattr(mt.cuda, name)(device) == getattr(torch.cuda, name)(device) == 0
        assert mt.cuda.empty_cache() is None and torch.cuda.empty_cache() is None

    def test_stream_none_is_a_no_op_context(self):
        with mt.cuda.stream(None) as s:
            assert s is None

    def test_is_pinned_is_false_without_cuda(self):
        assert mt.ones(3).is_pinned() is False

    def test_a_cuda_data_loader_raises_the_device_error_before_loading(self):
        loader = DataLoader(TensorDataset(mt.arange(4)), batch_size=2, device="cuda")
        with pytest.raises(RuntimeError, match="cuda"):
            iter(loader)


def test_numpy_of_a_non_cpu_tensor_raises_pytorchs_type_error(lend_backend):
    """A tensor labelled cuda:3 over a host array (a fake device: this machine may have no GPU)."""
    fake = mt.device("cuda", 3)
    lend_backend(fake, mt.device("cpu").backend)
    t = _wrap(np.ones(2, np.float32), fake)
    with pytest.raises(TypeError) as info:
        t.numpy()
    assert str(info.value) == ("can't convert cuda:3 device type tensor to numpy. Use Tensor.cpu() to copy "
                               "the tensor to host memory first.")
    assert t.is_cuda and not mt.ones(1).is_cuda
    assert t.is_pinned() is False  # only CPU tensors can be pinned


# ------------------------------------------------------------------------------ Tensor.to signatures
class TestTo:
    def test_returns_self_when_nothing_changes(self):
        t = mt.ones(3)
        assert t.to("cpu") is t and t.to(mt.float32) is t and t.to(t) is t and t.cpu() is t
        assert t.to("cpu", mt.float32, non_blocking=True) is t

    def test_dtype_device_and_other_forms(self):
        t = mt.tensor([1.5, -2.0, 3.25])
        for out in (t.to(mt.float64), t.to("cpu", mt.float64), t.to(dtype=mt.float64),
                    t.to(device="cpu", dtype="float64"), t.to(mt.zeros(1, dtype=mt.float64))):
            assert out.dtype is mt.float64 and out.device == "cpu"
            np.testing.assert_array_equal(out.numpy(), np.array([1.5, -2.0, 3.25]))
        assert t.to(bool).dtype is mt.bool  # the bool *type* is a dtype, as in PyTorch

    def test_copy_flag_positional_and_keyword(self):
        t = mt.tensor([1.0, 2.0])
        for out in (t.to(mt.float32, False, True), t.to("cpu", mt.float32, False, True), t.to(t, copy=True),
                    t.to(copy=True)):
            assert out is not t and not shares_memory(out.numpy(), t.numpy())
            np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])
        assert t.to(mt.float32, True) is t  # non_blocking alone copies nothing

    def test_copy_is_differentiable(self):
        x = mt.tensor([1.0, 2.0], requires_grad=True)
        (x.to(copy=True) * 3).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])

    def test_refuses_unknown_options(self):
        t = mt.ones(2)
        with pytest.raises(TypeError, match="unexpected keyword argument 'memory'"):
            t.to("cpu", memory="x")
        with pytest.raises(TypeError, match="at most 2 positional flags"):
            t.to(mt.float32, False, False, False)

    def test_cuda_refuses_a_cpu_target(self):
        with pytest.raises(RuntimeError, match="must be cuda device"):
            mt.ones(2).cuda("cpu")


# ------------------------------------------------------------------------------- DLPack with NumPy
class TestDlpackNumpy:
    @pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
    def test_from_dlpack_shares_memory_and_keeps_dtype_and_shape(self, dtype):
        a = sample(dtype)
        t = mt.from_dlpack(a)
        assert t.device == "cpu" and t.shape == (3, 4)
        assert t.dtype is mt.dtypes.from_numpy_dtype(np.dtype(dtype))
        np.testing.assert_array_equal(t.numpy(), sample(dtype))
        a[1, 2] = a[0, 0]  # a write through NumPy ...
        assert t[1, 2].item() == a[0, 0]  # ... is seen through minitensor
        t[2, 3] = t[0, 1]  # and the other way
        assert a[2, 3] == a[0, 1]

    @pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
    def test_dunder_dlpack_exports_the_array_itself(self, dtype):
        t = mt.tensor(sample(dtype))
        assert t.__dlpack_device__() == (1, 0)
        b = np.from_dlpack(t)
        assert b.dtype == dtype and shares_memory(b, t.numpy())
        b[0, 0] = b[1, 1]
        assert t[0, 0].item() == b[1, 1]

    @pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 0, 3), (2, 3, 4, 5)])
    def test_round_trip_keeps_every_shape(self, shape):
        a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        t = mt.from_dlpack(a)
        back = np.from_dlpack(t)
        assert t.shape == shape and back.shape == shape
        np.testing.assert_array_equal(back, np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))
        if a.size:
            assert shares_memory(back, a)

    @pytest.mark.parametrize("view", [lambda a: a[:, ::2], lambda a: a.T, lambda a: a[1:, 1:3],
                                      lambda a: a[::-1]], ids=["step", "transpose", "slice", "reversed"])
    def test_non_contiguous_input_stays_a_view_with_its_strides(self, view):
        a = np.arange(20, dtype=np.float64).reshape(4, 5)
        v = view(a)
        t = mt.from_dlpack(v)
        assert t.shape == v.shape and t.array.strides == v.strides
        assert t.is_contiguous() == v.flags.c_contiguous
        np.testing.assert_array_equal(t.numpy(), view(np.arange(20.0).reshape(4, 5)))
        v[0, 0] = -7.0
        assert t[0, 0].item() == -7.0
        np.testing.assert_array_equal((t * 2).numpy(), v * 2)  # ops work on the strided view

    def test_refuses_what_it_cannot_hold(self):
        with pytest.raises(TypeError, match="complex64"):
            mt.from_dlpack(np.zeros(2, np.complex64))
        with pytest.raises(TypeError, match="uint16"):
            mt.from_dlpack(np.zeros(2, np.uint16))
        with pytest.raises(TypeError, match="__dlpack__"):
            mt.from_dlpack([1.0, 2.0])
        with pytest.raises(TypeError, match="capsules are not supported"):
            mt.from_dlpack(np.zeros(2).__dlpack__())

    def test_tensors_that_require_grad_are_not_exported(self):
        x = mt.ones(2, requires_grad=True)
        with pytest.raises(BufferError, match="require gradient"):
            np.from_dlpack(x)
        assert shares_memory(np.from_dlpack(x.detach()), x.detach().numpy())

    def test_utils_dlpack_mirrors_torch_utils_dlpack(self):
        t = mt.tensor([1.0, 2.0, 3.0])
        capsule = mt.utils.dlpack.to_dlpack(t)
        assert type(capsule).__name__ == "PyCapsule"
        assert mt.utils.dlpack.from_dlpack is mt.from_dlpack


# ------------------------------------------------------------------------------ DLPack with PyTorch
TORCH_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.torch
class TestDlpackTorch:
    @pytest.mark.parametrize("name", TORCH_DTYPES)
    def test_from_dlpack_of_a_torch_tensor_shares_memory(self, name):
        torch = pytest.importorskip("torch")
        src = torch.from_numpy(sample(getattr(np, name if name != "bool" else "bool_")))
        t = mt.from_dlpack(src)
        assert str(t.dtype) == f"minitensor.{name}" and t.shape == tuple(src.shape)
        np.testing.assert_array_equal(t.numpy(), src.numpy())
        src[0, 1] = src[2, 2]
        assert t[0, 1].item() == src[2, 2].item()
        t[1, 0] = t[0, 0]
        assert src[1, 0].item() == src[0, 0].item()

    def test_from_dlpack_of_a_non_contiguous_torch_tensor(self):
        torch = pytest.importorskip("torch")
        src = torch.arange(12.0).reshape(3, 4).T[1:]
        t = mt.from_dlpack(src)
        assert t.shape == tuple(src.shape)
        assert t.array.strides == tuple(s * src.element_size() for s in src.stride())
        src[0, 0] = 100.0
        assert t[0, 0].item() == 100.0

    @pytest.mark.parametrize("name", TORCH_DTYPES)
    def test_torch_from_dlpack_of_a_minitensor_tensor_shares_memory(self, name):
        torch = pytest.importorskip("torch")
        t = mt.tensor(sample(getattr(np, name if name != "bool" else "bool_")))
        out = torch.from_dlpack(t)
        assert out.dtype == getattr(torch, name) and tuple(out.shape) == t.shape
        np.testing.assert_array_equal(out.numpy(), t.numpy())
        out[2, 1] = out[0, 0]
        assert t[2, 1].item() == t[0, 0].item()

    def test_legacy_capsule_to_torch(self):
        torch = pytest.importorskip("torch")
        t = mt.tensor([1.0, 2.0, 3.0])
        out = torch.utils.dlpack.from_dlpack(mt.utils.dlpack.to_dlpack(t))
        out[1] = 9.0
        np.testing.assert_array_equal(t.numpy(), [1.0, 9.0, 3.0])


# ------------------------------------------------------------------------- DataLoader options on CPU
class Pairs(Dataset):
    """Item i -> {"x": float32 (2,), "i": i} through the generic collate path."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"x": np.array([i, 0.5 * i], dtype=np.float32), "i": i}


def loaders_agree(reference, other) -> None:
    ref, got = list(reference), list(other)
    assert len(ref) == len(got)
    for r, g in zip(ref, got):
        if isinstance(r, dict):
            r, g = [r[k] for k in sorted(r)], [g[k] for k in sorted(g)]
        for a, b in zip(r, g):
            assert b.device == "cpu" and b.dtype is a.dtype
            np.testing.assert_array_equal(b.numpy(), a.numpy())


@needs_no_cuda
@pytest.mark.parametrize("workers", [0, 2])
def test_pin_memory_without_cuda_warns_like_pytorch_and_yields_the_same_batches(workers):
    ds = TensorDataset(mt.arange(12.0).reshape(6, 2), mt.arange(6))
    pinned = DataLoader(ds, batch_size=4, pin_memory=True, num_workers=workers)
    with pytest.warns(UserWarning, match="no accelerator is found") as record:
        loaders_agree(DataLoader(ds, batch_size=4), pinned)
    assert str(record[0].message) == PYTORCH_PIN_WARNING
    assert record[0].filename == __file__  # points at the user's loop, as PyTorch's does
    with pytest.warns(UserWarning, match="no accelerator"):
        loaders_agree(DataLoader(Pairs(), batch_size=3), DataLoader(Pairs(), batch_size=3, pin_memory=True))


@pytest.mark.parametrize("workers", [0, 2])
def test_device_cpu_yields_the_same_batches(workers):
    ds = TensorDataset(mt.arange(12.0).reshape(6, 2), mt.arange(6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no pin_memory, no warning
        loaders_agree(DataLoader(ds, batch_size=4, shuffle=True, generator=5),
                      DataLoader(ds, batch_size=4, shuffle=True, generator=5, device="cpu",
                                 num_workers=workers))
        loaders_agree(DataLoader(Pairs(), batch_size=4),
                      DataLoader(Pairs(), batch_size=4, device=mt.device("cpu")))


# ------------------------------------------------------- the device loader's protocol, on a fake CuPy
class FakeCupy(types.ModuleType):
    """The few CuPy calls ``CudaPrefetcher`` makes, logging what runs on which stream. Events are done
    unless ``pending`` is set, so that a test can hold copies "in flight"."""

    def __init__(self):
        super().__init__("cupy")
        self.log, self.pending, self.events = [], False, 0
        fake = self

        class Stream:
            def __init__(self, non_blocking=False, name="side"):
                assert non_blocking or name == "consumer"  # the side stream must not wait for the null one
                self.name = name

            def wait_event(self, event):
                fake.log.append(("wait", self.name, event.id))

            def synchronize(self):
                fake.log.append(("sync", self.name))
                fake.pending = False

        class Event:
            def __init__(self, disable_timing=False):
                fake.events += 1
                self.id = fake.events

            def record(self, stream):
                fake.log.append(("record", stream.name, self.id))

            @property
            def done(self):
                return not fake.pending

        consumer = Stream(name="consumer")
        self.cuda = types.SimpleNamespace(Device=lambda index: contextlib.nullcontext(), Stream=Stream,
                                          Event=Event, get_current_stream=lambda: consumer)

    def empty(self, shape, dtype):
        self.log.append(("alloc", self.cuda.get_current_stream().name))
        return FakeDeviceArray(self.log, shape, dtype)


class FakeDeviceArray:
    def __init__(self, log, shape, dtype):
        self.log, self.shape, self.dtype, self.host = log, shape, np.dtype(dtype), None

    def set(self, src, stream):
        assert src.flags.c_contiguous and src.shape == self.shape and src.dtype == self.dtype
        self.log.append(("copy", stream.name))
        self.host = src.copy()


@pytest.fixture
def fake_cupy(monkeypatch, lend_backend):
    """A fake CuPy, a cuda:0 device whose backend is the CPU's, and host arrays "pinned" by a registry."""
    fake = FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    lend_backend(mt.device("cuda", 0), mt.device("cpu").backend)
    monkeypatch.setattr(mt.cuda, "is_available", lambda: True)
    pinned = []  # weak references to the arrays the fake calls pinned

    def pinned_copy(a):
        out = np.array(a, order="C")
        pinned.append(weakref.ref(out))
        return out

    def is_pinned(a):
        return any(r() is not None and (r() is a or r() is a.base) for r in pinned)
    monkeypatch.setattr(cuda_runtime, "pinned_copy", pinned_copy)
    monkeypatch.setattr(cuda_runtime, "is_pinned", is_pinned)
    fake.live_pinned = lambda: sum(r() is not None for r in pinned)
    return fake


def on_device(b):
    return [t.array.host for t in b]


class TestPrefetcherProtocol:
    @pytest.mark.parametrize("pin", [False, True])
    def test_each_batch_is_copied_on_the_side_stream_one_step_ahead(self, fake_cupy, pin):
        ds = TensorDataset(mt.arange(10.0).reshape(5, 2), mt.arange(5))
        it = iter(DataLoader(ds, batch_size=2, device="cuda", pin_memory=pin))
        log = fake_cupy.log
        # iter() already queued batch 0: the side stream waits for the consumer's earlier work, the device
        # arrays come from the consumer's stream, the copies run on the side stream and record an event.
        assert log == [("record", "consumer", 1), ("wait", "side", 1),
                       ("alloc", "consumer"), ("copy", "side"), ("alloc", "consumer"), ("copy", "side"),
                       ("record", "side", 2)]
        for k, expected in enumerate([[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9]]]):
            start = len(log)
            x, y = on_device(next(it))
            np.testing.assert_array_equal(x, expected)
            np.testing.assert_array_equal(y, np.arange(2 * k, min(2 * k + 2, 5)))
            # Event ids: batch k's "ready" event is 2k+1 (on the consumer), its copy's event 2k+2 (side).
            assert log[start] == ("wait", "consumer", 2 * k + 2)  # the consumer waits for this batch's copy
            queued_next = log[start + 1:]
            if k < 2:  # ... and only then is the next batch's copy queued
                assert queued_next[:2] == [("record", "consumer", 2 * k + 3), ("wait", "side", 2 * k + 3)]
                assert queued_next[-1] == ("record", "side", 2 * k + 4)
            else:
                assert queued_next == []
        with pytest.raises(StopIteration):
            next(it)

    def test_pinned_host_arrays_live_until_their_copy_is_done(self, fake_cupy):
        ds = TensorDataset(mt.arange(8.0).reshape(4, 2))
        fake_cupy.pending = True  # no copy finishes until the side stream is synchronized
        it = iter(DataLoader(ds, batch_size=2, device="cuda"))
        next(it)
        gc.collect()
        assert fake_cupy.live_pinned() == 2  # batches 0 and 1 were staged; their copies have not finished
        it.close()
        assert fake_cupy.log[-1] == ("sync", "side")  # close waits for them before letting go
        gc.collect()
        assert fake_cupy.live_pinned() == 0

    def test_finished_copies_release_their_host_arrays(self, fake_cupy):
        ds = TensorDataset(mt.arange(12.0).reshape(6, 2))
        it = iter(DataLoader(ds, batch_size=2, device="cuda"))
        next(it)
        next(it)
        gc.collect()
        assert fake_cupy.live_pinned() == 1  # only the batch whose copy was queued last is still held
        assert ("sync", "side") not in fake_cupy.log  # no host wait in steady state

    def test_a_loading_error_comes_after_the_batches_before_it(self, fake_cupy):
        it = iter(DataLoader(FailingAt(12, bad=5), batch_size=2, device="cuda"))
        got = [on_device([next(it)])[0][:, 0] for _ in range(2)]
        np.testing.assert_array_equal(got, [[0, 1], [2, 3]])
        with pytest.raises(ValueError, match="bad sample 5"):
            next(it)
        with pytest.raises(StopIteration):
            next(it)


# -------------------------------------------------------------------------------------- with a GPU
SPIN_SOURCE = r"""
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""


@functools.lru_cache(maxsize=None)
def spin_kernel():
    import cupy
    return cupy.RawKernel(SPIN_SOURCE, "spin")


def spin(ms: float) -> None:
    """Keep the current stream busy for ``ms`` milliseconds of GPU wall time (one thread). The first call
    compiles and loads the kernel: tests call ``spin(0)`` before they time anything."""
    spin_kernel()((1,), (1,), (np.uint64(ms * 1e6),))


class TestStreamsAndEvents:
    pytestmark = gpu

    def test_elapsed_time_measures_gpu_work_in_ms(self):
        spin(0)
        s = mt.cuda.Stream()
        start, mid, end = (mt.cuda.Event(enable_timing=True) for _ in range(3))
        with mt.cuda.stream(s):
            start.record()
            spin(30)
            mid.record()
            spin(10)
            end.record()
        assert 28 < start.elapsed_time(mid) < 200
        assert 8 < mid.elapsed_time(end) < 100
        assert start.elapsed_time(end) > start.elapsed_time(mid)  # recorded in this order
        assert start.query() and end.query() and s.query()

    def test_elapsed_time_needs_timing_and_records(self):
        a, b = mt.cuda.Event(), mt.cuda.Event(enable_timing=True)
        a.record()
        b.record()
        with pytest.raises(RuntimeError, match="enable_timing"):
            a.elapsed_time(b)
        with pytest.raises(RuntimeError, match="must be recorded"):
            mt.cuda.Event(enable_timing=True).elapsed_time(b)

    def test_stream_context_sets_cupys_current_stream_and_restores_it(self):
        import cupy
        before = cupy.cuda.get_current_stream()
        s = mt.cuda.Stream()
        assert s != mt.cuda.current_stream() and s.device == "cuda:0"
        with mt.cuda.stream(s) as inside:
            assert inside is s
            assert cupy.cuda.get_current_stream().ptr == s.cuda_stream
            assert mt.cuda.current_stream() == s
        assert cupy.cuda.get_current_stream().ptr == before.ptr
        assert mt.cuda.current_stream() == mt.cuda.default_stream()

    def test_wait_stream_orders_work_across_streams(self):
        """s1 spins, then adds 1 in place; s2, after wait_stream(s1), reads the result. The first round
        fills both streams' pool arenas, so that the second allocates nothing (an allocation may wait for
        the device, and the host must not wait here)."""
        spin(0)
        x = mt.arange(1 << 20, dtype=mt.float32, device="cuda")
        s1, s2 = mt.cuda.Stream(), mt.cuda.Stream()
        for _ in range(2):
            mt.cuda.synchronize()
            with mt.cuda.stream(s1):
                y = x + 1.0
                spin(50)
                y.add_(1.0)
            s2.wait_stream(s1)
            assert not s1.query()  # s1 still spins: the host did not wait
            with mt.cuda.stream(s2):
                z = y * 2.0
            s2.record_event().synchronize()
            assert s1.query()  # s2's work could only finish after s1's
            expected = (np.arange(1 << 20, dtype=np.float64) + 2.0) * 2.0
            np.testing.assert_array_equal(z.cpu().numpy(), expected.astype(np.float32))
            del y, z

    def test_event_wait_and_synchronize(self):
        spin(0)
        s = mt.cuda.Stream()
        e = mt.cuda.Event()
        with mt.cuda.stream(s):
            spin(30)
            e.record()
        assert not e.query()
        e.synchronize()
        assert e.query() and s.query()
        mt.cuda.synchronize()


@pytest.fixture
def no_gc():
    """No garbage collection during the test: a collected cycle would free device memory mid-count."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


class TestMemory:
    pytestmark = gpu

    def test_allocated_reserved_and_their_peaks(self, no_gc):
        mt.cuda.synchronize()
        mt.cuda.empty_cache()
        mt.cuda.reset_peak_memory_stats()
        base, base_reserved = mt.cuda.memory_allocated(), mt.cuda.memory_reserved()
        assert mt.cuda.max_memory_allocated() == base and mt.cuda.max_memory_reserved() == base_reserved
        nbytes = 64 << 20
        t = mt.zeros(nbytes // 4, dtype=mt.float32, device="cuda")
        grown = mt.cuda.memory_allocated()
        assert grown - base >= nbytes
        assert mt.cuda.memory_reserved() >= base_reserved + nbytes
        reserved = mt.cuda.memory_reserved()
        del t
        assert mt.cuda.memory_allocated() <= grown - nbytes  # the array's block is free again ...
        assert mt.cuda.memory_reserved() == reserved  # ... and cached by the pool
        assert mt.cuda.max_memory_allocated() >= grown  # the peak was read while the array lived
        mt.cuda.empty_cache()
        assert mt.cuda.memory_reserved() <= reserved - nbytes  # given back to the driver
        assert mt.cuda.max_memory_reserved() >= reserved  # the exact reserved peak survives the release
        mt.cuda.reset_peak_memory_stats()
        assert mt.cuda.max_memory_allocated() == mt.cuda.memory_allocated()
        assert mt.cuda.max_memory_reserved() == mt.cuda.memory_reserved()

    def test_device_arguments(self):
        assert mt.cuda.current_device() == 0
        for d in (None, 0, "cuda", "cuda:0", mt.device("cuda:0")):
            assert mt.cuda.memory_allocated(d) == mt.cuda.memory_allocated(0)
        with pytest.raises(ValueError, match="expected a cuda device"):
            mt.cuda.memory_allocated("cpu")
        with pytest.raises(ValueError, match="invalid CUDA device index"):
            mt.cuda.synchronize(mt.cuda.device_count())


class TestCudaTensors:
    pytestmark = gpu

    def test_numpy_on_cuda_raises_pytorchs_type_error(self):
        t = mt.ones(3, device="cuda")
        with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. Use "
                                            r"Tensor\.cpu\(\) to copy the tensor to host memory first\."):
            t.numpy()
        np.testing.assert_array_equal(t.cpu().numpy(), np.ones(3, np.float32))

    def test_to_cuda_cpu_and_module_to(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        for t in (mt.tensor(a).cuda(), mt.tensor(a).cuda(0), mt.tensor(a).to("cuda"),
                  mt.tensor(a).to("cuda", mt.float64, non_blocking=True)):
            assert t.is_cuda and t.device == "cuda:0"
            np.testing.assert_array_equal(t.cpu().numpy(), a)
        layer = mt.nn.Linear(3, 2).to("cuda")
        assert all(p.is_cuda for p in layer.parameters())

    def test_pin_memory(self):
        t = mt.tensor(np.arange(10, dtype=np.float32))
        p = t.pin_memory()
        assert p.is_pinned() and not t.is_pinned() and p.device == "cpu"
        assert not shares_memory(p.numpy(), t.numpy())
        np.testing.assert_array_equal(p.numpy(), t.numpy())
        assert p.pin_memory() is p
        g = mt.ones(3, requires_grad=True)
        (g.pin_memory() * 2).sum().backward()
        np.testing.assert_array_equal(g.grad.numpy(), [2.0, 2.0, 2.0])

    def test_dlpack_with_cupy_is_zero_copy_both_ways(self):
        import cupy
        c = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
        t = mt.from_dlpack(c)
        assert t.device == "cuda:0" and t.shape == (3, 4) and t.array.data.ptr == c.data.ptr
        c[1, 1] = 42.0
        assert t[1, 1].item() == 42.0
        t[0, 0] = -1.0
        assert float(c[0, 0]) == -1.0
        assert t.__dlpack_device__() == (2, 0)
        back = cupy.from_dlpack(t)
        assert back.data.ptr == c.data.ptr
        strided = mt.from_dlpack(c[:, ::2])
        np.testing.assert_array_equal(strided.cpu().numpy(), cupy.asnumpy(c[:, ::2]))

    def test_dlpack_with_torch_cuda(self):
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch has no CUDA here")
        src = torch.arange(6, dtype=torch.float32, device="cuda")
        t = mt.from_dlpack(src)
        assert t.device == "cuda:0" and t.array.data.ptr == src.data_ptr()
        src[2] = 50.0
        assert t[2].item() == 50.0
        out = torch.from_dlpack(t)
        assert out.data_ptr() == src.data_ptr()


class FailingAt(Dataset):
    def __init__(self, n, bad):
        self.n, self.bad = n, bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"bad sample {i}")
        return np.full(3, i, dtype=np.float32)


class TestDeviceDataLoader:
    pytestmark = gpu

    @pytest.mark.parametrize("workers", [0, 2])
    @pytest.mark.parametrize("pin", [False, True])
    def test_yields_the_cpu_batches_on_the_gpu(self, workers, pin):
        ds = TensorDataset(mt.randn(50, 3, 4), mt.arange(50))
        ref = [[t.to("cuda") for t in b] for b in DataLoader(ds, batch_size=8, shuffle=True, generator=3)]
        got = list(DataLoader(ds, batch_size=8, shuffle=True, generator=3, device="cuda", pin_memory=pin,
                              num_workers=workers))
        assert len(got) == len(ref) == 7
        for r, g in zip(ref, got):
            for a, b in zip(r, g):
                assert b.device == "cuda:0" and b.dtype is a.dtype and b.shape == a.shape
                np.testing.assert_array_equal(b.cpu().numpy(), a.cpu().numpy())

    def test_nested_batches_and_pinned_host_batches(self):
        loader = DataLoader(Pairs(), batch_size=4, device="cuda", pin_memory=True)
        for k, b in enumerate(loader):
            assert b["x"].is_cuda and b["i"].is_cuda
            np.testing.assert_array_equal(b["i"].cpu().numpy(), np.arange(4 * k, min(4 * k + 4, 10)))
        host = next(iter(DataLoader(Pairs(), batch_size=4, pin_memory=True)))
        assert host["x"].is_pinned() and host["i"].is_pinned()

    def test_loading_errors_arrive_after_the_batches_before_them(self):
        loader = DataLoader(FailingAt(20, bad=9), batch_size=4, device="cuda")
        it, got = iter(loader), []
        with pytest.raises(ValueError, match="bad sample 9"):
            for b in it:
                got.append(b)
        assert [int(b[0, 0].item()) for b in got] == [0, 4]
        with pytest.raises(StopIteration):
            next(it)

    def test_the_next_copy_overlaps_the_current_step(self):
        """Batch 1 is copied on a side stream while the consumer's stream is busy with "step 0": a stream
        that does not wait for the consumer reads batch 1 complete before step 0 ends."""
        import cupy
        n = 256
        data = np.arange(4 * n * 1024, dtype=np.float32).reshape(4 * n, 1024)
        loader = DataLoader(TensorDataset(mt.tensor(data)), batch_size=n, device="cuda", pin_memory=True)
        spin(0)
        list(loader)  # fills the pools: no cudaMalloc / cudaHostAlloc (which may wait for the device) below
        mt.cuda.synchronize()
        it = iter(loader)
        (b0,) = next(it)  # queues batch 1's copy
        consumer = cupy.cuda.get_current_stream()
        spin(300)  # "step 0" on the consumer's stream
        (b1,) = next(it)
        time.sleep(0.05)
        reader = cupy.cuda.Stream(non_blocking=True)
        with reader:  # ordered after neither the consumer nor the copy: only overlap makes this right
            seen = b1.array.get(stream=reader)
        reader.synchronize()
        assert not consumer.done  # step 0 still runs ...
        np.testing.assert_array_equal(seen, data[n:2 * n])  # ... and batch 1 is already on the GPU
        np.testing.assert_array_equal(b0.cpu().numpy(), data[:n])
        it.close()
