"""Finite domains: labelled values, optionally with coordinates."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from mechdesign.core import preview
from mechdesign.core.errors import ProblemError


@dataclass(frozen=True, eq=False)
class Domain:
    """A finite set of labelled values.

    Parameters
    ----------
    labels : sequence of str
        Distinct names of the values, in order.
    points : array of shape (n, d), optional
        Coordinates of the values (numbers on a line have d = 1; grid cells and
        locations have d = 2). Metrics such as ``absolute`` or ``euclidean`` need them.
    """

    labels: tuple[str, ...]
    points: np.ndarray | None = None
    _index: dict = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        labels = tuple(str(label) for label in self.labels)
        object.__setattr__(self, "labels", labels)
        if len(labels) == 0:
            raise ProblemError("a domain needs at least one value")
        index = {label: i for i, label in enumerate(labels)}
        if len(index) != len(labels):
            seen, dup = set(), None
            for label in labels:
                if label in seen:
                    dup = label
                    break
                seen.add(label)
            raise ProblemError(f"labels must be distinct; '{dup}' appears twice")
        object.__setattr__(self, "_index", index)
        if self.points is not None:
            pts = np.asarray(self.points, dtype=float)
            if pts.ndim == 1:
                pts = pts[:, None]
            if pts.ndim != 2 or pts.shape[0] != len(labels):
                raise ProblemError(
                    f"points must be a list of {len(labels)} coordinates, got shape {pts.shape}"
                )
            if not np.all(np.isfinite(pts)):
                raise ProblemError("points must be finite numbers")
            pts.setflags(write=False)
            object.__setattr__(self, "points", pts)

    # constructors -------------------------------------------------------------------------
    @classmethod
    def from_labels(cls, labels: Sequence) -> "Domain":
        """Labels only; if every label is a number, the numbers become 1-D points."""
        labels = [str(v) for v in labels]
        try:
            values = np.array([float(v) for v in labels])
        except ValueError:
            return cls(tuple(labels))
        return cls(tuple(labels), values if np.all(np.isfinite(values)) else None)

    @classmethod
    def from_size(cls, n: int) -> "Domain":
        """Values 0..n-1 labelled "0".."n-1", as points on a line."""
        return cls(tuple(str(i) for i in range(n)), np.arange(n, dtype=float))

    @classmethod
    def from_points(cls, points: Any, labels: Sequence | None = None) -> "Domain":
        """Values at ``points`` (an (n, d) array, or n numbers on a line), labelled "0".."n-1"
        unless ``labels`` are given."""
        try:
            pts = np.asarray(points, dtype=float)
        except (TypeError, ValueError):
            raise ProblemError("points must be numbers or equal-length lists of numbers") from None
        if labels is None:
            labels = [str(i) for i in range(len(pts))]
        return cls(tuple(labels), pts)

    @classmethod
    def from_grid(cls, rows: int, cols: int, cell: float = 1.0) -> "Domain":
        """A rows x cols grid of cells; labels "r,c", points (r*cell, c*cell)."""
        r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        labels = [f"{i},{j}" for i, j in zip(r.ravel(), c.ravel())]
        return cls(tuple(labels), np.column_stack([r.ravel(), c.ravel()]) * float(cell))

    @classmethod
    def coerce(cls, value: Domain | int | Sequence | np.ndarray) -> Domain:
        """A Domain from any of: a Domain; an int n (values 0..n-1 on a line); a sequence of
        labels (numbers become 1-D points); an (n, d) array or list of coordinates (points
        labelled "0".."n-1"). ProblemError for anything else."""
        if isinstance(value, Domain):
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            if value < 1:
                raise ProblemError(f"a domain needs at least one value, got size {value}")
            return cls.from_size(int(value))
        if isinstance(value, (str, bytes, bool, float, np.floating)) or value is None:
            raise ProblemError(f"expected {COERCIBLE}, got {value!r}")
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):  # ragged lists
            raise ProblemError(f"expected {COERCIBLE}; points must all have the same length") from None
        if arr.ndim == 2:
            return cls.from_points(arr)
        if arr.ndim == 1 and arr.size > 0 and arr.dtype != object:
            return cls.from_labels(arr.tolist())
        raise ProblemError(f"expected {COERCIBLE}, got {preview.array(arr) if arr.dtype != object else value!r}")

    # queries ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.labels)

    def __iter__(self) -> Iterator[str]:
        return iter(self.labels)

    def __contains__(self, label: object) -> bool:
        return str(label) in self._index

    def index(self, label: Any) -> int:
        """The position of ``label``; ProblemError naming the known labels when it is unknown."""
        try:
            return self._index[str(label)]
        except KeyError:
            raise ProblemError(f"unknown label '{label}'; known labels: {preview.labels(self.labels)}")

    def same_as(self, other: "Domain") -> bool:
        """Whether ``other`` has the same labels in the same order."""
        return self.labels == other.labels

    def __repr__(self) -> str:
        dim = "" if self.points is None else f", points in R^{self.points.shape[1]}"
        return f"Domain({len(self)} values: {preview.labels(self.labels)}{dim})"


COERCIBLE = ("a Domain, a size (a positive whole number), a list of labels or an (n, d) array of "
             "points")
