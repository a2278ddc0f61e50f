"""Mechanisms read from JSON files (``mechdesign audit``), checked against a problem's domains.

A file holds a solve result (``{"mechanisms": {context: mechanism, ...}, ...}``) or one
mechanism (``{"matrix": [[...], ...], "inputs": [...], "outputs": [...]}``). Every defect is a
:class:`ProblemError` naming the file and the key: bytes that are not UTF-8/16/32 JSON, nesting
too deep to read, a matrix that is not a list of equal-length lists of numbers (strings such as
``"0.1"`` and booleans are not numbers), rows that are not distributions. When the labels are
given, rows are matched to the problem's inputs and columns to its outputs by label, so a
mechanism with its rows and labels permuted together is the same mechanism; a label the problem
does not know, a repeated label or a missing one is refused.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import check_stochastic


def read_json(path: str | Path) -> object:
    """The JSON value in ``path`` (UTF-8, -16 or -32, as RFC 8259 allows), or a ProblemError."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ProblemError("no such file", file=str(path))
    except OSError as exc:
        raise ProblemError(f"cannot read the file: {exc.strerror or exc}", file=str(path))
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise ProblemError(f"not UTF-8, UTF-16 or UTF-32 text: {exc.reason} at byte {exc.start}",
                           file=str(path))
    except json.JSONDecodeError as exc:
        raise ProblemError(f"not valid JSON: {exc}", file=str(path))
    except RecursionError:
        raise ProblemError("not readable: the JSON is nested too deeply", file=str(path))


def read_mechanisms(path: str | Path, inputs: Domain, outputs: Domain) -> dict[str, np.ndarray]:
    """Matrices keyed by context (``"default"`` for a lone mechanism) in the problem's row and
    column order, each checked to be row-stochastic."""
    data = read_json(path)
    file = str(path)
    try:
        if isinstance(data, dict) and "mechanisms" in data:
            table = data["mechanisms"]
            if not isinstance(table, dict) or not table:
                raise ProblemError("expected a non-empty object mapping each context to a "
                                   "mechanism", key="mechanisms")
            return {str(name): mechanism_matrix(entry, inputs, outputs, f"mechanisms.{name}")
                    for name, entry in table.items()}
        if isinstance(data, dict) and "matrix" in data:
            return {"default": mechanism_matrix(data, inputs, outputs, "")}
        raise ProblemError("expected a result object with 'mechanisms' or an object with 'matrix'")
    except ProblemError as exc:
        raise exc.located(file)


def mechanism_matrix(entry, inputs: Domain, outputs: Domain, key: str) -> np.ndarray:
    """One mechanism object's matrix, rows and columns in the order of ``inputs``/``outputs``."""
    at = f"{key}." if key else ""
    if not isinstance(entry, dict):
        raise ProblemError("expected an object with 'matrix' (and 'inputs', 'outputs')",
                           key=key or None)
    k = _numbers(entry.get("matrix"), f"{at}matrix")
    rows = _order(entry.get("inputs"), inputs, k.shape[0], f"{at}inputs", "inputs", "rows")
    cols = _order(entry.get("outputs"), outputs, k.shape[1], f"{at}outputs", "outputs", "columns")
    k = k[np.ix_(rows, cols)]
    try:
        return check_stochastic(k)
    except ProblemError as exc:
        raise ProblemError(exc.detail, key=f"{at}matrix")


def _numbers(value, key: str) -> np.ndarray:
    """A non-empty list of equal-length non-empty lists of finite JSON numbers, as float64."""
    if not isinstance(value, list) or not value:
        raise ProblemError(f"expected a matrix (a non-empty list of rows), got {_kind(value)}",
                           key=key)
    width = None
    for i, row in enumerate(value):
        if not isinstance(row, list) or not row:
            raise ProblemError(f"row {i} must be a non-empty list of numbers, got {_kind(row)}",
                               key=key)
        if width is None:
            width = len(row)
        elif len(row) != width:
            raise ProblemError(f"row {i} has {len(row)} entries, row 0 has {width}: rows must have "
                               "equal length", key=key)
        for j, v in enumerate(row):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ProblemError(f"entry [{i}][{j}] must be a number, got {_kind(v)}", key=key)
            if not math.isfinite(v):
                raise ProblemError(f"entry [{i}][{j}] must be finite, got {v!r}", key=key)
    return np.array(value, dtype=float)


def _order(labels, domain: Domain, n: int, key: str, what: str, axis: str) -> np.ndarray:
    """For each of the problem's values (in its order), the index of its row/column in the file."""
    if labels is None:
        if n != len(domain):
            raise ProblemError(f"the matrix has {n} {axis}, the problem has {len(domain)} {what}",
                               key=key)
        return np.arange(n)
    if not isinstance(labels, list):
        raise ProblemError(f"expected a list of {what} labels, got {_kind(labels)}", key=key)
    if len(labels) != n:
        raise ProblemError(f"{len(labels)} labels for {n} {axis}", key=key)
    names = []
    for label in labels:
        if isinstance(label, bool) or not isinstance(label, (str, int, float)):
            raise ProblemError(f"labels must be strings or numbers, got {_kind(label)}", key=key)
        names.append(str(label))
    where: dict[str, int] = {}
    for i, name in enumerate(names):
        if name not in domain:
            raise ProblemError(f"label {name!r} is not among the problem's {what}", key=key)
        if name in where:
            raise ProblemError(f"label {name!r} appears twice", key=key)
        where[name] = i
    missing = [v for v in domain.labels if v not in where]
    if missing:
        raise ProblemError(f"the problem's {what} {missing[:5]} have no {axis[:-1]}", key=key)
    return np.array([where[v] for v in domain.labels])


def _kind(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{type(value).__name__} {text[:30]}..."
