"""Suite ``shuffle``: central guarantees of designed matrices — shuffled and repeated reports.

1. **Amplification at scale.** The central ε of n = 10^8 shuffled reports at δ = 10^-8 through
   k = 1000 matrices — k-ary RR at ε0 = 1 and 4, and the optimal ε0 = 2 design for a Zipf prior
   and the loss |x − y| — by :func:`mechdesign.accounting.shuffle.amplification`: the clone bound
   of Feldman, McMillan and Talwar (FOCS 2021) and the variation-ratio reduction of Wang et al.
   (PVLDB 2024), timed (the design's solve is not part of the time).
2. **Repeated reports.** T = 1000 reports through k = 100 matrices (k-ary RR at ε0 = 1 and the
   optimal ε0 = 1 Zipf design) at δ = 10^-6 by exact composition of the privacy loss
   distributions (:mod:`mechdesign.accounting.composition`), timed; against Google's
   dp_accounting on its randomized response where that library is installed.
3. **Figure.** Central ε after shuffling against n, for the optimal design and for k-ary RR at
   the same local ε (k = 10, ε0 = 2, δ = 10^-8), with the clone bound, which depends on ε0 only.

Facts checked: the time targets (amplification <= 10 s, composition <= 5 s); every central ε is
at most the local ε and at most the clone bound; the central ε never increases with n; T reports
never exceed basic composition T·ε0; agreement with dp_accounting within T·h where installed.
``--quick`` runs k = 100 at n = 10^6, T = 100 at k = 20 and a shorter range of n.
"""

from __future__ import annotations

import math
import time

import numpy as np

from mechdesign.bench.common import Check, Context, Report, check, fmt, pyplot, save, seconds_text

NAME = "shuffle"
DESCRIPTION = ("Central guarantees of designed matrices: amplification by shuffling (clone bound, "
               "variation-ratio reduction) at n = 10^8 for k = 1000, exact composition of T = 1000 "
               "reports for k = 100, central ε against n for the optimal design vs k-ary RR")
AMPLIFY_SECONDS = 10.0
COMPOSE_SECONDS = 5.0


def krr_matrix(k: int, epsilon: float) -> np.ndarray:
    e = math.exp(epsilon)
    matrix = np.full((k, k), 1.0 / (k - 1 + e))
    np.fill_diagonal(matrix, e / (k - 1 + e))
    return matrix


def zipf_design(k: int, epsilon: float) -> tuple[np.ndarray, str]:
    """The optimal ε-LDP design for a Zipf prior on 0..k−1 and the loss |x − y|, and its status."""
    from mechdesign.core.domain import Domain
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.design.problem import Problem
    from mechdesign.privacy import LDP

    prior = 1.0 / np.arange(1, k + 1)
    prior /= prior.sum()
    values = np.arange(k, dtype=float)
    loss = np.abs(values[:, None] - values[None, :])
    problem = Problem(inputs=Domain.from_size(k), privacy=[LDP(epsilon)],
                      objective=ExpectedLoss(loss, {"default": prior}), name=f"zipf-{k}")
    result = problem.solve()
    return result.mechanism.matrix, result.status


def matrix_of(kind: str, k: int, epsilon: float) -> tuple[np.ndarray, str]:
    return zipf_design(k, epsilon) if kind == "design" else (krr_matrix(k, epsilon), "closed form")


def amplify_task(p: dict) -> dict:
    """One matrix at n users: both bounds and the time they take."""
    from mechdesign.accounting.shuffle import amplification

    matrix, status = matrix_of(p["kind"], p["k"], p["epsilon"])
    start = time.perf_counter()
    found = amplification(matrix, p["users"], p["delta"]).to_dict()
    seconds = time.perf_counter() - start
    return {**p, "status": status, "seconds": seconds, "central_epsilon": found["epsilon"],
            "local_epsilon": found["local_epsilon"], "bound": found["bound"], "bounds": found["bounds"],
            "variation_ratio_parameters": found["variation_ratio_parameters"]}


def compose_task(p: dict) -> dict:
    """T reports through one matrix: ε at δ and the time; dp_accounting's for k-ary RR."""
    from mechdesign.accounting.composition import compose_pairs

    matrix, status = matrix_of(p["kind"], p["k"], p["epsilon"])
    start = time.perf_counter()
    composed = compose_pairs(matrix, p["times"])
    eps = composed.epsilon(p["delta"])
    seconds = time.perf_counter() - start
    out = {**p, "status": status, "seconds": seconds, "composed_epsilon": eps, "pair_laws": len(composed.laws),
           "basic_composition": p["times"] * p["epsilon"]}
    if p["kind"] == "krr":
        out["dp_accounting"] = _dp_accounting(p)
    return out


def _dp_accounting(p: dict) -> dict | None:
    """dp_accounting's ε and time for its randomized response (k buckets, noise q: k-ary RR at
    ε0 = ln(1 + k(1 − q)/q)), or None when the library is not installed."""
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld
    except ImportError:
        return None
    k, eps0 = p["k"], p["epsilon"]
    start = time.perf_counter()
    law = pld.from_randomized_response(k / (math.exp(eps0) + k - 1), k, value_discretization_interval=1e-4)
    eps = law.self_compose(p["times"]).get_epsilon_for_delta(p["delta"])
    return {"epsilon": float(eps), "seconds": time.perf_counter() - start}


def curve_task(p: dict) -> dict:
    """Central ε against n for one matrix."""
    from mechdesign.accounting.clones import clone_epsilon
    from mechdesign.accounting.shuffle import amplification

    matrix, status = matrix_of(p["kind"], p["k"], p["epsilon"])
    points = []
    for n in p["users"]:
        found = amplification(matrix, int(n), p["delta"])
        points.append({"users": int(n), "epsilon": found.epsilon, "bound": found.bound,
                       "clones": clone_epsilon(p["epsilon"], int(n), p["delta"]),
                       "variation_ratio": found.variation_ratio})
    return {**p, "status": status, "points": points}


def parameters(quick: bool) -> dict:
    if quick:
        return {"amplify": {"k": 100, "users": 10**6, "delta": 1e-8, "epsilons": {"krr": [1.0], "design": [2.0]}},
                "compose": {"k": 20, "times": 100, "delta": 1e-6, "epsilon": 1.0},
                "curve": {"k": 6, "epsilon": 2.0, "delta": 1e-8, "users": [10**2, 10**3, 10**4, 10**5, 10**6]}}
    return {"amplify": {"k": 1000, "users": 10**8, "delta": 1e-8, "epsilons": {"krr": [1.0, 4.0], "design": [2.0]}},
            "compose": {"k": 100, "times": 1000, "delta": 1e-6, "epsilon": 1.0},
            "curve": {"k": 10, "epsilon": 2.0, "delta": 1e-8,
                      "users": [int(v) for v in np.round(np.geomspace(1e2, 1e8, 13))]}}


def run(ctx: Context) -> Report:
    params = parameters(ctx.quick)
    a, c, f = params["amplify"], params["compose"], params["curve"]
    amplified = ctx.map(amplify_task, [{"kind": kind, "k": a["k"], "epsilon": e, "users": a["users"], "delta": a["delta"]}
                                       for kind, eps in a["epsilons"].items() for e in eps], "amplification")
    composed = ctx.map(compose_task, [{"kind": kind, "k": c["k"], "epsilon": c["epsilon"], "times": c["times"],
                                       "delta": c["delta"]} for kind in ("krr", "design")], "composition")
    curves = ctx.map(curve_task, [{"kind": kind, "k": f["k"], "epsilon": f["epsilon"], "delta": f["delta"],
                                   "users": f["users"]} for kind in ("design", "krr")], "central ε against n")
    results = {"amplification": amplified, "composition": composed, "curves": curves}
    return Report(params, results, _checks(amplified, composed, curves), [_figure(ctx, curves)],
                  _table(amplified, composed))


def _checks(amplified, composed, curves) -> list[Check]:
    out = [
        check(f"amplification within {AMPLIFY_SECONDS:g} s", all(r["seconds"] <= AMPLIFY_SECONDS for r in amplified),
              ", ".join(f"{r['kind']} k={r['k']} ε0={r['epsilon']:g}: {r['seconds']:.2f} s" for r in amplified)),
        check(f"composition within {COMPOSE_SECONDS:g} s", all(r["seconds"] <= COMPOSE_SECONDS for r in composed),
              ", ".join(f"{r['kind']} k={r['k']} T={r['times']}: {r['seconds']:.2f} s" for r in composed)),
        check("every design certified optimal", all(r["status"] in ("optimal", "closed form")
                                                    for r in [*amplified, *composed, *curves])),
        check("central ε <= local ε and <= the clone bound",
              all(r["central_epsilon"] <= r["local_epsilon"] + 1e-12
                  and r["central_epsilon"] <= r["bounds"]["clones"] + 1e-12 for r in amplified)
              and all(pt["epsilon"] <= pt["clones"] + 1e-12 for r in curves for pt in r["points"])),
        check("central ε never increases with n",
              all(b["epsilon"] <= a["epsilon"] + 1e-9 for r in curves for a, b in zip(r["points"], r["points"][1:]))),
        check("T reports never exceed basic composition T·ε0",
              all(r["composed_epsilon"] <= r["basic_composition"] + 1e-9 for r in composed)),
    ]
    peers = [r for r in composed if r.get("dp_accounting")]
    if peers:
        out.append(check("agrees with dp_accounting's randomized response within T·1e-4",
                         all(abs(r["composed_epsilon"] - r["dp_accounting"]["epsilon"]) <= r["times"] * 1e-4 for r in peers),
                         ", ".join(f"{r['composed_epsilon']:.4f} vs {r['dp_accounting']['epsilon']:.4f}" for r in peers)))
    return out


def _table(amplified, composed):
    rows = [[f"shuffle: {r['kind']}", fmt(r["k"]), f"n = {r['users']:.0e}, ε0 = {r['epsilon']:g}",
             fmt(r["bounds"]["clones"]), fmt(r["bounds"]["variation_ratio"]), fmt(r["central_epsilon"]),
             seconds_text(r["seconds"])]
            for r in amplified]
    rows += [[f"{r['times']} reports: {r['kind']}", fmt(r["k"]), f"T = {r['times']}, ε0 = {r['epsilon']:g}",
              "-", "-", fmt(r["composed_epsilon"]), seconds_text(r["seconds"])
              + (f" (dp_accounting {seconds_text(r['dp_accounting']['seconds'])})" if r.get("dp_accounting") else "")]
             for r in composed]
    return ("Central guarantees of designed matrices (δ = 1e-8 shuffled, 1e-6 repeated)",
            ["case", "k", "setting", "clone bound", "variation-ratio bound", "central ε", "time"], rows)


def _figure(ctx: Context, curves) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels = {"design": "optimal design (Zipf prior, |x − y|)", "krr": "k-ary randomized response"}
    for r in curves:
        users = [pt["users"] for pt in r["points"]]
        ax.plot(users, [pt["epsilon"] for pt in r["points"]], "o-", ms=3, label=labels[r["kind"]])
    first = curves[0]
    ax.plot([pt["users"] for pt in first["points"]], [pt["clones"] for pt in first["points"]], "k--", lw=1,
            label="clone bound (any ε0-LDP matrix)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("users n")
    ax.set_ylabel("central ε after shuffling")
    ax.set_title(f"k = {first['k']}, local ε0 = {first['epsilon']:g}, δ = {first['delta']:g}")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return save(fig, ctx.figure("central_epsilon"))
