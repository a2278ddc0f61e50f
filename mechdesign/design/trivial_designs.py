"""The designs every problem has without a solver: the data-independent one (every row the
notions' neutral output distribution), the data-independent design that serves the objective
best (the output of least expected loss; each context's own distribution for a marginal
error), for a single ε·d-privacy notion the exponential mechanism with the best remap of its
reports (:mod:`~mechdesign.design.exponential_baseline`), and, when there are as many outputs as
inputs, the identity.

Where a solver's design is left short of a proof (its gap above the tolerance), one of them can
be better. An optimum of 0 reached by a data-independent design (a marginal error), or an
information bound loose enough to allow the identity: a solver then returns a design of value
1e-10 whose duals prove 1e-10 less, and the status would be "failed" for a design that is
optimal to round-off. Or a problem so large that its solver's first round has not finished at
the time limit (1,500 locations): its design is then hardly better than a data-independent one.
:func:`better_trivial_design` offers the best of them that is strictly better than the solver's
design and passes every audit, run on the very matrices returned: those audits are its
certificate. For a solve stopped short (time limit, failure) the offer is made before the
solver's design is certified, against its objective with the rows cleaned; a design it replaces
is then never certified (at 5,000 locations that saves an audit of about 100 s).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from mechdesign.design.exponential_baseline import remapped_exponential
from mechdesign.privacy.certify import audit_all, clean, neutral_row


def trivial_designs(privacy, keys: list[str], n: int, m: int, objective=None):
    """(name, {key: matrix}) of the data-independent design, the objective's best constant
    design (:meth:`~mechdesign.core.objectives.Objective.best_constant_rows`, when it offers
    one), the remapped exponential mechanism (for a single ε·d-privacy notion) and, for a
    square problem, the identity; built one at a time."""
    yield "data-independent design", {k: np.tile(neutral_row(privacy, m), (n, 1)) for k in keys}
    rows = None if objective is None else objective.best_constant_rows(keys, m)
    if rows is not None:
        yield "objective's best data-independent design", {k: np.tile(rows[k], (n, 1)) for k in keys}
    remapped = remapped_exponential(privacy, keys, n, m, objective)
    if remapped is not None:
        yield "remapped exponential mechanism", remapped
    if n == m:
        yield "identity", {k: np.eye(n) for k in keys}


def better_trivial_design(privacy, keys: list[str], n: int, m: int, objective, value: float,
                          better: Callable[[float, float], bool],
                          values: dict[str, float] | None = None) -> tuple[str, dict, float, list] | None:
    """The trivial design (:func:`trivial_designs`) of best objective among those ``better``
    than ``value`` on which every notion's audit holds, as (name, matrices, objective,
    audits); None when there is none. Only designs better than ``value`` are audited (an audit
    of the solver's size each), on the matrices returned (cleaned as a certificate cleans them:
    :func:`~mechdesign.privacy.certify.clean`), so that their audits are their certificate and
    need not be run again (5,000 locations: 105 s an audit).

    ``values``, when given, keeps each design's objective (NaN for one whose audit failed): a
    later call with the same dict whose ``value`` none of them beats returns None without
    building the designs again (the remapped exponential mechanism takes seconds at 5,000
    locations)."""
    if values and not any(np.isfinite(v) and better(v, value) for v in values.values()):
        return None
    candidates = []
    for name, mechs in trivial_designs(privacy, keys, n, m, objective):
        try:
            candidate = float(objective.value(mechs))
        except Exception:  # noqa: BLE001 — an objective that needs more than matrices: no candidate
            return None
        if values is not None:
            values[name] = candidate
        if np.isfinite(candidate) and better(candidate, value):
            candidates.append((candidate, name, mechs))
    maximised = getattr(objective, "sense", "minimize") == "maximize"
    best_first = sorted(candidates, key=lambda c: c[0], reverse=maximised)
    for _, name, mechs in best_first:
        cleaned = {k: clean(v) for k, v in mechs.items()}
        audits = audit_all(privacy, cleaned)
        if values is not None and not all(a.holds for a in audits):
            values[name] = np.nan  # not private here: never a candidate again
        if all(a.holds for a in audits):
            candidate = float(objective.value(cleaned))
            if better(candidate, value):
                return name, cleaned, candidate, audits
    return None
