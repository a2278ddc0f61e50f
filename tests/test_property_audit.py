"""Property tests: every matrix a solve returns passes an audit written here from the
definitions, over all ordered pairs of inputs, with no reduction of the library's.

Hypothesis draws the structure itself (sizes, coordinates with coincident points, priors with
zero entries, ε from 1e-6 to 700, the notion and the objective), so a failure shrinks to a
minimal problem. The reference audits below use their own distances (not the library's
metrics) and log-space ratios: a zero next to a non-zero in a column is an infinite level,
coincident inputs (distance 0) must have identical rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechdesign import problem_from_dict

#: the library's audit tolerance on the privacy parameter
TOL = 1e-9
EARTH_KM = 6371.0088

settings.register_profile(
    "audit", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# reference audits, straight from the definitions ----------------------------------------------
def log_ratio_over_pairs(k: np.ndarray) -> np.ndarray:
    """R[x, x'] = max_y ln(K[x, y] / K[x', y]), with 0/0 counted as ratio 1 and p/0 as +inf."""
    n = k.shape[0]
    out = np.zeros((n, n))
    with np.errstate(divide="ignore", invalid="ignore"):
        logk = np.log(k)
        diff = logk[:, None, :] - logk[None, :, :]
    for a in range(n):
        for b in range(n):
            ra = diff[a, b]
            ra = np.where((k[a] == 0) & (k[b] == 0), 0.0, ra)
            ra = np.where((k[a] > 0) & (k[b] == 0), np.inf, ra)
            out[a, b] = ra.max()
    return out


def ldp_holds(k: np.ndarray, epsilon: float) -> bool:
    return bool(np.all(log_ratio_over_pairs(k) <= epsilon + TOL))


def metric_holds(k: np.ndarray, epsilon: float, d: np.ndarray) -> bool:
    r = log_ratio_over_pairs(k)
    same = d == 0
    if np.any(r[same] > 0):  # coincident inputs: identical rows
        return False
    return bool(np.all(r[~same] <= (epsilon + TOL) * d[~same]))


def distp_holds(k: np.ndarray, epsilon: float, lam: np.ndarray, mu: np.ndarray) -> bool:
    p, q = lam @ k, mu @ k
    with np.errstate(divide="ignore"):
        lp, lq = np.log(p), np.log(q)
    for a, b, la, lb in ((p, q, lp, lq), (q, p, lq, lp)):
        bad = (a > 0) & (b == 0)
        if np.any(bad):
            return False
        both = (a > 0) & (b > 0)
        if np.any(la[both] - lb[both] > epsilon + TOL):
            return False
    return True


def euclidean(points: np.ndarray) -> np.ndarray:
    diff = points[:, None, :] - points[None, :, :]
    return np.sqrt((diff ** 2).sum(axis=2))


def haversine(points: np.ndarray) -> np.ndarray:
    lat, lon = np.radians(points[:, 0]), np.radians(points[:, 1])
    h = (np.sin((lat[None, :] - lat[:, None]) / 2) ** 2
         + np.cos(lat[:, None]) * np.cos(lat[None, :]) * np.sin((lon[None, :] - lon[:, None]) / 2) ** 2)
    return 2 * EARTH_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


# strategies -------------------------------------------------------------------------------
epsilons = st.one_of(
    st.floats(1e-6, 1e-3), st.floats(1e-3, 10.0), st.floats(10.0, 60.0), st.floats(60.0, 700.0),
    st.sampled_from([0.0, 1e-6, 0.1, 1.0, 8.0, 35.0, 50.0, 700.0]),
)


@st.composite
def distributions(draw, n: int, zeros: bool = True) -> list[float]:
    w = draw(st.lists(st.integers(0 if zeros else 1, 9), min_size=n, max_size=n))
    if sum(w) == 0:
        w[draw(st.integers(0, n - 1))] = 1
    w = np.asarray(w, dtype=float)
    return (w / w.sum()).tolist()


@st.composite
def coordinates(draw, n: int, dim: int) -> list[list[float]]:
    """n points on a small integer lattice (so coincident points are frequent), some moved by a
    tiny offset (near-coincident points)."""
    base = draw(st.lists(st.lists(st.integers(0, 3), min_size=dim, max_size=dim), min_size=n, max_size=n))
    scale = draw(st.sampled_from([1.0, 0.5, 10.0]))
    tiny = draw(st.lists(st.sampled_from([0.0, 0.0, 0.0, 1e-13, 1e-7]), min_size=n, max_size=n))
    return [[c * scale + t for c in p] for p, t in zip(base, tiny)]


def _objective(draw, n: int) -> dict:
    kind = draw(st.sampled_from(["expected-loss", "error-probability", "worst-case-loss"]))
    if kind == "worst-case-loss":
        return {"kind": kind, "loss": draw(st.sampled_from(["metric", "squared", "hamming"]))}
    obj = {"kind": kind, "prior": "prior"}
    if kind == "expected-loss":
        obj["loss"] = draw(st.sampled_from(["metric", "squared", "hamming"]))
    return obj


@st.composite
def metric_problems(draw):
    n = draw(st.integers(2, 6))
    kind = draw(st.sampled_from(["absolute", "euclidean", "manhattan", "haversine"]))
    dim = 1 if kind == "absolute" else 2
    pts = draw(coordinates(n, dim))
    if kind == "haversine":  # [latitude, longitude] in degrees, some within metres of each other
        pts = [[45.0 + p[0] * 0.01, 7.0 + p[1] * 0.01] for p in pts]
    spec = {
        "name": "property-metric",
        "inputs": {"points": pts},
        "metric": {"kind": kind},
        "distributions": {"prior": draw(distributions(n))},
        "privacy": [{"notion": "metric", "epsilon": draw(epsilons)}],
        "objective": _objective(draw, n),
    }
    return spec, np.asarray(pts, dtype=float)


@st.composite
def ldp_problems(draw):
    n = draw(st.integers(2, 6))
    spec = {
        "name": "property-ldp",
        "inputs": {"size": n},
        "metric": {"kind": "absolute"},
        "distributions": {"prior": draw(distributions(n))},
        "privacy": [{"notion": "ldp", "epsilon": draw(epsilons)}],
        "objective": _objective(draw, n),
    }
    return spec


@st.composite
def distp_problems(draw):
    n = draw(st.integers(2, 6))
    lam, mu = draw(distributions(n, zeros=False)), draw(distributions(n, zeros=False))
    spec = {
        "name": "property-distp",
        "inputs": {"size": n},
        "metric": {"kind": "absolute"},
        "distributions": {"a": lam, "b": mu, "prior": draw(distributions(n))},
        "privacy": [{"notion": "distp", "epsilon": draw(epsilons), "pairs": [["a", "b"]]}],
        "objective": _objective(draw, n),
    }
    return spec, np.asarray(lam), np.asarray(mu)


def _solved(spec: dict):
    result = problem_from_dict(spec).solve()
    assert result.status in ("optimal", "failed"), (result.status, result.message)
    if not result.mechanisms:  # no design at all is only acceptable with a reason
        pytest.fail(f"no design returned: {result.status} {result.message}")
    assert all(a.holds for a in result.certificate), result.certificate
    value = result.objective
    assert value is not None and np.isfinite(value)
    bound = result.solver.get("bound")
    if bound is not None:
        assert bound <= value + 1e-9 * max(1.0, abs(value))
    return result


# the properties ---------------------------------------------------------------------------
@settings(settings.get_profile("audit"))
@given(metric_problems())
def test_every_metric_design_passes_the_all_pairs_audit(drawn):
    spec, pts = drawn
    result = _solved(spec)
    kind = spec["metric"]["kind"]
    if kind == "absolute":
        d = np.abs(pts[:, 0][:, None] - pts[:, 0][None, :])
    elif kind == "euclidean":
        d = euclidean(pts)
    elif kind == "manhattan":
        d = np.abs(pts[:, None, :] - pts[None, :, :]).sum(axis=2)
    else:
        d = haversine(pts)
    k = result.mechanisms["default"].matrix
    assert metric_holds(k, spec["privacy"][0]["epsilon"], d)


@settings(settings.get_profile("audit"))
@given(ldp_problems())
def test_every_ldp_design_passes_the_all_pairs_audit(spec):
    result = _solved(spec)
    assert ldp_holds(result.mechanisms["default"].matrix, spec["privacy"][0]["epsilon"])


@settings(settings.get_profile("audit"))
@given(distp_problems())
def test_every_distp_design_passes_the_definition(drawn):
    spec, lam, mu = drawn
    result = _solved(spec)
    assert distp_holds(result.mechanisms["default"].matrix, spec["privacy"][0]["epsilon"], lam, mu)


# the reference audits themselves must be able to fail -------------------------------------------
def test_reference_metric_audit_rejects_different_rows_at_one_point():
    k = np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    d = euclidean(np.array([[0.0], [0.0], [1.0]]))
    assert not metric_holds(k, 1.0, d)
    same = np.full((3, 3), 1 / 3)
    assert metric_holds(same, 0.0, d)
    k2 = np.array([[0.6, 0.4], [0.5, 0.5], [0.5, 0.5]])
    assert not metric_holds(k2, 100.0, euclidean(np.array([[0.0], [0.0], [1.0]])))


def test_reference_ldp_audit_is_tight_at_randomized_response():
    eps = 1.3
    k = np.array([[np.exp(eps), 1.0], [1.0, np.exp(eps)]]) / (1 + np.exp(eps))
    assert ldp_holds(k, eps)
    assert not ldp_holds(k, eps - 1e-6)
