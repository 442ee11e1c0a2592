"""Compile CUDA kernel source text with g++ against ``cuda_emu.h`` into one shared library per text.

The library exports, for each name expression (``"im2col<float>"``), a C launcher ``emu_launch_im2col_float
(grid[3], block[3], params, n)`` that reads its parameters as ``cuLaunchKernel`` does (``params[i]`` points at
argument i, read as the kernel declares it), and ``emu_last_error()``. Builds are cached under
``build/cuda_emulation/`` (ignored by git), keyed by a hash of everything that goes into them, so only the
first run after an edit compiles. ``sanitize="thread"`` builds with ThreadSanitizer: loaded into a Python
started with ``LD_PRELOAD`` of ``libtsan_path()``, every data race between emulated threads is reported.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

HEADER = Path(__file__).with_name("cuda_emu.h")
BUILD_DIR = Path(__file__).resolve().parents[2] / "build" / "cuda_emulation"
FLAGS = ("-O1", "-fPIC", "-shared", "-pthread", "-fvisibility=hidden", "-w")
SANITIZERS = {"": (), "thread": ("-fsanitize=thread", "-g")}
SANITIZE_ENV = "MINITENSOR_CUDA_EMU_SANITIZE"  # "thread": the fake CuPy builds with ThreadSanitizer


def compiler() -> str | None:
    """The g++ to build with (``$CXX`` if set), or None when there is none."""
    return shutil.which(os.environ.get("CXX", "g++"))


def symbol(name_expression: str) -> str:
    """The exported launcher of one instance: ``"im2col<float>"`` -> ``"emu_launch_im2col_float"``."""
    return "emu_launch_" + re.sub(r"\W+", "_", name_expression).strip("_")


def translation_unit(source: str, name_expressions: list[str]) -> str:
    """The header, the kernel source exactly as given, and one launcher per instance."""
    export = 'extern "C" __attribute__((visibility("default")))'
    launchers = [f"{export} int {symbol(n)}(const unsigned* grid, const unsigned* block, void** params, "
                 f"int count) {{\n    return emu::launch(&{n}, \"{n}\", grid, block, params, count);\n}}"
                 for n in name_expressions]
    return "\n".join(['#include "cuda_emu.h"', '#line 1 "kernel source"', source, "", *launchers,
                      f"{export} const char* emu_last_error() {{ return emu::last_error(); }}", ""])


def build(source: str, name_expressions: list[str], std: str = "-std=c++17", sanitize: str = "") -> Path:
    """The shared library of ``source`` (built now unless cached); RuntimeError with g++'s message when the
    source does not compile."""
    cxx = compiler()
    if cxx is None:
        raise RuntimeError("the CUDA emulation needs g++ (or $CXX)")
    flags = (std, *FLAGS, *SANITIZERS[sanitize])
    unit = translation_unit(source, name_expressions)
    key = hashlib.sha256("\0".join([HEADER.read_text(), unit, cxx, *flags]).encode()).hexdigest()[:20]
    library = BUILD_DIR / f"{key}.so"
    if library.exists():
        return library
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=BUILD_DIR) as tmp:
        cpp, built = Path(tmp) / "unit.cpp", Path(tmp) / "unit.so"
        cpp.write_text(unit)
        done = subprocess.run([cxx, *flags, f"-I{HEADER.parent}", str(cpp), "-o", str(built)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"g++ failed on the kernel source:\n{done.stderr[-4000:]}")
        os.replace(built, library)  # atomic: a concurrent build of the same key writes the same file
    return library


def libtsan_path() -> str | None:
    """ThreadSanitizer's runtime, to LD_PRELOAD into the Python that loads ``sanitize="thread"`` builds."""
    cxx = compiler()
    if cxx is None:
        return None
    path = subprocess.run([cxx, "-print-file-name=libtsan.so"], capture_output=True, text=True,
                          check=False).stdout.strip()
    return str(Path(path).resolve()) if path and Path(path).is_absolute() and Path(path).exists() else None
