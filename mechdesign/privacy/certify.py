"""From raw solver matrices to certified ones.

1. clean round-off: clip negatives, renormalise rows;
2. repair pure ratio constraints that solver tolerance broke (each notion's own exact repair,
   e.g. the column envelope for LDP and d-privacy);
3. if some constraint still fails, mix with a data-independent mechanism (which satisfies every
   notion with zero leakage) by the smallest weight that makes all audits hold;
4. audit every constraint on the final matrices.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from mechdesign.core.audit_record import Audit
from mechdesign.privacy.base import Notion
from mechdesign.privacy.level_memo import remembering_levels
from mechdesign.privacy.repair_clock import repairing_until


def clean(k: np.ndarray) -> np.ndarray:
    """Clip negative round-off and renormalise rows (an all-zero row becomes uniform)."""
    k = np.clip(np.nan_to_num(np.asarray(k, dtype=float), nan=0.0), 0.0, None)
    sums = k.sum(axis=1, keepdims=True)
    zero = sums[:, 0] <= 0
    if np.any(zero):
        k[zero] = 1.0
        sums = k.sum(axis=1, keepdims=True)
    return k / sums


def audit_all(notions: Sequence[Notion], mechs: Mapping[str, np.ndarray]) -> list[Audit]:
    return [n.audit({k: mechs[k] for k in n.keys(list(mechs))}) for n in notions]


def neutral_row(notions: Sequence[Notion], n_outputs: int,
                mechs: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
    """The row of the data-independent design every notion accepts (the first notion that
    needs a particular one decides; else uniform), for the matrices ``mechs`` if given."""
    for n in notions:
        keyed = None if mechs is None else {k: mechs[k] for k in n.keys(list(mechs)) if k in mechs}
        row = n.neutral_row(n_outputs, keyed)
        if row is not None:
            return np.asarray(row, dtype=float)
    return np.full(n_outputs, 1.0 / n_outputs)


def mix(mechs: Mapping[str, np.ndarray], row: np.ndarray, t: float) -> dict[str, np.ndarray]:
    return {k: (1 - t) * v + t * row[None, :] for k, v in mechs.items()}


def certify(notions: Sequence[Notion], raw: Mapping[str, np.ndarray], *,
            deadline: float | None = None) -> tuple[dict, list[Audit], dict]:
    """Clean, repair and audit. Returns (matrices, audits, notes on what repair did). A level
    the repair computed on a final matrix is read back by the audit (same notion, same bytes).
    Repairs that work in rounds stop improving their matrix when another round would pass
    ``deadline`` (a ``time.perf_counter()`` moment; :mod:`repair_clock`)."""
    with remembering_levels(), repairing_until(deadline):
        return _certify(notions, raw)


def _certify(notions, raw):
    mechs = {k: clean(v) for k, v in raw.items()}
    notes: dict = {}
    for _ in range(3):
        for notion in notions:
            keys = notion.keys(list(mechs))
            mechs.update(notion.repair({k: mechs[k] for k in keys}))
        audits = audit_all(notions, mechs)
        if all(a.holds for a in audits):
            return mechs, audits, notes
    # last resort: mix with a data-independent mechanism, smallest weight that makes all hold
    row = neutral_row(notions, next(iter(mechs.values())).shape[1], mechs)

    def holds(t):
        return all(a.holds for a in audit_all(notions, mix(mechs, row, t)))

    hi = 1e-14
    while hi < 1.0 and not holds(hi):
        hi *= 4.0
    hi = min(hi, 1.0)
    if holds(hi):
        lo = hi / 4.0 if hi > 1e-14 else 0.0
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            if holds(mid):
                hi = mid
            else:
                lo = mid
        # the bisection ends at the audit tolerance's edge, where the last digits of the level
        # (which differ between CPUs, and in an exact interval audit) can tip it over: take a
        # little more weight (a quarter more, at most 1e-9) where that holds too, so the level
        # sits inside the tolerance by far more than round-off while the mix stays the smallest
        # to 1e-9
        more = hi + min(0.25 * hi, 1e-9)
        if more <= 1.0 and holds(more):
            hi = more
        mechs = mix(mechs, row, hi)
        notes["mixed_with_data_independent"] = hi
    audits = audit_all(notions, mechs)
    return mechs, audits, notes
