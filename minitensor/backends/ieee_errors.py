"""NumPy's floating-point error state for minitensor's own array calls.

PyTorch computes IEEE special cases silently: log(0) = -inf, 0 / 0 = nan, exp(100) = inf. NumPy reports
them as RuntimeWarnings (or raises FloatingPointError under ``np.seterr(all="raise")``). Every op's forward
(``ArrayFunction.apply``) and every backward pass (the engine) run under NumPy's "ignore" state, set with
``silence(IGNORE)`` and put back with ``restore(token)``: the user's own NumPy calls keep their state, and no
warning filter of the user's (``warnings.simplefilter("error")``, pytest's ``-W error``) turns our special
values into errors. (The module-scoped warnings filter in backends/__init__.py covers the calls outside
these two, and is lost when minitensor is first imported inside ``warnings.catch_warnings``, as pytest's
collection does: hence this.)

NumPy 2 keeps the state in a context variable: setting a prepared state costs one ``ContextVar.set``
(~0.1 us against ~0.5 us for entering ``np.errstate``); other NumPy versions use ``np.errstate``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj  # NumPy >= 2.0

    IGNORE: Any = _make_extobj(all="ignore")
    # Bound C methods, no Python frame: they run around every op's forward. ``silence(IGNORE)`` enters
    # NumPy's "ignore" state in this context and returns the token that ``restore(token)`` takes.
    silence: Callable[[Any], Any] = _extobj_contextvar.set
    restore: Callable[[Any], None] = _extobj_contextvar.reset
except ImportError:  # NumPy 1.x: a thread-global state, set through the public context manager
    IGNORE = {"all": "ignore"}

    def silence(state: Any) -> Any:
        entered = np.errstate(**state)
        entered.__enter__()
        return entered

    def restore(token: Any) -> None:
        token.__exit__(None, None, None)
