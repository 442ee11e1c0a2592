"""The table of call specs (specs.txt, format in __init__) and the hypothesis draws of one call's arguments."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

TABLE = Path(__file__).with_name("specs.txt")
DTYPES = {"f": ["float32", "float64"], "i": ["int64"], "b": ["bool"]}
TENSORS = "xyzw"
SPECIALS = [0.0, -0.0, math.nan, math.inf, -math.inf, 1e-30, -1e-30, 1e30, -1e30, 5e-324, 1e300]


@dataclass
class Spec:
    """One line of the table."""
    names: list[str]
    args: list[str]
    dtypes: list[str]
    kwargs: dict[str, str]
    options: dict[str, str]
    family: str
    line: int
    xfail: dict[str, str] = field(default_factory=dict)  # dtype ('' = all) -> reason
    known: dict[str, str] = field(default_factory=dict)  # the same, not strict: seen only in long runs

    @property
    def id(self) -> str:
        return f"{self.names[0]}@{self.line}"


def split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets and quotes."""
    parts, depth, cur, quote = [], 0, "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def parse(path: Path = TABLE) -> tuple[list[Spec], dict[str, str]]:
    """The spec lines and the excluded names (name -> reason)."""
    specs, excluded, family = [], {}, ""
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        text = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
        if not text:
            continue
        if text.startswith("["):
            family = text.strip("[]")
            continue
        if family == "excluded":
            names, reason = (p.strip() for p in text.split("|", 1))
            excluded.update({name: reason for name in names.split()})
            continue
        marks: dict[str, dict[str, str]] = {"xfail": {}, "known": {}}
        found = list(re.finditer(r"\b(xfail|known)(\(([\w,]*)\))?:\s*", text))
        for m, after in zip(found, found[1:] + [None]):  # each reason runs to the next mark
            reason = text[m.end():after.start() if after else len(text)].strip()
            for d in m.group(3).split(",") if m.group(3) else [""]:
                marks[m.group(1)][d] = reason
        text = text[:found[0].start()] if found else text
        fields = [f.strip() for f in text.split("|")] + [""] * 5
        names, args, dtypes, kwargs, options = fields[:5]
        opts = dict((o.split("=", 1) + [""])[:2] for o in options.split())  # type: ignore[misc]
        specs.append(Spec([s.strip() for s in names.split(",")], split_top(args, ","),
                          [d for c in dtypes for d in DTYPES[c]],
                          dict(kv.split("=", 1) for kv in split_top(kwargs, " ")), opts, family, n, marks["xfail"],
                          marks["known"]))
    return specs, excluded


# ------------------------------------------------------------------ draws
def elements(dtype: str, opts: dict[str, str]) -> st.SearchStrategy:
    """Values of one element: small numbers, special values (nan, +-inf, -0.0, huge, tiny) and any float."""
    if "vals" in opts:
        lo, hi = (float(v) for v in opts["vals"].split(":"))
    else:
        lo, hi = (-6.0, 6.0)
    if dtype == "bool":
        return st.booleans()
    if dtype.startswith("int"):
        return st.integers(int(lo), int(hi))
    width = 32 if dtype == "float32" else 64
    if width == 32:  # bounds hypothesis can represent in float32 (0.1 is not)
        lo, hi = float(np.float32(lo)), float(np.float32(hi))
    small = st.floats(lo, hi, width=width)
    if "finite" in opts or "vals" in opts:
        return small
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        specials = st.sampled_from(list(dict.fromkeys(np.dtype(dtype).type(v).item() for v in SPECIALS)))
    return st.one_of(small, small, specials, st.floats(width=width))


def draw_shapes(data: Any, n: int, opts: dict[str, str]) -> list[tuple[int, ...]]:
    """``n`` shapes: from the templates of ``shapes=``, else mutually broadcastable (0-d and empty among them)."""
    lo = 1 if "nonempty" in opts else 0
    nd_lo, nd_hi = (int(v) for v in opts.get("ndim", "0:4").split(":"))
    if "shapes" in opts:
        sizes: dict[str, Any] = {}
        batch = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=lo, max_side=3), label="batch")
        out = []
        for template in opts["shapes"].split(","):
            shape: list[int] = []
            for c in template:
                if c == "*":
                    shape += batch
                elif c.isdigit():
                    shape.append(int(c))
                else:
                    if c not in sizes:
                        sizes[c] = data.draw(st.integers(lo, 4), label=c)
                    shape.append(sizes[c])
            out.append(tuple(shape))
        return out
    if n == 0:
        return []
    if n == 1:
        return [data.draw(hnp.array_shapes(min_dims=nd_lo, max_dims=nd_hi, min_side=lo, max_side=4), label="shape")]
    if "same" in opts:
        return [data.draw(hnp.array_shapes(min_dims=nd_lo, max_dims=nd_hi, min_side=lo, max_side=4))] * n
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=nd_lo, max_dims=nd_hi,
                                                         min_side=lo, max_side=4), label="shapes")
    return list(shapes.input_shapes)


def literal(text: str) -> Any:
    """A Python literal of the table (``inf`` and ``nan`` included)."""
    return eval(text, {"__builtins__": {}}, {"inf": math.inf, "nan": math.nan})  # the table is test data


def own(opts: dict[str, str], t: str) -> dict[str, str]:
    """The options of tensor ``t``: ``yvals=0:4`` overrides ``vals`` for ``y``."""
    return {**opts, "vals": opts[t + "vals"]} if t + "vals" in opts else opts


def draw_call(data: Any, spec: Spec, dtype: str) -> tuple[list[Any], dict[str, Any]]:
    """The arguments of one call: NumPy arrays stand for tensors (made in each library from the same data)."""
    opts = spec.options
    tokens = re.findall(r"\w+", " ".join(spec.args + list(spec.kwargs.values())))
    names = [t for t in TENSORS if t in tokens]
    shapes = dict(zip(names, draw_shapes(data, len(names), opts)))
    dtypes = dict(zip(TENSORS, (opts.get(f"{t}dtype", dtype) for t in TENSORS)))
    arrays = {t: data.draw(hnp.arrays(dtypes[t], shapes[t], elements=elements(dtypes[t], own(opts, t))), label=t)
              for t in names}
    if "sorted" in opts:  # a sorted sequence (searchsorted, bucketize): nan last, as torch.sort puts it
        arrays[opts["sorted"]] = np.sort(arrays[opts["sorted"]], axis=-1)
    state: dict[str, Any] = {"d": 0}

    def token(tok: str) -> Any:
        if tok in arrays:
            return arrays[tok]
        x = arrays.get("x")
        nd = x.ndim if x is not None else 0
        if tok == "d":
            state["d"] = data.draw(st.integers(-max(nd, 1), max(nd, 1) - 1), label="dim")
            return state["d"]
        size = x.shape[state["d"]] if x is not None and nd else 1
        if tok == "i":
            return data.draw(hnp.arrays(np.int64, x.shape, elements=st.integers(0, max(size - 1, 0))), label="i")
        if tok == "j":
            # as long as dim d, so that a source of x's shape fits index_add / index_copy
            return data.draw(hnp.arrays(np.int64, (size,), elements=st.integers(0, max(size - 1, 0))), label="j")
        if tok == "m":
            return data.draw(hnp.arrays(np.bool_, x.shape), label="mask")
        if tok == "s":
            return data.draw(elements(dtype, opts), label="scalar")
        if tok.startswith("{"):
            return data.draw(st.sampled_from([literal(v) for v in tok[1:-1].split("/")]), label=tok)
        if tok[:1] in "([" and re.search(r"\b[xyzwij]\b", tok):  # a tuple or list of drawn things
            items = [token(t) for t in split_top(tok[1:-1], ",")]
            return tuple(items) if tok[0] == "(" else items
        return literal(tok)

    args = [token(t) for t in spec.args]
    kwargs = {k: token(v) for k, v in spec.kwargs.items()}
    return args, kwargs
