"""Our CUDA C++ kernels (``kernels/*.cu``) loaded through ``cupy.RawModule``, and the one way to launch them.

``KERNEL_FILES`` is the one table of what exists: each .cu file's ``template <typename T>`` kernels and the
dtypes they are instantiated for. The name expressions given to NVRTC (``"im2col<float>"``) are generated
from it, and the nvcc test compiles the same instances from it, so the two cannot drift apart.

Each file is compiled, with ``kernels/common.cu`` prepended, the first time one of its kernels is launched
on a device; the module and each kernel object are cached in memory per (file, device), and CuPy's disk
cache keeps the compiled binary across processes. This module imports CuPy only when a kernel is launched.

``launch`` checks, unless Python runs with -O, every argument against the kernel's C++ parameter list
(parsed from the source): CuPy passes whatever it is given, and a Python int where the kernel expects a
``long long`` or a float64 array where it reads ``float`` gives silent garbage, not an error.
"""
from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import ml_dtypes  # noqa: F401  (registers bfloat16 with NumPy: np.dtype("bfloat16"))
import numpy as np

from ..compiled import KERNEL_DTYPES, run_kernel

Array = Any

KERNEL_DIR = Path(__file__).parent / "kernels"
PRELUDE = "common.cu"  # helpers prepended to every file; it declares no kernels
COMPILE_OPTIONS = ("-std=c++17",)
THREADS = 256  # threads per block for every launch (a multiple of the warp size, as the row kernels need)
MAX_BLOCKS = 65535  # more work than THREADS * MAX_BLOCKS items is covered by the kernels' grid-stride loops
WARP_SIZE = 32  # common.cu's WARP_SIZE: row kernels take one warp per row

# dtype name -> the C++ type that stands for T (bfloat16: ml_dtypes' NumPy dtype, as CuPy's)
C_TYPES = {"float16": "__half", "bfloat16": "__nv_bfloat16", "float32": "float", "float64": "double"}
ACC_DTYPES = {"float16": "float32", "bfloat16": "float32"}  # common.cu's acc_t<T>, where it is not T
_FLOATS = tuple(d.name for d in KERNEL_DTYPES)  # float32, float64
_HALF_AND_FLOATS = ("float16", "bfloat16", *_FLOATS)  # the families of a mixed-precision training step


class KernelFile(NamedTuple):
    templates: tuple[str, ...]  # the file's __global__ template <typename T> kernels
    dtypes: tuple[str, ...]  # the dtypes each of them is instantiated for


KERNEL_FILES: dict[str, KernelFile] = {  # one file per op family, as the backend's <family>.py modules
    "activation.cu": KernelFile(("relu_backward", "leaky_relu_forward", "leaky_relu_backward",
                                 "sigmoid_forward", "sigmoid_backward", "tanh_backward", "gelu_forward",
                                 "gelu_backward", "softmax_forward", "log_softmax_forward", "softmax_backward",
                                 "log_softmax_backward"), _HALF_AND_FLOATS),
    "amp.cu": KernelFile(("amp_unscale_and_check_inf",), _HALF_AND_FLOATS),
    "conv.cu": KernelFile(("im2col", "col2im"), _HALF_AND_FLOATS),
    "embedding.cu": KernelFile(("embedding_backward",), _FLOATS),
    "loss.cu": KernelFile(("softmax_cross_entropy_forward", "softmax_cross_entropy_backward"),
                          _HALF_AND_FLOATS),
    "pooling.cu": KernelFile(("max_pool2d_forward", "max_pool2d_backward", "avg_pool2d_forward",
                              "avg_pool2d_backward"), _HALF_AND_FLOATS),
}
_FILE_OF = {template: file for file, entry in KERNEL_FILES.items() for template in entry.templates}


# ------------------------------------------------------------------------------------------ the table
def name_expression(template: str, dtype: Any) -> str:
    """The C++ name of one instance, e.g. ``name_expression("im2col", np.float32) == "im2col<float>"``."""
    return f"{template}<{C_TYPES[np.dtype(dtype).name]}>"


def name_expressions(file: str) -> list[str]:
    """Every instance that ``file`` is compiled with: each template for each of its dtypes."""
    entry = KERNEL_FILES[file]
    return [name_expression(t, d) for t in entry.templates for d in entry.dtypes]


def has_instance(template: str, dtype: Any) -> bool:
    """Whether ``template`` is instantiated for ``dtype`` (callers fall back to the generic code if not)."""
    return np.dtype(dtype).name in KERNEL_FILES[_FILE_OF[template]].dtypes


def acc_dtype(dtype: Any) -> np.dtype:
    """The dtype a kernel of element type ``dtype`` computes in (common.cu's ``acc_t<T>``), which is also
    that of its floating-point scalar parameters: float32 for float16 and bfloat16, else ``dtype`` itself."""
    dtype = np.dtype(dtype)
    return np.dtype(ACC_DTYPES[dtype.name]) if dtype.name in ACC_DTYPES else dtype


def kernel_source(file: str) -> str:
    """The text that is compiled for ``file``: the prelude, then the file."""
    prelude = (KERNEL_DIR / PRELUDE).read_text()
    return f"{prelude}\n// ---- {file}\n{(KERNEL_DIR / file).read_text()}"


_QUALIFIERS = {"const", "__restrict__"}
_TEMPLATE_KERNEL = re.compile(r"template\s*<\s*typename\s+T\s*>\s*__global__\s+void\s+(\w+)\s*\(([^)]*)\)")


_DEFINE = re.compile(r"^#define\s+(\w+)[ \t]+((?:.*\\\n)*.*)$", re.MULTILINE)


def declared_kernels(source: str) -> dict[str, list[str]]:
    """{name: parameter types} of the ``template <typename T> __global__`` kernels in ``source``, each type
    reduced to one of "T", "T*", "A" (``acc_t<T>``), "long long", "long long*", "float*", "unsigned char*"
    (const, __restrict__ and names dropped). Object-like macros (a parameter list several kernels share) are
    expanded first."""
    macros = {name: body.replace("\\\n", " ") for name, body in _DEFINE.findall(source)}
    source = _DEFINE.sub("", source)
    for name, body in macros.items():
        source = re.sub(rf"\b{name}\b", lambda _: body, source)  # noqa: B023 (used at once)
    kernels = {}
    for name, params in _TEMPLATE_KERNEL.findall(source):
        types = []
        for param in params.split(","):
            words = [w for w in param.replace("*", " * ").split() if w not in _QUALIFIERS]
            base = " ".join(w for w in words[:-1] if w != "*")  # the last word is the parameter's name
            types.append(("A" if base == "acc_t<T>" else base) + ("*" if "*" in words else ""))
        kernels[name] = types
    return kernels


# -------------------------------------------------------------------------------------------- loading
def _current_device() -> int:
    import cupy
    return cupy.cuda.runtime.getDevice()


@functools.cache
def _module(file: str, device: int) -> Any:
    """The RawModule of ``file`` for ``device``: one per device, since a module is loaded onto the device
    that is current when it is first used (compiled then, or read from CuPy's disk cache)."""
    import cupy
    return cupy.RawModule(code=kernel_source(file), options=COMPILE_OPTIONS,
                          name_expressions=name_expressions(file))


@functools.cache
def _kernel(template: str, dtype_name: str, device: int) -> Any:
    """The RawKernel of one instance on one device."""
    import cupy
    with cupy.cuda.Device(device):
        return _module(_FILE_OF[template], device).get_function(name_expression(template, dtype_name))


def load_kernel(template: str, dtype: Any) -> Any:
    """The ``cupy.RawKernel`` of ``template<dtype>`` on the current device, compiled and loaded if need be."""
    return _kernel(template, np.dtype(dtype).name, _current_device())


@functools.cache
def _parameter_types(template: str) -> list[str]:
    return declared_kernels(kernel_source(_FILE_OF[template]))[template]


# ------------------------------------------------------------------------------------------ launching
def launch(template: str, dtype: Any, items: int, args: tuple[Any, ...], threads_per_item: int = 1) -> None:
    """Run ``template<dtype>`` on the current device and stream over ``items`` work items (elements, or
    rows with ``threads_per_item=WARP_SIZE``): THREADS threads a block, at most MAX_BLOCKS blocks."""
    dtype_name = np.dtype(dtype).name
    if __debug__:
        check_arguments(template, dtype_name, args)
    if items == 0:
        return
    blocks = min(-(-items * threads_per_item // THREADS), MAX_BLOCKS)
    run_kernel(template, True, _kernel(template, dtype_name, _current_device()), (blocks,), (THREADS,), args)


def check_arguments(template: str, dtype: Any, args: tuple[Any, ...]) -> None:
    """AssertionError unless ``args`` match the kernel's parameters exactly: ``T*`` a C-contiguous array of
    dtype, ``long long*`` a C-contiguous int64 array, ``float*`` a C-contiguous float32 array,
    ``unsigned char*`` a C-contiguous uint8 array, ``T`` a NumPy scalar of dtype, ``A`` one of
    ``acc_dtype(dtype)``, ``long long`` an np.int64."""
    t = np.dtype(dtype)
    expected = {"T": t, "T*": t, "A": acc_dtype(t), "long long": np.dtype(np.int64),
                "long long*": np.dtype(np.int64), "float*": np.dtype(np.float32),
                "unsigned char*": np.dtype(np.uint8)}
    params = _parameter_types(template)
    assert len(args) == len(params), f"{template}: {len(args)} arguments for {len(params)} parameters"
    for position, (kind, arg) in enumerate(zip(params, args)):
        where = f"{template}<{C_TYPES[t.name]}> argument {position} ({kind})"
        if kind.endswith("*"):
            assert not isinstance(arg, (np.generic, int, float)) and hasattr(arg, "flags"), \
                f"{where}: needs an array, got {type(arg).__name__}"
            assert arg.flags.c_contiguous, f"{where}: array is not C-contiguous"
        else:
            assert isinstance(arg, np.generic), f"{where}: needs a NumPy scalar, got {type(arg).__name__}"
        assert arg.dtype == expected[kind], f"{where}: dtype {arg.dtype}, expected {expected[kind]}"


# ------------------------------------------------------------------------------- what every family shares
def longs(*values: int) -> tuple[np.int64, ...]:
    """Integer kernel arguments: every integer parameter of our kernels is a ``long long``."""
    return tuple(np.int64(v) for v in values)


class RawKernelOps:
    """The helpers of the family mixins (``activation.py``, ``loss.py``, ``conv.py``, ``pooling.py``,
    ``embedding.py``): each override has the base method's signature and semantics (the base docstring is
    the contract) and hands to ``super()`` what its kernel does not cover (dtypes without an instance, mixed
    dtypes, layouts the kernel does not take). Inputs are made C-contiguous (a copy only when they are
    not); outputs are allocated by ``self.xp`` (CuPy's memory pool)."""

    xp: Any

    @staticmethod
    def _fits(template: str, *arrays: Array) -> bool:
        """All arrays share one dtype and ``template`` is compiled for it."""
        dtype = arrays[0].dtype
        return all(a.dtype == dtype for a in arrays) and has_instance(template, dtype)

    def _fits_same_shape(self, template: str, *arrays: Array) -> bool:
        return self._fits(template, *arrays) and all(a.shape == arrays[0].shape for a in arrays)

    def _elementwise(self, template: str, inputs: Sequence[Array], scalars: tuple[Any, ...] = ()) -> Array:
        """out = template(inputs...) element by element, for kernels (inputs..., out, n, scalars...)."""
        xp = self.xp
        shape, dtype = inputs[0].shape, inputs[0].dtype
        out = xp.empty(shape, dtype=dtype)
        launch(template, dtype, out.size,
               (*(xp.ascontiguousarray(a) for a in inputs), out, np.int64(out.size), *scalars))
        return out

    def _rowwise(self, template: str, *inputs: Array) -> Array:
        """out = template(inputs...) row by row over the last axis, for kernels
        (inputs..., out, rows, cols)."""
        xp = self.xp
        shape, dtype = inputs[0].shape, inputs[0].dtype
        out = xp.empty(shape, dtype=dtype)
        rows, cols = math.prod(shape[:-1]), shape[-1]
        launch(template, dtype, rows, (*(xp.ascontiguousarray(a) for a in inputs), out, *longs(rows, cols)),
               threads_per_item=WARP_SIZE)
        return out

    @staticmethod
    def _on_last_axis(x: Array, axis: int) -> bool:
        return x.ndim >= 1 and axis in (-1, x.ndim - 1)
