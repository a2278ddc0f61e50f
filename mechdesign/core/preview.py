"""Short text for reprs: numbers to six significant digits, arrays, labels and mappings shown by
their first few entries and their size, never whole and never as a memory address."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

#: entries shown before "..."
SHOWN = 6


def number(value: Any) -> str:
    """A number to six significant digits ("1", "0.5", "1e-06"); anything else as its repr."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        return format(float(value), ".6g")
    return repr(value)


def array(values: Any, shown: int = SHOWN) -> str:
    """A vector or matrix: whole when small ("[0.5, 0.5]", "[[0, 1], [1, 0]]"), else its first
    entries and its shape ("[0.1, 0.2, 0.3, ...] (10 values)", "[[0, 1, 2, ...], ...] (20x20)")."""
    a = np.asarray(values)
    if a.ndim == 0:
        return number(a.item())
    if a.ndim == 1:
        head = ", ".join(number(v) for v in a[:shown].tolist())
        return f"[{head}]" if a.size <= shown else f"[{head}, ...] ({a.size} values)"
    if a.ndim == 2 and a.shape[0] <= 3 and a.shape[1] <= 3:
        return "[" + ", ".join(array(row) for row in a) + "]"
    if a.ndim == 2 and a.shape[0] > 0:
        row = ", ".join(number(v) for v in a[0, :shown].tolist())
        more = ", ..." if a.shape[1] > shown else ""
        return f"[[{row}{more}], ...] ({a.shape[0]}x{a.shape[1]})"
    return f"<array of shape {a.shape}>"


def labels(values: Sequence[Any], shown: int = SHOWN) -> str:
    """Names separated by commas: "no, yes", or the first few and the count (quoted when a
    name has a comma or space of its own: "'0,0', '0,1'")."""
    names = [str(v) for v in values]
    if any("," in v or v != v.strip() or not v for v in names):
        names = [repr(v) for v in names]
    head = ", ".join(names[:shown])
    return head + (f", ... ({len(values)} in all)" if len(values) > shown else "")


def mapping(values: Mapping[str, Any], shown: int = 4) -> str:
    """A mapping of names to arrays: "{a: [0.5, 0.5], b: [1, 0]}" (the first few entries)."""
    items = [f"{k}: {array(v)}" for k, v in list(values.items())[:shown]]
    more = f", ... ({len(values)} in all)" if len(values) > shown else ""
    return "{" + ", ".join(items) + more + "}"


def call(name: str, fields: Iterable[tuple[str, str | None]]) -> str:
    """``name(key=text, ...)``, leaving out the fields whose text is None."""
    return f"{name}(" + ", ".join(f"{k}={v}" for k, v in fields if v is not None) + ")"
