"""The strict CuPy tier: a stand-in for CuPy 14.2 that is at least as strict as the real one, so the whole
``-m gpu`` suite runs the real ``CudaBackend`` on a machine without a GPU (docs/cuda.md, "The strict CuPy tier").

``install()`` (called by tests/conftest.py when ``MINITENSOR_STRICT_CUPY=1``, before minitensor is imported)
imports the real CuPy, takes it out of ``sys.modules`` and puts the double in its place: ``cupy``, ``cupy.cuda``,
``cupy.random``, ``cupyx`` and its scipy modules, ``cupy_backends.cuda.stream``. The Numba kernels run under
Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``), which takes NumPy arrays: a launch extension hands it the array
under each device array (``numba_adapter``)."""
from __future__ import annotations

import sys
from types import ModuleType

ENV = "MINITENSOR_STRICT_CUPY"

# What the double cannot stand for: what these tests check only a GPU has (tests/conftest.py skips them here).
GPU_ONLY = {
    "tests/cuda/test_cuda_numba_ops.py": "the Numba kernels on a real stream (external_stream, DLPack, the SASS of "
                                         "inspect_asm, launch counts): their maths runs under tests/cudasim",
    "test_elapsed_time_measures_gpu_work_in_ms": "the double runs work at once: no GPU time to measure",
    "test_wait_stream_orders_work_across_streams": "the double's streams run work at once: no order to observe",
    "test_event_wait_and_synchronize": "the double's events are done when recorded: no wait to observe",
    "test_memory_stays_flat_over_1000_training_steps": "the double has no memory pool to watch (and 1,000 steps "
                                                       "under Numba's simulator take minutes)",
    "test_dlpack_with_cupy_is_zero_copy_both_ways": "zero-copy is a property of device memory the double lacks",
    "test_the_next_copy_overlaps_the_current_step": "the double runs a copy at once: no overlap to observe",
    # The examples trained for tens of steps: Numba's simulator runs each optimizer update as Python threads
    # over every parameter (minutes a step); one training step per model is compared with the CPU in
    # test_cuda_backend, and the examples on a GPU are benchmarks/gpu_quick.sh's examples step.
    "test_trains_on_each_device_logs_losses_and_saves_grids": "whole training runs under Numba's simulator",
    "test_trains_on_each_device_and_logs_what_it_printed": "whole training runs under Numba's simulator",
    "test_score_trains_a_judge_once_and_rescoring_a_finished_run_gives_the_same_score":
        "whole training runs under Numba's simulator",
    "test_trains_with_the_papers_settings_and_logs_the_penalty": "whole training runs under Numba's simulator",
}


def install() -> None:
    from . import real
    real.stash()
    from . import cupy_module, cupyx_module, numba_adapter

    stream = ModuleType("cupy_backends.cuda.stream")
    stream.get_default_stream_ptr = lambda: 0  # type: ignore[attr-defined]
    sys.modules.update({
        "cupy": cupy_module, "cupy.cuda": cupy_module.cuda, "cupy.random": cupy_module.random,  # type: ignore
        "cupy.cuda.pinned_memory": cupy_module.cuda.pinned_memory,  # type: ignore[dict-item]
        "cupyx": cupyx_module.cupyx, "cupyx.scipy": cupyx_module.scipy_module,
        "cupyx.scipy.special": cupyx_module.special, "cupyx.scipy.sparse": cupyx_module.sparse,
        "cupy_backends": ModuleType("cupy_backends"), "cupy_backends.cuda": ModuleType("cupy_backends.cuda"),
        "cupy_backends.cuda.stream": stream,
        "cupy._core": cupy_module._core, "cupy._core._routines_linalg": cupy_module._routines_linalg,
    })
    numba_adapter.install()
