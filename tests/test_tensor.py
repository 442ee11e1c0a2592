"""Tensor creation, attributes, conversions, devices and repr (PyTorch semantics)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
from minitensor.tensor import _wrap

from helpers import assert_close


# ------------------------------------------------------------------------------------------ creation
class TestTensorFactory:
    def test_infers_pytorch_dtypes(self):
        assert mt.tensor([1.0, 2.0]).dtype is mt.float32
        assert mt.tensor([1, 2]).dtype is mt.int64
        assert mt.tensor([True, False]).dtype is mt.bool
        assert mt.tensor([1, 2.5]).dtype is mt.float32
        assert mt.tensor(2.5).dtype is mt.float32 and mt.tensor(2.5).shape == ()
        # ndarrays keep their dtype (PyTorch does too)
        assert mt.tensor(np.zeros(2)).dtype is mt.float64
        assert mt.tensor(np.zeros(2, np.int32)).dtype is mt.int32

    def test_copies_its_source(self):
        a = np.arange(3.0)
        t = mt.tensor(a)
        a[0] = 42
        assert t.tolist() == [0.0, 1.0, 2.0]
        u = mt.tensor(t)
        u[1] = 7.0
        assert t.tolist() == [0.0, 1.0, 2.0]

    def test_nested_and_keywords(self):
        t = mt.tensor([[1, 2], [3, 4]], dtype=mt.float64, device="cpu", requires_grad=True)
        assert t.shape == (2, 2) and t.dtype is mt.float64 and t.requires_grad and t.is_leaf
        assert t.device == mt.device("cpu") and t.device == "cpu"
        assert_close(t, [[1, 2], [3, 4]])

    def test_list_of_tensors(self):
        assert mt.tensor([mt.tensor(1.0), mt.tensor(2.0)]).tolist() == [1.0, 2.0]

    def test_ragged_data_is_refused(self):
        with pytest.raises((ValueError, TypeError)):
            mt.tensor([[1, 2], [3]])

    def test_unsupported_dtype_is_refused(self):
        with pytest.raises(TypeError, match="complex128"):
            mt.tensor(np.zeros(2, dtype=np.complex128))

    def test_dtype_names_and_numpy_types_are_accepted(self):
        assert mt.tensor([1], dtype="float64").dtype is mt.float64
        assert mt.tensor([1], dtype=np.int32).dtype is mt.int32
        with pytest.raises(TypeError, match="unsupported dtype"):
            mt.tensor([1], dtype="complex64")

    def test_legacy_constructor_gives_float32(self):
        t = mt.Tensor([1, 2])
        assert t.dtype is mt.float32 and t.tolist() == [1.0, 2.0]


class TestSharedMemory:
    def test_as_tensor_shares_an_ndarray_of_matching_dtype(self):
        a = np.arange(3.0)
        t = mt.as_tensor(a)
        a[0] = 9.0
        assert t.dtype is mt.float64 and t[0].item() == 9.0
        assert np.shares_memory(t.numpy(), a)

    def test_as_tensor_copies_when_the_dtype_changes(self):
        a = np.arange(3.0)
        t = mt.as_tensor(a, dtype=mt.float32)
        a[0] = 9.0
        assert t.dtype is mt.float32 and t[0].item() == 0.0

    def test_as_tensor_returns_a_tensor_as_is(self):
        t = mt.ones(2)
        assert mt.as_tensor(t) is t
        assert mt.as_tensor(t, dtype=mt.float64).dtype is mt.float64

    def test_from_numpy_shares_both_ways(self):
        a = np.zeros((2, 2), dtype=np.int32)
        t = mt.from_numpy(a)
        assert t.dtype is mt.int32
        a[0, 0] = 5
        t[1, 1] = 7
        assert t[0, 0].item() == 5 and a[1, 1] == 7

    def test_from_numpy_refuses_non_arrays_and_bad_dtypes(self):
        with pytest.raises(TypeError):
            mt.from_numpy([1, 2])
        with pytest.raises(TypeError):
            mt.from_numpy(np.zeros(2, dtype=np.complex64))


class TestFactories:
    @pytest.mark.parametrize("fn, value", [(mt.zeros, 0), (mt.ones, 1)])
    def test_zeros_ones(self, fn, value, device):
        for t in (fn(2, 3, device=device), fn((2, 3), device=device), fn([2, 3], device=device)):
            assert t.shape == (2, 3) and t.dtype is mt.float32 and t.device == device
            assert_close(t, np.full((2, 3), value))
        assert fn(2, dtype=mt.int32).dtype is mt.int32
        assert fn().shape == ()

    def test_empty(self):
        t = mt.empty(2, 3, dtype=mt.float64)
        assert t.shape == (2, 3) and t.dtype is mt.float64

    def test_full_infers_dtype_from_value(self):
        assert mt.full((2,), 3).dtype is mt.int64
        assert mt.full((2,), 3.5).dtype is mt.float32
        assert mt.full((2,), True).dtype is mt.bool
        assert_close(mt.full((2, 1), 3.5, dtype=mt.float64), [[3.5], [3.5]])

    def test_like_functions_keep_shape_dtype_device(self):
        x = mt.ones(2, 3, dtype=mt.float64)
        for t, value in ((mt.zeros_like(x), 0), (mt.ones_like(x), 1), (mt.full_like(x, 7), 7)):
            assert t.shape == (2, 3) and t.dtype is mt.float64
            assert_close(t, np.full((2, 3), value))
        assert mt.empty_like(x).shape == (2, 3)
        assert mt.zeros_like(x, dtype=mt.int32).dtype is mt.int32
        r = mt.rand_like(x)
        assert r.shape == (2, 3) and r.dtype is mt.float64
        assert mt.randn_like(x).dtype is mt.float64
        ri = mt.randint_like(x, 0, 3)
        assert ri.shape == (2, 3) and ((ri.numpy() >= 0) & (ri.numpy() < 3)).all()

    @pytest.mark.parametrize("args, expected", [
        ((5,), np.arange(5)), ((2, 9, 3), np.arange(2, 9, 3)), ((5, 0, -2), np.arange(5, 0, -2)),
        ((0.0, 1.0, 0.25), np.arange(0, 1, 0.25)), ((0, 1, 0.1), np.arange(0, 1, 0.1)),
    ])
    def test_arange(self, args, expected):
        t = mt.arange(*args)
        assert t.dtype is (mt.int64 if all(isinstance(a, int) for a in args) else mt.float32)
        assert_close(t, expected, rtol=1e-6, atol=1e-7)

    def test_arange_dtype(self):
        assert mt.arange(3, dtype=mt.float64).tolist() == [0.0, 1.0, 2.0]

    def test_linspace_eye(self):
        assert_close(mt.linspace(-1, 1, 5), np.linspace(-1, 1, 5))
        assert mt.linspace(0, 1, 3).dtype is mt.float32
        assert_close(mt.eye(3), np.eye(3))
        assert_close(mt.eye(2, 4, dtype=mt.float64), np.eye(2, 4))

    def test_rand_randn_ranges_and_moments(self):
        u = mt.rand(20000)
        assert u.dtype is mt.float32 and u.shape == (20000,)
        assert 0.0 <= u.numpy().min() and u.numpy().max() < 1.0
        assert abs(u.numpy().mean() - 0.5) < 0.02
        z = mt.randn(20000, dtype=mt.float64)
        assert z.dtype is mt.float64
        assert abs(z.numpy().mean()) < 0.05 and abs(z.numpy().std() - 1.0) < 0.05
        assert mt.rand(2, 3).shape == (2, 3) and mt.randn((2, 3)).shape == (2, 3)

    def test_randint_and_randperm(self):
        r = mt.randint(3, 7, (1000,))
        assert r.dtype is mt.int64 and set(r.tolist()) == {3, 4, 5, 6}
        r2 = mt.randint(4, (2, 3))  # randint(high, size)
        assert r2.shape == (2, 3) and r2.numpy().max() < 4 and r2.numpy().min() >= 0
        p = mt.randperm(10)
        assert p.dtype is mt.int64 and sorted(p.tolist()) == list(range(10))

    def test_manual_seed_reproduces_every_generator(self):
        def draw():
            return (mt.rand(5).tolist(), mt.randn(5).tolist(), mt.randint(0, 100, (5,)).tolist(),
                    mt.randperm(8).tolist())
        mt.manual_seed(123)
        first = draw()
        mt.manual_seed(123)
        assert draw() == first
        mt.manual_seed(124)
        assert draw() != first

    def test_requires_grad_on_factories(self):
        for t in (mt.zeros(2, requires_grad=True), mt.ones(2, requires_grad=True),
                  mt.randn(2, requires_grad=True), mt.rand(2, requires_grad=True),
                  mt.full((2,), 1.0, requires_grad=True), mt.arange(3.0, requires_grad=True),
                  mt.linspace(0, 1, 3, requires_grad=True), mt.eye(2, requires_grad=True),
                  mt.tensor([1.0], requires_grad=True)):
            assert t.requires_grad and t.is_leaf and t.grad is None and t.grad_fn is None

    def test_integer_tensors_cannot_require_grad(self):
        with pytest.raises(RuntimeError, match="floating point"):
            mt.tensor([1, 2], requires_grad=True)
        with pytest.raises(RuntimeError, match="floating point"):
            mt.zeros(2, dtype=mt.int64, requires_grad=True)
        with pytest.raises(RuntimeError, match="floating point"):
            mt.tensor([True]).requires_grad_()


# ---------------------------------------------------------------------------------------- attributes
class TestAttributes:
    def test_shape_size_ndim_numel(self):
        t = mt.zeros(2, 3, 4)
        assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
        assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
        assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and mt.numel(t) == 24
        assert len(t) == 2 and mt.zeros(()).numel() == 1

    def test_T_and_mT(self):
        a = np.arange(24.0).reshape(2, 3, 4)
        t = mt.tensor(a)
        assert_close(mt.tensor(a[0]).T, a[0].T)
        assert_close(t.T, a.transpose(2, 1, 0))
        assert_close(t.mT, a.swapaxes(-1, -2))
        assert mt.ones(3).T.shape == (3,)
        with pytest.raises(RuntimeError):
            mt.ones(3).mT

    def test_autograd_attributes(self):
        x = mt.ones(2, requires_grad=True)
        y = x * 2
        assert x.is_leaf and x.grad_fn is None and x.grad is None
        assert not y.is_leaf and y.requires_grad and y.grad_fn is not None
        assert "Mul" in y.grad_fn.name()
        c = mt.ones(2)
        assert c.is_leaf and not c.requires_grad and not (c * 2).requires_grad

    def test_requires_grad_cannot_be_cleared_on_a_non_leaf(self):
        y = mt.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError, match="leaf"):
            y.requires_grad = False

    def test_is_floating_point_and_element_size(self):
        assert mt.ones(1).is_floating_point() and not mt.ones(1, dtype=mt.int32).is_floating_point()
        assert mt.ones(1, dtype=mt.float16).element_size() == 2


# ---------------------------------------------------------------------------------------- conversion
class TestConversion:
    def test_numpy_shares_memory(self):
        t = mt.zeros(3)
        a = t.numpy()
        a[1] = 5.0
        assert t[1].item() == 5.0 and a.dtype == np.float32

    def test_array_protocol_copies_only_when_asked(self):
        t = mt.zeros(3)
        np.array(t)[0] = 5.0  # np.array copies by default
        assert t.tolist() == [0.0, 0.0, 0.0]
        np.asarray(t)[1] = 7.0  # np.asarray shares
        assert t.tolist() == [0.0, 7.0, 0.0]
        assert np.asarray(t, dtype=np.float64).dtype == np.float64
        with pytest.raises(RuntimeError, match="detach"):
            np.asarray(mt.ones(1, requires_grad=True))

    def test_numpy_refuses_requires_grad(self):
        x = mt.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="detach"):
            x.numpy()
        assert x.detach().numpy().tolist() == [1.0, 1.0]

    def test_numpy_refuses_non_cpu(self):
        fake = _wrap(np.zeros(2, np.float32), mt.device("cuda", 3))  # never touches a backend
        with pytest.raises(TypeError, match="cpu()"):
            fake.numpy()

    def test_item_and_tolist(self):
        assert mt.tensor(2.5).item() == 2.5 and isinstance(mt.tensor(2.5).item(), float)
        assert mt.tensor([7]).item() == 7 and isinstance(mt.tensor([7]).item(), int)
        assert mt.tensor([True]).item() is True
        with pytest.raises(RuntimeError, match="3 elements"):
            mt.ones(3).item()
        assert mt.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
        assert mt.tensor(3.0).tolist() == 3.0
        assert float(mt.tensor([2.5])) == 2.5 and int(mt.tensor(3)) == 3
        with pytest.raises(RuntimeError, match="ambiguous"):
            bool(mt.ones(2))

    @pytest.mark.parametrize("method, dtype", [
        ("float", mt.float32), ("double", mt.float64), ("half", mt.float16), ("long", mt.int64),
        ("int", mt.int32), ("bool", mt.bool)])
    def test_dtype_methods(self, method, dtype):
        t = getattr(mt.tensor([0.0, 1.5, -2.0], dtype=mt.float64), method)()
        assert t.dtype is dtype
        assert_close(t, np.array([0.0, 1.5, -2.0]).astype(dtype.np))

    def test_to_returns_self_when_nothing_changes(self):
        t = mt.ones(2)
        assert t.to(mt.float32) is t and t.to("cpu") is t and t.cpu() is t and t.float() is t
        assert t.to(mt.device("cpu"), mt.float32) is t
        assert t.to(mt.float32, copy=True) is not t

    def test_to_dtype_device_and_other_tensor(self):
        t = mt.tensor([1.5, 2.5])
        assert t.to(mt.float64).dtype is mt.float64
        assert t.to(dtype=mt.int32).tolist() == [1, 2]
        assert t.to("cpu", mt.float64).dtype is mt.float64
        assert t.to(mt.zeros(1, dtype=mt.int64)).dtype is mt.int64
        assert t.type_as(mt.zeros(1, dtype=mt.float16)).dtype is mt.float16

    def test_to_is_differentiable(self):
        x = mt.tensor([1.0, 2.0], requires_grad=True)
        y = x.double()
        assert y.grad_fn is not None
        (y * y).sum().backward()
        assert x.grad.dtype is mt.float32
        assert_close(x.grad, [2.0, 4.0])

    def test_detach_shares_memory_and_leaves_the_graph(self):
        x = mt.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        d = y.detach()
        assert not d.requires_grad and d.grad_fn is None and d.is_leaf
        d[0] = 100.0
        assert y[0].item() == 100.0
        assert x.data.requires_grad is False and np.shares_memory(x.data.numpy(), x.detach().numpy())

    def test_clone_copies_and_is_differentiable(self):
        x = mt.tensor([1.0, 2.0], requires_grad=True)
        c = x.clone()
        assert c.grad_fn is not None and not np.shares_memory(c.detach().numpy(), x.detach().numpy())
        (c * mt.tensor([3.0, 4.0])).sum().backward()
        assert_close(x.grad, [3.0, 4.0])

    def test_contiguous(self):
        t = mt.ones(2, 3)
        assert t.contiguous() is t and t.is_contiguous()
        x = mt.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        tt = x.t()
        assert not tt.is_contiguous()
        c = tt.contiguous()
        assert c.is_contiguous() and c.detach().numpy().flags.c_contiguous
        assert_close(c, np.arange(6.0).reshape(2, 3).T)
        (c * mt.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
        assert_close(x.grad, np.arange(6.0).reshape(3, 2).T)

    def test_new_factories_take_dtype_and_device(self):
        t = mt.ones(2, dtype=mt.float64)
        assert t.new_zeros(3).dtype is mt.float64 and t.new_ones((2, 2)).shape == (2, 2)
        assert t.new_full((2,), 5).tolist() == [5.0, 5.0] and t.new_tensor([1, 2]).dtype is mt.float64
        assert t.new_empty(4).shape == (4,)

    def test_iteration_len_and_bool(self):
        t = mt.tensor([[1, 2], [3, 4]])
        assert [r.tolist() for r in t] == [[1, 2], [3, 4]]
        with pytest.raises(TypeError):
            len(mt.tensor(1.0))
        assert bool(mt.tensor([1.0])) and not bool(mt.tensor(0))


class TestRepr:
    @pytest.mark.parametrize("t, text", [
        (lambda: mt.tensor([1.0, 2.0]), "tensor([1., 2.])"),
        (lambda: mt.tensor([1.5, 2.0]), "tensor([1.5000, 2.0000])"),
        (lambda: mt.tensor(3.25), "tensor(3.2500)"),
        (lambda: mt.tensor([1, 2]), "tensor([1, 2])"),
        (lambda: mt.tensor([True, False]), "tensor([ True, False])"),
        (lambda: mt.tensor([1, 2], dtype=mt.int32), "tensor([1, 2], dtype=minitensor.int32)"),
        (lambda: mt.tensor([0.5], dtype=mt.float64), "tensor([0.5000], dtype=minitensor.float64)"),
        (lambda: mt.tensor([1.0], requires_grad=True), "tensor([1.], requires_grad=True)"),
        (lambda: mt.zeros(0), "tensor([])"),
        (lambda: mt.zeros(2, 0), "tensor([], size=(2, 0))"),
        (lambda: mt.zeros(0, dtype=mt.int64), "tensor([], dtype=minitensor.int64)"),
        (lambda: mt.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
    ])
    def test_pytorch_like(self, t, text):
        assert repr(t()) == text

    def test_grad_fn_shown(self):
        y = mt.tensor([1.0], requires_grad=True) * 2
        assert repr(y) == "tensor([2.], grad_fn=<MulBackward0>)"

    def test_large_tensors_are_summarised(self):
        assert "..." in repr(mt.zeros(10000))


# ------------------------------------------------------------------------------------------- devices
class TestDevices:
    def test_device_objects(self):
        assert mt.device("cpu") is mt.device("cpu") and str(mt.device("cpu")) == "cpu"
        assert mt.device("cuda:1") is mt.device("cuda", 1) and mt.device("cuda").index == 0
        assert repr(mt.device("cuda", 1)) == "device(type='cuda', index=1)"
        assert mt.device("cpu") == "cpu" and mt.device("cpu") != "cuda"
        with pytest.raises(RuntimeError, match="unknown device type"):
            mt.device("tpu")
        with pytest.raises(ValueError):
            mt.device("cuda:x")

    def test_cuda_is_not_available_without_cupy(self):
        if importlib.util.find_spec("cupy") is not None:
            pytest.skip("cupy is installed")
        assert mt.cuda.is_available() is False and mt.cuda.device_count() == 0

    def test_using_an_unavailable_device_raises_a_clear_error(self):
        if mt.cuda.is_available():
            pytest.skip("a CUDA device is present")
        with pytest.raises(RuntimeError, match="cuda"):
            mt.zeros(2, device="cuda")
        with pytest.raises(RuntimeError, match="cuda"):
            mt.ones(2).to("cuda")
        with pytest.raises(RuntimeError, match="cuda"):
            mt.ones(2).cuda()

    def test_mixed_devices_are_refused_with_a_hint(self, lend_backend):
        """Function.apply names both devices and says how to fix it (a fake second device: no GPU)."""
        other = mt.device("cuda", 7)
        lend_backend(other, mt.device("cpu").backend)
        a = mt.ones(2)
        b = _wrap(np.ones(2, np.float32), other)
        with pytest.raises(RuntimeError, match=r"cpu and cuda:7.*\.to\("):
            a + b


# ------------------------------------------------------------------------------------ import hygiene
TRAINING_STEP = """
import minitensor as mt
mt.manual_seed(0)
X = mt.randn(64, 3)
y = X @ mt.tensor([[1.0], [-2.0], [0.5]]) + 0.3
w = mt.zeros(1, 3, requires_grad=True)
b = mt.zeros(1, requires_grad=True)
losses = []
for _ in range(60):
    loss = ((mt.nn.functional.linear(X, w, b) - y) ** 2).mean()
    loss.backward()
    with mt.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
    losses.append(loss.item())
assert losses[-1] < 1e-3 * losses[0], losses
assert w.grad_fn is None and w.is_leaf and w.dtype is mt.float32
"""


def run_python(code: str) -> None:
    """Run ``code`` in a fresh interpreter that imports this checkout of minitensor."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
                          env=env)
    assert done.returncode == 0, done.stderr[-3000:]


def test_import_does_not_load_cupy_or_numba():
    run_python("import sys, minitensor\n"
               "loaded = [m for m in ('cupy', 'cupyx', 'numba') if m in sys.modules]\n"
               "assert not loaded, loaded\n")


def test_cpu_training_works_with_cupy_and_numba_unimportable():
    blocked = ("import sys\n"
               "for m in ('cupy', 'cupyx', 'numba', 'numba.cuda'):\n"
               "    sys.modules[m] = None  # 'import cupy' now raises ImportError\n")
    run_python(blocked + TRAINING_STEP + """
assert mt.cuda.is_available() is False and mt.cuda.device_count() == 0
try:
    mt.zeros(1, device="cuda")
except RuntimeError as e:
    assert "cuda" in str(e), e
else:
    raise AssertionError("a cuda tensor without cupy")
assert all(sys.modules[m] is None for m in ('cupy', 'numba'))
""")


def test_manual_seed_reaches_a_backend_created_after_it():
    """PyTorch seeds a lazily initialised CUDA generator with the last manual_seed; so do we."""
    from minitensor import backends
    from minitensor.backends.cpu.backend import NumpyBackend
    backends.register_backend("late", "minitensor.backends.cpu.backend:NumpyBackend")
    try:
        mt.manual_seed(123)
        late = backends.get_backend("late")
        reference = NumpyBackend()
        reference.seed(123)
        np.testing.assert_array_equal(late.uniform((5,), 0.0, 1.0, np.float32),
                                      reference.uniform((5,), 0.0, 1.0, np.float32))
    finally:
        backends._REGISTRY.pop("late")
        backends._INSTANCES.pop(("late", 0), None)


def test_an_explicit_dtype_keeps_python_floats_at_full_precision():
    """tensor(0.1, dtype=float64) is float64's 0.1 (no float32 rounding on the way), as in PyTorch."""
    assert mt.tensor(0.1, dtype=mt.float64).item() == 0.1
    assert mt.tensor([0.1, 1e-300], dtype=mt.float64).tolist() == [0.1, 1e-300]
    assert mt.as_tensor([[0.1]], dtype=mt.float64).tolist() == [[0.1]]
    assert mt.tensor(2**53 + 1, dtype=mt.int64).item() == 2**53 + 1
    assert mt.tensor(0.1).dtype == mt.float32 and mt.tensor(0.1).item() == np.float32(0.1)
    assert mt.tensor(-3.7, dtype=mt.int32).item() == -3  # one cast, truncating as PyTorch
