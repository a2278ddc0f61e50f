"""Suite ``scale``: how far the designer goes — time, memory and certificates against size.

Families (ε = 1 and a uniform prior unless an instance names another ``epsilon`` or
``prior``; every instance a pure function of its parameters):

=============  ==============================================================  ==================
family         instance                                                        sizes (full)
=============  ==============================================================  ==================
``ldp``        ε-LDP on 0..k−1, loss |x − y|, prior Dirichlet(1) from seed 0   k = 50 … 1000
``dline``      ε·d-privacy on the line 0..n−1, uniform prior, loss |x − y|     n = 200 … 10,000
               (at 10,000 also ε = 0.5 and 2, and a Zipf(1.1) prior)
``grid``       geo-indistinguishability on an r×r unit grid, Euclidean d and   5×5 … 40×40
               loss, uniform prior (40×40: ``gap_tolerance = 0.05``)
``airports``   geo-indistinguishability on the n US airports nearest Dallas/    n = 100, 300
               Fort Worth (real locations, shipped with the suite), haversine
               (km), ε per 10 km, loss the distance, uniform prior
``profile``    (G, ε)-profile privacy, a chain of P random Dirichlet(1)        10×5 … 100×50
               profiles over C categories (seed 0), max off-diagonal objective
``coupling``   optimal W1 coupling of two Dirichlet(1) distributions on the    10^3 … 10^6 points
               line 0..n−1 (seed 0), with its optimality certificate
``coupling2d`` optimal coupling of two Dirichlet(1) distributions on n        10^3 … 10^5 points
               uniform random points of the unit square each (seed 0),
               Euclidean cost computed on the fly (no n × n matrix),
               certified over all n² pairs
=============  ==============================================================  ==================

Every instance runs in its own fresh process (:func:`mechdesign.bench.isolate.run_isolated`)
through the executor, with the per-instance time limit (``--time-limit``): a slower size is
recorded as "timed out after T s". The process first solves its family's smallest quick
instance (the one-time costs of imports and compiled kernels, recorded as the warm-up).
Recorded per instance: total time (problem construction +
solve + certificate), compile time, solve time, objective, the solver's relative gap, whether the
certificate holds, peak memory (the process's peak RSS during the call, and its increase over
the interpreter with the modules loaded), and an independent reference where one is cheap
(k-ary RR's loss for LDP, the closed-form optimum for d-privacy on a line, the planar
geometric's loss on grids, the remapped exponential mechanism's loss on the airports, k-ary
RR's largest off-diagonal for profiles, the closed-form W1 for couplings on the line; POT's
``emd2`` on the same plane instances up to 10^4 points where POT is installed, else the
Kantorovich–Rubinstein bound ‖E_λ x − E_μ y‖ <= W1). Per family, the growth exponent b of
time ∝ size^b is fitted by least squares on the finished sizes (size = k, n, cells, n, P·C²,
points), on the instances at ε = 1 with the family's own prior
(the variants at other ε or priors are recorded and checked beside them).

For timings on a shared machine run with ``--workers 1`` (one instance at a time).
"""

from __future__ import annotations

import math
import time
from itertools import pairwise

import numpy as np

from mechdesign.bench.common import (
    Check,
    Context,
    Report,
    check,
    fit_exponent,
    fmt,
    pyplot,
    save,
    seconds_text,
)
from mechdesign.bench.isolate import run_isolated

NAME = "scale"
DESCRIPTION = ("scale: time, memory, gap and certificates against size, growth exponents; couplings on the "
               "line and in the plane")
EPSILON = 1.0
SEED = 0

FULL = {
    "ldp": [{"k": k} for k in (50, 100, 200, 300, 500, 1000)],
    "dline": [{"n": n} for n in (200, 500, 1000, 2000, 5000, 10_000)]
    + [{"n": 10_000, "epsilon": 0.5}, {"n": 10_000, "epsilon": 2.0}, {"n": 10_000, "prior": "zipf"}],
    "grid": [{"rows": r} for r in (5, 10, 20)] + [{"rows": 40, "gap_tolerance": 0.05}],
    # (1,500 and 5,000 prove no bound within hours: the frontier's records run them with a limit)
    "airports": [{"n": n} for n in (100, 300)],
    "profile": [{"profiles": p, "categories": c} for p, c in ((10, 5), (25, 12), (50, 25), (100, 50))],
    "coupling": [{"n": n} for n in (10**3, 10**4, 10**5, 10**6)],
    "coupling2d": [{"n": n} for n in (10**3, 10**4, 3 * 10**4, 10**5)],
}
QUICK = {
    "ldp": [{"k": 10}, {"k": 20}],
    "dline": [{"n": 20}, {"n": 50}],
    "grid": [{"rows": 3}, {"rows": 4}],
    "airports": [{"n": 8}, {"n": 16}],
    "profile": [{"profiles": 4, "categories": 3}, {"profiles": 8, "categories": 4}],
    "coupling": [{"n": 10**3}, {"n": 10**4}],
    "coupling2d": [{"n": 200}, {"n": 500}],
}


def size_of(family: str, p: dict) -> float:
    """The size measure the growth exponent is fitted against."""
    return {"ldp": lambda: p["k"], "dline": lambda: p["n"], "grid": lambda: p["rows"] ** 2,
            "airports": lambda: p["n"], "profile": lambda: p["profiles"] * p["categories"] ** 2,
            "coupling": lambda: p["n"], "coupling2d": lambda: p["n"]}[family]()


def is_variant(p: dict) -> bool:
    """An instance at another ε or prior than its family's own (kept out of the growth fit)."""
    return "epsilon" in p or "prior" in p


def label_of(family: str, p: dict) -> str:
    extra = "".join([f", ε = {p['epsilon']:g}" if "epsilon" in p else "",
                     f", {p['prior']} prior" if "prior" in p else ""])
    return _base_label(family, p) + extra


def _base_label(family: str, p: dict) -> str:
    return {"ldp": lambda: f"k = {p['k']}", "dline": lambda: f"n = {p['n']}",
            "grid": lambda: f"{p['rows']}×{p['rows']}", "airports": lambda: f"{p['n']:,} airports",
            "profile": lambda: f"{p['profiles']} profiles × {p['categories']} categories",
            "coupling": lambda: f"n = {p['n']:,}", "coupling2d": lambda: f"n = {p['n']:,} (plane)"}[family]()


def build(family: str, p: dict):
    """The Problem of one instance (not for ``coupling``, which has no Problem)."""
    from mechdesign.core.domain import Domain
    from mechdesign.core.metrics import Metric
    from mechdesign.core.objectives import ExpectedLoss, MaxOffDiagonal, off_diagonal_mask
    from mechdesign.design.problem import Problem
    from mechdesign.privacy import LDP, MetricPrivacy, ProfilePrivacy

    eps = float(p.get("epsilon", EPSILON))
    gap = float(p.get("gap_tolerance", 1e-6))
    if family == "ldp":
        k = int(p["k"])
        dom = Domain.from_size(k)
        prior = np.random.default_rng(int(p.get("seed", SEED))).dirichlet(np.ones(k))
        return Problem(inputs=dom, privacy=[LDP(eps)],
                       objective=ExpectedLoss(Metric("absolute").distances(dom), {"default": prior}),
                       name=f"ldp-k{k}", gap_tolerance=gap)
    if family in ("dline", "grid"):
        if family == "dline":
            dom, metric = Domain.from_size(int(p["n"])), Metric("absolute")
        else:
            dom, metric = Domain.from_grid(int(p["rows"]), int(p["rows"])), Metric("euclidean")
        n = len(dom)
        return Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)],
                       objective=ExpectedLoss(metric.distances(dom), {"default": _prior(p, n)}),
                       name=f"{family}-{n}", gap_tolerance=gap)
    if family == "airports":
        n = int(p["n"])
        dom, metric = Domain.from_points(*_airports(n)), Metric("haversine")
        return Problem(inputs=dom, privacy=[MetricPrivacy(eps / AIRPORTS_KM, metric, dom)],
                       objective=ExpectedLoss(metric.distances(dom), {"default": _prior(p, n)}),
                       name=f"airports-{n}", gap_tolerance=gap)
    if family == "profile":
        P, C = int(p["profiles"]), int(p["categories"])
        rng = np.random.default_rng(int(p.get("seed", SEED)))
        vecs = {f"P{i}": v for i, v in enumerate(rng.dirichlet(np.ones(C), size=P))}
        names = list(vecs)
        dom = Domain(tuple(f"c{j + 1}" for j in range(C)))
        return Problem(inputs=dom, contexts=vecs,
                       privacy=[ProfilePrivacy(eps, list(pairwise(names)), vecs)],
                       objective=MaxOffDiagonal(off_diagonal_mask(dom, dom), names),
                       name=f"profile-{P}x{C}", gap_tolerance=gap)
    raise ValueError(f"no Problem for family {family!r}")


def reference(family: str, p: dict) -> dict:
    """An independent value the optimum must equal (=) or not exceed (<=); computed outside the
    measured child process."""
    eps = float(p.get("epsilon", EPSILON))
    if family == "coupling":
        from mechdesign.transport.coupling import wasserstein

        lam, mu = _coupling_instance(p)
        return {"kind": "= W1 closed form Σ|F_λ − F_μ|", "value": wasserstein(lam, mu, "absolute")}
    if family == "coupling2d":
        return _plane_reference(p)
    problem = build(family, p) if family in ("ldp", "grid") else None
    if family == "ldp":
        from mechdesign.mechanisms.randomized_response import krr

        K = krr(int(p["k"]), eps).matrix
        return {"kind": "<= k-ary RR's loss", "value": problem.objective.value({"default": K})}
    if family == "dline":
        return {"kind": "= remapped truncated geometric (closed form)",
                "value": _remapped_geometric_loss(int(p["n"]), eps, _prior(p, int(p["n"])))}
    if family == "grid":
        from mechdesign.mechanisms.planar import planar_geometric

        K = planar_geometric(problem.inputs, eps).matrix
        return {"kind": "<= planar geometric's loss", "value": problem.objective.value({"default": K})}
    if family == "airports":
        from mechdesign.design.exponential_baseline import remapped_exponential

        problem = build(family, p)
        n = len(problem.inputs)
        K = remapped_exponential(problem.privacy, problem.keys, n, n, problem.objective)["default"]
        return {"kind": "<= the remapped exponential mechanism's loss",
                "value": problem.objective.value({"default": K})}
    if family == "profile":
        return {"kind": "<= k-ary RR's largest off-diagonal (Theorem 9)",
                "value": 1.0 / (int(p["categories"]) - 1 + math.exp(eps))}
    return {}


#: the distance unit of the ``airports`` family's ε, in km (about the median distance from an
#: airport to its nearest neighbour: 8 km among the 1,500 nearest Dallas/Fort Worth)
AIRPORTS_KM = 10.0


def _airports(n: int) -> tuple[np.ndarray, list[str]]:
    """The n US airports nearest Dallas/Fort Worth ([latitude, longitude] in degrees, and their
    ICAO codes), from the data file shipped with the suite (``data/make_us_airports.py`` says how
    it was made)."""
    import csv
    from importlib import resources

    text = resources.files("mechdesign.bench").joinpath("data/us-airports-near-dfw.csv").read_text("utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    if not 1 <= n <= len(rows):
        raise ValueError(f"the airports family has 1 to {len(rows)} locations, not {n}")
    rows = rows[:n]
    return np.array([[float(r["lat"]), float(r["lon"])] for r in rows]), [r["icao"] for r in rows]


def _prior(p: dict, n: int) -> np.ndarray:
    """The instance's prior over its n inputs in index order: uniform, or Zipf(1.1)."""
    kind = p.get("prior", "uniform")
    if kind == "uniform":
        return np.full(n, 1.0 / n)
    if kind == "zipf":
        w = 1.0 / np.arange(1, n + 1) ** 1.1
        return w / w.sum()
    raise ValueError(f"unknown prior {kind!r}: 'uniform' or 'zipf'")


def _remapped_geometric_loss(n: int, eps: float, prior: np.ndarray) -> float:
    """Expected |x − y| of the truncated geometric mechanism on 0..n−1 followed by the best
    remap of every output (Ghosh, Roughgarden and Sundararajan, STOC 2009: optimal for every
    prior under a loss monotone in |x − y|), in O(n²) time and O(n) memory: for output z the
    weights w_x = π_x G[x, z], the best y by prefix sums of the cost Σ_x w_x |x − y| of every y,
    and that cost again as a sum of its non-negative terms (the prefix sums' differences cancel:
    at ε = 13 on 15 points their round-off was 2.7e-10 of the optimum)."""
    a = math.exp(-eps)
    x = np.arange(n, dtype=float)
    total = 0.0
    for z in range(n):
        if z == 0:
            col = a ** x / (1 + a)
        elif z == n - 1:
            col = a ** (n - 1 - x) / (1 + a)
        else:
            col = a ** np.abs(x - z) * (1 - a) / (1 + a)
        w = prior * col
        W, M = np.cumsum(w), np.cumsum(w * x)
        # Σ_x w_x |x − y| = y·W(≤y) − M(≤y) + (M_tot − M(≤y)) − y·(W_tot − W(≤y))
        cost = x * W - M + (M[-1] - M) - x * (W[-1] - W)
        total += math.fsum(w * np.abs(x - x[int(np.argmin(cost))]))
    return total


def _warm_up(family: str) -> float:
    """Solve the family's smallest quick instance first, in the same process, so that the one-time
    costs of a fresh process (lazy imports, loading or compiling the numba kernels: 12 s for the
    network simplex from a cold cache) are not counted as the size's time; its seconds."""
    start = time.perf_counter()
    small = {"family": family, **QUICK[family][0]}
    _solve_once(small)
    return time.perf_counter() - start


def instance(spec: dict) -> dict:
    """Build, solve and certify one instance (runs in the isolated child, after a warm-up on the
    family's smallest quick instance, recorded as ``warmup_seconds``); ``spec`` = {"family", ...}."""
    warmup = _warm_up(spec["family"])
    return {**_solve_once(spec), "warmup_seconds": warmup}


def _solve_once(spec: dict) -> dict:
    family = spec["family"]
    p = {k: v for k, v in spec.items() if k != "family"}
    if family == "coupling":
        return _coupling(p)
    if family == "coupling2d":
        return _plane_coupling(p)
    start = time.perf_counter()
    problem = build(family, p)
    built = time.perf_counter() - start
    result = problem.solve()
    total = time.perf_counter() - start
    out = {"status": result.status, "objective": result.objective, "total_seconds": total,
           "build_seconds": built, "compile_seconds": result.solver.get("compile_seconds"),
           "solve_seconds": result.solver.get("solve_seconds"), "solver": result.solver.get("name"),
           "gap": result.solver.get("gap"), "bound": result.solver.get("bound"),
           "gap_tolerance": problem.gap_tolerance, "certificate_holds": result.holds,
           "certificate": [a.to_dict() for a in result.certificate]}
    if result.message:
        out["message"] = result.message
    return out


def _coupling_instance(p: dict) -> tuple[np.ndarray, np.ndarray]:
    n = int(p["n"])
    rng = np.random.default_rng(int(p.get("seed", SEED)))
    return rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))


def _coupling(p: dict) -> dict:
    from mechdesign.transport.coupling import coupling

    lam, mu = _coupling_instance(p)
    return _timed_coupling(lambda: coupling(lam, mu, "absolute", return_duals=True))


def _timed_coupling(solve) -> dict:
    """The record of one coupling: ``solve()`` returns (plan, certificate) and is timed."""
    start = time.perf_counter()
    plan, cert = solve()
    total = time.perf_counter() - start
    return {"status": "optimal" if cert.optimal else "failed", "objective": cert.primal, "total_seconds": total,
            "compile_seconds": 0.0, "solve_seconds": total, "solver": cert.method,
            "gap": cert.gap / max(abs(cert.primal), 1e-300), "certificate_holds": bool(cert.optimal),
            "nonzeros": int(plan.nnz) if hasattr(plan, "nnz") else int(np.count_nonzero(plan))}


def _plane_instance(p: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = int(p["n"])
    rng = np.random.default_rng(int(p.get("seed", SEED)))
    return rng.random((n, 2)), rng.random((n, 2)), rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))


def _plane_coupling(p: dict) -> dict:
    from mechdesign.transport.coupling import coupling

    X, Y, lam, mu = _plane_instance(p)
    return _timed_coupling(lambda: coupling(lam, mu, "euclidean", points_x=X, points_y=Y, return_duals=True))


#: POT's exact ``emd2`` needs the dense n × n cost matrix: compared up to this many points
POT_MAX_POINTS = 10**4


def _plane_reference(p: dict) -> dict:
    """POT's ``emd2`` on the same instance (its time too) where POT is installed and the dense
    matrix fits; otherwise the Kantorovich–Rubinstein lower bound: x -> <w, x> with |w| = 1 is
    1-Lipschitz, so W1 >= |E_λ x − E_μ y|."""
    X, Y, lam, mu = _plane_instance(p)
    if int(p["n"]) <= POT_MAX_POINTS:
        try:
            import ot
        except ImportError:
            ot = None
        if ot is not None:
            start = time.perf_counter()
            M = ot.dist(X, Y, metric="euclidean")
            value = float(ot.emd2(lam, mu, M, numItermax=10**8))
            return {"kind": "= POT emd2", "value": value, "pot_seconds": time.perf_counter() - start,
                    "pot_version": ot.__version__}
    return {"kind": ">= Kantorovich–Rubinstein bound |E_λ x − E_μ y|",
            "value": float(np.linalg.norm(lam @ X - mu @ Y))}


def run(ctx: Context) -> Report:
    families = QUICK if ctx.quick else FULL
    todo = [(fam, p) for fam, ps in families.items() for p in ps]
    specs = [{"target": "mechdesign.bench.scale:instance", "params": {"family": fam, **p},
              "timeout": ctx.time_limit} for fam, p in todo]
    records = ctx.map(run_isolated, specs, "scale instances")
    rows = []
    for (fam, p), rec in zip(todo, records):
        row = {"family": fam, "parameters": p, "label": label_of(fam, p), "size": size_of(fam, p),
               "isolation": {k: rec.get(k) for k in ("status", "seconds", "wall_seconds", "peak_rss_mb",
                                                      "baseline_rss_mb", "peak_increase_mb", "memory_method")}}
        if rec["status"] == "ok":
            row.update(rec["value"])
            if row.get("objective") is not None:
                row["reference"] = reference(fam, p)
        else:
            row.update({"status": rec["status"], "message": rec.get("message", "")})
        rows.append(row)
    exponents = {}
    for fam in families:
        done = [r for r in rows if r["family"] == fam and r.get("total_seconds") is not None
                and not is_variant(r["parameters"])]
        exponents[fam] = {"size_measure": {"ldp": "k", "dline": "n", "grid": "cells", "airports": "n",
                                           "profile": "P·C²", "coupling": "points", "coupling2d": "points"}[fam],
                          "exponent": fit_exponent([r["size"] for r in done], [r["total_seconds"] for r in done]),
                          "finished": len(done)}
    inputs = {"families": families, "epsilon": EPSILON, "seed": SEED,
              "time_limit_seconds": ctx.time_limit, "workers": ctx.executor.workers}
    results = {"instances": rows, "growth_exponents": exponents}
    return Report(inputs, results, _checks(rows), [_figure(ctx, rows, exponents)], _table(rows, exponents))


def _finished(rows):
    return [r for r in rows if r.get("total_seconds") is not None and r.get("objective") is not None]


def _checks(rows) -> list[Check]:
    done = _finished(rows)
    out = [check("every finished instance is certified: audit holds and gap within its tolerance",
                 all(r["certificate_holds"] and r["status"] == "optimal" for r in done),
                 "; ".join(f"{r['label']}: {r['status']} {r.get('message', '')}" for r in done
                           if not (r["certificate_holds"] and r["status"] == "optimal")))]
    ok = []
    for r in done:
        ref = r.get("reference") or {}
        if "value" not in ref:
            continue
        v, obj = ref["value"], r["objective"]
        tol = 1e-7 * max(1.0, abs(v))
        if ref["kind"].startswith("="):
            ok.append(abs(obj - v) <= max(1e-7, r.get("gap_tolerance") or 0.0) * max(1.0, abs(v)))
        elif ref["kind"].startswith(">="):  # a lower bound on the optimum
            ok.append(obj >= v - tol)
        else:  # the certified lower bound (or the optimum itself) cannot exceed a feasible baseline
            low = r["bound"] if r.get("bound") is not None else obj
            ok.append(low <= v + tol)
    out.append(check("every finished optimum agrees with its independent reference (= closed form, or <= a "
                     "feasible baseline)", all(ok), f"{len(ok)} references"))
    unfinished = [r for r in rows if r.get("total_seconds") is None]
    out.append(check("unfinished instances are recorded with their reason (timeout / error), never dropped",
                     all(r.get("status") in ("timeout", "error") and r.get("message") for r in unfinished),
                     ", ".join(f"{r['label']}: {r.get('message', '')}" for r in unfinished)))
    return out


def _table(rows, exponents):
    table = []
    for r in rows:
        iso = r["isolation"]
        if r.get("total_seconds") is None:
            table.append([r["family"], r["label"], r.get("status", "?"), r.get("message", "")[:60],
                          "-", "-", "-", "-", "-", "-"])
            continue
        table.append([r["family"], r["label"], r["status"], seconds_text(r["total_seconds"]),
                      seconds_text(r.get("compile_seconds")), seconds_text(r.get("solve_seconds")),
                      fmt(r["objective"], 8), fmt(r.get("gap"), 2), fmt(r["certificate_holds"]),
                      fmt(iso.get("peak_rss_mb"), 4)])
    growth = ", ".join(f"{fam} {_exponent_text(e)}" for fam, e in exponents.items())
    return (f"scale: ε = 1 unless the size says otherwise, each instance in its own process; growth exponents b (time ∝ size^b): {growth}",
            ["family", "size", "status", "total", "compile", "solve", "objective", "gap", "certified",
             "peak RSS MB"], table)


def _exponent_text(e: dict) -> str:
    return ("-" if e["exponent"] is None else f"{e['exponent']:.2f}") + f" (per {e['size_measure']})"


def _figure(ctx, rows, exponents) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    for fam, e in exponents.items():
        done = sorted((r for r in _finished(rows) if r["family"] == fam and not is_variant(r["parameters"])),
                      key=lambda r: r["size"])
        if not done:
            continue
        sizes = [r["size"] for r in done]
        b = "" if e["exponent"] is None else f" (b = {e['exponent']:.2f})"
        axes[0].loglog(sizes, [r["total_seconds"] for r in done], "o-", ms=4, label=f"{fam}, per {e['size_measure']}{b}")
        mem = [r["isolation"].get("peak_rss_mb") for r in done]
        if all(m is not None for m in mem):
            axes[1].loglog(sizes, mem, "o-", ms=4, label=fam)
        for r in rows:
            if r["family"] == fam and r.get("status") == "timeout":
                axes[0].plot([r["size"]], [ctx.time_limit or 1], "rx", ms=9)
    axes[0].set_xlabel("size (k, n, cells, P·C², points)")
    axes[0].set_ylabel("total seconds")
    axes[0].set_title("time per instance (red ×: timed out)")
    axes[1].set_xlabel("size")
    axes[1].set_ylabel("peak RSS (MB)")
    axes[1].set_title("peak memory per instance process")
    for ax in axes:
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    return save(fig, ctx.figure("times"))
