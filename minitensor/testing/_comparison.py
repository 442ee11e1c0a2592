"""``assert_close`` (and the deprecated ``assert_allclose``) with PyTorch's semantics and messages.

As ``torch.testing._comparison``: inputs are split into pairs (recursing through sequences and mappings), each
pair is handled by the first of None / bool / number / tensor-like that accepts it, and the first failing pair's
message is raised. Values are compared on the host in the tensors' own dtype (float16 and bfloat16 through
float32, as PyTorch's CPU kernels round each step), so the edge of a tolerance falls where PyTorch's does.
"""
from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings
from typing import Any, Callable, NoReturn, Sequence

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor

# {dtype: (rtol, atol)}; every other dtype (integers, bool) is compared for equality.
_DTYPE_PRECISIONS = {_dt.float16: (0.001, 1e-5), _dt.bfloat16: (0.016, 1e-5), _dt.float32: (1.3e-6, 1e-5),
                     _dt.float64: (1e-7, 1e-7)}
# Python numbers as PyTorch maps them: int -> int64, float -> float64, complex -> complex128.
_NUMBER_PRECISIONS = {int: (0.0, 0.0), float: (1e-7, 1e-7), complex: (1e-7, 1e-7)}


class ErrorMeta(Exception):
    """An internal failure carrying the exception type, message and the item's id to report it at."""

    def __init__(self, type: type[Exception], msg: str, *, id: tuple[Any, ...] = ()) -> None:
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class UnsupportedInputs(Exception):
    """Raised by a pair's constructor when it does not handle the inputs (the next kind is tried)."""


def _tolerances(defaults: Sequence[tuple[float, float]], rtol: float | None, atol: float | None,
                id: tuple[Any, ...]) -> tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        # Both or neither: atol=0 alone would still pass values within the default rtol.
        raise ErrorMeta(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None and atol is not None:
        return rtol, atol
    return max(r for r, _ in defaults), max(a for _, a in defaults)


def _mismatch_msg(*, identifier: str | Callable[[str], str] | None, default: str, extra: str | None,
                  abs_diff: Any, abs_idx: Any, atol: float, rel_diff: Any, rel_idx: Any, rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind: str, diff: Any, idx: Any, tol: float) -> str:
        msg = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"

    name = default if identifier is None else identifier(default) if callable(identifier) else identifier
    msg = f"{name} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol) + diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual: Any, expected: Any, *, rtol: float, atol: float,
                identifier: str | Callable[[str], str] | None = None) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier=identifier, default="Scalars", extra=f"Expected {expected} but got {actual}.",
                         abs_diff=abs_diff, abs_idx=None, atol=atol, rel_diff=rel_diff, rel_idx=None, rtol=rtol)


def _opmath(a: np.ndarray) -> tuple[Any, Any]:
    """(the floating dtype results are stored in, the dtype they are computed in): integers and bool give
    float32 (PyTorch's default dtype), 16-bit floats compute in float32."""
    store = a.dtype if a.dtype.kind in "fV" else np.dtype(np.float32)
    return store, (np.dtype(np.float32) if store.itemsize == 2 else store)


def _isclose(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """``torch.isclose`` step by step: ``atol + |rtol * e|`` and ``|a - e|`` each rounded to the dtype."""
    close = a == e
    floating = a.dtype.kind in "fV"
    if equal_nan and floating:
        close |= np.isnan(a) & np.isnan(e)
    if rtol == 0 and atol == 0:
        return close
    store, op = _opmath(a)
    if not floating:  # integers and bool in float32 first: a uint8 difference must not wrap around
        a, e = a.astype(store), e.astype(store)
    scaled = np.abs((e.astype(op) * op.type(rtol)).astype(store)).astype(op)
    allowed = (op.type(atol) + scaled).astype(store)
    error = np.abs((a.astype(op) - e.astype(op)).astype(store))
    return close | (np.isfinite(error) & (error <= allowed))


def _tensor_msg(a: np.ndarray, e: np.ndarray, matches: np.ndarray, *, rtol: float, atol: float,
                identifier: str | Callable[[str], str] | None = None) -> str:
    total = matches.size
    bad = total - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    a, e, ok = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    with np.errstate(all="ignore"):
        if a.dtype.kind in "fV":
            store, op = _opmath(a)
            abs_diff = np.abs((a.astype(op) - e.astype(op)).astype(store))
            abs_diff[ok] = 0
            rel = (abs_diff.astype(op) / np.abs(e).astype(op)).astype(store)
        else:  # integers in int64 (no overflow), their quotient in float32 as PyTorch's true division
            abs_diff = np.abs(a.astype(np.int64) - e.astype(np.int64))
            abs_diff[ok] = 0
            rel = abs_diff.astype(np.float32) / np.abs(e.astype(np.int64)).astype(np.float32)
    rel[ok] = 0
    i, j = int(np.argmax(abs_diff)), int(np.argmax(rel))  # the first largest, NaN first (torch.max)
    return _mismatch_msg(identifier=identifier, default="Tensor-likes", extra=extra,
                         abs_diff=abs_diff[i].item(), abs_idx=_unravel(i, matches.shape), atol=atol,
                         rel_diff=rel[j].item(), rel_idx=_unravel(j, matches.shape), rtol=rtol)


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


class Pair:
    """Two inputs to compare; the constructor raises UnsupportedInputs for inputs of another kind."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), **options: Any) -> None:
        self.actual, self.expected, self.id = actual, expected, id

    def _fail(self, type: type[Exception], msg: str) -> NoReturn:
        raise ErrorMeta(type, msg, id=self.id)

    def compare(self) -> None:
        raise NotImplementedError


class NonePair(Pair):
    def __init__(self, actual: Any, expected: Any, **options: Any) -> None:
        if not (actual is None or expected is None):
            raise UnsupportedInputs
        super().__init__(actual, expected, **options)

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(Pair):
    def __init__(self, actual: Any, expected: Any, **options: Any) -> None:
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise UnsupportedInputs
        super().__init__(bool(actual), bool(expected), **options)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self._fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(Pair):
    """Python and NumPy numbers; int, float, complex take int64's, float64's and complex128's tolerances."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_dtype: bool = False,
                 **options: Any) -> None:
        if not all(isinstance(x, (int, float, complex, np.number)) for x in (actual, expected)):
            raise UnsupportedInputs
        actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        super().__init__(actual, expected, id=id)
        kinds = [next(v for k, v in _NUMBER_PRECISIONS.items() if isinstance(x, k)) for x in (actual, expected)]
        self.rtol, self.atol = _tolerances(kinds, rtol, atol, id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self) -> None:
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            self._fail(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.")
        if a == e or (self.equal_nan and cmath.isnan(a) and cmath.isnan(e)):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(e):
            return
        self._fail(AssertionError, _scalar_msg(a, e, rtol=self.rtol, atol=self.atol))


class TensorLikePair(Pair):
    """Tensors, or two objects ``as_tensor`` takes (NumPy arrays) of related types."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, **options: Any) -> None:
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not allow_subclasses and type(actual) is not type(expected)):
            raise UnsupportedInputs
        actual, expected = self._to_tensor(actual), self._to_tensor(expected)
        super().__init__(actual, expected, id=id)
        self.rtol, self.atol = _tolerances([_DTYPE_PRECISIONS.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)],
                                           rtol, atol, id)
        self.equal_nan, self.check_device, self.check_dtype = equal_nan, check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _to_tensor(like: Any) -> Tensor:
        if isinstance(like, Tensor):
            return like
        from ..creation import as_tensor
        try:
            return as_tensor(like)
        except Exception:
            raise UnsupportedInputs from None

    def compare(self) -> None:
        a, e = self.actual, self.expected
        self._compare_attributes(a, e)
        a, e = self._equalize(a, e)
        if a.is_sparse:
            self._compare_sparse(a, e)
        else:
            self._compare_values(a.detach(), e.detach(), rtol=self.rtol, atol=self.atol)

    def _compare_attributes(self, a: Tensor, e: Tensor) -> None:
        def mismatch(name: str, x: Any, y: Any) -> NoReturn:
            self._fail(AssertionError, f"The values for attribute '{name}' do not match: {x} != {y}.")

        if a.shape != e.shape:
            mismatch("shape", a.shape, e.shape)
        if a.layout != e.layout:
            if self.check_layout:
                mismatch("layout", a.layout, e.layout)
        elif not a.is_sparse and self.check_stride and a.stride() != e.stride():
            mismatch("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            mismatch("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            mismatch("dtype", a.dtype, e.dtype)

    @staticmethod
    def _equalize(a: Tensor, e: Tensor) -> tuple[Tensor, Tensor]:
        """Unchecked differences removed: one device (the CPU), the promoted dtype, strided layouts."""
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            common = _dt.promote_types(a.dtype, e.dtype)
            a, e = a.to(common), e.to(common)
        if a.layout != e.layout:
            a, e = (t.to_dense() if t.is_sparse else t for t in (a, e))
        return a, e

    def _compare_sparse(self, a: Tensor, e: Tensor) -> None:
        """COO: the number of sparse dims and of stored values, the indices equal, the values close."""
        if a.sparse_dim() != e.sparse_dim():
            self._fail(AssertionError, "The number of sparse dimensions in sparse COO tensors does not match: "
                                       f"{a.sparse_dim()} != {e.sparse_dim()}")
        if a._nnz() != e._nnz():
            self._fail(AssertionError, "The number of specified values in sparse COO tensors does not match: "
                                       f"{a._nnz()} != {e._nnz()}")
        self._compare_values(a._indices(), e._indices(), rtol=0, atol=0, identifier="Sparse COO indices")
        self._compare_values(a._values().detach(), e._values().detach(), rtol=self.rtol, atol=self.atol,
                             identifier="Sparse COO values")

    def _compare_values(self, a: Tensor, e: Tensor, *, rtol: float, atol: float,
                        identifier: str | None = None) -> None:
        x, y = np.asarray(a.cpu().array), np.asarray(e.cpu().array)
        with np.errstate(all="ignore"):
            matches = _isclose(x, y, rtol, atol, self.equal_nan if identifier != "Sparse COO indices" else False)
        if matches.all():
            return
        if x.ndim == 0:
            msg = _scalar_msg(x.item(), y.item(), rtol=rtol, atol=atol, identifier=identifier)
        else:
            msg = _tensor_msg(x, y, matches, rtol=rtol, atol=atol, identifier=identifier)
        self._fail(AssertionError, msg)


_PAIR_TYPES: tuple[type[Pair], ...] = (NonePair, BooleanPair, NumberPair, TensorLikePair)


def _originate_pairs(actual: Any, expected: Any, *, id: tuple[Any, ...] = (), **options: Any) -> list[Pair]:
    # str is excluded: "a"[0] is "a" again, the recursion would never end.
    if all(isinstance(x, collections.abc.Sequence) and not isinstance(x, str) for x in (actual, expected)):
        if len(actual) != len(expected):
            raise ErrorMeta(AssertionError,
                            f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", id=id)
        return [p for i in range(len(actual)) for p in _originate_pairs(actual[i], expected[i], id=(*id, i),
                                                                        **options)]
    if all(isinstance(x, collections.abc.Mapping) for x in (actual, expected)):
        a_keys, e_keys = set(actual.keys()), set(expected.keys())
        if a_keys != e_keys:
            raise ErrorMeta(AssertionError, "The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {sorted(e_keys - a_keys)}\n"
                                            f"Additional keys in the actual mapping: {sorted(a_keys - e_keys)}",
                            id=id)
        keys: Any = a_keys
        with contextlib.suppress(Exception):  # a deterministic order where the keys sort
            keys = sorted(keys)
        return [p for k in keys for p in _originate_pairs(actual[k], expected[k], id=(*id, k), **options)]
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputs:
            continue
    raise ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} "
                               f"and {type(expected)}.", id=id)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise AssertionError unless ``|actual - expected| <= atol + rtol * |expected|`` everywhere (inf only
    equal to itself, NaN only with ``equal_nan``) and the checked attributes match; nested sequences and
    mappings are compared item by item. Default tolerances follow the dtype (see PyTorch's table)."""
    __tracebackhide__ = True  # noqa: F841  (pytest hides this frame)
    try:
        pairs = _originate_pairs(actual, expected, allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                                 equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                                 check_layout=check_layout, check_stride=check_stride)
    except ErrorMeta as meta:
        raise meta.to_error() from None  # as PyTorch: a structural failure ignores ``msg``
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as meta:
            raise meta.to_error(msg) from None


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (PyTorch 1.12): ``assert_close`` with NaN equal, dtypes promoted, looser float defaults."""
    warnings.warn("`minitensor.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `minitensor.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    from ..creation import tensor
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        loose = {_dt.float16: (1e-3, 1e-3), _dt.float32: (1e-4, 1e-5), _dt.float64: (1e-5, 1e-8)}
        rtol, atol = _tolerances([loose.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)], None, None, ())
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
