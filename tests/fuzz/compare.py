"""One drawn call run on minitensor and on PyTorch, and every way the two may disagree: who raises, output
dtype and shape, values (nan positions, infinities, the sign of zeros, a tolerance per dtype), in-place
results, and in float64 the gradients of sum(out * cotangent)."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

import minitensor as mt
from tests.fuzz.spec import TENSORS, Spec
from tests.helpers import as_np

RTOL = {"float16": 1e-2, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-9}


def resolve(lib: Any, name: str) -> Callable[..., Any] | None:
    """``name`` of the table in ``lib`` (minitensor or torch): a function, or a caller of the Tensor method."""
    if name.startswith("T."):
        method = name[2:]
        if not hasattr(lib.Tensor, method):
            return None
        return lambda x, *a, **k: getattr(x, method)(*a, **k)
    space, _, attr = name.rpartition(".")
    where = {"": lib, "F": lib.nn.functional, "linalg": lib.linalg, "special": lib.special}[space]
    return getattr(where, attr, None)


def variants(spec: Spec) -> list[str]:
    """The names one line runs: each listed name, and for a plain or ``T.`` name the Tensor method and the
    in-place method of that name wherever both libraries have them."""
    import torch

    out = []
    for name in spec.names:
        out.append(name)
        if name.startswith("F."):  # F.relu_
            out += [name + "_"] if hasattr(mt.nn.functional, name[2:] + "_") and \
                hasattr(torch.nn.functional, name[2:] + "_") else []
        if "." in name and not name.startswith("T."):
            continue
        base = name.removeprefix("T.")
        extra = ([] if name.startswith("T.") else [base]) + [base + "_"]
        if "nomethod" in spec.options:
            extra = []
        out += [f"T.{m}" for m in extra if hasattr(mt.Tensor, m) and hasattr(torch.Tensor, m)]
        if hasattr(mt, base + "_") and hasattr(torch, base + "_"):
            out.append(base + "_")
    return list(dict.fromkeys(out))


def build(lib: Any, value: Any, grad: bool | str) -> Any:
    """A fresh tensor of ``lib`` from a NumPy array (requiring grad where asked and floating)."""
    if isinstance(value, (tuple, list)):
        return type(value)(build(lib, v, grad) for v in value)
    if not isinstance(value, np.ndarray):
        return value
    t = lib.from_numpy(value.copy()) if lib is not mt else mt.tensor(value.copy())
    if grad and value.dtype.kind == "f":
        t.requires_grad_(True)
    return t


def call(lib: Any, name: str, args: list[Any], kwargs: dict[str, Any], grad: bool) -> tuple[Any, list, Any]:
    """(result or the exception, the tensors made, the first tensor) of ``name`` in ``lib``."""
    f = resolve(lib, name)
    if f is None:
        return AttributeError(f"no {name}"), [], None
    # with ``grad`` a str (gradonly=x): only the first argument requires grad (targets cannot, in PyTorch)
    targs = [build(lib, a, grad if k == 0 or not isinstance(grad, str) else False) for k, a in enumerate(args)]
    tkw = {k: build(lib, v, grad and not isinstance(grad, str)) for k, v in kwargs.items()}
    made = [t for t in flat(targs + list(tkw.values())) if isinstance(t, (mt.Tensor, lib.Tensor))]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(*targs, **tkw), made, targs[0] if targs else None
    except Exception as e:  # noqa: BLE001 - an error is an outcome to compare
        return e, made, None


def flat(out: Any) -> list[Any]:
    """Tensors and Python values of a result, nested tuples (named or not) and lists flattened."""
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in flat(o)]
    return [out]


def values_differ(a: np.ndarray, b: np.ndarray, scale: float, zsign: bool, rtol: float | None = None) -> str:
    """Why two arrays of one dtype and shape differ ('' where they agree)."""
    if b.dtype.kind not in "fc":  # (a may be ml_dtypes' bfloat16, kind "V")
        bad = a != b
        return f"values differ at {np.argwhere(bad)[:3].tolist()}: {a[bad][:3]} vs {b[bad][:3]}" if bad.any() else ""
    tol = rtol if rtol is not None else RTOL.get(b.dtype.name, 1e-5)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    close = np.isclose(a64, b64, rtol=tol, atol=tol * scale, equal_nan=True)
    if zsign:
        zero = (a64 == 0) & (b64 == 0)
        close &= ~zero | (np.signbit(a64) == np.signbit(b64))
    if close.all():
        return ""
    where = np.argwhere(~close)[:3].tolist()
    return f"values differ at {where}: {a64[~close][:3]} vs {b64[~close][:3]}"


def dtype_name(d: Any) -> str:
    return str(d).rsplit(".", 1)[-1]


def compare_out(got: Any, want: Any, scale: float, spec: Spec) -> list[str]:
    """The differences of two results (minitensor's, PyTorch's)."""
    import torch

    g, w = flat(got), flat(want)
    if len(g) != len(w):
        return [f"{len(g)} outputs vs {len(w)}"]
    if "only" in spec.options:  # the other outputs are not unique (indices of ties, signs of singular vectors)
        keep = [int(k) for k in spec.options["only"].split(",")]
        g, w = [g[k] for k in keep], [w[k] for k in keep]
    bad = []
    rtol = float(spec.options["tol"]) if "tol" in spec.options else None
    for k, (a, b) in enumerate(zip(g, w)):
        if isinstance(b, torch.Tensor):
            if not isinstance(a, mt.Tensor):
                bad.append(f"out{k}: {type(a).__name__} where PyTorch returns a Tensor")
                continue
            if dtype_name(a.dtype) != dtype_name(b.dtype) or tuple(a.shape) != tuple(b.shape):
                bad.append(f"out{k}: {dtype_name(a.dtype)}{tuple(a.shape)} vs {dtype_name(b.dtype)}{tuple(b.shape)}")
                continue
            bf16 = b.dtype == torch.bfloat16  # NumPy has no bfloat16 of torch's: compare in float32
            want = (b.detach().float() if bf16 else b.detach()).numpy(force=True)
            why = "" if "novalues" in spec.options else values_differ(
                as_np(a), want, scale, "nozsign" not in spec.options, RTOL["bfloat16"] if bf16 else rtol)
        elif isinstance(b, (bool, int, float)) and not isinstance(a, mt.Tensor):
            why = values_differ(np.asarray(a), np.asarray(b), scale, False, rtol)
        else:
            why = "" if type(a).__name__ == type(b).__name__ or b is None and a is None else \
                f"{type(a).__name__} vs {type(b).__name__}"
        if why:
            bad.append(f"out{k}: {why}")
    return bad


def differentiable(out: Any) -> list[int]:
    """The places of PyTorch's outputs (flattened) that are floating and require grad."""
    import torch

    return [k for k, o in enumerate(flat(out))
            if isinstance(o, torch.Tensor) and o.dtype.is_floating_point and o.requires_grad]


def gradients(lib: Any, out: Any, made: list, cot: dict[int, np.ndarray]) -> list[np.ndarray] | str:
    """d sum(out_k * cot_k) / d input for each made tensor requiring grad (zeros where not reached); ``cot``
    holds a cotangent per place of PyTorch's differentiable outputs (an output of minitensor's without a graph
    there adds nothing)."""
    outs = [(o, cot[k]) for k, o in enumerate(flat(out)) if k in cot and isinstance(o, lib.Tensor)
            and o.requires_grad]
    leaves = [t for t in made if t.requires_grad]
    if not outs or not leaves:
        return []
    loss = sum((o * lib.from_numpy(c.copy()) if lib is not mt else o * mt.tensor(c)).sum() for o, c in outs)
    try:
        grads = lib.autograd.grad(loss, leaves, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return f"backward raises {type(e).__name__}: {e}"[:200]
    return [np.zeros(t.shape) if g is None else as_np(g) if lib is mt else g.detach().numpy(force=True)
            for t, g in zip(leaves, grads)]


def run_example(spec: Spec, dtype: str, args: list, kwargs: dict, rng: np.random.Generator) -> list[str]:
    """Every difference of one drawn call, over its variants (function, method, in-place) and gradients."""
    import torch

    arrays = [v for v in args + list(kwargs.values()) if isinstance(v, np.ndarray)]
    finite = [np.abs(a[np.isfinite(a)]).max(initial=0.0) for a in arrays if a.dtype.kind == "f"]
    scale = max([1.0, *finite]) * max([1, *(a.size for a in arrays)]) if "reduce" in spec.options else \
        max([1.0, *finite]) if "scaled" in spec.options else 1.0
    bad = []
    for k, name in enumerate(variants(spec)):
        inplace = name.endswith("_") and name.removeprefix("T.") not in spec.names
        grad: bool | str = k == 0 and dtype == "float64" and "nograd" not in spec.options and \
            ("gfinite" not in spec.options or all(np.isfinite(a).all() for a in arrays if a.dtype.kind == "f"))
        if grad and "gradonly" in spec.options:
            grad = spec.options["gradonly"]
        want, tmade, tfirst = call(torch, name, args, kwargs, grad)
        got, made, first = call(mt, name, args, kwargs, grad)
        if isinstance(want, BaseException) or isinstance(got, BaseException):
            if isinstance(want, BaseException) != isinstance(got, BaseException) and "noerr" not in spec.options:
                who = f"PyTorch raises {type(want).__name__}: {want}" if isinstance(want, BaseException) else \
                    f"minitensor raises {type(got).__name__}: {got}"
                bad.append(f"{name}: {who}"[:300])
            continue
        bad += [f"{name}: {b}" for b in compare_out(got, want, scale, spec)]
        if inplace and (want is tfirst) != (got is first):
            bad.append(f"{name}: returns {'self' if got is first else 'a new tensor'}, PyTorch the other")
        if grad and not bad:
            cot = {k: rng.standard_normal(tuple(flat(want)[k].shape)) for k in differentiable(want)}
            gw = gradients(torch, want, tmade, cot)
            gg = gradients(mt, got, made, cot)
            if isinstance(gw, str):  # PyTorch's backward raises (not implemented, its own bugs): no reference
                continue
            if isinstance(gg, str):
                bad.append(f"{name} grad: minitensor's {gg}")
                continue
            if gg == [] and all(not g.any() for g in gw):
                continue  # no graph where PyTorch's gradient is zero (docs/differences.md: `//`)
            if len(gw) != len(gg):
                bad.append(f"{name} grad: {len(gg)} gradients vs {len(gw)} (an output without a graph?)")
                continue
            for n, (a, b) in enumerate(zip(gg, gw)):
                why = f"shape {a.shape} vs {b.shape}" if a.shape != b.shape else \
                    values_differ(a, b, scale, False, float(spec.options.get("gtol", 1e-7)))
                if why:
                    bad.append(f"{name} grad of input {n}: {why}")
    return bad


__all__ = ["run_example", "variants", "resolve", "TENSORS"]
