"""Simulating data collection through a mechanism, without a per-user loop.

n users have inputs drawn from λ and each reports y ~ K[x]. The output counts have the law

    n_x ~ Multinomial(n, λ),    c = Σ_x Multinomial(n_x, K[x]),

so one collection costs O(|X| |Y|) draws whatever n is: a billion users cost what a thousand
cost. Repeated collections (trials) use independent child seeds of one SeedSequence, so every
trial is reproducible from (seed, trial index).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism, check_distribution, check_stochastic
from mechdesign.estimation.estimation import (
    ESTIMATORS,
    MEASURES,
    ConvergenceWarning,
    errors,
    ibu,
    matrix_inversion,
)

MAX_USERS = 2**62

#: relative spread of the trials' errors below which they count as equal (see ``std``)
ROUND_OFF = 1e-12


def _check_users(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not (0 <= int(n) <= MAX_USERS):
        raise ProblemError(f"the number of users must be a whole number in [0, 2^62], got {n!r}",
                           key="users")
    return int(n)


def simulate(K, lam, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """Output counts of ``n`` users with inputs ~ λ reporting through K (multinomial method).

    Parameters
    ----------
    K : Mechanism or array (|X|, |Y|), row-stochastic
    lam : array (|X|,)
        Input distribution.
    n : int
        Number of users (up to 2^62).
    rng : numpy Generator, seed or None

    Returns
    -------
    counts : int64 array (|Y|,) summing to n.

    >>> simulate([[1.0, 0.0], [0.0, 1.0]], [0.5, 0.5], 10, rng=0).sum()
    np.int64(10)
    """
    k = K.matrix if isinstance(K, Mechanism) else check_stochastic(K, what="mechanism")
    lam = check_distribution(lam, k.shape[0], "input distribution")
    n = _check_users(n)
    rng = np.random.default_rng(rng)
    n_x = rng.multinomial(n, lam)
    rows = np.flatnonzero(n_x)
    if rows.size == 0:
        return np.zeros(k.shape[1], dtype=np.int64)
    p = k[rows]
    p = p / p.sum(axis=1, keepdims=True)  # guard the multinomial's sum check against round-off
    return rng.multinomial(n_x[rows], p).sum(axis=0).astype(np.int64)


@dataclass
class TrialSummary:
    """Estimation error over repeated simulated collections.

    ``errors[estimator][measure]`` is the array of per-trial errors; :meth:`mean` and
    :meth:`std` (sample standard deviation, ddof = 1; 0 for one trial) summarise them.
    ``ibu_iterations`` holds IBU's update counts and ``ibu_not_converged`` how many trials hit
    the iteration cap.
    """

    users: int
    trials: int
    seed: int | None
    errors: dict[str, dict[str, np.ndarray]]
    ibu_iterations: list[int] = field(default_factory=list)
    ibu_not_converged: int = 0

    def mean(self, estimator: str, measure: str) -> float:
        return float(np.mean(self.errors[estimator][measure]))

    def std(self, estimator: str, measure: str) -> float:
        v = np.asarray(self.errors[estimator][measure], dtype=float)
        # trials whose errors agree to 12 digits agree: their spread is the round-off of the
        # estimate and its distance (sums over the bins, whose last digits differ between CPUs),
        # reported as 0 rather than as a deviation of 1e-16
        if len(v) < 2 or np.ptp(v) <= ROUND_OFF * np.max(np.abs(v)):
            return 0.0
        return float(np.std(v, ddof=1))

    def to_dict(self) -> dict:
        out = {"users": self.users, "trials": self.trials, "seed": self.seed, "estimators": {}}
        for est, by in self.errors.items():
            out["estimators"][est] = {m: {"mean": self.mean(est, m), "std": self.std(est, m)} for m in by}
        if self.ibu_iterations:
            out["ibu"] = {"iterations_mean": float(np.mean(self.ibu_iterations)),
                          "iterations_max": int(np.max(self.ibu_iterations)),
                          "not_converged": self.ibu_not_converged}
        return out


def run_trials(K, lam, n: int, *, trials: int = 10, seed: int | np.random.SeedSequence | None = 0,
               estimators: Sequence[str] = ESTIMATORS, measures: Sequence[str] = MEASURES,
               cost=None, ibu_options: dict | None = None) -> TrialSummary:
    """Simulate ``trials`` independent collections of ``n`` users and estimate λ each time.

    Trial t uses ``np.random.default_rng(SeedSequence(seed).spawn(trials)[t])`` (``seed`` may be
    a SeedSequence itself). EMD needs the
    ground ``cost`` matrix over the inputs (default: discrete, EMD = TV).
    """
    k = K.matrix if isinstance(K, Mechanism) else check_stochastic(K, what="mechanism")
    lam = check_distribution(lam, k.shape[0], "input distribution")
    n = _check_users(n)
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ProblemError(f"the number of trials must be a positive whole number, got {trials!r}",
                           key="trials")
    for est in estimators:
        if est not in ESTIMATORS:
            raise ProblemError(f"unknown estimator '{est}'; expected one of: {', '.join(ESTIMATORS)}")
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    children = root.spawn(int(trials))
    out = {est: {m: np.empty(int(trials)) for m in measures} for est in estimators}
    iterations, stuck = [], 0
    options = {"warn": False, **(ibu_options or {})}
    for t, child in enumerate(children):
        counts = simulate(k, lam, n, np.random.default_rng(child))
        for est in estimators:
            if est == "inv":
                theta = matrix_inversion(k, counts)
            else:
                res = ibu(k, counts, **options)
                iterations.append(res.iterations)
                stuck += not res.converged
                theta = res.estimate
            for m, v in errors(lam, theta, cost, measures).items():
                out[est][m][t] = v
    if stuck:
        warnings.warn(f"IBU stopped at its iteration cap in {stuck} of {trials} trials", ConvergenceWarning,
                      stacklevel=2)
    label = seed if not isinstance(seed, np.random.SeedSequence) else seed.entropy
    return TrialSummary(n, int(trials), label, out, iterations, stuck)
