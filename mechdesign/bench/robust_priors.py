"""Suite ``robust-priors``: ε-LDP designs that hold up when the prior is only an estimate.

Instances: k ordered values (k ∈ {10, 30}) with the loss |x − y|, a Zipf-shaped estimate π̂
(π̂_x ∝ 1/x) and ε ∈ {0.5, 1, 2}; the uncertainty set is every prior within total-variation
distance r of π̂ (r ∈ {0, 0.05, 0.1, 0.2}). For each, the robust design (the largest expected
loss over the ball, minimised; :class:`~mechdesign.core.robust_loss.RobustExpectedLoss`) and the
design optimal for π̂ alone are both scored under the worst prior of the ball and under π̂.

Facts checked: every design certified ε-LDP and optimal; at r = 0 the robust design's value is
the nominal optimum; under the worst prior the robust design is never worse than the nominal one,
and under π̂ never better (each is optimal for what it optimises).
"""

from __future__ import annotations

import time

import numpy as np

from mechdesign.bench.common import Check, Context, Report, check, fmt, pyplot, save, seconds_text

NAME = "robust-priors"
DESCRIPTION = ("ε-LDP designs robust over a total-variation ball of priors around a Zipf estimate, against the design "
               "optimal for the estimate alone, each scored under the worst prior and the estimate")

#: tolerance of the comparisons between two certified optima (each proven within 1e-6)
SLACK = 1e-6


def estimate(k: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, k + 1)
    return weights / weights.sum()


def instance_task(spec: dict) -> dict:
    """The robust and the nominal design of one instance, each scored both ways."""
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.core.prior_sets import TVBall
    from mechdesign.core.robust_loss import RobustExpectedLoss
    from mechdesign.design.problem import Problem
    from mechdesign.privacy.ldp import LDP

    k, eps, radius = int(spec["k"]), float(spec["epsilon"]), float(spec["radius"])
    prior = estimate(k)
    robust = Problem(inputs=k, metric="absolute", objective=RobustExpectedLoss("metric", TVBall(radius), prior=prior),
                     privacy=[LDP(eps)], time_limit=spec["time_limit"], name=f"robust-{k}")
    start = time.perf_counter()
    found = robust.solve()
    seconds = time.perf_counter() - start
    nominal = Problem(inputs=k, metric="absolute", objective=ExpectedLoss("metric", prior=prior), privacy=[LDP(eps)],
                      time_limit=spec["time_limit"], name=f"nominal-{k}").solve()
    score = robust.objective
    nominal_worst = score.value(nominal.matrices()) if nominal.mechanisms else None
    report = found.extra.get("robust", {})
    return {**spec, "status": found.status, "nominal_status": nominal.status,
            "holds": found.holds and nominal.holds, "seconds": seconds,
            "robust_worst": found.objective, "robust_nominal": report.get("nominal_loss"),
            "nominal_worst": nominal_worst, "nominal_nominal": nominal.objective, "gap": found.solver.get("gap")}


def parameters(quick: bool) -> dict:
    if quick:
        return {"sizes": [10], "epsilons": [1.0], "radii": [0.0, 0.1]}
    return {"sizes": [10, 30], "epsilons": [0.5, 1.0, 2.0], "radii": [0.0, 0.05, 0.1, 0.2]}


def run(ctx: Context) -> Report:
    params = parameters(ctx.quick)
    specs = [{"k": k, "epsilon": e, "radius": r, "time_limit": ctx.time_limit}
             for k in params["sizes"] for e in params["epsilons"] for r in params["radii"]]
    rows = ctx.map(instance_task, specs, "robust and nominal designs")
    inputs = {**params, "loss": "|x − y|", "estimate": "π̂_x ∝ 1/x", "set": "total-variation ball of radius r"}
    return Report(inputs, rows, _checks(rows), [_figure(ctx, rows)], _table(rows))


def _checks(rows: list[dict]) -> list[Check]:
    done = [r for r in rows if r["robust_worst"] is not None and r["nominal_worst"] is not None]
    return [
        check("every design certified ε-LDP and optimal",
              all(r["holds"] and r["status"] == r["nominal_status"] == "optimal" for r in rows),
              ", ".join(f"k={r['k']} ε={r['epsilon']:g} r={r['radius']:g}: {r['status']}/{r['nominal_status']}"
                        for r in rows if r["status"] != "optimal" or r["nominal_status"] != "optimal") or "all"),
        check("at r = 0 the robust design is the nominal optimum",
              all(abs(r["robust_worst"] - r["nominal_nominal"]) <= SLACK * abs(r["nominal_nominal"])
                  for r in done if r["radius"] == 0)),
        check("under the worst prior the robust design is never worse, under the estimate never better",
              all(r["robust_worst"] <= r["nominal_worst"] * (1 + SLACK)
                  and r["robust_nominal"] >= r["nominal_nominal"] * (1 - SLACK) for r in done)),
    ]


def _table(rows: list[dict]):
    cells = [[fmt(r["k"]), fmt(r["epsilon"]), fmt(r["radius"]), r["status"], fmt(r["robust_worst"], 5),
              fmt(r["nominal_worst"], 5), fmt(r["robust_nominal"], 5), fmt(r["nominal_nominal"], 5),
              seconds_text(r["seconds"])] for r in rows]
    return ("expected |x − y|: robust vs nominal-optimal design, under the worst prior of the ball and under the estimate",
            ["k", "ε", "r", "status", "robust @ worst", "nominal @ worst", "robust @ estimate",
             "nominal @ estimate", "time"], cells)


def _figure(ctx: Context, rows: list[dict]) -> str:
    plt = pyplot()
    sizes = sorted({r["k"] for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(6.0 * len(sizes), 4.2), squeeze=False)
    for ax, k in zip(axes[0], sizes):
        for eps in sorted({r["epsilon"] for r in rows if r["k"] == k}):
            rs = sorted((r for r in rows if r["k"] == k and r["epsilon"] == eps), key=lambda r: r["radius"])
            radii = [r["radius"] for r in rs]
            line, = ax.plot(radii, [r["robust_worst"] for r in rs], "o-", label=f"robust, ε = {eps:g}")
            ax.plot(radii, [r["nominal_worst"] for r in rs], "x--", color=line.get_color(),
                    label=f"nominal-optimal, ε = {eps:g}")
        ax.set_xlabel("radius r of the TV ball")
        ax.set_ylabel("expected |x − y| under the worst prior")
        ax.set_title(f"k = {k}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save(fig, ctx.figure("worst_case"))
