"""The public ops the table must cover: the callables of minitensor, nn.functional, linalg and special (their
``__all__``) and the public methods of Tensor, named as in the table (``abs``, ``F.relu``, ``T.view_as``)."""
from __future__ import annotations

import inspect

import minitensor as mt

SPACES = {"": mt, "F.": mt.nn.functional, "linalg.": mt.linalg, "special.": mt.special}


def public_names() -> set[str]:
    names = set()
    for prefix, module in SPACES.items():
        for n in getattr(module, "__all__", None) or dir(module):
            f = getattr(module, n)
            if not n.startswith("_") and callable(f) and not inspect.isclass(f):
                names.add(prefix + n)
    for n in dir(mt.Tensor):
        if not n.startswith("_") and callable(getattr(mt.Tensor, n, None)):
            names.add("T." + n)
    if hasattr(mt, "fft"):
        names |= {"fft." + n for n in getattr(mt.fft, "__all__", dir(mt.fft)) if not n.startswith("_")}
    return names
