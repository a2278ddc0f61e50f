"""Estimating the original distribution from obfuscated reports (Palamidessi, “Privacy vs Utility, Differential Privacy and the Hybrid Model”, lecture slides), and accuracy.

n users with inputs drawn from λ each report y ~ K[x]; the collector sees the output counts
c (or frequencies q̂ = c / n) and estimates λ:

* matrix inversion (Inv): solve θ K = q̂ (least squares when K is not square or singular),
  then project θ onto the probability simplex (exact Euclidean projection);
* the Iterative Bayesian Update (IBU), i.e. EM for the maximum-likelihood estimate

      θ* = argmax_{θ ∈ simplex} Σ_y q̂_y ln (θ K)_y,
      θ_{t+1}[x] = θ_t[x] Σ_y q̂_y K[x, y] / (θ_t K)_y,

  usable on any channel, with a tolerance, an iteration cap and an honest report of whether it
  converged (optionally accelerated by SQUAREM, which has the same fixed points).

Accuracy: TV, L1, L2 and the Earth mover's distance EMD = W1 over the ground metric.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism
from mechdesign.core.simplex import project_simplex

MEASURES = ("tv", "l1", "l2", "emd")
ESTIMATORS = ("inv", "ibu")


class ConvergenceWarning(UserWarning):
    """IBU stopped at its iteration cap before reaching its tolerance."""


def _matrix(K) -> np.ndarray:
    return K.matrix if isinstance(K, Mechanism) else np.asarray(K, dtype=float)


def _frequencies(counts, m: int) -> np.ndarray:
    c = np.asarray(counts, dtype=float)
    if c.ndim != 1 or c.size != m:
        raise ProblemError(f"expected {m} output counts (one per output), got shape {c.shape}")
    if np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ProblemError("output counts must be finite and non-negative")
    total = c.sum()
    if total <= 0:
        raise ProblemError("output counts are all zero: nothing to estimate from")
    return c / total


# ---------------------------------------------------------------------------------------------
# matrix inversion

def matrix_inversion(K, counts, project: bool = True) -> np.ndarray:
    """Inv (Palamidessi’s slides): θ with θ K = q̂, then projected onto the simplex.

    For a square invertible K this is θ = q̂ K^{-1} (so exact output frequencies λK give back λ
    exactly, up to round-off); otherwise the minimum-norm least-squares solution of
    min_θ ||θ K − q̂||_2.

    Parameters
    ----------
    K : Mechanism or array (|X|, |Y|)
    counts : array (|Y|,)
        Output counts or frequencies (normalised here).
    project : bool
        Project onto the simplex (default); False returns the raw, possibly negative solution.
    """
    k = _matrix(K)
    q = _frequencies(counts, k.shape[1])
    theta = None
    if k.shape[0] == k.shape[1]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                theta = np.linalg.solve(k.T, q)
            # an ill-conditioned solve shows as a large residual or blown-up entries
            if not np.all(np.isfinite(theta)) or np.abs(theta @ k - q).max() > 1e-9 \
                    or np.abs(theta).max() > 1e12:
                theta = None
        except (np.linalg.LinAlgError, RuntimeWarning):
            theta = None
    if theta is None:
        theta = np.linalg.lstsq(k.T, q, rcond=None)[0]
    return project_simplex(theta) if project else theta


# ---------------------------------------------------------------------------------------------
# IBU

@dataclass
class IBUResult:
    """Outcome of :func:`ibu`.

    Attributes
    ----------
    estimate : array
        The estimate θ (on the simplex).
    iterations : int
        Number of IBU (EM) updates evaluated.
    converged : bool
        True when the last IBU update moved θ by at most ``tol`` (L1); False when it stopped at
        the iteration cap.
    change : float
        ||IBU(θ) − θ||_1 at the returned θ (the fixed-point residual).
    gap : float
        max_x g_x − 1 with g = ∇ of the average log-likelihood: by concavity, the average
        log-likelihood of θ is within ``gap`` of the maximum (a certificate of optimality).
    log_likelihood : float
        Σ_y q̂_y ln (θ K)_y.
    """

    estimate: np.ndarray
    iterations: int
    converged: bool
    change: float
    gap: float
    log_likelihood: float
    method: str = "em"
    history: list = field(default_factory=list, repr=False)


def _loglik(q, pred) -> float:
    with np.errstate(divide="ignore"):
        return float(np.sum(np.where(q > 0, q * np.log(np.where(q > 0, pred, 1.0)), 0.0)))


def ibu(K, counts, *, tol: float = 1e-8, max_iter: int = 100_000, init=None,
        accelerate: bool = True, warn: bool = True) -> IBUResult:
    """Iterative Bayesian Update (EM) for the maximum-likelihood estimate of λ (Palamidessi’s slides).

    One update: θ'[x] = θ[x] · g_x with g_x = Σ_y q̂_y K[x, y] / (θK)_y. Its fixed points on the
    interior of the simplex are the maximum-likelihood estimates; the iteration stops when
    ||θ' − θ||_1 <= tol, or at ``max_iter`` updates, in which case ``converged`` is False and a
    :class:`ConvergenceWarning` says so (never a silent stop). Predicted probabilities are used
    as they are (no flooring of small values).

    With ``accelerate`` (default) the updates are combined by SQUAREM (Varadhan & Roland 2008,
    scheme S3, with the step pulled back towards plain EM when it would leave the simplex or
    lower the likelihood): same fixed points, far fewer updates on noisy channels. Iterations
    count IBU updates either way.

    Parameters
    ----------
    K : Mechanism or array (|X|, |Y|)
    counts : array (|Y|,)
        Output counts or frequencies.
    tol : float
        L1 tolerance on one update's change.
    max_iter : int
        Cap on the number of IBU updates.
    init : array, optional
        Starting point (default uniform; must be positive where the MLE may be positive).
    """
    k = _matrix(K)
    q = _frequencies(counts, k.shape[1])
    if not (tol > 0):
        raise ProblemError(f"IBU tolerance must be positive, got {tol!r}", key="tol")
    if int(max_iter) < 1:
        raise ProblemError(f"IBU iteration cap must be at least 1, got {max_iter!r}", key="max_iter")
    support = q > 0
    ks, qs = k[:, support], q[support]
    n = k.shape[0]
    theta = np.full(n, 1.0 / n) if init is None else np.asarray(init, dtype=float).copy()
    theta = theta / theta.sum()
    evals, converged, change = 0, False, math.inf
    while evals < max_iter:
        t1, pred0 = _ibu_update(theta, ks, qs)
        evals += 1
        change = float(np.abs(t1 - theta).sum())
        if change <= tol:
            converged = True
            break
        if not accelerate or evals >= max_iter:
            theta = t1
            continue
        theta, used = _squarem_step(theta, t1, pred0, ks, qs, room=max_iter - evals)
        evals += used
    if converged:
        theta = t1  # the last (converged) update
    else:
        # the residual at the returned point
        nxt, pred = _ibu_update(theta, ks, qs)
        if np.any(pred > 0):
            change = float(np.abs(nxt - theta).sum())
        if warn:
            warnings.warn(f"IBU stopped at its iteration cap ({max_iter} updates) before converging: "
                          f"last change {change:.3g} > tolerance {tol:g}", ConvergenceWarning,
                          stacklevel=2)
    pred = theta @ ks
    with np.errstate(divide="ignore", invalid="ignore"):
        g = ks @ np.where(pred > 0, qs / pred, 0.0)
    return IBUResult(theta, evals, converged, change, float(g.max() - 1.0), _loglik(qs, pred),
                     "squarem" if accelerate else "em")


def _ibu_update(theta: np.ndarray, ks: np.ndarray, qs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One IBU update θ'[x] = θ[x]·Σ_y q̂_y K[x, y] / (θK)_y, normalised (θ itself when every
    prediction on the support is 0); also the predictions θK it used."""
    pred = theta @ ks
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(pred > 0, qs / pred, 0.0)
    new = theta * (ks @ ratio)
    total = new.sum()
    return (new / total if total > 0 else theta), pred


def _squarem_step(theta, t1, pred0, ks, qs, room: int) -> tuple[np.ndarray, int]:
    """SQUAREM's extrapolation from θ through two updates t1, t2 (Varadhan and Roland 2008,
    scheme S3): x = θ − 2αr + α²v with r = t1 − θ, v = t2 − t1 − r and α = −|r|/|v|, halved
    towards plain EM (α = −1 gives t2) while x leaves the simplex or lowers the likelihood;
    one plain update after a real extrapolation keeps the iterate well inside. Returns the new
    iterate and the updates used (at most ``room`` beyond t1's)."""
    t2, _ = _ibu_update(t1, ks, qs)
    used = 1
    r = t1 - theta
    v = t2 - t1 - r
    nv = float(np.linalg.norm(v))
    if nv == 0.0:
        return t2, used
    alpha = -float(np.linalg.norm(r)) / nv
    base = _loglik(qs, pred0)
    candidate = t2
    while alpha < -1.0:
        x = theta - 2 * alpha * r + alpha * alpha * v
        if np.all(x >= 0):
            x = x / x.sum()
            if _loglik(qs, x @ ks) >= base:
                candidate = x
                break
        alpha = (alpha - 1.0) / 2.0
    if used < room and candidate is not t2:
        candidate, _ = _ibu_update(candidate, ks, qs)
        used += 1
    return candidate, used


def estimate(K, counts, method: str, **options) -> np.ndarray:
    """Estimate λ by ``"inv"`` or ``"ibu"`` (the IBU options are passed on)."""
    if method == "inv":
        return matrix_inversion(K, counts)
    if method == "ibu":
        return ibu(K, counts, **options).estimate
    raise ProblemError(f"unknown estimator '{method}'; expected one of: {', '.join(ESTIMATORS)}")


# ---------------------------------------------------------------------------------------------
# accuracy

def tv(a, b) -> float:
    """Total variation distance ½ Σ |a − b|."""
    return 0.5 * l1(a, b)


def l1(a, b) -> float:
    return float(np.abs(np.asarray(a, float) - np.asarray(b, float)).sum())


def l2(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a, float) - np.asarray(b, float)))


def emd(a, b, cost) -> float:
    """Earth mover's distance W1(a, b) over the ground cost matrix (Palamidessi’s accuracy), via
    :func:`mechdesign.transport.coupling.wasserstein`."""
    from mechdesign.transport.coupling import wasserstein

    a, b = (np.clip(np.asarray(v, float), 0.0, None) for v in (a, b))
    a, b, cost = a / a.sum(), b / b.sum(), np.asarray(cost, float)
    try:
        return float(wasserstein(a, b, cost, p=1))
    except RuntimeError:
        # coupling.wasserstein has been seen to refuse masses around 1e-11..1e-25 ("transportation
        # LP infeasible with a feasible staircase"); solve the transportation LP directly then
        return _transport_lp(a, b, cost)


def _transport_lp(a, b, cost) -> float:
    """W1 as the transportation LP min Σ γ c, γ 1 = a, γᵀ1 = b, γ >= 0 (HiGHS via SciPy)."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    n, m = cost.shape
    rows = sp.kron(sp.identity(n), np.ones((1, m))).tocsr()
    cols = sp.kron(np.ones((1, n)), sp.identity(m)).tocsr()[:-1]  # the last is implied (Σa = Σb);
    # keeping it lets round-off make the equalities inconsistent (HiGHS presolve: "infeasible")
    res = linprog(cost.ravel(), A_eq=sp.vstack([rows, cols]).tocsc(), b_eq=np.concatenate([a, b[:-1]]),
                  bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"the transportation LP for the EMD failed: {res.message}")
    return float(res.fun)


def errors(true, est, cost=None, measures=MEASURES) -> dict[str, float]:
    """Accuracy of an estimate: the requested measures (EMD needs ``cost``; with no ground metric
    the discrete cost makes EMD equal to TV)."""
    out = {}
    for m in measures:
        if m == "tv":
            out[m] = tv(true, est)
        elif m == "l1":
            out[m] = l1(true, est)
        elif m == "l2":
            out[m] = l2(true, est)
        elif m == "emd":
            c = cost if cost is not None else 1.0 - np.eye(len(true))
            out[m] = emd(true, est, c)
        else:
            raise ProblemError(f"unknown accuracy measure '{m}'; expected one of: {', '.join(MEASURES)}")
    return out
