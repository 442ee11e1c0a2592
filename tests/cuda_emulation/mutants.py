"""Characteristic kernel bugs, applied to the ``.cu`` text, that the emulation tier must catch.

Each mutant replaces one piece of one kernel file (in a copy of ``kernels/``, which ``rawmodule.KERNEL_DIR``
then points to) and names a check: a run of the affected ``RawKernelOps`` method through the emulated tier
against the NumPy backend, which passes on the real source. ``race`` mutants are caught by the
ThreadSanitizer build: run them as ``python -m cuda_emulation.mutants NAME`` in a process with
``race_env()``; the exit status is 66 when TSan reports a race, 1 when the check fails, 0 when the mutant
survives.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from minitensor.backends.cuda import rawmodule
from minitensor.backends.cpu.backend import NumpyBackend

from . import EmulatedCudaBackend, build, fake_cupy, installed

CPU = NumpyBackend()
RACE_EXIT = 66


def _rand(*shape: int, dtype: Any = np.float64, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _compare(gpu: Any, method: str, *args: Any) -> None:
    """AssertionError unless ``method`` gives the NumPy backend's result through the emulated tier."""
    on_device = [gpu.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    got, want = getattr(gpu, method)(*on_device), getattr(CPU, method)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(gpu.to_numpy(g), w, rtol=1e-6, atol=1e-6)


def check_relu_backward(gpu: Any) -> None:
    x = _rand(1000)
    _compare(gpu, "relu_backward", _rand(1000, seed=1), np.maximum(x, 0))


def check_max_pool(gpu: Any) -> None:
    _compare(gpu, "max_pool2d", _rand(2, 3, 9, 8), (3, 3), (2, 2), (1, 1), (1, 1), False)


def check_conv(gpu: Any) -> None:
    _compare(gpu, "conv2d", _rand(2, 3, 9, 8), _rand(4, 3, 3, 3, seed=1), None, (1, 1), (1, 1, 1, 1), (1, 1), 1)


def check_softmax(gpu: Any) -> None:
    _compare(gpu, "softmax", _rand(6, 50), -1)


def check_embedding_backward(gpu: Any) -> None:
    """64 lookups of 3 rows: 256 additions into 12 places, many at once (one block of 256 threads)."""
    indices = np.random.default_rng(2).integers(0, 3, 64)
    _compare(gpu, "embedding_backward", _rand(64, 4), indices, 3, None, False)


def check_max_pool_backward(gpu: Any) -> None:
    """Overlapping 2x2 windows at stride 1: most inputs take the gradient of several outputs."""
    x = _rand(1, 2, 9, 9)
    geometry = ((2, 2), (1, 1), (0, 0), (1, 1))
    y, offsets = CPU.max_pool2d(x, *geometry, False)
    _compare(gpu, "max_pool2d_backward", _rand(*y.shape, seed=3), np.ascontiguousarray(offsets), x.shape, *geometry)


BLOCK_SUM = Path(__file__).with_name("block_sum.cu")


def check_block_sum(gpu: Any, source: str | None = None) -> None:
    """The emulation's own block reduction (block_sum.cu) against NumPy's sum, 3 blocks of 256."""
    module = fake_cupy.RawModule(code=source or BLOCK_SUM.read_text(), options=("-std=c++17",),
                                 name_expressions=["block_sum<double>"])
    x = _rand(2000)
    out = fake_cupy.zeros(3, np.float64)
    module.get_function("block_sum<double>")((3,), (256,), (fake_cupy.asarray(x), out, np.int64(x.size)))
    np.testing.assert_allclose(out.sum(), x.sum(), rtol=1e-12)


class Mutant(NamedTuple):
    file: str  # a kernels/*.cu file, or "block_sum.cu" (the emulation's own test kernel)
    original: str  # replaced at its first occurrence
    mutated: str
    check: Callable[[Any], None]
    race: bool = False  # caught by ThreadSanitizer (run in a process with race_env())


MUTANTS = {
    "off_by_one_grid_stride_bound": Mutant(
        "activation.cu", "e < n; e += item_stride())\n        gx[e] = from_acc<T>(to_acc(y[e]) <= 0",
        "e <= n; e += item_stride())\n        gx[e] = from_acc<T>(to_acc(y[e]) <= 0",
        check_relu_backward),
    "off_by_one_pool_window_bound": Mutant(
        "pooling.cu", "if (yy < 0 || yy >= height) continue;", "if (yy < 0 || yy > height) continue;",
        check_max_pool),
    "off_by_one_im2col_bound": Mutant(
        "conv.cu", "y >= 0 && y < height", "y >= 0 && y <= height", check_conv),
    "shuffle_in_lane_divergent_loop": Mutant(
        "common.cu", "m = math_fmax(m, to_acc(x[c]));\n    m = warp_max(m);",
        "m = warp_max(math_fmax(m, to_acc(x[c])));", check_softmax),
    "dropped_syncthreads": Mutant(
        "block_sum.cu", "partial[threadIdx.x + stride];\n        __syncthreads();",
        "partial[threadIdx.x + stride];", check_block_sum, race=True),
    "non_atomic_embedding_scatter": Mutant(
        "embedding.cu", "atomicAdd(gw + row * dim + (e - lookup * dim), gy[e]);",
        "gw[row * dim + (e - lookup * dim)] += gy[e];", check_embedding_backward, race=True),
    "non_atomic_max_pool_scatter": Mutant(
        "pooling.cu", "atomic_add(gx + (e / (out_w * out_h)) * height * width + yy * width + xx, gy[e]);",
        "gx[(e / (out_w * out_h)) * height * width + yy * width + xx] = from_acc<T>(to_acc(gx[(e / (out_w * out_h)) "
        "* height * width + yy * width + xx]) + to_acc(gy[e]));", check_max_pool_backward, race=True),
}


@contextlib.contextmanager
def applied(name: str | None) -> Iterator[Callable[[], None]]:
    """The check of mutant ``name`` (None: no mutant, the real sources: a control), ready to run against
    the mutated source with the fake CuPy installed."""
    mutant = MUTANTS[name] if name else None
    with tempfile.TemporaryDirectory() as tmp:
        kernels = Path(tmp)
        for path in rawmodule.KERNEL_DIR.glob("*.cu"):
            shutil.copy(path, kernels / path.name)
        shutil.copy(BLOCK_SUM, kernels / BLOCK_SUM.name)
        if mutant is not None:
            text = (kernels / mutant.file).read_text()
            assert mutant.original in text, f"{name}: the kernel no longer has {mutant.original!r}"
            (kernels / mutant.file).write_text(text.replace(mutant.original, mutant.mutated, 1))
        saved = rawmodule.KERNEL_DIR
        rawmodule.KERNEL_DIR = kernels
        try:
            with installed():
                gpu = EmulatedCudaBackend()
                check = mutant.check if mutant else None

                def run(check: Callable[..., None] | None = check) -> None:
                    if check is check_block_sum:
                        check_block_sum(gpu, (kernels / BLOCK_SUM.name).read_text())
                    elif check is not None:
                        check(gpu)
                yield run
        finally:
            rawmodule.KERNEL_DIR = saved


def race_env() -> dict[str, str] | None:
    """The environment of a process that runs the ThreadSanitizer builds (None without libtsan)."""
    libtsan = build.libtsan_path()
    if libtsan is None:
        return None
    tests = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join([tests, str(Path(tests).parent), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "LD_PRELOAD": libtsan, build.SANITIZE_ENV: "thread", "PYTHONPATH": path,
            "TSAN_OPTIONS": f"halt_on_error=1 exitcode={RACE_EXIT} report_signal_unsafe=0"}


def main(argv: list[str]) -> int:
    """``mutants NAME``: run one mutant's check; ``mutants --controls NAME...``: those checks on the real
    sources."""
    if argv[:1] == ["--controls"]:
        with applied(None) as run:
            for name in argv[1:]:
                run(MUTANTS[name].check)
        return 0
    with applied(argv[0]) as run:
        try:
            run()
        except (AssertionError, RuntimeError) as error:
            print(f"caught: {type(error).__name__}: {str(error)[:300]}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
