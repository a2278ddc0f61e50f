"""The exponential mechanism with the best remap: a design every ε·d-privacy problem has without
a solver.

Over the inputs x with a metric d, the exponential mechanism (McSherry and Talwar, "Mechanism
design via differential privacy", FOCS 2007) reports input z with probability

    E[x, z] = e^{−ε d(x, z)/2} / Σ_z' e^{−ε d(x, z')/2},

which is ε·d-private by the triangle inequality (each numerator, and so each normaliser, changes
by at most e^{ε d(x, x')/2} between x and x'). Mapping every reported z to one output r(z) is
post-processing, so K = E R is private too, for any outputs; for an expected loss the best map
sends z to the output of least Σ_x W[x] E[x, z] L[x, y]. Where a large problem stops at its time
limit before the solver's design is any good (a first pricing round unfinished), this is the
design offered instead; its audit decides, as for every design.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mechdesign.privacy.metric import exponential_weights

#: reports whose best outputs are found at once (the sums for a chunk take REMAP_CHUNK × |Y|)
REMAP_CHUNK = 512


def metric_notion(privacy):
    """The single ε·d-privacy notion of ``privacy`` (bound to its metric and domain), or None
    when there are other notions or none: the mechanism is private for one ε and one d."""
    from mechdesign.privacy.metric import MetricPrivacy

    notions = list(privacy)
    if len(notions) != 1 or not isinstance(notions[0], MetricPrivacy):
        return None
    notion = notions[0]
    return notion if notion.metric is not None and notion.domain is not None else None


def exponential_mechanism(notion) -> np.ndarray:
    """E over the notion's inputs (:func:`exponential_weights` of the distances its constraints imply:
    a matrix's shortest-path closure, whose triangle inequality the privacy argument needs)."""
    return exponential_weights(notion.metric.privacy_distances(notion.domain), notion.epsilon)


def remapped_exponential(privacy, keys: list[str], n: int, m: int, objective) -> dict | None:
    """{key: E R_key} with each key's best map R_key of the reported inputs to the m outputs
    under an expected loss (:meth:`~mechdesign.core.objectives.ExpectedLoss.cost`), or E itself
    when there are as many outputs as inputs and the objective offers no cost; None when the
    problem has no single ε·d-privacy notion over its n inputs."""
    notion = metric_notion(privacy)
    if notion is None or len(notion.domain) != n:
        return None
    E = exponential_mechanism(notion)
    cost = getattr(objective, "cost", None)
    if cost is None or getattr(objective, "kind", None) != "expected-loss":
        return {k: E for k in keys} if n == m else None
    designs = {}
    for k in keys:
        C = np.asarray(cost(k), dtype=float)
        # the best output of each report z, Σ_x E[x, z] C[x, y] least, for reports in chunks
        # (never the whole |X| × |Y| matrix of these sums beside E and the design)
        best = np.concatenate([np.argmin(E[:, z:z + REMAP_CHUNK].T @ C, axis=1) for z in range(0, n, REMAP_CHUNK)])
        remap = sp.csr_matrix((np.ones(n), (np.arange(n), best)), shape=(n, m))  # report z -> output best[z]
        designs[k] = np.asarray((remap.T @ E.T).T)  # E R, as a sparse product
    return designs
