"""The ``weights_only=True`` unpickler: a checkpoint may build its own objects and change nothing else.

It resolves only PyTorch's names (``TORCH_NAMES``), a few builtins (``set``, ``bytes`` through
``_codecs.encode``, ``OrderedDict``...) and the user's safe globals; every other global raises
``pickle.UnpicklingError`` worded as PyTorch's. Restricting names is not enough: the opcodes that change an
object already on the stack would reach those globals themselves. ``BUILD`` on ``torch.float32`` would
rewrite minitensor's float32 for the whole process, on ``torch.Size`` replace ``Size.__repr__``. So, as
PyTorch's ``torch/_weights_only_unpickler.py``:

* ``BUILD`` sets the state of an ``OrderedDict`` (a state dict's ``_metadata``) or of an instance of an
  allowed class, never of a class, function, dtype or storage type;
* ``REDUCE``, ``NEWOBJ`` and ``OBJ``/``INST`` call only allowed globals;
* ``SETITEM(S)`` fill only dicts (``dict``, ``OrderedDict``, ``Counter``), ``APPEND(S)`` only lists,
  ``ADDITEMS`` only sets.

pickle's pure-Python unpickler runs it, with those opcodes replaced (``data.pkl`` is small: the tensors'
elements are in the archive's storages, not in the pickle).
"""
from __future__ import annotations

import collections
import pickle
from collections.abc import Callable
from typing import Any, ClassVar

from ..tensor import Tensor
from .unpickler import SAFE_NAMES, Resolver, Storage, StorageType
from .safe_globals import user_allowed

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")  # never allowed, even when the user allow-lists them
_DICTS = (dict, collections.OrderedDict, collections.Counter)

UNSAFE_MESSAGE = ("`weights_only` defaults to True, as in PyTorch 2.6 and later. Re-running `minitensor.load` "
                  "with `weights_only` set to `False` will likely succeed, but it can result in arbitrary code "
                  "execution. Do it only if you got the file from a trusted source.")


def refused(why: str) -> pickle.UnpicklingError:
    """The error of a pickle that ``weights_only`` does not allow, worded as PyTorch's."""
    return pickle.UnpicklingError(f"Weights only load failed. {UNSAFE_MESSAGE}\n WeightsUnpickler error: {why}")


def _whole_lines(readline: Callable[[], bytes]) -> Callable[[], bytes]:
    """``readline`` that refuses a last line without its newline, as pickle's C unpickler does (the Python
    one would cut a truncated ``GLOBAL``'s name short and report the wrong name)."""
    def whole_line() -> bytes:
        line = readline()
        if not line.endswith(b"\n"):
            raise pickle.UnpicklingError("pickle data was truncated")
        return line
    return whole_line


class WeightsUnpickler(Resolver, pickle._Unpickler):
    """``weights_only=True``: nothing outside ``SAFE_NAMES`` and the user's safe globals is named, called or
    changed."""

    dispatch: ClassVar[dict[int, Callable[[Any], None]]] = dict(pickle._Unpickler.dispatch)
    stack: list[Any]  # pickle's pure-Python unpickler has these; typeshed does not declare them
    pop_mark: Callable[[], list[Any]]

    def __init__(self, file: Any, storage: Callable[[StorageType, str, str, int], Storage]) -> None:
        super().__init__(file, storage)
        self._file_readline = _whole_lines(file.readline)
        self._user = user_allowed()
        self._allowed = {id(v) for v in (*SAFE_NAMES.values(), *self._user.values())}

    def other_global(self, module: str, name: str, full: str) -> Any:
        if full in SAFE_NAMES:
            return SAFE_NAMES[full]
        if module in _BLOCKED_MODULES:
            raise refused(f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        if full in self._user:
            return self._user[full]
        shown = full.removeprefix("builtins.")
        raise pickle.UnpicklingError(
            "Weights only load failed. This file can still be loaded, to do so you have two options, do those "
            f"steps only if you trust the source of the checkpoint.\n\t(1) {UNSAFE_MESSAGE}\n\t(2) "
            "Alternatively, to load with `weights_only=True` please check the recommended steps in the "
            f"following error message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL {shown} was not "
            f"an allowed global by default. Please use `minitensor.serialization.add_safe_globals([{shown}])` "
            f"or the `minitensor.serialization.safe_globals([{shown}])` context manager to allowlist this "
            "global if you trust this class/function.")

    def _callable(self, func: Any, opcode: str) -> None:
        if id(func) not in self._allowed:
            raise refused(f"Trying to call {opcode} for unrecognized function {func!r:.80}")

    def _load_reduce(self) -> None:
        self._callable(self.stack[-2], "reduce")
        pickle._Unpickler.load_reduce(self)  # type: ignore[attr-defined]

    def _load_newobj(self) -> None:
        cls = self.stack[-2]
        if not isinstance(cls, type) or id(cls) not in self._allowed:
            raise refused(f"Can only create new object for classes allowlisted via `add_safe_globals` but got "
                          f"{cls!r:.80}")
        pickle._Unpickler.load_newobj(self)  # type: ignore[attr-defined]

    def _instantiate(self, klass: Any, args: list[Any]) -> None:  # OBJ and INST (protocols 0 and 1)
        self._callable(klass, "OBJ/INST")
        pickle._Unpickler._instantiate(self, klass, args)  # type: ignore[attr-defined]

    def _load_build(self) -> None:
        state, inst = self.stack.pop(), self.stack[-1]
        kind = type(inst)
        if kind is collections.OrderedDict:
            inst.__dict__.update(state)
        elif id(kind) in self._allowed and not issubclass(kind, Tensor):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                inst.__dict__.update(state)
            for k, v in (slots or {}).items():
                setattr(inst, k, v)
        else:  # (PyTorch also sets a Tensor's state by BUILD, in files older than the zip format)
            raise refused(f"Can only build OrderedDict or types allowlisted via `add_safe_globals`, but got "
                          f"{kind}")

    def _target(self, kinds: tuple[type, ...], opcode: str) -> None:
        if type(self.stack[-1]) not in kinds:
            names = ", ".join(k.__qualname__ for k in kinds)
            raise refused(f"Can only {opcode} for {names}, but got {type(self.stack[-1])}")

    def _load_setitem(self) -> None:
        value, key = self.stack.pop(), self.stack.pop()
        self._target(_DICTS, "SETITEM")
        self.stack[-1][key] = value

    def _load_setitems(self) -> None:
        items = self.pop_mark()
        self._target(_DICTS, "SETITEMS")
        for i in range(0, len(items), 2):
            self.stack[-1][items[i]] = items[i + 1]

    def _load_append(self) -> None:
        item = self.stack.pop()
        self._target((list,), "APPEND")
        self.stack[-1].append(item)

    def _load_appends(self) -> None:
        items = self.pop_mark()
        self._target((list,), "APPENDS")
        self.stack[-1].extend(items)

    def _load_additems(self) -> None:
        items = self.pop_mark()
        self._target((set,), "ADDITEMS")
        self.stack[-1].update(items)

    def _refuse_newobj_ex(self) -> None:
        raise refused("NEWOBJ_EX (keyword arguments to __new__) is not supported")

    dispatch[pickle.REDUCE[0]] = _load_reduce
    dispatch[pickle.NEWOBJ[0]] = _load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = _refuse_newobj_ex
    dispatch[pickle.BUILD[0]] = _load_build
    dispatch[pickle.SETITEM[0]] = _load_setitem
    dispatch[pickle.SETITEMS[0]] = _load_setitems
    dispatch[pickle.APPEND[0]] = _load_append
    dispatch[pickle.APPENDS[0]] = _load_appends
    dispatch[pickle.ADDITEMS[0]] = _load_additems
