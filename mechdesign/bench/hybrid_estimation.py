"""Suite ``hybrid-estimation``: Palamidessi, "Privacy vs Utility, Differential Privacy and the Hybrid
Model" — estimating a distribution from obfuscated reports, accuracy in Earth mover's distance.

The metric domain is ``problems/hybrid-estimation.toml``'s: 30 ordered values 0..29 with a bimodal
prior λ (two discretised Gaussians). At each ε, n users report through

* k-ary RR at ε-LDP, the estimate by matrix inversion (kRR + Inv) and by IBU;
* the truncated geometric mechanism at ε·|x − x'|-privacy (d-privacy), estimated by IBU and Inv;
* mechdesign's optimal ε·d-private design (expected |x − y| under λ) + IBU;
* mechdesign's optimal ε-LDP design (same objective) + IBU,

and the EMD W1(λ, λ̂) over |x − y| is averaged over repeated simulated collections (multinomial
simulation, child seeds of one SeedSequence per point). ε is per unit distance for d-privacy and
the LDP level for kRR, as in the paper's comparison.

Facts checked: every design certified; at moderate ε (0.5 ≤ ε ≤ 1.5) d-privacy + IBU (geometric
and optimal design) has a lower mean EMD than kRR + Inv — Palamidessi’s claim.
"""

from __future__ import annotations

import time

import numpy as np

from mechdesign.bench.common import Check, Context, Report, check, fmt, pyplot, save

NAME = "hybrid-estimation"
DESCRIPTION = "Palamidessi, “Privacy vs Utility, Differential Privacy and the Hybrid Model”, lecture slides: EMD vs ε, kRR + Inv against d-privacy + IBU, optimal designs alongside"

#: problems/hybrid-estimation.toml's prior over 0..29 (two bumps, centres 8 and 21)
PRIOR = [0.002282, 0.005251, 0.010813, 0.019922, 0.032846, 0.048459, 0.063975, 0.075577, 0.079895,
         0.075577, 0.063975, 0.048459, 0.032849, 0.019949, 0.010987, 0.006139, 0.005793, 0.011700,
         0.026247, 0.048555, 0.070534, 0.079898, 0.070508, 0.048459, 0.025938, 0.010813, 0.003510,
         0.000888, 0.000175, 0.000027]

#: series name -> (mechanism, estimator)
SERIES = {
    "kRR + Inv": ("krr", "inv"),
    "kRR + IBU": ("krr", "ibu"),
    "d-privacy (geometric) + Inv": ("geometric", "inv"),
    "d-privacy (geometric) + IBU": ("geometric", "ibu"),
    "optimal ε·d design + IBU": ("design-metric", "ibu"),
    "optimal ε-LDP design + IBU": ("design-ldp", "ibu"),
}
MODERATE = (0.5, 1.5)


def prior() -> np.ndarray:
    lam = np.asarray(PRIOR, dtype=float)
    return lam / lam.sum()


def mechanism(kind: str, epsilon: float) -> tuple[np.ndarray, dict]:
    """The (|X|, |X|) matrix of a series' mechanism at ε, with how it was obtained."""
    from mechdesign.core.domain import Domain
    from mechdesign.core.metrics import Metric
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.design.problem import Problem
    from mechdesign.mechanisms.metric_mechanisms import geometric
    from mechdesign.mechanisms.randomized_response import krr
    from mechdesign.privacy import LDP, MetricPrivacy

    lam = prior()
    k = lam.size
    if kind == "krr":
        return krr(k, epsilon).matrix, {}
    if kind == "geometric":
        return geometric(k, epsilon).matrix, {}
    dom = Domain.from_size(k)
    metric = Metric("absolute")
    notion = MetricPrivacy(epsilon, metric, dom) if kind == "design-metric" else LDP(epsilon)
    start = time.perf_counter()
    result = Problem(inputs=dom, privacy=[notion], objective=ExpectedLoss(metric.distances(dom), {"default": lam}),
                     name=kind).solve()
    return result.mechanism.matrix, {"status": result.status, "holds": result.holds,
                                     "objective": result.objective, "seconds": time.perf_counter() - start,
                                     "solver": result.solver.get("name")}


def accuracy_task(p: dict) -> dict:
    """One (series, ε): mean and std of EMD and TV over the trials; one example estimate."""
    from mechdesign.estimation.estimation import errors, estimate
    from mechdesign.estimation.simulation import run_trials, simulate

    series, eps = p["series"], float(p["epsilon"])
    kind, est = SERIES[series]
    lam = prior()
    x = np.arange(lam.size, dtype=float)
    cost = np.abs(x[:, None] - x[None, :])
    K, design = mechanism(kind, eps)
    start = time.perf_counter()
    summary = run_trials(K, lam, int(p["users"]), trials=int(p["trials"]), seed=int(p["seed"]),
                         estimators=[est], measures=["emd", "tv"], cost=cost)
    out = {"series": series, "epsilon": eps, "mechanism": kind, "estimator": est, "users": int(p["users"]),
           "trials": int(p["trials"]), "seed": int(p["seed"]),
           "emd_mean": summary.mean(est, "emd"), "emd_std": summary.std(est, "emd"),
           "tv_mean": summary.mean(est, "tv"), "tv_std": summary.std(est, "tv"),
           "emd_trials": summary.errors[est]["emd"].tolist(), "seconds": time.perf_counter() - start}
    if design:
        out["design"] = design
    if p.get("example"):
        counts = simulate(K, lam, int(p["users"]), np.random.default_rng(int(p["seed"])))
        theta = np.asarray(estimate(K, counts, est))
        out["example_estimate"] = theta.tolist()
        out["example_emd"] = errors(lam, theta, cost, ["emd"])["emd"]
    return out


def parameters(quick: bool) -> dict:
    if quick:
        return {"epsilons": [0.5, 1.0], "users": 20_000, "trials": 3, "example_epsilon": 0.5}
    return {"epsilons": np.round(np.linspace(0.1, 2.0, 20), 10).tolist(), "users": 100_000, "trials": 20,
            "example_epsilon": 0.5}


def run(ctx: Context) -> Report:
    params = parameters(ctx.quick)
    specs = [{"series": s, "epsilon": e, "users": params["users"], "trials": params["trials"],
              "seed": 100 + i, "example": bool(np.isclose(e, params["example_epsilon"]))}
             for i, e in enumerate(params["epsilons"]) for s in SERIES]
    rows = ctx.map(accuracy_task, specs, "EMD vs ε")
    inputs = {**params, "domain": "0..29, |x − y|", "prior": prior().tolist(), "series": list(SERIES)}
    checks = _checks(rows)
    figures = [_figure(ctx, rows, params)]
    return Report(inputs, rows, checks, figures, _table(rows))


def _mean(rows, series, eps):
    return next(r["emd_mean"] for r in rows if r["series"] == series and np.isclose(r["epsilon"], eps))


def _checks(rows) -> list[Check]:
    designs = [r for r in rows if "design" in r]
    eps = sorted({r["epsilon"] for r in rows if MODERATE[0] <= r["epsilon"] <= MODERATE[1]})
    out = [check("every optimal design certified", all(r["design"]["status"] == "optimal" and r["design"]["holds"]
                                                         for r in designs), f"{len(designs)} designs")]
    for name in ("d-privacy (geometric) + IBU", "optimal ε·d design + IBU"):
        out.append(check(f"{name}: lower mean EMD than kRR + Inv at every moderate ε "
                         f"({MODERATE[0]:g} ≤ ε ≤ {MODERATE[1]:g})",
                         bool(eps) and all(_mean(rows, name, e) < _mean(rows, "kRR + Inv", e) for e in eps),
                         ", ".join(f"ε={e:g}: {_mean(rows, name, e):.3f} vs {_mean(rows, 'kRR + Inv', e):.3f}"
                                   for e in eps)))
    return out


def _table(rows):
    eps = sorted({r["epsilon"] for r in rows})
    show = eps if len(eps) <= 4 else [e for e in eps if any(np.isclose(e, v) for v in (0.2, 0.5, 1.0, 2.0))]
    table_rows = []
    for e in show:
        cells = [fmt(e)] + [f"{_mean(rows, s, e):.3f}" for s in SERIES]
        table_rows.append(cells)
    return ("Palamidessi’s slides: mean EMD between λ and its estimate (lower is better)", ["ε", *SERIES], table_rows)


def _figure(ctx, rows, params) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.4))
    ax = axes[0]
    eps = sorted({r["epsilon"] for r in rows})
    for s in SERIES:
        rs = sorted((r for r in rows if r["series"] == s), key=lambda r: r["epsilon"])
        m = np.array([r["emd_mean"] for r in rs])
        sd = np.array([r["emd_std"] for r in rs])
        style = "--" if "kRR" in s else "-"
        ax.plot(eps, m, style + "o", ms=3, label=s)
        ax.fill_between(eps, np.maximum(m - sd, 1e-6), m + sd, alpha=0.15)
    ax.set_yscale("log")
    ax.set_xlabel("ε (LDP level for kRR; per unit distance for d-privacy)")
    ax.set_ylabel("EMD(λ, λ̂)")
    ax.set_title(f"estimation accuracy, {params['users']:,} users, {params['trials']} trials")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax = axes[1]
    lam = prior()
    ax.bar(np.arange(lam.size), lam, color="lightgrey", label="true λ")
    for r in rows:
        if "example_estimate" in r and r["series"] in ("kRR + Inv", "d-privacy (geometric) + IBU",
                                                      "optimal ε·d design + IBU"):
            ax.plot(np.arange(lam.size), r["example_estimate"], "o-", ms=3,
                    label=f"{r['series']} (EMD {r['example_emd']:.3f})")
    ax.set_xlabel("value")
    ax.set_ylabel("probability")
    ax.set_title(f"one simulated collection at ε = {params['example_epsilon']:g}")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.suptitle("Palamidessi’s slides: kRR + Inv against d-privacy + IBU on a 30-value metric domain")
    return save(fig, ctx.figure("emd"))
