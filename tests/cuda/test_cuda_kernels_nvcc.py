"""The CUDA kernel sources without a GPU: the table in ``rawmodule`` against the ``.cu`` files, every
template instance compiled by nvcc (an uninstantiated template passes nvcc even when broken, so each one is
taken by address), and the launch-argument check. nvcc cases skip where nvcc is missing; NVRTC, through CuPy's
own option assembly, is ``tests/cuda_real/test_nvrtc.py``.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from minitensor.backends.cuda import rawmodule
from minitensor.backends.cuda.rawmodule import KERNEL_DIR, KERNEL_FILES, PRELUDE

FILES = sorted(KERNEL_FILES)
MANGLED_TYPE = {"__half": "6__half", "__nv_bfloat16": "13__nv_bfloat16", "float": "f", "double": "d"}  # Itanium


def expected_entries(file: str) -> set[str]:
    """The start of each instance's mangled name: _Z <len> <name> I <type> E, e.g. _Z6im2colIfE."""
    entry = KERNEL_FILES[file]
    return {f"_Z{len(t)}{t}I{MANGLED_TYPE[rawmodule.C_TYPES[d]]}E"
            for t in entry.templates for d in entry.dtypes}


# ---------------------------------------------------------------------------------- table and sources
def test_every_kernel_file_is_in_the_table():
    on_disk = {p.name for p in KERNEL_DIR.glob("*.cu")}
    assert on_disk == set(KERNEL_FILES) | {PRELUDE}


@pytest.mark.parametrize("file", FILES)
def test_table_lists_exactly_the_templates_of_each_file(file):
    text = (KERNEL_DIR / file).read_text()
    declared = rawmodule.declared_kernels(text)
    assert list(declared) == list(KERNEL_FILES[file].templates)
    # every __global__ is one of those templates (none that the parser, or the table, would miss)
    assert len(re.findall(r"__global__", text)) == len(declared)
    assert set(KERNEL_FILES[file].dtypes) <= set(rawmodule.C_TYPES)


def test_prelude_declares_no_kernels():
    assert "__global__" not in (KERNEL_DIR / PRELUDE).read_text()


def test_name_expressions_are_generated_from_the_table():
    assert rawmodule.name_expression("im2col", np.float32) == "im2col<float>"
    assert rawmodule.name_expression("col2im", "float64") == "col2im<double>"
    assert rawmodule.name_expressions("embedding.cu") == ["embedding_backward<float>",
                                                          "embedding_backward<double>"]
    assert rawmodule.has_instance("softmax_forward", np.float64)
    assert rawmodule.name_expression("softmax_forward", np.float16) == "softmax_forward<__half>"
    assert not rawmodule.has_instance("embedding_backward", np.float16)


def test_the_training_step_families_have_16_bit_instances():
    """float16 (autocast's dtype on CUDA) and bfloat16 reach a kernel in every family of a mixed-precision
    step, computing in float32."""
    for file in ("activation.cu", "amp.cu", "conv.cu", "loss.cu", "pooling.cu"):
        assert {"float16", "bfloat16"} <= set(KERNEL_FILES[file].dtypes), file
    assert rawmodule.name_expression("im2col", "bfloat16") == "im2col<__nv_bfloat16>"
    assert rawmodule.acc_dtype(np.float16) == rawmodule.acc_dtype("bfloat16") == np.float32
    assert rawmodule.acc_dtype(np.float64) == np.float64


def test_parameter_lists_are_parsed():
    source = ("template <typename T>\n"
              "__global__ void k(const T* __restrict__ a, long long* b, T s, long long n, acc_t<T> f,\n"
              "                  float* flag, const unsigned char* __restrict__ offsets) {}")
    assert rawmodule.declared_kernels(source) == {"k": ["T*", "long long*", "T", "long long", "A", "float*",
                                                        "unsigned char*"]}


def test_a_shared_parameter_list_macro_is_expanded():
    """Two kernels taking one ``#define``d list (continued over lines) get its types; other defines stay out."""
    source = ("#define SCALE 2\n"
              "#define GEOMETRY long long n, \\\n    acc_t<T> s, long long* out\n"
              "template <typename T>\n__global__ void f(const T* x, GEOMETRY) {}\n"
              "template <typename T>\n__global__ void g(T* y, GEOMETRY) {}\n")
    assert rawmodule.declared_kernels(source) == {"f": ["T*", "long long", "A", "long long*"],
                                                  "g": ["T*", "long long", "A", "long long*"]}


# --------------------------------------------------------------------------------------------- nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("file", FILES)
def test_nvcc_compiles_every_instance(file, tmp_path):
    instances = "".join(f"    (void*)&{name},\n" for name in rawmodule.name_expressions(file))
    unit = tmp_path / file
    unit.write_text(f"{rawmodule.kernel_source(file)}\nvoid* kernel_instances[] = {{\n{instances}}};\n")
    ptx = tmp_path / "out.ptx"
    # compute_75: the oldest architecture CUDA 13 accepts; all warnings are errors
    done = subprocess.run(["nvcc", "-arch=compute_75", "-std=c++17", "--Werror", "all-warnings", "--ptx",
                           str(unit), "-o", str(ptx)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    entries = re.findall(r"\.entry\s+(\w+)", ptx.read_text())
    assert len(entries) == len(rawmodule.name_expressions(file))
    found = {p for e in entries for p in expected_entries(file) if e.startswith(p)}
    assert found == expected_entries(file)


# --------------------------------------------------------------------------------- launch arguments
def im2col_args(dtype=np.float32, integer=np.int64):
    x = np.zeros((1, 1, 3, 3), dtype)
    cols = np.zeros((1, 1, 1, 9), dtype)
    return (x, cols) + tuple(integer(v) for v in (1, 1, 3, 3, 1, 1, 3, 3, 1, 1, 0, 0, 1, 1))


def test_check_arguments_accepts_exact_types():
    rawmodule.check_arguments("im2col", "float32", im2col_args())
    rawmodule.check_arguments("im2col", np.float64, im2col_args(np.float64))
    x = np.zeros(3, np.float32)
    rawmodule.check_arguments("leaky_relu_forward", "float32", (x, x.copy(), np.int64(3), np.float32(0.1)))


def test_max_pool_kernels_take_byte_offsets():
    """The argmax offsets max_pool2d saves are uint8 arrays; int64 indices in their place are refused."""
    x, y, geometry = np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 1, 1, 1), np.float32), np.int64(1)
    rawmodule.check_arguments("max_pool2d_forward", "float32", (x, y, np.zeros(1, np.uint8), *[geometry] * 13))
    with pytest.raises(AssertionError, match="argument 2 .unsigned char.*dtype int64, expected uint8"):
        rawmodule.check_arguments("max_pool2d_forward", "float32", (x, y, np.zeros(1, np.int64), *[geometry] * 13))


@pytest.mark.parametrize("bad", ["python_int", "int32", "array_dtype", "too_few", "not_contiguous",
                                 "scalar_dtype", "scalar_for_pointer"])
def test_check_arguments_refuses_what_cupy_would_pass_silently(bad):
    args = list(im2col_args())
    template = "im2col"
    if bad == "python_int":
        args[2] = 1
    elif bad == "int32":
        args = list(im2col_args(integer=np.int32))
    elif bad == "array_dtype":
        args[0] = args[0].astype(np.float64)
    elif bad == "too_few":
        args = args[:-1]
    elif bad == "not_contiguous":
        args[0] = np.zeros((1, 1, 3, 6), np.float32)[..., ::2]
    elif bad == "scalar_dtype":
        template = "leaky_relu_forward"
        args = [np.zeros(3, np.float32), np.zeros(3, np.float32), np.int64(3), np.float64(0.1)]
    elif bad == "scalar_for_pointer":
        args[1] = np.float32(0)
    with pytest.raises(AssertionError):
        rawmodule.check_arguments(template, "float32", tuple(args))
