"""minitensor's CuPy and numba.cuda calls against the real installed packages (the ``cuda-check`` extra),
without a GPU: every attribute chain must resolve and every call must bind (``api_scan.py`` says how). Skipped
where CuPy or numba-cuda is not importable.
"""
from __future__ import annotations

import inspect
import re

import pytest

from . import needs

needs.module("cupy")
needs.module("numba.cuda")

from . import api_scan  # noqa: E402 (after the skips)

_IMPORTS = re.compile(r"^\s*(from|import)\s+(cupy|cupyx|cupy_backends|numba)\b", re.MULTILINE)
MODULES = [rel for rel in api_scan.package_modules()
           if rel.startswith(api_scan.XP_DIRS) or _IMPORTS.search((api_scan.PACKAGE / rel).read_text())]


def _overridden_on_cuda(function: str) -> bool:
    """Whether CudaBackend replaces the generic method ``function`` outright (no ``super()`` call), so the
    generic body never runs on CuPy (``CupyBackend.permutation``)."""
    from minitensor.backends.cuda.backend import CudaBackend
    method = getattr(CudaBackend, function, None)
    if method is None:
        return False
    impl = inspect.unwrap(method)
    return (impl.__module__.startswith("minitensor.backends.cuda")
            and "super()" not in inspect.getsource(impl))


def _nccl_loadable() -> bool:
    import cupy.cuda.nccl
    return bool(getattr(cupy.cuda.nccl, "available", False))


@pytest.mark.parametrize("rel", MODULES)
def test_every_cupy_and_numba_cuda_reference_resolves_and_binds(rel):
    report = api_scan.scan_module(rel)
    findings = [f for f in report.findings
                if not (rel.startswith("backends/generic") and _overridden_on_cuda(f.function))]
    if not _nccl_loadable():
        unverifiable = [f for f in findings if "cupy.cuda.nccl has no attribute" in f.message]
        findings = [f for f in findings if f not in unverifiable]
        if unverifiable and not findings:
            pytest.skip(f"NCCL cannot be loaded (pip install nvidia-nccl-cu13), so cupy.cuda.nccl is CuPy's "
                        f"stub: {len(unverifiable)} references unchecked")
    assert not findings, "\n".join(map(str, findings))


def test_the_scan_reaches_every_cupy_user():
    """A scanner that lost track of an alias would pass everything: each of these modules has references."""
    users = ["backends/cuda/backend.py", "backends/cuda/runtime.py", "backends/cuda/streams.py",
             "backends/cuda/nccl.py", "backends/cuda/prefetch.py", "backends/cuda/rawmodule.py",
             "backends/cuda/numba_kernels/launch.py", "backends/cuda/numba_kernels/optim.py",
             "backends/cuda/numba_kernels/dropout.py", "backends/generic/random.py",
             "backends/generic/math.py", "backends/generic/special.py", "backends/generic/sparse.py"]
    for rel in users:
        report = api_scan.scan_module(rel)
        assert report.attributes > 0 and report.calls > 0, rel


def test_the_scan_finds_missing_names_and_unbindable_calls():
    source = '''
import cupy
from numba import cuda

def f(x):
    from cupy.cuda import runtime as rt
    cp = cupy_module()
    cp.no_such_function(x)
    cupy.zeros(1, 2, 3, 4, 5)
    cupy.add(x)
    cupy.add(x, x, where=True)
    cupy.cuda.Stream(bogus=1)
    cupy.cuda.Device(0).no_such_method()
    rt.getDevice(1, 2)
    xp.not_in_cupy(x)
    cuda.grid(1, 2)
    self.xp.random.default_rng(0).no_draw()
'''
    report = api_scan.scan_source(source, "t.py", xp_is_cupy=True)
    messages = "\n".join(map(str, report.findings))
    for expected in ["t.py:8: cp.no_such_function", "t.py:9: cupy.zeros", "t.py:10: cupy.add: ufunc takes 2",
                     "t.py:11: cupy.add: ufunc does not take ['where']", "t.py:12: cupy.cuda.Stream",
                     "t.py:13: cupy.cuda.Device(0).no_such_method", "t.py:14: rt.getDevice",
                     "t.py:15: xp.not_in_cupy", "t.py:16: cuda.grid", "t.py:17: self.xp.random.default_rng(0)"]:
        assert expected in messages, messages
    assert len(report.findings) == 10, messages


def test_correct_calls_bind():
    source = '''
import cupy
from numba import cuda
cupy.zeros((2, 3), dtype=cupy.float32)
cupy.add(1, 2, out=None, casting="unsafe")
cupy.cuda.Stream(non_blocking=True, priority=0)
cupy.cuda.get_current_stream(0)
cuda.grid(1)
cupy.RawModule(code="", options=(), name_expressions=["k<float>"])
'''
    report = api_scan.scan_source(source, "t.py")
    assert report.findings == [] and report.unchecked == []
    assert report.calls == 6
