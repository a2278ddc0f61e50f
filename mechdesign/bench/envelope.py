"""Suite ``envelope``: every special-solver family across ε, priors and losses.

A solver that is fast at ε = 1 with a uniform prior can fail a step away from it. This suite
runs each family over

* ε ∈ {0.1, 0.25, 0.5, 1, 2, 4, 8},
* priors: uniform, one Dirichlet(1) draw, Zipf(1.1) (weights ∝ 1/rank^1.1),
* losses: the metric d, its square d², and a random non-negative matrix (uniform on [0, 1]) —
  where the family has a loss,

at two sizes per family, each instance in its own process with the suite's time limit
(``--time-limit``). One more loss is run only when asked for (``--losses worst-case`` of
``benchmarks/bench_envelope.py``): ``worst-case``, the worst-case objective with the metric as
its loss, on the families with a metric other than ε-LDP's (it has no prior: the uniform entry
alone). Families:

==============  ========================================================  ================
family          instance                                                  sizes (full)
==============  ========================================================  ================
``ldp``         ε-LDP on 0..k−1 (the metric is |x − y|)                    k = 100, 1000
``line``        ε·d-privacy on the line 0..n−1                            n = 300, 1000
``grid``        geo-indistinguishability, r×r unit grid, Euclidean        10×10, 20×20
``points``      ε·d-privacy on uniform random points of the unit square   n = 100, 300
                (coordinates ×10), Euclidean
``haversine``   random locations in a 50 km × 50 km box, haversine (km)   n = 100, 300
``graph``       shortest paths of a random connected graph (a ring plus   n = 100, 300
                random chords, weights in [1, 3])
``profile``     (G, ε)-profile privacy over a chain of P profiles over C  25×12, 100×50
                categories, max off-diagonal objective (the prior axis
                draws the profiles: near-uniform Dirichlet(20),
                Dirichlet(1), Zipf(1.1) with a random order)
``distp``       ε-DistP between pairs of distributions (a chain of 4),    k = 20, 50
                shared mechanism, max off-diagonal objective
==============  ========================================================  ================

Recorded per instance: time, status, proven gap, the solver path (the result's solver name),
peak memory of the instance's process, whether the certificate holds. The report prints, per
family, the worst case (the longest time, and any instance that did not end optimal), and
draws time against ε per family (worst over priors and losses, one line per size).
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from mechdesign.bench.common import Check, Context, Report, check, pyplot, save, seconds_text
from mechdesign.bench.isolate import run_isolated

NAME = "envelope"
DESCRIPTION = "envelope: every special-solver family over ε 0.1–8, three priors, three losses"
EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
PRIORS = ("uniform", "dirichlet", "zipf")
LOSSES = ("metric", "squared", "random")
#: losses run only when asked for: the worst-case objective of the metric (no prior)
OPT_IN_LOSSES = ("worst-case",)
#: the families the opt-in losses apply to (a metric other than ε-LDP's |x − y|)
METRIC_FAMILIES = ("line", "grid", "points", "haversine", "graph")
SEED = 0

FULL_SIZES = {"ldp": (100, 1000), "line": (300, 1000), "grid": (10, 20), "points": (100, 300),
              "haversine": (100, 300), "graph": (100, 300), "profile": ((25, 12), (100, 50)),
              "distp": (20, 50)}
QUICK_SIZES = {"ldp": (8,), "line": (12,), "grid": (3,), "points": (8,), "haversine": (8,), "graph": (8,),
               "profile": ((3, 4),), "distp": (5,)}
QUICK_EPSILONS = (0.25, 4.0)
#: families whose objective has no loss (the loss axis does not apply)
NO_LOSS = ("profile", "distp")


def prior(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """One prior of the envelope's prior axis over n values."""
    if kind == "uniform":
        return np.full(n, 1.0 / n)
    if kind == "dirichlet":
        return rng.dirichlet(np.ones(n))
    if kind == "zipf":
        w = 1.0 / np.arange(1, n + 1) ** 1.1
        return rng.permutation(w / w.sum())
    raise ValueError(kind)


def _domain_and_metric(family: str, size, rng: np.random.Generator):
    from mechdesign.core.domain import Domain
    from mechdesign.core.metrics import Metric

    if family in ("ldp", "line"):
        return Domain.from_size(int(size)), Metric("absolute")
    if family == "grid":
        return Domain.from_grid(int(size), int(size)), Metric("euclidean")
    if family == "points":
        return Domain.from_points(rng.random((int(size), 2)) * 10.0), Metric("euclidean")
    if family == "haversine":  # a 50 km box: 0.45° of latitude, 0.64° of longitude at 45° N
        pts = np.column_stack([45.0 + 0.45 * rng.random(int(size)), 7.0 + 0.64 * rng.random(int(size))])
        return Domain.from_points(pts), Metric("haversine")
    if family == "graph":
        n = int(size)
        labels = [f"v{i}" for i in range(n)]
        edges = [[labels[i], labels[(i + 1) % n], float(1 + 2 * rng.random())] for i in range(n)]
        for _ in range(n):
            a, b = rng.choice(n, 2, replace=False)
            edges.append([labels[a], labels[b], float(1 + 2 * rng.random())])
        return Domain(tuple(labels)), Metric("graph", edges=edges)
    raise ValueError(family)


def build(p: dict):
    """The Problem of one instance: p = {family, size, epsilon, prior, loss}."""
    from mechdesign.core.objectives import (
        ExpectedLoss,
        MaxOffDiagonal,
        WorstCaseLoss,
        off_diagonal_mask,
    )
    from mechdesign.design.problem import Problem
    from mechdesign.privacy import LDP, DistP, MetricPrivacy, ProfilePrivacy
    from mechdesign.privacy.distp import Side

    family, eps = p["family"], float(p["epsilon"])
    # one generator per ingredient, none seeded by ε: every ε of a family sees the same
    # domain, the same prior of each kind and the same random loss, so time against ε compares
    # like with like
    family_key = [SEED, sum(map(ord, family)), int(np.prod(p["size"]))]
    rng = np.random.default_rng([*family_key, 1 + PRIORS.index(p["prior"])])  # the prior
    domain_rng = np.random.default_rng(family_key)
    loss_rng = np.random.default_rng([*family_key, 0, 0])
    name = f"{family}-{p['size']}-eps{eps:g}-{p['prior']}-{p.get('loss', '')}"
    if family in ("profile", "distp"):
        if family == "profile":
            count, k = p["size"]
        else:
            count, k = 4, int(p["size"])
        from mechdesign.core.domain import Domain

        dom = Domain(tuple(f"c{j + 1}" for j in range(k)))
        kind = {"uniform": "near-uniform", "dirichlet": "dirichlet", "zipf": "zipf"}[p["prior"]]
        vecs = {f"P{i}": (rng.dirichlet(np.full(k, 20.0)) if kind == "near-uniform" else prior(p["prior"], k, rng))
                for i in range(count)}
        names = list(vecs)
        mask = off_diagonal_mask(dom, dom)
        if family == "profile":
            return Problem(inputs=dom, contexts=vecs, privacy=[ProfilePrivacy(eps, list(itertools.pairwise(names)), vecs)],
                           objective=MaxOffDiagonal(mask, names), name=name)
        pairs = [(Side(a, vecs[a]), Side(b, vecs[b])) for a, b in itertools.pairwise(names)]
        return Problem(inputs=dom, privacy=[DistP(eps, pairs)], objective=MaxOffDiagonal(mask, ["default"]),
                       name=name)
    dom, metric = _domain_and_metric(family, p["size"], domain_rng)
    d = metric.distances(dom)
    if p["loss"] == "worst-case":
        return Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)], objective=WorstCaseLoss(d), name=name)
    loss = {"metric": lambda: d, "squared": lambda: d ** 2,
            "random": lambda: loss_rng.random(d.shape)}[p["loss"]]()
    notion = LDP(eps) if family == "ldp" else MetricPrivacy(eps, metric, dom)
    return Problem(inputs=dom, privacy=[notion],
                   objective=ExpectedLoss(loss, {"default": prior(p["prior"], len(dom), rng)}), name=name)


def instance(p: dict) -> dict:
    """Build, solve and certify one instance (runs in its isolated child), with the suite's time
    limit handed to the solve (``p["time_limit"]``): a solve that reaches it returns its best
    certified design with status time-limit instead of being killed."""
    start = time.perf_counter()
    problem = build(p)
    result = problem.solve(time_limit=p.get("time_limit"))
    total = time.perf_counter() - start
    out = {"status": result.status, "objective": result.objective, "total_seconds": total,
           "solver": result.solver.get("name"), "gap": result.solver.get("gap"),
           "bound": result.solver.get("bound"), "certificate_holds": result.holds}
    for key in ("path", "attempts", "declined"):
        if key in result.solver:
            out[key] = result.solver[key]
    if result.message:
        out["message"] = result.message
    return out


def grid_of(quick: bool, opt_in: tuple = ()) -> list[dict]:
    """Every instance of the suite, with the ``opt_in`` losses (of :data:`OPT_IN_LOSSES`) on the
    metric families, at the uniform prior only."""
    sizes = QUICK_SIZES if quick else FULL_SIZES
    epsilons = QUICK_EPSILONS if quick else EPSILONS
    out = []
    for family, fam_sizes in sizes.items():
        losses = (None,) if family in NO_LOSS else LOSSES
        for size, eps, pr, loss in itertools.product(fam_sizes, epsilons, PRIORS, losses):
            p = {"family": family, "size": size, "epsilon": eps, "prior": pr}
            if loss is not None:
                p["loss"] = loss
            out.append(p)
        if family in METRIC_FAMILIES:
            out += [{"family": family, "size": size, "epsilon": eps, "prior": "uniform", "loss": loss}
                    for size, eps, loss in itertools.product(fam_sizes, epsilons, opt_in)]
    return out


def size_label(p: dict) -> str:
    s = p["size"]
    if p["family"] == "profile":
        return f"{s[0]}×{s[1]}"
    return f"{s}×{s}" if p["family"] == "grid" else str(s)


def select(grid: list[dict], families=None, size: str | None = None, epsilons=None, priors=None,
           losses=None, sizes: dict | None = None) -> list[dict]:
    """A part of the grid: some families, the smaller or the larger size of each ("small",
    "large"), some ε values, priors and losses (a benchmark run that has to fit in a time
    budget); ``sizes`` (family -> size) then puts each chosen instance of a family at another
    size, e.g. a line of 2,000 points (duplicates dropped)."""
    out = []
    for p in grid:
        if families and p["family"] not in families:
            continue
        if epsilons and p["epsilon"] not in epsilons:
            continue
        if priors and p["prior"] not in priors:
            continue
        if losses and p.get("loss") is not None and p["loss"] not in losses:
            continue
        choices = list(dict.fromkeys(str(q["size"]) for q in grid if q["family"] == p["family"]))
        if size == "small" and str(p["size"]) != choices[0]:
            continue
        if size == "large" and str(p["size"]) != choices[-1]:
            continue
        if sizes and p["family"] in sizes:
            p = {**p, "size": sizes[p["family"]]}
            if p in out:
                continue
        out.append(p)
    return out


def run(ctx: Context, todo: list[dict] | None = None) -> Report:
    """Run the grid (or ``todo``, a part of it: :func:`select`) and report."""
    todo = grid_of(ctx.quick) if todo is None else todo
    limit = ctx.time_limit
    # the solve stops itself at the limit; the process is killed only well past it
    specs = [{"target": "mechdesign.bench.envelope:instance", "params": {**p, "time_limit": limit},
              "timeout": None if limit is None else 2 * limit + 60} for p in todo]
    records = ctx.map(run_isolated, specs, "envelope instances")
    rows = []
    for p, rec in zip(todo, records):
        row = {"parameters": p, "isolation": {k: rec.get(k) for k in ("status", "seconds", "wall_seconds",
                                                                       "peak_rss_mb", "peak_increase_mb")}}
        if rec["status"] == "ok":
            row.update(rec["value"])
        else:
            row.update({"status": rec["status"], "message": rec.get("message", "")})
        rows.append(row)
    worst = worst_cases(rows)
    inputs = {"epsilons": QUICK_EPSILONS if ctx.quick else EPSILONS, "priors": PRIORS, "losses": LOSSES,
              "sizes": QUICK_SIZES if ctx.quick else FULL_SIZES, "seed": SEED,
              "time_limit_seconds": ctx.time_limit, "workers": ctx.executor.workers}
    return Report(inputs, {"instances": rows, "worst_cases": worst}, _checks(rows),
                  [_figure(ctx, rows)], _table(worst))


def worst_cases(rows: list[dict]) -> dict:
    """Per family and size: the longest time, and the instances that did not end optimal."""
    out: dict = {}
    for r in rows:
        p = r["parameters"]
        key = f"{p['family']} {size_label(p)}"
        entry = out.setdefault(key, {"family": p["family"], "size": size_label(p), "instances": 0,
                                     "worst_seconds": None, "worst": None, "not_optimal": []})
        entry["instances"] += 1
        t = r.get("total_seconds")
        if t is None:
            t = r["isolation"].get("wall_seconds")
        if t is not None and (entry["worst_seconds"] is None or t > entry["worst_seconds"]):
            entry["worst_seconds"], entry["worst"] = t, {k: p.get(k) for k in ("epsilon", "prior", "loss")}
        if r.get("status") != "optimal" or not r.get("certificate_holds", False):
            entry["not_optimal"].append({**{k: p.get(k) for k in ("epsilon", "prior", "loss")},
                                         "status": r.get("status"), "gap": r.get("gap"),
                                         "message": (r.get("message") or "")[:200]})
    return out


def _checks(rows: list[dict]) -> list[Check]:
    uncertified = [r for r in rows if r.get("objective") is None or not r.get("certificate_holds")]
    not_optimal = [r for r in rows if r.get("status") != "optimal"]
    return [
        check("every instance returns a certified private design",
              not uncertified, f"{len(uncertified)} of {len(rows)} without one"),
        check("every instance ends optimal within its gap tolerance",
              not not_optimal, f"{len(not_optimal)} of {len(rows)} not optimal"),
    ]


def _table(worst: dict):
    table = []
    for key, w in worst.items():
        at = w["worst"] or {}
        where = ", ".join([f"ε {at['epsilon']:g}"] + [str(at[k]) for k in ("prior", "loss") if at.get(k)]) if at else ""
        bad = w["not_optimal"]
        table.append([w["family"], w["size"], str(w["instances"]), seconds_text(w["worst_seconds"]), where,
                      str(len(bad)), "; ".join(f"ε {b['epsilon']} {b['prior']} {b.get('loss') or ''}: "
                                               f"{b['status']}" for b in bad[:3])])
    return ("envelope: worst case per family and size (time, and instances not ending optimal)",
            ["family", "size", "instances", "worst time", "at", "not optimal", "examples"], table)


def _figure(ctx: Context, rows: list[dict]) -> str:
    plt = pyplot()
    families = list(dict.fromkeys(r["parameters"]["family"] for r in rows))
    cols = min(4, len(families))  # (one family: one panel, not a row of empty ones)
    nrows = (len(families) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(max(4 * cols, 6.5), 3.2 * nrows), squeeze=False)
    for ax, fam in zip(axes.ravel(), families):
        mine = [r for r in rows if r["parameters"]["family"] == fam]
        for size in dict.fromkeys(size_label(r["parameters"]) for r in mine):
            eps_t = {}
            for r in mine:
                if size_label(r["parameters"]) != size:
                    continue
                t = r.get("total_seconds")
                if t is None:
                    t = r["isolation"].get("wall_seconds") or 0.0
                e = r["parameters"]["epsilon"]
                eps_t[e] = max(eps_t.get(e, 0.0), t)
                if r.get("status") != "optimal":
                    ax.plot([e], [max(t, 1e-3)], "rx", ms=8)
            es = sorted(eps_t)
            ax.loglog(es, [max(eps_t[e], 1e-3) for e in es], "o-", ms=4, label=size)
        ax.set_title(fam)
        ax.set_xlabel("ε")
        ax.set_ylabel("worst seconds")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes.ravel()[len(families):]:
        ax.axis("off")
    fig.suptitle("time against ε, worst over priors and losses (red ×: not optimal)")
    fig.tight_layout()
    return save(fig, ctx.figure("time_vs_epsilon"))

