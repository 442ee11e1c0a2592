"""The flags PyTorch programs set at the top (nanoGPT: ``torch.backends.cuda.matmul.allow_tf32 = True``...):
accepted, linked as in PyTorch, and TF32 handed to CuPy's float32 GEMMs when a CUDA backend exists."""
from __future__ import annotations

import types

import pytest

import minitensor as mt
from minitensor.backends.cuda import flags


def set_flags(lib):
    """A training script's preamble; returns what reads back."""
    saved = lib.get_float32_matmul_precision()
    try:
        lib.backends.cuda.matmul.allow_tf32 = True
        lib.backends.cudnn.allow_tf32 = True
        lib.backends.cudnn.benchmark = True
        lib.backends.cudnn.deterministic = False
        seen = [lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32]
        lib.set_float32_matmul_precision("highest")
        seen.append(lib.backends.cuda.matmul.allow_tf32)
        lib.set_float32_matmul_precision("medium")
        seen.append(lib.backends.cuda.matmul.allow_tf32)
        lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        seen.append(lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction)
        seen.append(lib.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            lib.backends.cuda.matmul.foo = 1
        seen.append(lib.cuda.is_bf16_supported() == lib.cuda.is_available() and lib.cuda.is_available())
        return seen
    finally:
        lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True
        lib.backends.cudnn.benchmark = False
        lib.set_float32_matmul_precision(saved)


def test_flags_read_back_and_link_as_pytorch():
    assert set_flags(mt) == ["high", True, False, True, False, True, False]
    assert mt.cuda.is_bf16_supported() is False or mt.cuda.is_available()


def test_tf32_reaches_cupy_only_once_a_cuda_backend_exists(monkeypatch):
    calls = []
    fake = types.SimpleNamespace(COMPUTE_TYPE_TF32=7, COMPUTE_TYPE_DEFAULT=1,
                                 set_compute_type=lambda dt, kind: calls.append((dt, kind)))
    monkeypatch.setattr(flags, "_cupy_linalg", lambda: fake)
    monkeypatch.setattr(flags, "_set_by_program", [False])
    flags.apply_tf32(creating_backend=True)
    assert calls == []  # never set by the program: CuPy's own default (CUPY_TF32) stays
    try:
        mt.backends.cuda.matmul.allow_tf32 = True
        assert calls == ([("float32", 7)] if flags._cuda_backend_exists() else [])
        flags.apply_tf32(creating_backend=True)  # what the CUDA backend does when it is made
        assert calls[-1] == ("float32", 7)
        mt.set_float32_matmul_precision("highest")
        flags.apply_tf32(creating_backend=True)
        assert calls[-1] == ("float32", 1)
    finally:
        mt.set_float32_matmul_precision("highest")


@pytest.mark.gpu
def test_tf32_sets_cupys_compute_type_on_a_gpu():
    if not mt.cuda.is_available():
        pytest.skip("no CUDA device")
    mt.zeros(1, device="cuda")
    linalg = flags._cupy_linalg()
    try:
        mt.backends.cuda.matmul.allow_tf32 = True
        import cupy
        expected = linalg.COMPUTE_TYPE_TF32 if int(cupy.cuda.Device().compute_capability) >= 80 else \
            linalg.COMPUTE_TYPE_DEFAULT
        assert linalg.get_compute_type("float32") == expected
    finally:
        mt.set_float32_matmul_precision("highest")
    assert linalg.get_compute_type("float32") == linalg.COMPUTE_TYPE_DEFAULT


@pytest.mark.torch
def test_flags_match_torch():
    torch = pytest.importorskip("torch")
    assert set_flags(mt) == set_flags(torch)
