"""Every Numba CUDA kernel (``backends/cuda/numba_kernels``) compiled to PTX by numba-cuda's NVVM for compute
capability 8.0 and 9.0, without a GPU, with the argument types its launches pass: flat C-contiguous arrays of
the parameter's dtype (float32 or float64), scalars of that dtype, bools, and dropout's float32 draw and
keep probability and its uint8 mask (``backends/cuda/dropout.py``, ``generic/optim.py``'s ``FusedOptimOps``).
Skipped where numba-cuda or its NVVM is missing (``numba-cuda[cu13]`` brings NVVM).

numba-cuda 0.30 compiles a ``cuda.jit(device=True)`` function (the optimizers' ``*_element``) for the
capability of the current device (``CUDADispatcher.compile_device``), which needs a driver. Here the current
device is a stand-in of the capability being compiled for, and the optimizer kernels call fresh device
functions, so that each capability compiles its own.
"""
from __future__ import annotations

import inspect
import re
import types

import pytest

from . import needs

numba = needs.module("numba")
cuda = needs.module("numba.cuda")

from minitensor.backends import optim_elements  # noqa: E402
from minitensor.backends.cuda.numba_kernels import dropout, optim  # noqa: E402

# Each kernel's parameters, in order: "A" a flat array of the dtype, "T" a scalar of the dtype, "b" a bool,
# "f32" a float32 scalar, "f32A" a flat float32 array, "u8A" a flat uint8 array.
KERNELS = {
    optim.sgd_kernel: "A A A T T T T b b b",
    optim.adam_kernel: "A A A A A T T T T T T T T T b b",
    optim.rmsprop_kernel: "A A A A A T T T T T T b b",
    optim.adagrad_kernel: "A A A T T T b",
    dropout.dropout_forward_kernel: "A f32A f32 T T A u8A",
    dropout.dropout_backward_kernel: "A u8A T T A",
}
CAPABILITIES = ((8, 0), (9, 0))


def _types(kinds: str, dtype: str) -> tuple:
    scalar = getattr(numba, dtype)
    table = {"A": scalar[::1], "T": scalar, "b": numba.boolean, "f32": numba.float32,
             "f32A": numba.float32[::1], "u8A": numba.uint8[::1]}
    return tuple(table[k] for k in kinds.split())


@pytest.fixture(scope="module")
def nvvm() -> None:
    try:
        from numba.cuda.cudadrv import nvvm as nvvm_module
        nvvm_module.NVVM()
    except Exception as error:  # numba-cuda without NVVM: no CUDA toolkit and no cuda-toolkit[nvvm] wheel
        pytest.skip(f"numba-cuda finds no NVVM (pip install 'numba-cuda[cu13]'): {error!r}")


@pytest.fixture
def device_of(monkeypatch):
    """device_of(cc): compile device functions for capability ``cc``, as on a GPU of that capability."""
    def use(cc: tuple[int, int]) -> None:
        monkeypatch.setattr(cuda.dispatcher, "get_current_device", lambda: types.SimpleNamespace(compute_capability=cc))
        fresh = optim_elements.compile_elements(cuda.jit(device=True))
        for name, function in vars(fresh).items():
            monkeypatch.setattr(optim, name, function)  # the kernels' globals
    return use


def test_the_table_covers_every_kernel_with_its_arity():
    kernels = {obj for module in (optim, dropout) for obj in vars(module).values()
               if isinstance(obj, cuda.dispatcher.CUDADispatcher) and not obj.targetoptions.get("device")}
    assert kernels == set(KERNELS)
    for kernel, kinds in KERNELS.items():
        assert len(inspect.signature(kernel.py_func).parameters) == len(kinds.split()), kernel.__name__


@pytest.mark.parametrize("cc", CAPABILITIES, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel", list(KERNELS), ids=lambda k: k.__name__)
def test_numba_compiles_every_kernel_to_ptx(nvvm, device_of, kernel, dtype, cc):
    device_of(cc)
    ptx, result = cuda.compile_ptx(kernel.py_func, _types(KERNELS[kernel], dtype), cc=cc)
    assert result == numba.void
    assert f".target sm_{cc[0]}{cc[1]}" in ptx
    assert ptx.count(".entry ") == 1 and kernel.__name__ in ptx
    if dtype == "float32":  # scalars typed float32 keep the arithmetic in single precision
        assert not re.search(r"\b(add|sub|mul|fma|div|sqrt|max|min)(\.\w+)*\.f64\b", ptx), "float64 maths"
