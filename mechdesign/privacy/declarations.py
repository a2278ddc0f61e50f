"""What a problem file declares before its notions are built, as the notions' table parsers see it.

Each notion module parses its own ``[[privacy]]`` table with a function
``parser(table, declared) -> Notion``; ``declared`` is a :class:`Declarations`: the domains, the
ground metric, the named distributions, the mechanism contexts with their weights, and where the
table sits in the file (``key``, e.g. ``privacy[2]``) so that every error names its file and key.
It also reads the values most notions share (ε, δ, a divergence name) with the same messages
everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mechdesign.core.divergences import DIVERGENCES
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.metrics import Metric
from mechdesign.core.tables import no_unknown
from mechdesign.privacy.base import DEFAULT, check_delta, check_epsilon


@dataclass(frozen=True)
class Declarations:
    """Domains, metric, distributions and contexts of one problem file, located at ``key``.

    ``contexts`` maps each mechanism context to its input distribution (None: one shared
    mechanism); ``weights`` are the contexts' weights.
    """

    file: str
    inputs: Domain
    outputs: Domain
    metric: Metric | None
    distributions: Mapping[str, np.ndarray]
    contexts: Mapping[str, np.ndarray] | None
    weights: Mapping[str, float] | None
    key: str = ""

    def at(self, key: str) -> Declarations:
        """The same declarations, located at the table ``key``."""
        return replace(self, key=key)

    def error(self, message: str, key: str) -> ProblemError:
        return ProblemError(message, file=self.file, key=key)

    @property
    def keys(self) -> list[str]:
        """The mechanism keys: the contexts' names, or the one shared mechanism's."""
        return list(self.contexts) if self.contexts else [DEFAULT]

    def distribution(self, name: Any, key: str) -> np.ndarray:
        """The distribution over the inputs called ``name`` ("uniform" or a declared one)."""
        if name == "uniform":
            return np.full(len(self.inputs), 1.0 / len(self.inputs))
        if not isinstance(name, str) or name not in self.distributions:
            known = ", ".join(self.distributions) or "none declared"
            raise self.error(f"unknown distribution {name!r}; expected one of: {known}", key)
        return self.distributions[name]

    def need_metric(self, key: str) -> Metric:
        """The ground metric, which the table at ``key`` requires."""
        if self.metric is None:
            raise self.error("this needs a ground metric: add a [metric] table", key)
        return self.metric

    def input_distances(self, key: str) -> np.ndarray:
        """The ground metric's distances between the inputs."""
        metric = self.need_metric(key)
        try:
            return metric.distances(self.inputs)
        except ProblemError as exc:
            raise exc.located(self.file, key)

    # -- reading the table at ``key`` ---------------------------------------------------------

    def allow(self, table: dict, keys: set[str]) -> None:
        """Refuse any key of the table besides ``notion`` and ``keys``."""
        no_unknown(table, keys | {"notion"}, self.file, f"{self.key}.")

    def epsilon(self, table: dict, name: str = "epsilon") -> float:
        """The required non-negative level ``name`` (ε, or a bound in bits)."""
        if name not in table:
            raise self.error(f"missing '{name}' (a non-negative number)", f"{self.key}.{name}")
        try:
            return check_epsilon(table[name])
        except ProblemError as exc:
            raise self.error(exc.detail, f"{self.key}.{name}")

    def delta(self, table: dict) -> float:
        """The optional δ in [0, 1] (default 0)."""
        try:
            return check_delta(table.get("delta", 0.0))
        except ProblemError as exc:
            raise self.error(exc.detail, f"{self.key}.delta")

    def divergence(self, table: dict, delta: float) -> str:
        """The table's divergence name (default "max"), checked against the registry; only "max"
        (D∞^δ) takes a δ."""
        name = table.get("divergence", "max")
        if not isinstance(name, str) or name not in DIVERGENCES:
            raise self.error(f"unknown divergence {name!r}; expected one of: "
                             f"{', '.join(DIVERGENCES)}", f"{self.key}.divergence")
        if delta and not DIVERGENCES[name].supports_delta:
            raise self.error(f"delta applies only to divergence = \"max\" (D∞^δ), not to {name!r}",
                             f"{self.key}.delta")
        return name
