"""``use_deterministic_algorithms`` on CUDA: the kernels that scatter with atomicAdd (embedding and max-pool
gradients) raise PyTorch's error, or warn with ``warn_only``, before they run; off, they run as before. Run
through the emulated RawKernel tier (tests/cuda_emulation), so without a GPU too."""
from __future__ import annotations

import numpy as np
import pytest

import cuda_emulation
import minitensor as mt
from minitensor.backends import get_backend

CPU = get_backend("cpu")


@pytest.fixture(scope="module")
def gpu():
    if not cuda_emulation.available():
        pytest.skip("the CUDA emulation needs g++")
    with cuda_emulation.installed():
        yield cuda_emulation.EmulatedCudaBackend()


@pytest.fixture
def deterministic():
    """Restores the switch after the test (it is process-wide, as PyTorch's)."""
    yield mt.use_deterministic_algorithms
    mt.use_deterministic_algorithms(False)


def _embedding_case() -> tuple:
    rng = np.random.default_rng(0)
    gy = rng.standard_normal((5, 3, 4))
    indices = np.array([[0, 2, 2], [1, 2, 0], [2, 2, 3], [0, 0, 0], [4, 2, 1]], dtype=np.int64)
    return gy, indices, 6, None, False


def _max_pool_case() -> tuple:
    """Overlapping windows (kernel 3, stride 1): an input element is the maximum of several windows."""
    x = np.random.default_rng(1).standard_normal((2, 3, 7, 6))
    geometry = ((3, 3), (1, 1), (0, 0), (1, 1))
    _, offsets = CPU.max_pool2d(x, *geometry, False)
    gy = np.random.default_rng(2).standard_normal(offsets.shape)
    return gy, offsets, x.shape, *geometry


CASES = {"embedding_backward": (_embedding_case, "embedding_backward_cuda"),
         "max_pool2d_backward": (_max_pool_case, "max_pool2d_backward_cuda")}


def _on_device(gpu, args: tuple) -> list:
    return [gpu.asarray(a) if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("method", sorted(CASES))
def test_atomic_kernels_raise_when_determinism_is_required(gpu, deterministic, method):
    make, caller = CASES[method]
    deterministic(True)
    with pytest.raises(RuntimeError, match=f"^{caller} does not have a deterministic implementation, but you "
                                           r"set 'minitensor.use_deterministic_algorithms\(True\)'"):
        getattr(gpu, method)(*_on_device(gpu, make()))


@pytest.mark.parametrize("method", sorted(CASES))
def test_warn_only_warns_and_runs_the_kernel(gpu, deterministic, method):
    make, caller = CASES[method]
    args = make()
    deterministic(True, warn_only=True)
    with pytest.warns(UserWarning, match=f"^{caller} does not have a deterministic implementation"):
        got = getattr(gpu, method)(*_on_device(gpu, args))
    np.testing.assert_allclose(gpu.to_numpy(got), getattr(CPU, method)(*args), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", sorted(CASES))
def test_off_the_kernels_run_silently(gpu, recwarn, method):
    make, _ = CASES[method]
    args = make()
    got = getattr(gpu, method)(*_on_device(gpu, args))
    np.testing.assert_allclose(gpu.to_numpy(got), getattr(CPU, method)(*args), rtol=1e-12, atol=1e-12)
    assert not [w for w in recwarn if "deterministic" in str(w.message)]
