"""The first minute of a GPU lease: one line per check, PASS / FAIL / SKIP, what was found, and its seconds.

    python benchmarks/gpu_smoke.py            # PYTHONPATH=. from the repository root (gpu_check.sh --quick)

Each check runs in its own try/except, so that one failure (a missing header, a kernel that does not
compile) neither hides nor stops the others: versions, CUDA's paths (CUDA_HOME, CuPy's CUDA root, where
cuda_fp16.h is), CuPy's -ftz, the driver and the GPU, a tensor's round trip CPU -> CUDA -> CPU, every
RawKernel instance of ``rawmodule.KERNEL_FILES`` compiled and loaded (timed: the cold NVRTC cost), a
RawKernel and a Numba optimizer update (DLPack) against the CPU, the float16 GEMM switch, PyTorch's CUDA.
The checks that need a GPU are SKIPped, with the reason, when the "gpu" check fails; so on a machine
without one this still runs and says what it can (the CuPy and NVRTC versions, the paths).

Exit status: 0 when no check FAILed (SKIPs allowed), 1 when one did (on a machine without a GPU: the
driver and gpu checks), so ``gpu_check.sh`` records it and goes on.

Before anything is imported it sets NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0 (Numba's warning for small grids,
which every bias update launches) and CUDA_HOME=/usr/local/cuda where that exists and CUDA_HOME is unset.
"""
from __future__ import annotations

import importlib.metadata
import inspect
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
if "CUDA_HOME" not in os.environ and Path("/usr/local/cuda").is_dir():
    os.environ["CUDA_HOME"] = "/usr/local/cuda"

import numpy as np  # noqa: E402

PACKAGES = ("numpy", "ml_dtypes", "cupy-cuda13x", "cupy-cuda12x", "numba", "numba-cuda", "torch", "mpi4py",
            "scikit-learn", "pytest", "pytest-xdist", "pytest-timeout")


class Skip(Exception):
    """A check that does not apply here, with the reason (not a failure)."""


# ----------------------------------------------------------------------------------- without a GPU
def versions() -> str:
    found = []
    for dist in PACKAGES:
        try:
            found.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{dist} absent")
    return f"python {sys.version.split()[0]} ({platform.platform()}); " + ", ".join(found)


def environment() -> str:
    names = ("CUDA_HOME", "CUDA_PATH", "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "CUPY_CACHE_DIR", "CUDA_VISIBLE_DEVICES")
    return ", ".join(f"{n}={os.environ.get(n, '(unset)')}" for n in names)


def cupy_paths() -> str:
    import cupy
    return f"cupy {cupy.__version__}, get_cuda_path() {cupy.cuda.get_cuda_path()}"


def nvrtc() -> str:
    from cupy.cuda import nvrtc as lib
    return "NVRTC %d.%d" % lib.getVersion()


def include_dirs() -> list[str]:
    """The -I folders CuPy gives NVRTC for a RawModule, and the CUDA root's include folder."""
    import cupy
    from cupy._core import core
    dirs = [o[2:] for o in core.assemble_cupy_compiler_options(()) if o.startswith("-I")]
    root = cupy.cuda.get_cuda_path()
    return dirs + ([str(Path(root) / "include")] if root else [])


def fp16_header() -> str:
    """Where cuda_fp16.h (common.cu includes it) is on CuPy's include path; NVRTC 12.8+ also has it built in."""
    dirs = include_dirs()
    found = [d for d in dirs if (Path(d) / "cuda_fp16.h").is_file()]
    if found:
        return f"cuda_fp16.h in {found[0]}"
    raise Skip(f"cuda_fp16.h is in none of {dirs}: NVRTC's built-in copy serves (see the rawkernels checks)")


def ftz() -> str:
    from cupy.cuda import compiler
    if "-ftz=true" in inspect.getsource(compiler._compile_with_cache_cuda):
        return ("CuPy adds -ftz=true to every NVRTC compile: float32 subnormals flush to zero in our kernels "
                "(not on the CPU); the tests' tolerances allow it")
    return "CuPy adds no -ftz=true here: subnormals are kept, as on the CPU"


def driver() -> str:
    import cupy
    rt = cupy.cuda.runtime
    return (f"driver {rt.driverGetVersion()}, runtime {rt.runtimeGetVersion()}, "
            f"{rt.getDeviceCount()} device(s)")


def gpu() -> str:
    import minitensor as mt
    if not mt.cuda.is_available():
        from minitensor.backends.cuda.backend import CudaBackend
        raise RuntimeError(f"mt.cuda.is_available() is False: {CudaBackend.unavailable_reason()}")
    import cupy
    dev = cupy.cuda.Device(0)
    free, total = cupy.cuda.runtime.memGetInfo()
    return (f"{mt.cuda.get_device_name(0)}, compute capability {dev.compute_capability}, "
            f"{free / 2**30:.0f} of {total / 2**30:.0f} GiB free")


# -------------------------------------------------------------------------------------- on the GPU
def round_trip() -> str:
    import minitensor as mt
    x = mt.arange(12, dtype=mt.float32).reshape(3, 4)
    y = x.to("cuda")
    back = (y * 2 + 1).cpu()
    assert y.device.type == "cuda" and back.device.type == "cpu", (y.device, back.device)
    np.testing.assert_array_equal(back.numpy(), x.numpy() * 2 + 1)
    return "arange(12).to('cuda') * 2 + 1, .cpu(): exact"


def kernel_file(file: str) -> Callable[[], str]:
    def compile_and_load() -> str:
        import cupy
        from minitensor.backends.cuda import rawmodule
        device = cupy.cuda.runtime.getDevice()
        names = rawmodule.name_expressions(file)
        module = rawmodule._module(file, device)  # NVRTC, or CuPy's disk cache
        for name in names:
            module.get_function(name)
        return f"{len(names)} instances compiled and loaded"
    return compile_and_load


class Launches:
    """The kernels launched through ``compiled.run_kernel`` while it is entered (its profiler hook): the names
    of those that ran on the device (a CPU loop of the same name is not counted)."""

    def __enter__(self) -> list[str]:
        from minitensor.backends import compiled
        self.names: list[str] = []
        self.old = compiled.launch_hook

        def hook(name: str, on_device: bool, kernel: Callable[..., Any], args: tuple[Any, ...]) -> None:
            if on_device:
                self.names.append(name)
            kernel(*args)
        compiled.launch_hook = hook
        return self.names

    def __exit__(self, *exc: object) -> None:
        from minitensor.backends import compiled
        compiled.launch_hook = self.old


def rawkernel_launch() -> str:
    import minitensor as mt
    x = mt.randn(64, 100)
    with Launches() as names:
        got = mt.nn.functional.softmax(x.to("cuda"), dim=-1).cpu().numpy()
    assert "softmax_forward" in names, f"the RawKernel did not run (launched on the device: {names})"
    want = mt.nn.functional.softmax(x, dim=-1).numpy()
    err = float(np.abs(got - want).max())
    assert err < 1e-6, f"max abs diff {err:.2e} from the CPU"
    return f"softmax_forward<float> ran; max abs diff from the CPU {err:.1e}"


def numba_update() -> str:
    import minitensor as mt
    params, grads = mt.randn(4096), mt.randn(4096)
    results = []
    for device in ("cpu", "cuda"):
        p = mt.nn.Parameter(params.to(device))
        p.grad = grads.to(device)
        optimizer = mt.optim.Adam([p], lr=0.1)
        with Launches() as names:
            optimizer.step()
            optimizer.step()
        results.append(p.detach().cpu().numpy())
    assert "adam_kernel" in names, f"the Numba kernel did not run on cuda (launched on the device: {names})"
    err = float(np.abs(results[0] - results[1]).max())
    assert err < 1e-5, f"max abs diff {err:.2e} from the CPU"
    import numba
    return f"numba {numba.__version__}: 2 Adam steps by adam_kernel via DLPack; max abs diff from the CPU {err:.1e}"


def fp16_gemm() -> str:
    import cupy
    from cupy._core import _routines_linalg as linalg

    import minitensor as mt
    a, b = mt.randn(256, 256), mt.randn(256, 256)
    got = (a.to("cuda").half() @ b.to("cuda").half()).float().cpu().numpy()  # the backend sets the switch
    mode = linalg.get_compute_type(np.float16)
    assert mode == linalg.COMPUTE_TYPE_FP32, f"float16 compute type {mode}, not COMPUTE_TYPE_FP32"
    want = a.half().float().numpy() @ b.half().float().numpy()
    err = float(np.abs(got - want).max() / np.abs(want).max())
    assert err < 2e-3, f"relative error {err:.1e}: float16 accumulation?"
    return f"float16 GEMM accumulates in float32 (COMPUTE_TYPE_FP32, cupy {cupy.__version__}); rel err {err:.1e}"


def torch_cuda() -> str:
    try:
        import torch
    except ImportError as e:
        raise Skip(f"no PyTorch: {e}") from None
    assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
    x = torch.randn(128, 128, device="cuda")
    float((x @ x).sum())
    return f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}"


def nccl() -> str:
    from minitensor.backends.cuda.nccl import nccl_available
    if not nccl_available():
        raise Skip("CuPy's NCCL cannot be loaded (not needed by --quick)")
    from cupy.cuda import nccl as lib
    return f"NCCL {lib.get_version()}"


# ------------------------------------------------------------------------------------------ runner
def checks() -> list[tuple[str, Callable[[], str], bool]]:
    """(name, check, needs the GPU), in order; the "gpu" check gates the ones that need it."""
    from minitensor.backends.cuda.rawmodule import KERNEL_FILES
    return [("versions", versions, False), ("environment", environment, False), ("cupy", cupy_paths, False),
            ("nvrtc", nvrtc, False), ("cuda_fp16.h", fp16_header, False), ("-ftz", ftz, False),
            ("driver", driver, False), ("gpu", gpu, False), ("round trip", round_trip, True),
            *[(f"rawkernels {f}", kernel_file(f), True) for f in KERNEL_FILES],
            ("rawkernel launch", rawkernel_launch, True), ("numba update", numba_update, True),
            ("fp16 gemm", fp16_gemm, True), ("torch cuda", torch_cuda, True), ("nccl", nccl, True)]


def run(check: Callable[[], str]) -> tuple[str, str]:
    try:
        return "PASS", check()
    except Skip as e:
        return "SKIP", str(e)
    except Exception as e:  # noqa: BLE001 (each check reports its own failure and the others go on)
        return "FAIL", f"{type(e).__name__}: {e}".replace("\n", " ")[:600]


def main() -> int:
    status: dict[str, str] = {}
    for name, check, needs_gpu in checks():
        start = time.perf_counter()
        if needs_gpu and status.get("gpu") != "PASS":
            status[name], detail = "SKIP", "needs a GPU (the gpu check did not pass)"
        else:
            status[name], detail = run(check)
        print(f"{status[name]} {name}: {detail} ({time.perf_counter() - start:.2f} s)", flush=True)
    counts = {s: list(status.values()).count(s) for s in ("PASS", "FAIL", "SKIP")}
    print("smoke: " + ", ".join(f"{n} {s}" for s, n in counts.items()), flush=True)
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
