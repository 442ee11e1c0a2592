"""The table of fuzzing specs (no torch needed): it parses, and covers every public name (a new public name
must get a spec line or an exclusion with its reason)."""
from __future__ import annotations

import minitensor as mt
from tests.fuzz.public import public_names
from tests.fuzz.spec import parse


def covered() -> set[str]:
    """Names a spec line runs: its names, and for a plain name the method and in-place method of that name
    (and ``name_`` at the top level); for a ``T.`` name its in-place method."""
    specs, _ = parse()
    out = set()
    for spec in specs:
        for name in spec.names:
            out |= {name, name + "_"} if name.startswith("F.") else {name}
            if "." in name and not name.startswith("T."):
                continue
            base = name.removeprefix("T.")
            out |= {f"T.{base}", f"T.{base}_", f"{base}_"}
    return out


def test_the_table_parses_with_known_dtypes_and_unique_names():
    specs, excluded = parse()
    assert specs and excluded and all(s.dtypes and s.names for s in specs)
    assert all(reason for reason in excluded.values())


def test_every_public_name_has_a_spec_or_an_exclusion_with_a_reason():
    specs, excluded = parse()
    missing = sorted(public_names() - covered() - set(excluded))
    assert not missing, f"public names neither specified nor excluded in tests/fuzz/specs.txt: {missing}"


def test_no_stale_names_in_the_table():
    specs, excluded = parse()
    public = public_names()
    stale = sorted(n for s in specs for n in s.names if n not in public)
    stale += sorted(n for n in excluded if n not in public)
    assert not stale, f"names in tests/fuzz/specs.txt that minitensor does not have: {stale}"


def test_a_spec_both_specified_and_excluded_is_an_error():
    specs, excluded = parse()
    both = sorted({n for s in specs for n in s.names} & set(excluded))
    assert not both, both
    assert hasattr(mt, "abs")
