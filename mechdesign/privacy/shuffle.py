"""Shuffle privacy: a design for a central (ε, δ) target after n users' reports are shuffled.

n users each report once through K and a shuffler hides who sent what. The notion takes the
central target (ε, δ) and the number of users, and designs at the largest local level ε0 whose
clone bound (Feldman, McMillan and Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal
Analysis of Privacy Amplification by Shuffling", FOCS 2021;
:func:`mechdesign.accounting.clones.clone_local_level`) meets the target: the constraints are
those of ε0-LDP (:class:`~mechdesign.privacy.ldp.LDP`).

**Why bisection over ε0 is sound.** The clone bound holds for every ε0-LDP randomizer, and it
does not decrease with ε0 — the view of the clone model at a larger ε0 post-processes into the
view at a smaller one (flip every clone's label with a fixed probability, then add clones;
:mod:`mechdesign.accounting.clones` gives the argument). So {ε0 : bound(ε0) <= ε} is an interval
[0, ε0*], found by bisection, and every matrix that is ε0*-LDP meets the central target. The
optimum is the best ε0*-LDP matrix; a specific matrix may do better than the bound for generic
ε0-LDP matrices, which is why the certificate recomputes the central level from the matrix.

**The certificate** shows the local level audited on the matrix (``local_epsilon``: at most ε0*)
and the central ε recomputed from the matrix — the smaller of the clone bound at its audited
local level and the variation-ratio bound with its (p, β, q)
(:func:`mechdesign.accounting.shuffle.amplification`). It holds when the audited local level is
within the audit tolerance of ε0* and the recomputed central ε within the search tolerance of ε.
With per-context mechanisms each context's matrix is audited on its own.

Problem file::

    [[privacy]]
    notion = "shuffle"
    users = 10000      # n, the users whose reports are shuffled
    epsilon = 0.5      # the central ε after shuffling
    delta = 1e-6       # the central δ (> 0: shuffling amplifies approximate privacy only)
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from mechdesign.core import preview
from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.errors import ProblemError
from mechdesign.privacy.base import Notion, check_delta, check_epsilon
from mechdesign.privacy.ldp import LDP

if TYPE_CHECKING:
    from mechdesign.privacy.coefficients import Coefficients
    from mechdesign.privacy.declarations import Declarations

#: the central ε recomputed from a matrix may exceed the target by the searches' tolerances
CENTRAL_TOL = 1e-7


@lru_cache(maxsize=256)
def local_level_for(epsilon: float, users: int, delta: float) -> float:
    """The largest local level whose clone bound after shuffling ``users`` reports meets the
    central (``epsilon``, ``delta``) (cached: sweeps and audits ask again). The accountant loads
    SciPy's statistics on first use, not when a problem file is read."""
    from mechdesign.accounting.clones import clone_local_level

    return clone_local_level(epsilon, users, delta)


class Shuffle(Notion):
    """The central (ε, δ) after shuffling ``users`` reports, designed as ε0-LDP at the largest
    ε0 the clone bound allows (module docstring)."""

    name = "shuffle"

    def __init__(self, users: int, epsilon: float, delta: float):
        if isinstance(users, bool) or not isinstance(users, (int, np.integer)) or users < 1:
            raise ProblemError(f"expected a whole number of users >= 1, got {users!r}", key="users")
        self.users = int(users)
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        if self.delta <= 0:
            raise ProblemError("shuffling amplifies approximate privacy only: give delta > 0", key="delta")
        self.local = LDP(local_level_for(self.epsilon, self.users, self.delta))

    def __repr__(self) -> str:
        return preview.call("Shuffle", [("users", str(self.users)), ("epsilon", preview.number(self.epsilon)),
                                        ("delta", preview.number(self.delta))])

    @property
    def local_epsilon(self) -> float:
        """ε0, the local level the design is constrained to."""
        return self.local.epsilon

    def with_epsilon(self, epsilon: float) -> Shuffle:
        """This notion at another central ε; the local level follows."""
        return Shuffle(self.users, epsilon, self.delta)

    def structure(self) -> int:
        return self.local.structure()

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        """The ε0-LDP constraints, their coefficients following the central ε (a sweep moves the
        central ε, and ε0 with it)."""
        users, delta = self.users, self.delta
        inner = coefficients.inner(self, lambda epsilon: local_level_for(epsilon, users, delta))
        return self.local.constraints(K, inner)

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self.local.repair(mechs)

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        from mechdesign.accounting.shuffle import amplification

        found = [amplification(k, self.users, self.delta) for k in mechs.values()]
        local = max(self.local.level(k) for k in mechs.values())
        worst = max(found, key=lambda a: a.epsilon)
        holds = local <= self.local_epsilon + AUDIT_TOL and worst.epsilon <= self.epsilon + CENTRAL_TOL
        common = {"users": self.users, "delta": self.delta}
        return Audit(self.name, {"epsilon": self.epsilon, **common, "local_epsilon": self.local_epsilon},
                     {"epsilon": worst.epsilon, **common, "local_epsilon": local}, holds,
                     detail={"bound": worst.bound, "clones": worst.clones,
                             "variation_ratio": worst.variation_ratio})


def shuffle_from_table(table: dict, declared: Declarations) -> Notion:
    """``notion = "shuffle"``: ``users``, ``epsilon`` and ``delta`` (all required)."""
    declared.allow(table, {"users", "epsilon", "delta"})
    if "users" not in table:
        raise declared.error("missing 'users' (the number of users whose reports are shuffled)",
                             f"{declared.key}.users")
    users = table["users"]
    if isinstance(users, float) and users.is_integer():
        users = int(users)
    if isinstance(users, bool) or not isinstance(users, int) or users < 1:
        raise declared.error(f"expected a whole number of users >= 1, got {users!r}", f"{declared.key}.users")
    if "delta" not in table:
        raise declared.error("missing 'delta' (the central δ, > 0)", f"{declared.key}.delta")
    delta = declared.delta(table)
    if delta <= 0:
        raise declared.error("shuffling amplifies approximate privacy only: give delta > 0",
                             f"{declared.key}.delta")
    return Shuffle(users, declared.epsilon(table), delta)
