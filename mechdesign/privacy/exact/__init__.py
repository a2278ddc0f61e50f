r"""Exact audit: re-check a returned mechanism in exact rational / outward-rounded arithmetic.

The float audit of each notion (``Notion.audit``) decides "holds" in float64 with the tolerance
``AUDIT_TOL``. :func:`exact_audit` decides it as a theorem about the exact numbers: every float64
entry of K (and of priors, distributions, distances) is a dyadic rational, sums such as λK are
formed exactly, e^c is enclosed by outward-rounded intervals (so "K[x, y] <= e^c K[x', y]" is
proven with a lower bound of e^c and refuted with an upper bound), and logarithms and square roots
(KL, Hellinger, mutual information, capacity) are enclosed the same way.

Semantics of the returned :class:`~mechdesign.privacy.base.Audit`:

* ``holds`` is True only when the check *proves* the notion at the requested level plus the
  float audit's tolerance, applied as written: ε + τ in the exponent of ratio constraints
  (K[x, y] <= e^{(ε + τ)·d} K[x', y]), δ + τ for hockey-stick sums, bound + τ for divergences
  and bits, deviation <= τ for targets (τ = ``AUDIT_TOL``). A check that is neither proven nor
  refuted counts as not proven.
* ``detail["holds_at_requested"]`` says whether it is proven at the requested level itself with
  no tolerance; ``detail`` also holds ``exact`` (True), ``method`` (``"rational"`` when only
  rational comparisons against enclosures of e^c or 2^c are involved, ``"interval"`` when
  logarithms or roots are), ``pairs_checked``, ``refuted`` and ``undecided``.
* ``achieved`` carries a float upper bound (rounded outward) of the achieved level.

Each notion is re-checked from its definition over all its pairs; the notion's compiled
reductions are never used. A notion class this module does not know raises
:class:`~mechdesign.core.errors.ProblemError`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from mechdesign.core.audit_record import Audit
from mechdesign.core.errors import ProblemError
from mechdesign.privacy.base import Notion
from mechdesign.privacy.distp import DistP, ProfilePrivacy, XDistP
from mechdesign.privacy.divergence import (
    DivergenceDistP,
    DivergenceDP,
    DivergenceXDistP,
    DivergenceXDP,
)
from mechdesign.privacy.exact import divergence_notions, information_notions
from mechdesign.privacy.exact.ratio_notions import (
    all_ordered_pairs,
    chain,
    hockey_audit,
    matrix_blocks,
    output_blocks,
    ratio_audit,
    side_outputs,
)
from mechdesign.privacy.information import (
    GVulnerability,
    InformationPrivacy,
    MinEntropy,
    MutualInformation,
)
from mechdesign.privacy.ldp import LDP, ApproxLDP
from mechdesign.privacy.metric import MetricPrivacy
from mechdesign.privacy.shuffle import Shuffle
from mechdesign.privacy.target import ApproximateKnowledge, Target

__all__ = ["exact_audit", "covered_notions"]


def _ldp(notion: LDP, mechs) -> Audit:
    blocks, pairs = _all_pairs(mechs)
    return ratio_audit(notion.name, {"epsilon": notion.epsilon}, notion.epsilon, blocks, pairs)


def _approx_ldp(notion: ApproxLDP, mechs) -> Audit:
    blocks, pairs = _all_pairs(mechs)
    return hockey_audit(notion.name, {"epsilon": notion.epsilon, "delta": notion.delta},
                        notion.epsilon, notion.delta, blocks, pairs)


def _all_pairs(mechs):
    factories, pairs = [], 0
    for key, k in mechs.items():
        i, j = all_ordered_pairs(k.shape[0])
        factories.append(matrix_blocks(k, i, j, np.ones(i.size), key))
        pairs += int(i.size)
    return chain(*factories), pairs


def _metric(notion: MetricPrivacy, mechs) -> Audit:
    dist = np.asarray(notion.metric.distances(notion.domain), dtype=float)
    labels = list(notion.domain.labels)
    factories, pairs = [], 0
    for key, k in mechs.items():
        i, j = all_ordered_pairs(k.shape[0])
        factories.append(matrix_blocks(k, i, j, dist[i, j], key, labels))
        pairs += int(i.size)
    return ratio_audit(notion.name, {"epsilon": notion.epsilon}, notion.epsilon, chain(*factories),
                       pairs, {"metric": notion.metric.kind})


def _distp(notion: DistP, mechs) -> Audit:
    """DistP, XDistP, profiles and divergence DistP / XDistP with the max divergence."""
    outputs = side_outputs(notion.pairs, mechs)
    scales = np.repeat(np.asarray(notion.pair_scales(), dtype=float), 2)
    names = [n for a, b in notion.pairs for n in (f"{a.name}~{b.name}", f"{b.name}~{a.name}")]
    blocks = output_blocks(outputs, scales, names)
    requested = {"epsilon": notion.epsilon}
    if getattr(notion, "divergence", None) is not None:
        requested["divergence"] = notion.divergence.name
    extra = {"distance": notion.distance} if hasattr(notion, "distance") else {}
    if notion.delta > 0:
        requested["delta"] = notion.delta
        return hockey_audit(notion.name, requested, notion.epsilon, notion.delta, blocks,
                            len(outputs), extra)
    return ratio_audit(notion.name, requested, notion.epsilon, blocks, len(outputs), extra)


def _divergence_dp(notion: DivergenceDP, mechs) -> Audit:
    if notion.divergence.name != "max":
        return divergence_notions.point_audit(notion, mechs)
    scales = np.asarray(notion.scales(), dtype=float)
    factories = [matrix_blocks(k, notion.i, notion.j, scales, key, notion.labels)
                 for key, k in mechs.items()]
    pairs = int(notion.i.size) * len(mechs)
    requested = {"epsilon": notion.epsilon, "divergence": "max"}
    if notion.delta > 0:
        requested["delta"] = notion.delta
        return hockey_audit(notion.name, requested, notion.epsilon, notion.delta,
                            chain(*factories), pairs)
    return ratio_audit(notion.name, requested, notion.epsilon, chain(*factories), pairs)


def _divergence_distp(notion: DivergenceDistP, mechs) -> Audit:
    if notion.divergence.name == "max":
        return _distp(notion, mechs)
    return divergence_notions.distribution_audit(notion, mechs)


def _shuffle(notion: Shuffle, mechs) -> Audit:
    """The shuffle notion: its local ε0-LDP constraint proven exactly; the central level then
    follows, because the clone bound that chose ε0 (evaluated pessimistically) never decreases
    in the local level, so any matrix that is ε0-LDP meets the central target."""
    local = _ldp(notion.local, mechs)
    common = {"users": notion.users, "delta": notion.delta}
    detail = {**local.detail, "central": "implied: the clone bound at the local level meets the target and never "
                                         "decreases in the level"}
    return Audit(notion.name, {"epsilon": notion.epsilon, **common, "local_epsilon": notion.local_epsilon},
                 {**common, "local_epsilon": local.achieved.get("epsilon")}, local.holds, detail=detail)


_AUDITS = {
    LDP: _ldp,
    Shuffle: _shuffle,
    ApproxLDP: _approx_ldp,
    MetricPrivacy: _metric,
    DistP: _distp,
    XDistP: _distp,
    ProfilePrivacy: _distp,
    DivergenceDP: _divergence_dp,
    DivergenceXDP: _divergence_dp,
    DivergenceDistP: _divergence_distp,
    DivergenceXDistP: _divergence_distp,
    Target: information_notions.target_audit,
    ApproximateKnowledge: divergence_notions.approximate_knowledge_audit,
    MinEntropy: information_notions.min_entropy_audit,
    MutualInformation: information_notions.mutual_information_audit,
    InformationPrivacy: information_notions.capacity_audit,
    GVulnerability: information_notions.g_vulnerability_audit,
}


def covered_notions() -> list[str]:
    """Names of the notion classes the exact audit covers."""
    return sorted(cls.__name__ for cls in _AUDITS)


def exact_audit(notion: Notion, mechs: Mapping[str, np.ndarray]) -> Audit:
    """Re-check ``notion`` on the matrices ``mechs`` (key -> matrix) in exact arithmetic.

    See the module docstring for what ``holds``, ``achieved`` and ``detail`` mean. Raises
    :class:`ProblemError` for a notion class exact mode does not cover.
    """
    fn = _AUDITS.get(type(notion))
    if fn is None:
        raise ProblemError(f"exact mode does not cover the notion '{type(notion).__name__}' "
                           f"({getattr(notion, 'name', '?')}); it covers "
                           f"{', '.join(covered_notions())}", key="notion")
    keys = notion.keys(list(mechs))
    missing = [k for k in keys if k not in mechs]
    if missing:
        raise ProblemError(f"the notion constrains mechanism '{missing[0]}', which was not given",
                           key="mechanism")
    return fn(notion, {k: np.asarray(mechs[k], dtype=float) for k in keys})
