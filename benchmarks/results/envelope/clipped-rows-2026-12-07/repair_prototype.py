import numpy as np


def repaired_duals(lp, it, hops=6):
    """Λ' >= 0 near the unclipped Λ − excess: rows clipped at 0 push the reduced cost of their
    b-side entry down; lower the Λ' of other rows pushing that entry down to cover the deficit."""
    rows = it.rows
    lam_u = it.lam - it.excess
    lam = np.maximum(lam_u, 0.0)
    if not (lam_u < 0).any():
        return lam
    R_u = lp.cost - rows.transpose(lam_u)
    m = lp.row_minima(R_u)
    R = lp.cost - rows.transpose(lam)
    g, n = R.shape
    b, a, out, c = rows.b, rows.a, rows.out, rows.c
    for _ in range(hops):
        D = m[:, None] - R
        D[D < 0] = 0.0
        if not D.any():
            break
        Dr = D[b, out]
        cand = np.flatnonzero((Dr > 0) & (lam > 0))
        if cand.size == 0:
            break
        key = b[cand] * n + out[cand]
        A = np.bincount(key, weights=c[cand] * lam[cand], minlength=g * n)
        f = np.minimum(1.0, Dr[cand] / A[key])
        eta = f * lam[cand]
        lam[cand] -= eta
        np.add.at(R, (b[cand], out[cand]), c[cand] * eta)
        np.add.at(R, (a[cand], out[cand]), -eta)
    return np.maximum(lam, 0.0)


def bounds(lp, it):
    import mechdesign.solvers.metric_joins as joins
    rows = it.rows
    out = {}
    out["settled"] = float(lp.row_minima(lp.cost - rows.transpose(joins.settled(it))).sum())
    out["unclipped"] = float(lp.row_minima(lp.cost - rows.transpose(it.lam - it.excess)).sum())
    lam = repaired_duals(lp, it)
    assert (lam >= 0).all()
    out["repaired"] = float(lp.row_minima(lp.cost - rows.transpose(lam)).sum())
    out["nclip"] = int((it.excess > it.lam).sum())
    return out
