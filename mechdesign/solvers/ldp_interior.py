"""An interior-point method for the ε-LDP design LP that exploits its structure: every output
at once, in O(|X|²|Y|) work per iteration whatever ε is.

The LP (columns of K in the ε-LDP cone, written with each column's floor m_y)

    min Σ_{x,y} C[x, y] K[x, y]   s.t.  Σ_y K[x, y] = 1,   m_y <= K[x, y] <= e^ε m_y

is solved by Mehrotra's predictor–corrector (Mehrotra, “On the implementation of a primal-dual
interior point method”, SIAM J. Optim. 1992) on the variables K, m with the 2|X||Y| inequalities
kept strictly satisfied by the step lengths. Writing D1 = λ/(K − m), D2 = ν/(e^ε m − K) for the
inequalities' scaled duals, the Newton system's K block is diagonal (P = D1 + D2 per entry) and
eliminates entry by entry; what remains couples the floors m (a diagonal block
T_y = (e^ε − 1)² Σ_x D1 D2/(D1 + D2)) and the row duals u (a diagonal block W_x = Σ_y 1/P)
through B = (D1 + e^ε D2)/P, whose entries lie in [1, e^ε] at every iteration. The reduced system
diag(W) + B diag(1/T) Bᵀ (or its counterpart on the floors, whichever side is smaller) is dense
and positive definite: one matrix product and one Cholesky factorisation per iteration.

Column generation (:mod:`mechdesign.solvers.column_generation`) is exact too, and faster when the
optimum uses few outputs, but when it needs nearly every output (large ε) its restricted master
becomes the whole LP, a simplex run over |X||Y| variables and as many rows. The interior-point
iteration count does not depend on how many outputs the optimum uses.

Nothing here is trusted for the bound: the iterate's row duals u are priced over every output
with :func:`~mechdesign.solvers.column_generation.dual_bound` (a lower bound for any u), and the
run stops when the design's value is within ``tol`` of that proven bound. The design returned is
the last iterate with its rows rescaled to sum to 1; the certificate re-checks it like any other.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from mechdesign.core.limits import Limits
from mechdesign.solvers.column_generation import LDPCone, dual_bound
from mechdesign.solvers.contexts import ContextSolution
from mechdesign.solvers.highs_model import SolverDeclined

NAME = "ε-LDP interior point"
#: the largest ε taken: the iteration's products carry e^ε and e^{2ε}, and beyond e^20 the
#: reduced system loses the floors' contribution to round-off
MAX_EPSILON = 20.0
#: iterations before the method gives up proving an optimum
MAX_ITERATIONS = 200
#: how close to the boundary a step may go (the fraction of the largest feasible step): 0.9
#: keeps the iterate away from the boundary where the steps become short (measured over ε 1 and
#: 8, three priors and three losses at |X| = |Y| = 300: 30% fewer iterations than 0.995)
STEP_FRACTION = 0.9
#: centrality correctors per iteration at most (each one more solve with the same factors)
MAX_CORRECTORS = 6


class _Iterate:
    """The primal (K, m) and dual (u, λ, ν) iterate, with the inequalities' slacks."""

    def __init__(self, cost: np.ndarray, top: float):
        n, k = cost.shape
        self.top = top
        self.K = np.full((n, k), 1.0 / k)
        # floors with e^ε m − K = e^ε (K − m): with λ = μ0/(K − m) and ν = μ0/(e^ε m − K) every
        # complementarity product is μ0 and Σ_x λ = e^ε Σ_x ν, so the floors' stationarity holds
        # from the start (a start centred between K/e^ε and K leaves it off by a factor e^ε and
        # costs tens of short steps at large ε)
        self.m = np.full(k, (1.0 + top) / (2.0 * top * k))
        s1 = 1.0 / k - self.m[0]
        s2 = top * self.m[0] - 1.0 / k
        mu0 = s1 * (1.0 + float(np.abs(cost).max(initial=0.0)))
        self.u = np.zeros(n)
        self.lam = np.full((n, k), mu0 / s1)
        self.nu = np.full((n, k), mu0 / s2)

    def slacks(self) -> tuple[np.ndarray, np.ndarray]:
        return self.K - self.m, self.top * self.m - self.K


def _max_step(dx: np.ndarray, inv_x: np.ndarray) -> float:
    """The largest α <= 1 with x + α dx >= 0, for x > 0 given by its reciprocals ``inv_x``."""
    low = float((dx * inv_x).min(initial=0.0))
    return 1.0 if low >= -1.0 else -1.0 / low


class _Newton:
    """The reduced Newton system at one iterate, factorised once for the predictor and the
    corrector."""

    def __init__(self, it: _Iterate, inv1: np.ndarray, inv2: np.ndarray):
        top = it.top
        self.d1, self.d2 = it.lam * inv1, it.nu * inv2
        self.P = self.d1 + self.d2
        self.invP = 1.0 / self.P
        self.B = (self.d1 + top * self.d2) * self.invP
        self.T = (top - 1.0) ** 2 * (self.d1 * self.d2 * self.invP).sum(axis=0)
        self.W = self.invP.sum(axis=1)
        n, k = self.P.shape
        self.on_rows = n <= k
        if self.on_rows:  # diag(W) + B diag(1/T) Bᵀ, n × n
            system = (self.B / self.T) @ self.B.T
            system[np.diag_indices(n)] += self.W
        else:  # diag(T) + Bᵀ diag(1/W) B, k × k
            system = self.B.T @ (self.B / self.W[:, None])
            system[np.diag_indices(k)] += self.T
        self.factor = _cholesky(system)

    def solve(self, g: np.ndarray, h: np.ndarray, f: np.ndarray):
        """(dK, dm, du) with P dK − B P dm − du = g (per entry), −Σ_x P B dK + R dm = h,
        Σ_y dK = f, in the eliminated form of the module docstring."""
        B, T, W = self.B, self.T, self.W
        g_over_P = g * self.invP
        h2 = h + (B * g).sum(axis=0)
        f2 = f - g_over_P.sum(axis=1)
        if self.on_rows:
            du = scipy.linalg.cho_solve(self.factor, f2 - B @ (h2 / T))
            dm = (h2 + B.T @ du) / T
        else:
            dm = scipy.linalg.cho_solve(self.factor, h2 + B.T @ (f2 / W))
            du = (f2 - B @ dm) / W
        dK = g_over_P + B * dm[None, :] + du[:, None] * self.invP
        return dK, dm, du


def _cholesky(system: np.ndarray):
    """The Cholesky factor of the reduced system, with a growing diagonal shift when round-off
    has cost it its definiteness near the optimum."""
    shift = 0.0
    scale = float(np.max(np.abs(np.diag(system)))) or 1.0
    for _ in range(8):
        try:
            return scipy.linalg.cho_factor(system if shift == 0.0 else system + shift * np.eye(len(system)),
                                           lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            shift = scale * (1e-14 if shift == 0.0 else 100.0 * shift / scale)
    raise SolverDeclined("the interior-point system lost definiteness")


def _steps(inverses, step) -> tuple[float, float]:
    """The largest primal and dual step lengths (at most 1) that keep the iterate interior;
    ``inverses`` are the reciprocals of the slacks and of the duals λ, ν."""
    inv1, inv2, inv_lam, inv_nu = inverses
    _, _, _, ds1, ds2, dlam, dnu = step
    return (min(_max_step(ds1, inv1), _max_step(ds2, inv2)),
            min(_max_step(dlam, inv_lam), _max_step(dnu, inv_nu)))


def _centring(v: np.ndarray, target: float) -> np.ndarray:
    """The correction of complementarity products ``v`` towards [0.1, 10]·target, the large
    ones' correction capped at −10·target (Gondzio, “Multiple centrality corrections in a
    primal-dual method for linear programming”, Comput. Optim. Appl. 1996)."""
    low, high = 0.1 * target, 10.0 * target
    t = np.where(v < low, low - v, np.where(v > high, high - v, 0.0))
    return np.maximum(t, -high)


def _design(K: np.ndarray) -> np.ndarray:
    """The iterate with each row rescaled to sum to 1."""
    return K / K.sum(axis=1, keepdims=True)


class InteriorPoint:
    """The method one iteration at a time (:meth:`advance`), so that a caller can interleave it
    with another method: :attr:`value` and :meth:`design` are the best design so far (the
    row-normalised iterate of least objective), :attr:`bound` the best bound proven so far, and
    :attr:`done` whether the two are within ``tol``·max(1, |value|)."""

    name = "interior point"

    def __init__(self, cost: np.ndarray, epsilon: float, *, tol: float = 1e-9):
        if not 0.0 < epsilon <= MAX_EPSILON:
            raise SolverDeclined(f"ε = {epsilon:g} is outside (0, {MAX_EPSILON:g}]")
        self.cost, self.tol = cost, tol
        self.top = math.exp(epsilon)
        self.cone = LDPCone(cost.shape[0], epsilon)
        self.it = _Iterate(cost, self.top)
        self.value, self.bound, self._design = math.inf, -math.inf, None
        self.rounds, self.done = 0, False
        self._evaluate()

    def _evaluate(self) -> None:
        """The current iterate's design and the bound its row duals prove."""
        it, cost = self.it, self.cost
        design = _design(it.K)
        value = float((cost * design).sum())
        if value < self.value:
            self.value, self._design = value, design
        self.bound = max(self.bound, dual_bound(it.u, self.cone.price(cost - it.u[:, None])))
        self.done = self.value - self.bound <= self.tol * max(1.0, abs(self.value))

    @property
    def columns(self) -> int:
        """The outputs the method works with: all of them."""
        return self.cost.shape[1]

    def design(self) -> np.ndarray:
        return self._design

    def result(self, stopped: bool = False) -> ContextSolution:
        return ContextSolution(self._design, self.value, min(self.bound, self.value), self.rounds,
                               self.columns, stopped)

    def advance(self, limits=None) -> bool:
        """One predictor–corrector step, then the new iterate's design and bound. Raises
        :class:`SolverDeclined` after :data:`MAX_ITERATIONS` steps or when the system breaks
        down. (``limits`` is not needed: one step is one factorisation.)"""
        if self.rounds >= MAX_ITERATIONS:
            raise SolverDeclined(f"no proof of optimality within {MAX_ITERATIONS} interior-point iterations "
                                 f"(gap {self.value - self.bound:.3g})")
        self.rounds += 1
        _step(self.it, self.cost)
        self._evaluate()
        return True


def _step(it: _Iterate, cost: np.ndarray) -> None:
    """Move the iterate by one Mehrotra predictor–corrector step with Gondzio's correctors."""
    n, k = cost.shape
    top = it.top
    s1, s2 = it.slacks()
    inverses = (1.0 / s1, 1.0 / s2, 1.0 / it.lam, 1.0 / it.nu)
    inv1, inv2 = inverses[0], inverses[1]
    # residuals: stationarity in K and m, and the row sums
    r_K = cost - it.u[:, None] - it.lam + it.nu
    r_m = it.lam.sum(axis=0) - top * it.nu.sum(axis=0)
    f = 1.0 - it.K.sum(axis=1)
    mu = float((s1 * it.lam).sum() + (s2 * it.nu).sum()) / (2 * n * k)
    newton = _Newton(it, inv1, inv2)

    def direction(c1, c2):
        a, b = c1 * inv1, c2 * inv2
        g = a - b - r_K
        h = -r_m - a.sum(axis=0) + top * b.sum(axis=0)
        dK, dm, du = newton.solve(g, h, f)
        ds1 = dK - dm[None, :]
        ds2 = top * dm[None, :] - dK
        dlam = a - newton.d1 * ds1
        dnu = b - newton.d2 * ds2
        return dK, dm, du, ds1, ds2, dlam, dnu

    # predictor (affine scaling)
    aff = direction(-s1 * it.lam, -s2 * it.nu)
    _, _, _, ds1, ds2, dlam, dnu = aff
    a_p, a_d = _steps(inverses, aff)
    mu_aff = float(((s1 + a_p * ds1) * (it.lam + a_d * dlam)).sum()
                   + ((s2 + a_p * ds2) * (it.nu + a_d * dnu)).sum()) / (2 * n * k)
    sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
    # corrector
    c1 = sigma * mu - s1 * it.lam - ds1 * dlam
    c2 = sigma * mu - s2 * it.nu - ds2 * dnu
    step = direction(c1, c2)
    a_p, a_d = _steps(inverses, step)
    # Gondzio's centrality correctors: aim at a longer step, and push the trial point's
    # complementarity products that fall outside [β_min σμ, β_max σμ] back into it
    for _ in range(MAX_CORRECTORS):
        goal_p, goal_d = min(1.0, 1.5 * a_p + 0.1), min(1.0, 1.5 * a_d + 0.1)
        _, _, _, ds1, ds2, dlam, dnu = step
        v1 = (s1 + goal_p * ds1) * (it.lam + goal_d * dlam)
        v2 = (s2 + goal_p * ds2) * (it.nu + goal_d * dnu)
        target = sigma * mu
        t1 = _centring(v1, target)
        t2 = _centring(v2, target)
        trial = direction(c1 + t1, c2 + t2)
        b_p, b_d = _steps(inverses, trial)
        if b_p + b_d < 1.01 * (a_p + a_d):
            break
        step, a_p, a_d, c1, c2 = trial, b_p, b_d, c1 + t1, c2 + t2
    dK, dm, du, ds1, ds2, dlam, dnu = step
    a_p, a_d = STEP_FRACTION * a_p, STEP_FRACTION * a_d
    if not (math.isfinite(a_p) and math.isfinite(a_d)):
        raise SolverDeclined("the interior-point direction is not finite")
    it.K += a_p * dK
    it.m += a_p * dm
    it.u += a_d * du
    it.lam += a_d * dlam
    it.nu += a_d * dnu


def solve_by_interior_point(cost: np.ndarray, epsilon: float, *, tol: float = 1e-9,
                            limits: Limits | None = None) -> ContextSolution:
    """Minimise Σ cost·K over ε-LDP row-stochastic K (see the module docstring) by
    :class:`InteriorPoint` steps; the bound returned is the best one proven. Stops when value −
    bound <= tol·max(1, |value|), at ``limits``' deadline (``stopped=True``), or raises
    :class:`SolverDeclined` after :data:`MAX_ITERATIONS` or when the system breaks down."""
    run = InteriorPoint(cost, epsilon, tol=tol)
    while not run.done:
        if limits is not None:
            limits.report(NAME, run.rounds, run.value, run.bound)
            if limits.expired():
                return run.result(stopped=True)
        run.advance()
    return run.result()
