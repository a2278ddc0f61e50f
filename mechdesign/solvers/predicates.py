"""Checks several special solvers share: what a problem's privacy and objective are, and the
sizes from which the general-metric solvers (:mod:`mechdesign.solvers.dantzig_wolfe`,
:mod:`mechdesign.solvers.lazy_pairs`) take a problem.

Each check returns None when the problem has the property, else the reason it does not (the
clause ``mechdesign solve --explain`` prints)."""

from __future__ import annotations

import numpy as np

from mechdesign.core.metrics import on_a_line
from mechdesign.core.objectives import ExpectedLoss

#: below this many inputs the whole pair LP (:mod:`mechdesign.solvers.metric_small`) is as fast as
#: the ray decomposition or lazy pair rows
GENERAL_MIN_INPUTS = 30
#: a general-metric design whose rays stall goes on to the LP with lazy pair rows
#: (:mod:`mechdesign.solvers.lazy_pairs`) when it has at most this many entries of K (85
#: airports, ε·R = 2.2: rays 110 s without closing the gap, lazy rows 53 s exact; a 10 × 10 grid
#: at ε = 0.5: rays 5 s, lazy rows 282 s, so rays go first and the switch is made on what they do)
LAZY_MAX_ENTRIES = 40_000


def one_notion_of(problem, kind: type) -> str | None:
    """Exactly one privacy notion, of exactly the type ``kind``."""
    if len(problem.privacy) != 1:
        return f"needs exactly one privacy notion ({kind.__name__}), the problem has {len(problem.privacy)}"
    if type(problem.privacy[0]) is not kind:
        return f"needs {kind.__name__}, the notion is {type(problem.privacy[0]).__name__}"
    return None


def expected_loss(problem) -> str | None:
    """An expected-loss objective."""
    if not isinstance(problem.objective, ExpectedLoss):
        return f"needs an expected-loss objective, the objective is {problem.objective.kind}"
    return None


def metric_on_a_line(notion) -> bool:
    """Whether the d-privacy notion's points lie on a line with |x − x'| as the distance."""
    return on_a_line(notion.metric.kind, notion.domain.points)


def steep(notion) -> bool:
    """Whether some pair of the d-privacy notion has e^{εd} beyond e^20 (an LP's chains resolve
    entries only to 1e-15 there; the rays are exact)."""
    from mechdesign.privacy.base import MAX_LOG_COEFFICIENT

    return float(np.max(notion.epsilon * notion.d, initial=0.0)) > MAX_LOG_COEFFICIENT


def metric_off_the_line(problem) -> str | None:
    """One ε·d-privacy notion over a metric other than the line's, with an expected-loss
    objective (the line has its own exact solver)."""
    from mechdesign.privacy.metric import MetricPrivacy

    reason = one_notion_of(problem, MetricPrivacy) or expected_loss(problem)
    if reason is None and metric_on_a_line(problem.privacy[0]):
        reason = "the points lie on a line, which has its own exact solver"
    return reason
