"""Central guarantees of a designed matrix: shuffled reports and repeated reports.

* ``amplify(K, users=n, delta=δ) -> ε`` and ``amplification(...)`` (both bounds) — n users each
  report once through K and a shuffler hides who sent what (:mod:`.shuffle`, from the clone
  bound of Feldman, McMillan and Talwar in :mod:`.clones` and the variation-ratio reduction of
  Wang et al. in :mod:`.variation_ratio`, both evaluated on the count model of
  :mod:`.shuffled_counts`);
* ``clone_local_level(ε, users, δ)`` — the largest local level whose clone bound meets a central
  target (what the ``shuffle`` privacy notion designs at);
* ``compose(K, times=T, delta=δ) -> ε`` and ``compose_pairs(...)`` (the whole ε(δ) curve) — one
  user reports T times through K (:mod:`.composition`, on the privacy loss distributions of
  :mod:`.privacy_loss`).

Every number reported is an upper bound on the exact one. The names load on first use.
"""

from __future__ import annotations

from mechdesign.core.lazy_import import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "amplify": "shuffle", "amplification": "shuffle", "Amplification": "shuffle",
    "clone_epsilon": "clones", "clone_local_level": "clones",
    "VariationRatio": "variation_ratio", "variation_ratio_epsilon": "variation_ratio",
    "compose": "composition", "compose_pairs": "composition", "Composition": "composition",
    "LossDistribution": "privacy_loss", "pair_losses": "privacy_loss",
    "local_level": "reading",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
