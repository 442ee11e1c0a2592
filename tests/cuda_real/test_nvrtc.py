"""Every ``.cu`` file compiled to a cubin by the real NVRTC for sm_80 and sm_90, without a GPU, through CuPy's
own option assembly: the ``cupy.RawModule`` that ``rawmodule`` builds is handed to CuPy's
``compile_with_cache`` as ``RawModule`` hands it (``cupy/_core/raw.pyx``: ``_get_raw_module``), which adds the
bundled CCCL and CUDA include paths, ``-ftz=true``, the ``-arch`` option and
``--device-as-default-execution-space``, then calls NVRTC. Two steps of that path ask the driver which GPU is
current, and are replaced here: the ``-arch`` choice (CuPy's rule, for the architecture given) and loading the
cubin onto the device (the compile result is taken just before). The disk cache is off (CUPY_CACHE_IN_MEMORY),
so every case really compiles.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from . import needs

cupy = needs.module("cupy")

from minitensor.backends.cuda import rawmodule  # noqa: E402

compiler = cupy.cuda.compiler
ARCHS = ("80", "90")
FILES = sorted(rawmodule.KERNEL_FILES)


class _Compiled(Exception):
    """Carries NVRTC's result out of CuPy's compile path, before it loads the cubin onto a GPU."""


@pytest.fixture(scope="module")
def nvrtc_version() -> tuple[int, int]:
    try:
        return compiler._get_nvrtc_version()
    except Exception as error:  # no libnvrtc (the nvidia-cuda-nvrtc wheel or a CUDA toolkit)
        pytest.skip(f"NVRTC cannot be loaded: {error!r}")


@pytest.fixture
def compile_file(monkeypatch, nvrtc_version) -> Callable[[str, str], tuple[bytes, dict, tuple[str, ...]]]:
    """compile_file(file, arch) -> (cubin, {name expression: lowered name}, the options NVRTC was given)."""
    monkeypatch.setenv("CUPY_CACHE_IN_MEMORY", "1")
    max_arch = int(compiler._get_max_compute_capability())

    def arch_option(arch: str | None = None) -> tuple[str, str]:  # CuPy's rule, without asking the device
        return (f"-arch=sm_{arch}", "cubin") if not compiler._use_ptx and int(arch) <= max_arch else \
            (f"-arch=compute_{arch}", "ptx")

    def take_result(*args: Any, **kwargs: Any) -> None:
        raise _Compiled(original(*args, **kwargs))

    given: list[tuple[str, ...]] = []

    def record_options(self: Any, options: tuple[str, ...] = (), log_stream: Any = None) -> Any:
        if self.name_expressions:  # not CuPy's empty preprocessing run
            given.append(tuple(options))
        return original_compile(self, options, log_stream)

    original, original_compile = compiler._compile_using_nvrtc_no_warning, compiler._NVRTCProgram.compile
    monkeypatch.setattr(compiler, "_get_arch_for_options_for_nvrtc", arch_option)
    monkeypatch.setattr(compiler, "_compile_using_nvrtc_no_warning", take_result)
    monkeypatch.setattr(compiler._NVRTCProgram, "compile", record_options)

    def run(file: str, arch: str) -> tuple[bytes, dict, tuple[str, ...]]:
        module = rawmodule._module.__wrapped__(file, 0)  # the RawModule minitensor builds (compiled lazily)
        include_dirs = [o[2:] for o in cupy._core.core.assemble_cupy_compiler_options(module.options)
                        if o.startswith("-I")]
        if not any((Path(d) / "cuda_fp16.h").exists() for d in include_dirs):
            pytest.skip("CuPy finds no CUDA headers (cuda_fp16.h) to give NVRTC: install nvidia-cuda-runtime "
                        "13.x (the cuda-check extra); a GPU machine without them fails every RawModule too")
        with pytest.raises(_Compiled) as compiled:
            cupy._core.core.compile_with_cache(module.code, module.options, arch=arch, prepend_cupy_headers=False,
                                               backend=module.backend, name_expressions=module.name_expressions,
                                               enable_cooperative_groups=module.enable_cooperative_groups)
        binary, mapping = compiled.value.args[0]
        assert len(given) == 1
        return binary, mapping, given[0]
    return run


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("file", FILES)
def test_nvrtc_compiles_every_name_expression(compile_file, file, arch):
    binary, mapping, _ = compile_file(file, arch)
    assert binary[:4] == b"\x7fELF"  # a cubin: NVRTC compiled and assembled for sm_<arch>
    names = rawmodule.name_expressions(file)
    assert sorted(mapping) == sorted(names)
    for name, lowered in mapping.items():  # each instance's own entry: _Z <len> <template> I <type> E
        template = name.partition("<")[0]
        assert lowered.startswith(f"_Z{len(template)}{template}I"), (name, lowered)
        assert lowered.encode() in binary, (name, lowered)
    assert len(set(mapping.values())) == len(names)


def test_nvrtc_gets_our_options_through_cupys_assembly(compile_file):
    _, _, options = compile_file("conv.cu", "90")
    assert options[options.index(rawmodule.COMPILE_OPTIONS[0]):][:len(rawmodule.COMPILE_OPTIONS)] == \
        rawmodule.COMPILE_OPTIONS
    assert [o for o in options if "std=" in o] == ["-std=c++17"]  # ours replaces CuPy's default c++14
    # what CuPy adds to every RawModule: denormals flushed to zero in float32, the architecture, device code
    # by default
    assert {"-ftz=true", "-arch=sm_90", "--device-as-default-execution-space"} <= set(options)
    assert any(o.startswith("-I") and (Path(o[2:]) / "cuda_bf16.h").exists() for o in options)

