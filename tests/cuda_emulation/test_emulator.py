"""The emulation's own contract: CuPy's argument marshalling, real block barriers and concurrent threads,
failures instead of hangs, and out-of-bounds writes caught by the guard zones."""
from __future__ import annotations

import numpy as np
import pytest

from . import available, fake_cupy, installed
from .mutants import check_block_sum

pytestmark = pytest.mark.skipif(not available(), reason="the CUDA emulation needs g++")

PROBE = """
template <typename T>
__global__ void probe(T* __restrict__ out, long long n, T scale) {
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long e = first; e < n; e += (long long)gridDim.x * blockDim.x) out[e] = T(e) * scale;
}
// thread 0 waits for the block's last thread: finishes only if a block's threads run at the same time
template <typename T>
__global__ void handshake(T* flag) {
    if (threadIdx.x == 0) while (atomicAdd(flag, T(0)) == T(0)) {}
    if (threadIdx.x == blockDim.x - 1) atomicExch(flag, T(1));
}
template <typename T>
__global__ void barrier_in_branch(T* out) {
    if (threadIdx.x < 16) __syncthreads();
    out[threadIdx.x] = T(1);
}
"""
NAMES = ["probe<double>", "handshake<int>", "barrier_in_branch<float>"]


@pytest.fixture(scope="module")
def module():
    with installed():
        yield fake_cupy.RawModule(code=PROBE, options=("-std=c++17",), name_expressions=NAMES)


@pytest.mark.parametrize("grid,block", [((1,), (32,)), ((3,), (100,)), ((2,), (1024,))])
def test_every_item_once_at_any_geometry(module, grid, block):
    out = fake_cupy.zeros(1000, np.float64)
    module.get_function("probe<double>")(grid, block, (out, 1000, 0.5))  # Python int/float: int64/float64
    np.testing.assert_array_equal(out, np.arange(1000) * 0.5)


def test_arguments_are_marshalled_as_cupy_does(module):
    kernel, out = module.get_function("probe<double>"), fake_cupy.zeros(4, np.float64)
    with pytest.raises(TypeError, match="Unsupported type"):
        kernel((1,), (32,), (np.zeros(4), np.int64(4), np.float64(1)))  # a host array
    with pytest.raises(TypeError, match="tuples"):
        kernel([1], (32,), (out, np.int64(4), np.float64(1)))
    with pytest.raises(RuntimeError, match="2 arguments for 3 parameters"):
        kernel((1,), (32,), (out, np.int64(4)))


def test_threads_of_a_block_run_concurrently(module):
    flag = fake_cupy.zeros(1, np.int32)
    module.get_function("handshake<int>")((2,), (64,), (flag,))
    assert flag[0] == 1


def test_a_barrier_not_every_thread_reaches_fails(module):
    with pytest.raises(RuntimeError, match="divergent barrier"):
        module.get_function("barrier_in_branch<float>")((1,), (32,), (fake_cupy.zeros(32, np.float32),))


def test_out_of_bounds_write_is_caught(module):
    out = fake_cupy.zeros(10, np.float64)
    with pytest.raises(RuntimeError, match="out-of-bounds write"):
        module.get_function("probe<double>")((1,), (32,), (out, np.int64(11), np.float64(1)))


def test_syncthreads_and_shared_memory():
    with installed():
        check_block_sum(None)
