"""tests/test_memory_format.py's calls made on PyTorch too: the same strides, contiguity flags, values,
identities (``is self``) and errors."""
from __future__ import annotations

import io

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def both(shape: tuple[int, ...]) -> tuple[mt.Tensor, "torch.Tensor"]:
    values = np.random.default_rng(0).standard_normal(shape)
    return mt.tensor(values, dtype=mt.float32), torch.tensor(values, dtype=torch.float32)


# (shape, how to make a strided input from a C-contiguous one) for both libraries
INPUTS = {
    "contiguous": ((2, 3, 4, 5), lambda t, lib: t),
    "channels_last": ((2, 3, 4, 5), lambda t, lib: t.contiguous(memory_format=lib.channels_last)),
    "one_channel": ((2, 1, 3, 3), lambda t, lib: t.contiguous(memory_format=lib.channels_last)),
    "pixel": ((2, 3, 1, 1), lambda t, lib: t.contiguous(memory_format=lib.channels_last)),
    "transposed": ((2, 3, 4, 5), lambda t, lib: t.transpose(0, 2)),
    "sliced": ((4, 5, 6, 2), lambda t, lib: t[:, ::2]),
    "sliced_channels_last": ((2, 6, 4, 5), lambda t, lib: t.contiguous(memory_format=lib.channels_last)[:, ::2]),
    "nhwc_permuted": ((2, 4, 5, 3), lambda t, lib: t.permute(0, 3, 1, 2)),
    "5d_channels_last": ((2, 3, 2, 4, 5), lambda t, lib: t.contiguous(memory_format=lib.channels_last_3d)),
    "matrix_t": ((3, 4), lambda t, lib: t.t()),
    "sliced_transposed": ((4, 5, 6), lambda t, lib: t[:, ::2].transpose(0, 2)),
    "sliced_permuted": ((2, 4, 5, 6), lambda t, lib: t[:, :, ::2].permute(0, 3, 1, 2)),
    "expanded": ((3, 1), lambda t, lib: t.expand(3, 4)),
    "expanded_4d": ((2, 3, 1, 5), lambda t, lib: t.expand(2, 3, 4, 5).permute(0, 2, 1, 3)),
    "reversed_step": ((2, 3, 4, 6), lambda t, lib: t[..., ::3]),
}


def pair(name: str) -> tuple[mt.Tensor, "torch.Tensor"]:
    shape, make = INPUTS[name]
    ours, theirs = both(shape)
    return make(ours, mt), make(theirs, torch)


def outcome(fn, t, lib):
    """What ``fn`` gives: (strides, contiguity flags, values) or the error's type and message."""
    try:
        out = fn(t, lib)
    except RuntimeError as e:
        return ("error", str(e).split("\n")[0])
    if isinstance(out, bool):
        return out
    flags = tuple(out.is_contiguous(memory_format=getattr(lib, f)) for f in FORMATS)
    return (tuple(out.shape), out.stride(), flags, out is t, out.dtype is not t.dtype)


CALLS = {f"{name}({fmt})": (lambda fmt, call: lambda t, lib: call(t, lib, getattr(lib, fmt)))(fmt, call)
         for name, call in {
             "contiguous": lambda t, lib, f: t.contiguous(memory_format=f),
             "clone": lambda t, lib, f: t.clone(memory_format=f),
             "to": lambda t, lib, f: t.to(memory_format=f),
             "to_copy": lambda t, lib, f: t.to(memory_format=f, copy=True),
             "to_double": lambda t, lib, f: t.to(lib.float64, memory_format=f),
             "is_contiguous": lambda t, lib, f: t.is_contiguous(memory_format=f),
             "zeros_like": lambda t, lib, f: lib.zeros_like(t, memory_format=f),
             "empty_like": lambda t, lib, f: lib.empty_like(t, memory_format=f),
             "randn_like": lambda t, lib, f: lib.randn_like(t, memory_format=f),
             "randint_like": lambda t, lib, f: lib.randint_like(t, 5, memory_format=f),
             "full_like": lambda t, lib, f: lib.full_like(t, 2.0, memory_format=f),
             "torch.clone": lambda t, lib, f: lib.clone(t, memory_format=f)}.items()
         for fmt in FORMATS}
CALLS["default clone"] = lambda t, lib: t.clone()
CALLS["default zeros_like"] = lambda t, lib: lib.zeros_like(t)
CALLS["default ones_like"] = lambda t, lib: lib.ones_like(t)
CALLS["add one"] = lambda t, lib: t + 1
CALLS["to double"] = lambda t, lib: t.to(lib.float64)


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_strides_flags_and_errors_match_pytorch(name, call):
    ours, theirs = pair(name)
    fn = CALLS[call]
    assert outcome(fn, ours, mt) == outcome(fn, theirs, torch)
    if call.startswith(("contiguous", "clone", "to", "default clone", "torch.clone")):
        try:
            got, want = fn(ours, mt), fn(theirs, torch)
        except RuntimeError:
            return
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 1, 4, 5), (2, 0, 4, 5), (1, 3, 1, 1), (2, 3, 4), (2, 3, 2, 4, 5)])
@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_matches_pytorch(shape, fmt):
    def make(lib):
        try:
            return lib.empty(shape, memory_format=getattr(lib, fmt)).stride()
        except RuntimeError as e:
            return str(e).split("\n")[0]
    assert make(mt) == make(torch)


def test_formats_print_as_pytorchs_with_our_name():
    for fmt in FORMATS:
        assert repr(getattr(mt, fmt)) == repr(getattr(torch, fmt)).replace("torch.", "minitensor.")
    assert repr(mt.float32) == repr(torch.float32).replace("torch.", "minitensor.")


def test_module_to_matches_pytorch():
    def strides(lib, fmt):
        model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Linear(4, 4))
        model.to(memory_format=getattr(lib, fmt))
        out = [p.stride() for p in model.parameters()] + [b.stride() for b in model.buffers() if b.dim()]
        try:
            lib.nn.Conv3d(2, 2, 1).to(memory_format=getattr(lib, fmt))
            return out, None
        except RuntimeError as e:
            return out, str(e)
    for fmt in ("channels_last", "contiguous_format", "preserve_format"):
        assert strides(mt, fmt) == strides(torch, fmt)


def test_gradient_layout_values_match_pytorch():
    ours, theirs = both((2, 3, 4, 5))
    ours.requires_grad_()
    theirs.requires_grad_()
    weights = np.arange(120.0).reshape(2, 3, 4, 5)
    for t, lib in ((ours, mt), (theirs, torch)):
        (t.contiguous(memory_format=lib.channels_last).clone(memory_format=lib.contiguous_format)
         * lib.tensor(weights, dtype=lib.float32)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())


def test_torch_format_files_keep_strides_both_ways():
    ours, theirs = pair("channels_last")
    buffer = io.BytesIO()
    mt.save(ours, buffer, format="torch")
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded.stride() == theirs.stride()
    np.testing.assert_array_equal(loaded.numpy(), ours.numpy())
    buffer = io.BytesIO()
    torch.save(theirs, buffer)
    buffer.seek(0)
    back = mt.load(buffer)
    assert back.stride() == theirs.stride()
    np.testing.assert_array_equal(back.numpy(), theirs.numpy())
