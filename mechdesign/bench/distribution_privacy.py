"""Suite ``distribution-privacy``: Kawamoto & Murakami, "Local Distribution Obfuscation via Probability
Coupling" — Prop. 2, Theorem 3 and the noise W1 saves over W∞ / the diameter (§V-B).

1. **Coupling-mechanism loss = W1 = LP** (Prop. 2). Random instances on a line (|x − y|), in the
   plane (Euclidean) and the airports data (great-circle km): the expected loss of the
   utility-optimal coupling mechanism ``coupling_mechanism(λ, μ, cost)``, W1 from
   :func:`mechdesign.transport.coupling.wasserstein`, W1 recomputed independently (SciPy's 1-D formula on
   a line, the transportation LP through ``scipy.optimize.linprog`` otherwise) and the optimum
   of the design LP "λK = μ, minimise expected loss" solved as a compiled program (HiGHS), with
   the times of the special solver and of the LP.
2. **Theorem 3 under perturbed knowledge.** Coupling mechanisms built from λ̂_s while inputs
   follow λ_s = λ̂_s·e^u / Z with u uniform in [−ε/2, ε/2] (so D∞ both ways is at most ε; the
   exact knowledge ε is recomputed): the audited D∞, KL and f-divergence DistP levels between the
   actual outputs λ_s K_s next to Theorem 3's bounds (2ε, 2εe^ε, e^ε f(e^{2ε})).
3. **XDistP calibrated by W1 vs W∞ vs the support diameter** (§V-B, Theorem 2), on the airports
   of Texas and Oklahoma (85 one-degree cells, haversine km). To guarantee KL-DistP level ε_D
   between the two states' location distributions with an ε'·d-private mechanism, ε' can be
   ε_D / W1 (Theorem 2), ε_D / W∞ or ε_D / diam (the W∞-XDistP of earlier work). Larger ε' is
   less noise: the expected error in km under the pooled distribution, for the exponential
   mechanism and (full run) the optimal ε'·d-private design, next to the optimal design for
   (ε_D, KL)-DistP itself. Every mechanism's KL and D∞ DistP levels are audited.

Facts checked: loss = W1 = independent W1 = LP optimum; every Theorem 3 level within its bound;
W1 ≤ W∞ ≤ diam; every calibrated mechanism meets KL-DistP ε_D; the optimal design's error is
monotone (W1 calibration ≤ W∞ ≤ diam); the direct DistP design is no worse than the W1-calibrated
one (which Theorem 2 makes feasible for it).
"""

from __future__ import annotations

import csv
import time
from importlib import resources

import numpy as np

from mechdesign.bench.common import Check, Context, Report, check, fmt, pyplot, save, seconds_text

NAME = "distribution-privacy"
DESCRIPTION = "Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019: coupling mechanisms, Theorem 3, XDistP calibration on the airports data"
TOL = 1e-9


def airports() -> dict:
    """The Texas / Oklahoma airports on 85 one-degree cells (package data, from
    problems/data/make_airports.py): labels, [lat, lon] points, TX, OK and pooled distributions."""
    text = resources.files("mechdesign.bench").joinpath("data/airports-tx-ok.csv").read_text("utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    tx = np.array([float(r["TX"]) for r in rows])
    ok = np.array([float(r["OK"]) for r in rows])
    return {"labels": [r["cell"] for r in rows],
            "points": np.array([[float(r["lat"]), float(r["lon"])] for r in rows]),
            "TX": tx / tx.sum(), "OK": ok / ok.sum(), "pooled": (tx + ok) / (tx + ok).sum(),
            "airports": {"TX": int(tx.sum()), "OK": int(ok.sum())}}


def _instance(kind: str, n: int, seed: int):
    """(λ, μ, cost matrix, points) for a random instance or the airports (kind "airports-TX/OK")."""
    from mechdesign.core.metrics import haversine_km

    if kind.startswith("airports"):
        a = airports()
        state = kind.split("-")[1]
        cost = haversine_km(a["points"], a["points"])
        return a[state], a["pooled"], cost, a["points"]
    rng = np.random.default_rng(seed)
    lam, mu = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    if kind == "line":
        x = np.arange(n, dtype=float)
        return lam, mu, np.abs(x[:, None] - x[None, :]), x
    pts = rng.random((n, 2))
    diff = pts[:, None, :] - pts[None, :, :]
    return lam, mu, np.sqrt((diff ** 2).sum(axis=2)), pts


def _independent_w1(kind, lam, mu, cost, points) -> float:
    """W1 without mechdesign: SciPy's closed form on a line, else the transportation LP."""
    if kind == "line":
        from scipy.stats import wasserstein_distance

        return float(wasserstein_distance(points, points, lam, mu))
    import scipy.sparse as sp
    from scipy.optimize import linprog

    n, m = cost.shape
    rows = sp.kron(sp.identity(n), np.ones((1, m))).tocsr()
    cols = sp.kron(np.ones((1, n)), sp.identity(m)).tocsr()
    res = linprog(cost.ravel(), A_eq=sp.vstack([rows, cols[:-1]]).tocsc(),
                  b_eq=np.concatenate([lam, mu[:-1]]), bounds=(0, None), method="highs")
    return float(res.fun)


def coupling_task(p: dict) -> dict:
    """Prop. 2 on one instance: coupling-mechanism loss, W1 (ours and independent), LP optimum."""
    from mechdesign.core.domain import Domain
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.design.problem import Problem
    from mechdesign.mechanisms.coupling_mechanism import coupling_mechanism
    from mechdesign.privacy import Target
    from mechdesign.transport.coupling import wasserstein

    kind, n, seed = p["kind"], int(p.get("n", 0)), int(p.get("seed", 0))
    lam, mu, cost, points = _instance(kind, n, seed)
    n = lam.size
    start = time.perf_counter()
    K = coupling_mechanism(lam, mu, cost)
    mech_seconds = time.perf_counter() - start
    loss = float((lam[:, None] * K * cost).sum())
    w1 = float(wasserstein(lam, mu, cost))
    independent = _independent_w1(kind, lam, mu, cost, points)
    dom = Domain(tuple(str(i) for i in range(n)))

    def problem(solver):
        return Problem(inputs=dom, contexts={"s": lam}, privacy=[Target({"s": lam}, mu)],
                       objective=ExpectedLoss(cost, {"s": lam}), solver=solver, name=f"coupling-{kind}")
    start = time.perf_counter()
    special = problem("auto").solve()
    special_seconds = time.perf_counter() - start
    start = time.perf_counter()
    lp = problem("highs").solve()
    lp_seconds = time.perf_counter() - start
    scale = float(cost.max())
    return {"kind": kind, "n": n, "seed": seed, "loss": loss, "w1": w1, "w1_independent": independent,
            "output_deviation": float(np.abs(lam @ K - mu).max()),
            "mechanism_seconds": mech_seconds, "special": {
                "solver": special.solver.get("name"), "status": special.status,
                "objective": special.objective, "seconds": special_seconds},
            "lp": {"solver": lp.solver.get("name"), "status": lp.status, "objective": lp.objective,
                   "seconds": lp_seconds, "solve_seconds": lp.solver.get("solve_seconds")},
            "cost_scale": scale}


def theorem3_task(p: dict) -> dict:
    """Theorem 3 on ``p["instances"]`` random instances at knowledge error ``p["epsilon"]``."""
    from mechdesign.mechanisms.coupling_mechanism import coupling_mechanism
    from mechdesign.privacy import ApproximateKnowledge

    eps, reps, n, contexts = float(p["epsilon"]), int(p["instances"]), int(p["n"]), int(p["contexts"])
    rng = np.random.default_rng(int(p["seed"]))
    x = np.arange(n, dtype=float)
    cost = np.abs(x[:, None] - x[None, :])
    rows = []
    for _ in range(reps):
        built = {f"s{i}": rng.dirichlet(np.ones(n)) for i in range(contexts)}
        actual = {}
        for s, lam in built.items():
            w = lam * np.exp(rng.uniform(-eps / 2, eps / 2, n))
            actual[s] = w / w.sum()
        mu = rng.dirichlet(np.ones(n))
        mechs = {s: coupling_mechanism(lam, mu, cost) for s, lam in built.items()}
        line = ApproximateKnowledge(built, actual).audit(mechs)
        rows.append({"knowledge_epsilon": line.detail["knowledge_epsilon"], "achieved": line.achieved,
                     "bounds": line.requested, "holds": line.holds})
    return {"epsilon": eps, "n": n, "contexts": contexts, "instances": rows}


def _kl_dinf_levels(K: np.ndarray, a: np.ndarray, b: np.ndarray) -> dict:
    from mechdesign.core.divergences import divergence

    p, q = a @ K, b @ K
    kl, dinf = divergence("kl"), divergence("max")
    return {"kl": float(max(kl.value(p, q), kl.value(q, p))),
            "dinf": float(max(dinf.value(p, q), dinf.value(q, p)))}


def _distances(a: dict) -> dict:
    from mechdesign.core.metrics import haversine_km
    from mechdesign.transport.coupling import wasserstein

    cost = haversine_km(a["points"], a["points"])
    support = np.ix_(a["TX"] > 0, a["OK"] > 0)
    return {"w1": float(wasserstein(a["TX"], a["OK"], cost, 1)),
            "winf": float(wasserstein(a["TX"], a["OK"], cost, np.inf)),
            "diameter": float(cost[support].max())}


def xdistp_task(p: dict) -> dict:
    """One mechanism for the airports at a DistP target ε_D, calibrated by each distance.

    ``p["mechanism"]``: "exponential" (ε'·d-private exponential mechanism, closed form),
    "optimal" (the optimal ε'·d-private design, expected km under the pooled distribution) or
    "distp" (the optimal (ε_D, KL)-DistP design itself, no calibration).
    """
    from mechdesign.core.domain import Domain
    from mechdesign.core.metrics import Metric
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.design.problem import Problem
    from mechdesign.mechanisms.metric_mechanisms import exponential
    from mechdesign.privacy import DivergenceDistP, MetricPrivacy, Side

    a = airports()
    dom = Domain.from_points(a["points"], a["labels"])
    metric = Metric("haversine")
    cost = metric.distances(dom)
    target = float(p["target"])
    objective = ExpectedLoss(cost, {"default": a["pooled"]})
    dist = _distances(a)
    out = {"target": target, "mechanism": p["mechanism"], "distances_km": dist, "calibrations": {}}
    if p["mechanism"] == "distp":
        notion = DivergenceDistP(target, [(Side("TX", a["TX"]), Side("OK", a["OK"]))], "kl")
        start = time.perf_counter()
        result = Problem(inputs=dom, privacy=[notion], objective=objective, name="airports-kl-distp").solve()
        out["calibrations"]["none"] = {
            "status": result.status, "loss_km": result.objective, "seconds": time.perf_counter() - start,
            "solver": result.solver.get("name"), "gap": result.solver.get("gap"), "message": result.message,
            **_kl_dinf_levels(result.mechanism.matrix, a["TX"], a["OK"])}
        return out
    for name in p.get("calibrations", ("w1", "winf", "diameter")):
        eps = target / dist[name]
        start = time.perf_counter()
        extra = {}
        if p["mechanism"] == "exponential":
            K = exponential(dom, metric, eps).matrix
            status = "ok"
        else:
            result = Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)], objective=objective,
                             name="airports-dprivacy").solve()
            K, status = result.mechanism.matrix, result.status
            extra = {"solver": result.solver.get("name"), "gap": result.solver.get("gap"),
                     "bound_km": result.solver.get("bound"), "message": result.message}
        seconds = time.perf_counter() - start
        xdp = MetricPrivacy(eps, metric, dom).level(K)
        out["calibrations"][name] = {"epsilon_per_km": eps, "status": status, "seconds": seconds,
                                     "loss_km": objective.value({"default": K}), "xdp_epsilon_achieved": xdp,
                                     **extra, **_kl_dinf_levels(K, a["TX"], a["OK"])}
    return out


# ---------------------------------------------------------------------------------------------

def parameters(quick: bool) -> dict:
    if quick:
        return {"coupling": [("line", 5), ("line", 20), ("plane", 6), ("airports-TX", 0)],
                "theorem3_epsilons": [0.05, 0.5], "theorem3_instances": 3, "theorem3_n": 6,
                "theorem3_contexts": 2, "xdistp_targets": [2.0, 16.0], "xdistp_mechanisms": ["exponential", "distp"],
                "distp_design_up_to": 4.0}
    return {"coupling": [(k, n) for k in ("line", "plane") for n in (5, 10, 20, 50, 100)]
            + [("airports-TX", 0), ("airports-OK", 0)],
            "theorem3_epsilons": [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0], "theorem3_instances": 25,
            "theorem3_n": 10, "theorem3_contexts": 3,
            "xdistp_targets": [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0],
            "xdistp_mechanisms": ["exponential", "optimal", "distp"], "distp_design_up_to": 4.0}


def run(ctx: Context) -> Report:
    params = parameters(ctx.quick)
    couplings = ctx.map(coupling_task, [{"kind": k, "n": n, "seed": 1000 + i}
                                        for i, (k, n) in enumerate(params["coupling"])], "coupling = W1 = LP")
    theorem3 = ctx.map(theorem3_task, [{"epsilon": e, "instances": params["theorem3_instances"],
                                        "n": params["theorem3_n"], "contexts": params["theorem3_contexts"],
                                        "seed": 3000 + i} for i, e in enumerate(params["theorem3_epsilons"])],
                       "Theorem 3")
    specs = []
    for target in params["xdistp_targets"]:
        for mech in params["xdistp_mechanisms"]:
            if mech == "distp" and target > params["distp_design_up_to"]:
                continue  # beyond it the KL-DistP optimum is ~0 km (almost the identity): nothing to show
            if mech == "optimal":  # the heavy solves: one task per calibration
                specs += [{"target": target, "mechanism": mech, "calibrations": [c]}
                          for c in ("w1", "winf", "diameter")]
            else:
                specs.append({"target": target, "mechanism": mech})
    parts = ctx.map(xdistp_task, specs, "XDistP calibration (airports)")
    xdistp = _merge_xdistp(parts)
    a = airports()
    inputs = {**params, "airports": {"cells": len(a["labels"]), "airports": a["airports"],
                                     "metric": "haversine km", "source": "vega_datasets airports.csv"}}
    results = {"coupling": couplings, "theorem3": theorem3, "xdistp": xdistp}
    checks = _checks(couplings, theorem3, xdistp)
    figures = [_figure_coupling(ctx, couplings), _figure_theorem3(ctx, theorem3), _figure_xdistp(ctx, xdistp)]
    return Report(inputs, results, checks, figures, _table(couplings, theorem3, xdistp))


def _merge_xdistp(parts: list[dict]) -> dict:
    out: dict = {"distances_km": parts[0]["distances_km"], "targets": {}}
    for part in parts:
        entry = out["targets"].setdefault(f"{part['target']:g}", {})
        entry.setdefault(part["mechanism"], {}).update(part["calibrations"])
    return out


def _checks(couplings, theorem3, xdistp) -> list[Check]:
    def close(a, b, scale, rtol):
        return abs(a - b) <= rtol * max(scale, 1.0)

    out = [
        check("Prop. 2: coupling-mechanism loss = W1 (mechdesign) = W1 (SciPy, independent)",
              all(close(c["loss"], c["w1"], c["cost_scale"], 1e-9)
                  and close(c["w1"], c["w1_independent"], c["cost_scale"], 1e-7) for c in couplings),
              f"worst |loss − W1| = {max(abs(c['loss'] - c['w1']) for c in couplings):.2e}"),
        check("Prop. 2: the design LP's optimum (HiGHS) equals W1; the special solver too",
              all(c["lp"]["status"] == "optimal" and close(c["lp"]["objective"], c["w1"], c["cost_scale"], 1e-7)
                  and c["special"]["status"] == "optimal"
                  and close(c["special"]["objective"], c["w1"], c["cost_scale"], 1e-9) for c in couplings)),
        check("coupling mechanisms output exactly μ (λK = μ)",
              all(c["output_deviation"] <= 1e-12 for c in couplings)),
    ]
    lines = [r for t in theorem3 for r in t["instances"]]
    out.append(check("Theorem 3: audited D∞, KL and f-divergence DistP within the bounds (2ε, 2εe^ε, e^ε f(e^{2ε}))",
                     all(r["holds"] and all(r["achieved"][k] <= r["bounds"][k] + TOL for k in r["achieved"])
                         for r in lines),
                     f"{len(lines)} instances; largest achieved/bound for D∞: "
                     f"{max(r['achieved']['max'] / r['bounds']['max'] for r in lines if r['bounds']['max'] > 0):.3f}"))
    d = xdistp["distances_km"]
    out.append(check("W1 <= W∞ <= diameter (TX vs OK)", d["w1"] <= d["winf"] + TOL <= d["diameter"] + 2 * TOL,
                     f"{d['w1']:.1f} / {d['winf']:.1f} / {d['diameter']:.1f} km"))
    calibrated = [(float(t), m, c, v) for t, ms in xdistp["targets"].items() for m, cs in ms.items()
                  for c, v in cs.items()]
    out.append(check("every calibrated mechanism meets KL-DistP ε_D between TX and OK (Theorem 2)",
                     all(v["kl"] <= t + TOL for t, _, _, v in calibrated), f"{len(calibrated)} mechanisms"))
    out.append(check("every ε'·d-private mechanism audits at ε' (d-privacy)",
                     all(v["xdp_epsilon_achieved"] <= v["epsilon_per_km"] * (1 + 1e-9) + TOL
                         for _, _, c, v in calibrated if c != "none")))
    for t, ms in xdistp["targets"].items():
        opt = ms.get("optimal") or {}
        certified = {c for c, v in opt.items() if v["status"] == "optimal"}
        # the optimum can only fall as ε' grows (W1 ≤ W∞ ≤ diam): compare the certified ones
        pairs = [(a, b) for a, b in (("w1", "winf"), ("winf", "diameter"), ("w1", "diameter"))
                 if a in certified and b in certified]
        if pairs:
            out.append(check(f"ε_D = {t}: optimal design's error, W1 calibration <= W∞ <= diameter (certified ones)",
                             all(opt[a]["loss_km"] <= opt[b]["loss_km"] * (1 + 1e-7) for a, b in pairs)))
        if "distp" in ms and ms["distp"]["none"]["status"] == "optimal" and "w1" in certified:
            out.append(check(f"ε_D = {t}: direct KL-DistP design <= W1-calibrated d-private design "
                             "(feasible for it by Theorem 2)",
                             ms["distp"]["none"]["loss_km"] <= opt["w1"]["loss_km"] * (1 + 1e-6)))
    if any("optimal" in ms for ms in xdistp["targets"].values()):
        bad = [f"ε_D={t:g} {c}: {v.get('message', v['status'])}" for t, m, c, v in calibrated
               if m in ("optimal", "distp") and v["status"] != "optimal"]
        out.append(check("every optimal design certified optimal (audit holds, gap within tolerance)", not bad,
                         "; ".join(bad)))
    return out


def _table(couplings, theorem3, xdistp):
    rows = []
    for c in couplings:
        rows.append([f"Prop. 2: {c['kind']}, n = {c['n']}", f"loss {fmt(c['loss'], 8)}",
                     f"W1 {fmt(c['w1'], 8)}; LP {fmt(c['lp']['objective'], 8)}",
                     f"coupling {seconds_text(c['special']['seconds'])}, LP {seconds_text(c['lp']['seconds'])}"])
    for t in theorem3:
        worst = {k: max(r["achieved"][k] / r["bounds"][k] for r in t["instances"] if r["bounds"][k] > 0)
                 for k in ("max", "kl")}
        ok = all(r["holds"] for r in t["instances"])
        rows.append([f"Theorem 3: knowledge ε = {t['epsilon']:g} ({len(t['instances'])} instances)",
                     f"D∞ ≤ {fmt(worst['max'], 3)} × bound", f"KL ≤ {fmt(worst['kl'], 3)} × bound",
                     "all within the bounds" if ok else "BOUND EXCEEDED"])
    for t, ms in xdistp["targets"].items():
        for mech in ("exponential", "optimal"):
            if mech in ms:
                v = ms[mech]
                saved = 1 - v["w1"]["loss_km"] / v["winf"]["loss_km"]
                mark = {c: "" if v[c]["status"] in ("ok", "optimal") else f" ({v[c]['status']})"
                        for c in ("w1", "winf", "diameter")}
                rows.append([f"XDistP airports: KL ε_D = {t}, {mech} (km)",
                             f"W1-calibrated {fmt(v['w1']['loss_km'])}{mark['w1']}",
                             (f"W∞ {fmt(v['winf']['loss_km'])}{mark['winf']}, "
                             f"diameter {fmt(v['diameter']['loss_km'])}{mark['diameter']}"),
                             f"{100 * saved:.1f} % less error than W∞"])
        if "distp" in ms:
            rows.append([f"XDistP airports: KL ε_D = {t}, direct design (km)",
                         f"{fmt(ms['distp']['none']['loss_km'])}", "optimal (ε_D, KL)-DistP", ""])
    d = xdistp["distances_km"]
    return ((f"Kawamoto and Murakami 2019 (airports TX vs OK: W1 = {d['w1']:.1f} km, W∞ = {d['winf']:.1f} km, "
            f"diameter = {d['diameter']:.1f} km)"), ["experiment", "value", "reference", "note"], rows)


def _figure_coupling(ctx, couplings) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    for kind in sorted({c["kind"] for c in couplings}):
        cs = [c for c in couplings if c["kind"] == kind]
        scale = [c["cost_scale"] for c in cs]
        ax.scatter([c["w1"] / s for c, s in zip(cs, scale)], [c["loss"] / s for c, s in zip(cs, scale)],
                   label=kind, s=18)
    lim = ax.get_xlim()
    ax.plot(lim, lim, "k--", lw=0.8, label="loss = W1")
    ax.set_xlabel("W1(λ, μ) / max cost")
    ax.set_ylabel("coupling-mechanism loss / max cost")
    ax.set_title("Prop. 2: loss of the utility-optimal coupling mechanism")
    ax.legend(fontsize=8)
    ax = axes[1]
    for kind, marker in (("line", "o"), ("plane", "s")):
        cs = sorted((c for c in couplings if c["kind"] == kind), key=lambda c: c["n"])
        if not cs:
            continue
        ns = [c["n"] for c in cs]
        ax.loglog(ns, [c["special"]["seconds"] for c in cs], marker + "-", label=f"{kind}: coupling solver")
        ax.loglog(ns, [c["lp"]["seconds"] for c in cs], marker + "--", label=f"{kind}: design LP (HiGHS)")
    ax.set_xlabel("n (points)")
    ax.set_ylabel("seconds")
    ax.set_title("same optimum: special solver vs LP")
    ax.legend(fontsize=8)
    for a in axes:
        a.grid(alpha=0.3)
    return save(fig, ctx.figure("coupling"))


def _figure_theorem3(ctx, theorem3) -> str:
    plt = pyplot()
    names = [("max", "D∞"), ("kl", "KL"), ("tv", "TV"), ("hellinger", "Hellinger")]
    names = [(k, lbl) for k, lbl in names if k in theorem3[0]["instances"][0]["achieved"]]
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.8), squeeze=False)
    for ax, (key, label) in zip(axes[0], names):
        ke = np.array([r["knowledge_epsilon"] for t in theorem3 for r in t["instances"]])
        ach = np.array([r["achieved"][key] for t in theorem3 for r in t["instances"]])
        ax.scatter(ke, ach, s=8, alpha=0.6, label="audited DistP level")
        grid = np.geomspace(max(ke.min(), 1e-4), ke.max(), 100)
        from mechdesign.core.divergences import divergence

        ax.plot(grid, [divergence(key).theorem3_bound(e) for e in grid], "r-", lw=1.2, label="Theorem 3 bound")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("knowledge error ε (D∞ both ways)")
        ax.set_title(f"{label}-DistP")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Kawamoto and Murakami 2019, Theorem 3: coupling mechanisms under approximate knowledge")
    fig.tight_layout()
    return save(fig, ctx.figure("theorem3"))


def _figure_xdistp(ctx, xdistp) -> str:
    plt = pyplot()
    targets = sorted(xdistp["targets"], key=float)
    t = np.array([float(v) for v in targets])
    fig, ax = plt.subplots(figsize=(6.8, 4.4))
    styles = {"w1": ("W1 (Theorem 2)", "o", "C0"), "winf": ("W∞", "s", "C1"), "diameter": ("diameter", "^", "C2")}
    bad: list = []
    for mech, ls in (("exponential", "--"), ("optimal", "-")):
        if not all(mech in xdistp["targets"][k] for k in targets):
            continue
        for cal, (label, marker, colour) in styles.items():
            vals = [xdistp["targets"][k][mech][cal] for k in targets]
            ax.plot(t, [v["loss_km"] for v in vals], ls + marker, ms=4, color=colour,
                    label=f"{mech} mechanism, ε' = ε_D / {label}")
            bad += [(x, v["loss_km"]) for x, v in zip(t, vals) if v["status"] not in ("ok", "optimal")]
    if bad:
        ax.plot(*zip(*bad), "x", color="red", ms=9, label="design not certified optimal (gap above tolerance)")
    direct = [k for k in targets if "distp" in xdistp["targets"][k]]
    if direct:
        ax.plot([float(k) for k in direct], [xdistp["targets"][k]["distp"]["none"]["loss_km"] for k in direct],
                "k:*", label="optimal (ε_D, KL)-DistP design (no calibration)")
    d = xdistp["distances_km"]
    ax.set_xscale("log")
    ax.set_xlabel("KL-DistP level ε_D between Texas and Oklahoma")
    ax.set_ylabel("expected error (km, pooled distribution)")
    ax.set_title(f"Kawamoto and Murakami 2019 §V-B: noise saved by W1 ({d['w1']:.0f} km) vs W∞ ({d['winf']:.0f} km) "
                 f"vs diameter ({d['diameter']:.0f} km)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, ctx.figure("xdistp"))
