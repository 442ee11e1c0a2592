"""``torch.return_types``: the named tuples that multi-result ops return, one type per op as PyTorch's
structseqs (``x.topk(2)`` is a ``return_types.topk``, ``x.max(1)`` a ``return_types.max``). Each is a
tuple (unpacking, indexing, equality with a plain tuple), with fields by name, PyTorch's multi-line repr,
construction from one sequence, and pickling by reference to this module."""
from __future__ import annotations

from inspect import get_annotations
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar, Iterable

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = ["aminmax", "cummax", "cummin", "frexp", "geqrf", "histogram", "kthvalue", "linalg_cholesky_ex",
           "linalg_eigh", "linalg_inv_ex", "linalg_lstsq", "linalg_lu", "linalg_lu_factor", "linalg_lu_factor_ex",
           "linalg_qr", "linalg_slogdet", "linalg_solve_ex", "linalg_svd", "lu_unpack", "max", "median", "min",
           "mode", "nanmedian", "qr", "slogdet", "sort", "svd", "topk", "all_return_types"]
__all__ += ["histogramdd", "triangular_solve"]


class _StructSeq(tuple):
    """The base of every return type: a tuple whose fields (the subclass's annotations, in order) are also
    read-only attributes, as PyTorch's C structseq types."""
    __slots__ = ()  # (in every subclass too) no instance dict: fields only, as a structseq
    n_fields: ClassVar[int] = 0
    n_sequence_fields: ClassVar[int] = 0
    n_unnamed_fields: ClassVar[int] = 0
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = tuple(get_annotations(cls))  # its own fields, in order
        setattr(cls, "__match_args__", names)  # (mypy refuses a plain assignment to this name)
        cls.n_fields = cls.n_sequence_fields = len(names)
        for i, name in enumerate(names):
            setattr(cls, name, property(itemgetter(i), doc=f"Alias for field number {i}"))

    def __new__(cls, sequence: Iterable[Any], dict: Any = None) -> Any:
        # ``dict`` is structseq's second argument (extra, unnamed fields); no type here has any
        try:
            items = tuple(sequence)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        if len(items) != cls.n_fields:
            raise TypeError(f"{cls._type_name()}() takes a {cls.n_fields}-sequence ({len(items)}-sequence given)")
        return super().__new__(cls, items)

    @classmethod
    def _type_name(cls) -> str:
        return f"{cls.__module__}.{cls.__qualname__}"

    def __repr__(self) -> str:
        # PyTorch's structseq repr: one field a line, so tensors' own multi-line reprs stay aligned
        fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self.__match_args__, self))
        return f"{self._type_name()}(\n{fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (tuple(self), {})

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.__match_args__:
            raise AttributeError("readonly attribute")
        raise AttributeError(f"'{self._type_name()}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)  # the same refusals


class aminmax(_StructSeq):
    __slots__ = ()
    min: Tensor
    max: Tensor


class cummax(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class cummin(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class frexp(_StructSeq):
    __slots__ = ()
    mantissa: Tensor
    exponent: Tensor


class histogram(_StructSeq):
    __slots__ = ()
    hist: Tensor
    bin_edges: Tensor


class histogramdd(_StructSeq):
    __slots__ = ()
    hist: Tensor
    bin_edges: tuple[Tensor, ...]


class kthvalue(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class linalg_eigh(_StructSeq):
    __slots__ = ()
    eigenvalues: Tensor
    eigenvectors: Tensor


class linalg_lstsq(_StructSeq):
    __slots__ = ()
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


class linalg_qr(_StructSeq):
    __slots__ = ()
    Q: Tensor
    R: Tensor


class linalg_slogdet(_StructSeq):
    __slots__ = ()
    sign: Tensor
    logabsdet: Tensor


class linalg_svd(_StructSeq):
    __slots__ = ()
    U: Tensor
    S: Tensor
    Vh: Tensor


class max(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class median(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class min(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class mode(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class nanmedian(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class qr(_StructSeq):
    __slots__ = ()
    Q: Tensor
    R: Tensor


class slogdet(_StructSeq):
    __slots__ = ()
    sign: Tensor
    logabsdet: Tensor


class sort(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class svd(_StructSeq):
    """``torch.svd``'s (U, S, V): V itself, where ``linalg_svd`` has its transpose Vh."""
    __slots__ = ()
    U: Tensor
    S: Tensor
    V: Tensor


class triangular_solve(_StructSeq):
    __slots__ = ()
    solution: Tensor
    cloned_coefficient: Tensor


class topk(_StructSeq):
    __slots__ = ()
    values: Tensor
    indices: Tensor


class geqrf(_StructSeq):
    __slots__ = ()
    a: Tensor
    tau: Tensor


class linalg_cholesky_ex(_StructSeq):
    __slots__ = ()
    L: Tensor
    info: Tensor


class linalg_inv_ex(_StructSeq):
    __slots__ = ()
    inverse: Tensor
    info: Tensor


class linalg_lu(_StructSeq):
    __slots__ = ()
    P: Tensor
    L: Tensor
    U: Tensor


class linalg_lu_factor(_StructSeq):
    __slots__ = ()
    LU: Tensor
    pivots: Tensor


class linalg_lu_factor_ex(_StructSeq):
    __slots__ = ()
    LU: Tensor
    pivots: Tensor
    info: Tensor


class linalg_solve_ex(_StructSeq):
    __slots__ = ()
    result: Tensor
    info: Tensor


class lu_unpack(_StructSeq):
    __slots__ = ()
    P: Tensor
    L: Tensor
    U: Tensor


all_return_types: list[type] = [aminmax, cummax, cummin, frexp, geqrf, histogram, kthvalue, linalg_cholesky_ex,
                                linalg_eigh, linalg_inv_ex, linalg_lstsq, linalg_lu, linalg_lu_factor,
                                linalg_lu_factor_ex, linalg_qr, linalg_slogdet, linalg_solve_ex, linalg_svd,
                                lu_unpack, max, median, min, mode, nanmedian, qr, slogdet, sort, svd, topk]
