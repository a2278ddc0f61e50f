"""Problem-file tables of the information utilities and of the robust expected loss.

``[objective] kind = "mutual-information"`` (maximised, ε-LDP only)::

    prior = "NAME"                 # a [distributions] name or "uniform" (default: uniform)

``[objective] kind = "hypothesis-testing"`` (maximised, ε-LDP only)::

    divergence = "kl"              # required: kl, tv, hellinger, chi2 or reverse-kl
    between = ["P0", "P1"]         # required: the two hypotheses, [distributions] names

``[objective] kind = "expected-loss"`` with ``robust`` (minimised; one shared mechanism), one of::

    robust = { priors = ["p1", "p2"] }          # the worst of finitely many priors
    robust = { tv = 0.05 }                      # within TV distance 0.05 of the prior
    robust = { tv = 0.05, around = "estimate" } # ... of another named distribution
    robust = { lower = [...], upper = [...] }   # per-input bounds (one number per input)

Every error names the file, the key and what was expected.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.core.information_utilities import HypothesisTesting, MutualInformationUtility
from mechdesign.core.prior_sets import FinitePriors, PriorBox, PriorSet, TVBall
from mechdesign.core.robust_loss import RobustExpectedLoss
from mechdesign.core.tables import is_number_list, no_unknown, read_number
from mechdesign.privacy.declarations import Declarations

#: the keys of each kind of ``robust`` table
ROBUST_KINDS = {"priors": {"priors"}, "tv": {"tv", "around"}, "box": {"lower", "upper"}}


def _one_mechanism(declared: Declarations, what: str) -> None:
    if declared.contexts is not None:
        raise declared.error(f"{what} needs one shared mechanism: remove [mechanism] contexts", "objective.kind")


def mutual_information_from_table(declared: Declarations, table: dict) -> MutualInformationUtility:
    """``kind = "mutual-information"``: I(X; Y) in bits under ``prior`` (default uniform)."""
    _one_mechanism(declared, "mutual-information")
    return MutualInformationUtility(declared.distribution(table.get("prior", "uniform"), "objective.prior"))


def hypothesis_testing_from_table(declared: Declarations, table: dict) -> HypothesisTesting:
    """``kind = "hypothesis-testing"``: ``divergence`` between the outputs of the two
    distributions named by ``between``."""
    _one_mechanism(declared, "hypothesis-testing")
    if "divergence" not in table:
        raise declared.error("missing 'divergence' (kl, tv, hellinger, chi2 or reverse-kl)", "objective.divergence")
    pair = table.get("between")
    if (not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(p, str) for p in pair)):
        raise declared.error("expected two distribution names [\"P0\", \"P1\"] (the hypotheses)", "objective.between")
    if pair[0] == pair[1]:
        raise declared.error(f"the two hypotheses must differ, both are {pair[0]!r}", "objective.between")
    hypotheses = [declared.distribution(name, "objective.between") for name in pair]
    try:
        return HypothesisTesting(table["divergence"], hypotheses)
    except ProblemError as exc:
        raise exc.located(declared.file)


def robust_expected_loss_from_table(declared: Declarations, table: dict, loss: np.ndarray) -> RobustExpectedLoss:
    """``kind = "expected-loss"`` with ``robust = {...}`` (module docstring): the largest
    expected loss over the set, with ``prior`` (default uniform) the nominal prior."""
    _one_mechanism(declared, "a robust expected loss")
    robust = table["robust"]
    if not isinstance(robust, dict) or not robust:
        raise declared.error("expected a table: { priors = [...] }, { tv = r } or { lower = [...], upper = [...] }",
                             "objective.robust")
    kinds = [name for name, keys in ROBUST_KINDS.items() if keys & set(robust)]
    no_unknown(robust, set().union(*ROBUST_KINDS.values()), declared.file, "objective.robust.")
    if len(kinds) != 1:
        raise declared.error(f"expected one kind of set, got keys of {' and '.join(kinds)}", "objective.robust")
    prior_name = table.get("prior", "uniform")
    nominal = declared.distribution(prior_name, "objective.prior")
    priors = _prior_set(declared, robust, kinds[0], prior_name)
    try:
        priors = priors.bind(nominal, len(declared.inputs))
    except ProblemError as exc:
        raise exc.located(declared.file)
    return RobustExpectedLoss(loss, priors, prior=nominal)


def _prior_set(declared: Declarations, robust: dict, kind: str, prior_name: str) -> PriorSet:
    file = declared.file
    if kind == "priors":
        names = robust["priors"]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise declared.error("expected a non-empty list of distribution names", "objective.robust.priors")
        return FinitePriors([declared.distribution(n, "objective.robust.priors") for n in names], names)
    if kind == "tv":
        if "tv" not in robust:
            raise declared.error("missing 'tv' (the radius, a number in [0, 1])", "objective.robust.tv")
        radius = read_number(robust["tv"], file, "objective.robust.tv")
        if radius < 0:
            raise declared.error(f"expected a non-negative radius, got {radius!r}", "objective.robust.tv")
        centre_name = robust.get("around", prior_name)
        centre = declared.distribution(centre_name, "objective.robust.around")
        return TVBall(radius, centre, centre_name)
    bounds: dict[str, Any] = {}
    for key in ("lower", "upper"):
        value = robust.get(key)
        if not is_number_list(value) or len(value) != len(declared.inputs):
            raise declared.error(f"expected {len(declared.inputs)} numbers, one per input", f"objective.robust.{key}")
        bounds[key] = [read_number(v, file, f"objective.robust.{key}") for v in value]
    try:
        return PriorBox(bounds["lower"], bounds["upper"])
    except ProblemError as exc:
        raise exc.located(file)
