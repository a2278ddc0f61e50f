"""Suite ``profile-privacy``: Geumlek and Chaudhuri’s (2019) experiments (§6, Figures 2 and 3) redrawn from our own solves.

Geumlek & Chaudhuri, "Profile-Based Privacy for Locally Private Computations":

* **Bernoulli-Couplet** — two Bernoulli profiles a, b joined by one edge. For every pair
  p_a < p_b on a grid and each ε: the largest flip probability of mechdesign's design (one 2×2
  matrix per profile, minimising the largest off-diagonal entry under (G, ε)-profile privacy),
  of Smooth One Bit (the paper's LP (5)), of One Bit Cluster (LP (4), closed form), against
  Warner's RR, whose flip is 1/(1 + e^ε) (Figure 2(a)); Observation 10's bound (7) alongside.
* **Bernoulli-Chain-6 and -21** — profiles p = 0, 1/(n−1), …, 1 in a chain: the probability that
  the output is 1, per profile, against ε for RR, Smooth One Bit and the design (Figure 3).
* **Categorical-Chain** — Table 1's three 4-category profiles in a chain P1 − P2 − P3: the four
  costs of eq. (8), cost_j = max_s |P_s − P_s A_s|_j, against ε for k-ary RR (the baseline),
  Smooth Categorical (optimisation (6), the paper's method) and the design that minimises the
  largest cost itself (objective ``profile-marginal-error``) (Figures 2(b)–(c)).

Facts checked: every design is certified; the design's largest flip ≤ Smooth One Bit's ≤ One
Bit Cluster's ≤ RR's (the later ones are feasible for the earlier problems; RR by Theorem 9);
One Bit Cluster ≤ Observation 10's bound where it applies (p_a ≤ p_b ≤ e^ε p_a); the chains'
spread of Pr[output = 1] is never below RR's; the largest Categorical-Chain cost of the
profile-marginal-error design never exceeds k-ary RR's (Theorem 9: kRR is feasible).
"""

from __future__ import annotations

import math
import time
from itertools import pairwise

import numpy as np

from mechdesign.bench.common import Check, Context, Report, check, fmt, pyplot, save

NAME = "profile-privacy"
DESCRIPTION = "Geumlek and Chaudhuri, “Profile-Based Privacy for Locally Private Computations”, ISIT 2019 §6: profile-based privacy experiments (Figures 2 and 3)"

#: Table 1 of Geumlek and Chaudhuri 2019
CATEGORICAL_PROFILES = {"P1": [0.2, 0.3, 0.4, 0.1], "P2": [0.3, 0.3, 0.3, 0.1], "P3": [0.4, 0.4, 0.1, 0.1]}
CATEGORICAL_EDGES = [("P1", "P2"), ("P2", "P3")]
TOL = 1e-9


def rr_flip(epsilon: float) -> float:
    """Warner's randomized response at ε-LDP flips with probability 1/(1 + e^ε)."""
    return 1.0 / (1.0 + math.exp(epsilon))


def observation_10(p_i: float, p_j: float, epsilon: float) -> float | None:
    """Geumlek and Chaudhuri 2019, eq. (7): bound on the optimal single flip of (4) when p_i <= p_j <= e^ε p_i."""
    e = math.exp(epsilon)
    if not p_i <= p_j <= e * p_i:
        return None
    terms = [0.0]
    den1 = 2 * (p_j - e * p_i) - (1 - e)
    den2 = 2 * (p_i - e * p_j) + e - 1
    if den1 != 0:
        terms.append((p_j - e * p_i) / den1)
    if den2 != 0:
        terms.append((p_i - e * p_j + e - 1) / den2)
    return max(terms)


def _bit_problem(profiles: dict, edges, epsilon: float):
    from mechdesign.core.domain import Domain
    from mechdesign.core.objectives import MaxOffDiagonal, off_diagonal_mask
    from mechdesign.design.problem import Problem
    from mechdesign.privacy import ProfilePrivacy

    dom = Domain(("0", "1"))
    vecs = {n: np.array([1.0 - p, p]) for n, p in profiles.items()}
    return Problem(inputs=dom, contexts=vecs, privacy=[ProfilePrivacy(epsilon, edges, vecs)],
                   objective=MaxOffDiagonal(off_diagonal_mask(dom, dom), list(vecs)),
                   name="bernoulli-profiles")


# ---------------------------------------------------------------------------------------------
# tasks (module level, pure functions of their parameters: any executor may run them)

def couplet_task(p: dict) -> dict:
    """All pairs p_a < p_b of ``p["grid"]`` at ``p["epsilon"]``."""
    from mechdesign.mechanisms.profile_mechanisms import one_bit_flip, smooth_one_bit

    eps = float(p["epsilon"])
    grid = [float(v) for v in p["grid"]]
    rows = []
    for i, pa in enumerate(grid):
        for pb in grid[i + 1:]:
            start = time.perf_counter()
            result = _bit_problem({"a": pa, "b": pb}, [("a", "b")], eps).solve()
            seconds = time.perf_counter() - start
            smooth = smooth_one_bit({"a": pa, "b": pb}, [("a", "b")], eps)
            rows.append({
                "p_a": pa, "p_b": pb, "difference": pb - pa,
                "design_flip": result.objective, "design_status": result.status,
                "design_holds": result.holds, "design_seconds": seconds,
                "smooth_one_bit_flip": max(float(m.matrix[0, 1]) for m in smooth.values()),
                "one_bit_cluster_flip": one_bit_flip(pa, pb, eps),
                "observation_10_bound": observation_10(pa, pb, eps),
            })
    return {"epsilon": eps, "rr_flip": rr_flip(eps), "pairs": rows}


def chain_task(p: dict) -> dict:
    """Bernoulli-Chain-n at one ε: Pr[output = 1] per profile for RR, Smooth One Bit, design."""
    from mechdesign.mechanisms.profile_mechanisms import smooth_one_bit

    n, eps = int(p["profiles"]), float(p["epsilon"])
    ps = np.linspace(0.0, 1.0, n)
    names = [f"p{i}" for i in range(n)]
    profiles = dict(zip(names, ps.tolist()))
    edges = list(pairwise(names))
    start = time.perf_counter()
    result = _bit_problem(profiles, edges, eps).solve()
    seconds = time.perf_counter() - start
    smooth = smooth_one_bit(profiles, edges, eps)
    a = rr_flip(eps)
    one = {
        "rr": (ps + a * (1 - 2 * ps)).tolist(),
        "smooth_one_bit": [float(p0 * smooth[s].matrix[1, 1] + (1 - p0) * smooth[s].matrix[0, 1])
                           for s, p0 in zip(names, ps)],
        "design": [float(p0 * result.mechanisms[s].matrix[1, 1] + (1 - p0) * result.mechanisms[s].matrix[0, 1])
                   for s, p0 in zip(names, ps)],
    }
    return {"profiles": n, "epsilon": eps, "p": ps.tolist(), "pr_output_1": one,
            "rr_flip": a, "smooth_one_bit_max_flip": max(float(m.matrix[0, 1]) for m in smooth.values()),
            "design_max_off_diagonal": result.objective, "design_status": result.status,
            "design_holds": result.holds, "design_seconds": seconds,
            "spread": {k: float(max(v) - min(v)) for k, v in one.items()}}


def categorical_task(p: dict) -> dict:
    """Categorical-Chain at one ε: the four costs of eq. (8) for kRR, Smooth Categorical and the
    profile-marginal-error design."""
    from mechdesign.core.domain import Domain
    from mechdesign.core.objectives import ProfileMarginalError
    from mechdesign.design.problem import Problem
    from mechdesign.mechanisms.profile_mechanisms import smooth_categorical
    from mechdesign.mechanisms.randomized_response import krr
    from mechdesign.privacy import ProfilePrivacy

    eps = float(p["epsilon"])
    vecs = {k: np.asarray(v, dtype=float) for k, v in CATEGORICAL_PROFILES.items()}
    labels = ["c1", "c2", "c3", "c4"]
    objective = ProfileMarginalError(vecs)
    kmat = krr(4, eps).matrix
    costs = {"krr": objective.costs({s: kmat for s in vecs})}
    smooth = smooth_categorical(vecs, CATEGORICAL_EDGES, eps, labels)
    costs["smooth_categorical"] = objective.costs({s: m.matrix for s, m in smooth.items()})
    problem = Problem(inputs=Domain(tuple(labels)), contexts=vecs,
                      privacy=[ProfilePrivacy(eps, CATEGORICAL_EDGES, vecs)], objective=objective,
                      name="categorical-chain-marginal")
    start = time.perf_counter()
    result = problem.solve()
    seconds = time.perf_counter() - start
    costs["design"] = objective.costs(result.matrices())
    off = lambda ms: max(float(m[~np.eye(4, dtype=bool)].max()) for m in ms)
    return {"epsilon": eps, "costs": {k: np.asarray(v).tolist() for k, v in costs.items()},
            "max_cost": {k: float(np.max(v)) for k, v in costs.items()},
            "max_off_diagonal": {"krr": off([kmat]),
                                 "smooth_categorical": off([m.matrix for m in smooth.values()]),
                                 "design": off(list(result.matrices().values()))},
            "design_status": result.status, "design_holds": result.holds, "design_seconds": seconds}


# ---------------------------------------------------------------------------------------------

def parameters(quick: bool) -> dict:
    if quick:
        return {"couplet_epsilons": [1.0], "couplet_grid": [0.0, 0.25, 0.5, 0.75, 1.0],
                "chain_profiles": [6, 21], "chain_epsilons": [0.2, 1.0],
                "categorical_epsilons": [0.5, 2.0]}
    return {"couplet_epsilons": [0.5, 1.0, 2.0], "couplet_grid": np.round(np.linspace(0, 1, 21), 10).tolist(),
            "chain_profiles": [6, 21], "chain_epsilons": np.round(np.linspace(0.05, 1.5, 30), 10).tolist(),
            "categorical_epsilons": np.round(np.linspace(0.05, 1.5, 30), 10).tolist()}


def run(ctx: Context) -> Report:
    params = parameters(ctx.quick)
    couplets = ctx.map(couplet_task, [{"epsilon": e, "grid": params["couplet_grid"]}
                                      for e in params["couplet_epsilons"]], "Bernoulli-Couplet")
    chains = ctx.map(chain_task, [{"profiles": n, "epsilon": e} for n in params["chain_profiles"]
                                  for e in params["chain_epsilons"]], "Bernoulli-Chain")
    cats = ctx.map(categorical_task, [{"epsilon": e} for e in params["categorical_epsilons"]],
                   "Categorical-Chain")
    results = {"couplet": couplets, "chain": chains, "categorical": cats}
    checks = _checks(couplets, chains, cats)
    figures = [_figure2(ctx, couplets, cats), _figure3(ctx, chains)]
    return Report(params, results, checks, figures, _table(couplets, chains, cats))


def _checks(couplets, chains, cats) -> list[Check]:
    pairs = [(c["epsilon"], c["rr_flip"], r) for c in couplets for r in c["pairs"]]
    out = [
        check("Couplet: every design certified optimal",
              all(r["design_status"] == "optimal" and r["design_holds"] for _, _, r in pairs),
              f"{len(pairs)} pairs"),
        check("Couplet: design flip <= Smooth One Bit <= One Bit Cluster <= RR 1/(1+e^ε)",
              all(r["design_flip"] <= r["smooth_one_bit_flip"] + TOL
                  and r["smooth_one_bit_flip"] <= r["one_bit_cluster_flip"] + TOL
                  and r["one_bit_cluster_flip"] <= a + TOL for _, a, r in pairs),
              "largest design flip / RR flip: " + ", ".join(
                  f"ε={c['epsilon']:g}: {max(r['design_flip'] for r in c['pairs']):.4f}/{c['rr_flip']:.4f}"
                  for c in couplets)),
    ]
    bounded = [r for _, _, r in pairs if r["observation_10_bound"] is not None]
    out.append(check("Couplet: One Bit Cluster within Observation 10's bound (7)",
                     all(r["one_bit_cluster_flip"] <= r["observation_10_bound"] + TOL for r in bounded),
                     f"{len(bounded)} pairs with p_a <= p_b <= e^ε p_a"))
    out += [
        check("Chains: every design certified optimal",
              all(c["design_status"] == "optimal" and c["design_holds"] for c in chains), f"{len(chains)} solves"),
        check("Chains: design max flip <= Smooth One Bit's <= RR's",
              all(c["design_max_off_diagonal"] <= c["smooth_one_bit_max_flip"] + TOL
                  and c["smooth_one_bit_max_flip"] <= c["rr_flip"] + TOL for c in chains)),
        check("Chains: spread of Pr[output = 1] over profiles never below RR's",
              all(c["spread"]["design"] >= c["spread"]["rr"] - TOL
                  and c["spread"]["smooth_one_bit"] >= c["spread"]["rr"] - TOL for c in chains)),
        check("Categorical: every design certified optimal",
              all(c["design_status"] == "optimal" and c["design_holds"] for c in cats)),
        check("Categorical: largest cost of the profile-marginal-error design <= k-ary RR's (Theorem 9)",
              all(c["max_cost"]["design"] <= c["max_cost"]["krr"] + TOL for c in cats),
              ", ".join(f"ε={c['epsilon']:g}: {c['max_cost']['design']:.4f}/{c['max_cost']['krr']:.4f}"
                        for c in cats[:: max(1, len(cats) // 4)])),
        check("Categorical: design's largest cost <= Smooth Categorical's (both feasible, design optimal)",
              all(c["max_cost"]["design"] <= c["max_cost"]["smooth_categorical"] + TOL for c in cats)),
        check("Categorical: Smooth Categorical's largest off-diagonal <= k-ary RR's",
              all(c["max_off_diagonal"]["smooth_categorical"] <= c["max_off_diagonal"]["krr"] + TOL
                  for c in cats)),
    ]
    return out


def _table(couplets, chains, cats):
    rows = []
    for c in couplets:
        worst = max(c["pairs"], key=lambda r: r["design_flip"])
        rows.append([f"Bernoulli-Couplet (largest flip over {len(c['pairs'])} pairs)", fmt(c["epsilon"]),
                     fmt(worst["design_flip"]), fmt(worst["smooth_one_bit_flip"]), fmt(c["rr_flip"])])
    for c in chains:
        if np.isclose(c["epsilon"], 0.2) or len(chains) <= 4:
            rows.append([f"Bernoulli-Chain-{c['profiles']} (spread of Pr[1])", fmt(c["epsilon"]),
                         fmt(c["spread"]["design"]), fmt(c["spread"]["smooth_one_bit"]), fmt(c["spread"]["rr"])])
    for c in cats:
        if len(cats) <= 4 or any(np.isclose(c["epsilon"], e) for e in (0.5, 1.0, 2.0)):
            rows.append(["Categorical-Chain (largest cost, eq. (8))", fmt(c["epsilon"]),
                         fmt(c["max_cost"]["design"]), fmt(c["max_cost"]["smooth_categorical"]),
                         fmt(c["max_cost"]["krr"])])
    return ("Geumlek and Chaudhuri 2019: ours vs the paper's mechanisms vs (k-ary) RR (lower is better, except spread)",
            ["experiment", "ε", "mechdesign design", "paper's mechanism", "(k-ary) RR"], rows)


def _figure2(ctx: Context, couplets, cats) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.2))
    ax = axes[0]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, c in enumerate(couplets):
        col = colours[i % len(colours)]
        d = np.array([r["difference"] for r in c["pairs"]])
        f = np.array([r["design_flip"] for r in c["pairs"]])
        ax.scatter(d, f, s=9, color=col, alpha=0.5)
        xs = np.unique(np.round(d, 9))
        ax.plot(xs, [f[np.isclose(d, x)].max() for x in xs], "-", color=col,
                label=f"ours, ε = {c['epsilon']:g} (max over pairs)")
        ax.axhline(c["rr_flip"], color=col, ls="--", lw=1)
    ax.plot([], [], "k--", lw=1, label="RR 1/(1+e^ε)")
    ax.set_xlabel("|p_a − p_b|")
    ax.set_ylabel("flip probability")
    ax.set_title("(a) Bernoulli-Couplet")
    ax.legend(fontsize=7)
    eps = np.array([c["epsilon"] for c in cats])
    for ax, key, title in zip(axes[1:], ("krr", "smooth_categorical", "design"),
                              ("(b) Categorical-Chain, k-ary RR", "(c) Smooth Categorical (6)",
                               "(d) design: min largest cost (8)")):
        costs = np.array([c["costs"][key] for c in cats])
        for j in range(costs.shape[1]):
            ax.plot(eps, costs[:, j], "o-", ms=2.5, label=f"cost_{j + 1}")
        ax.set_xlabel("ε")
        ax.set_title(title)
    top = max(max(c["max_cost"].values()) for c in cats)
    for ax in axes[1:]:
        ax.set_ylim(0, top * 1.05)
        ax.set_ylabel("max_s |P_s − P_s A_s|_j")
        ax.legend(fontsize=7)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle("Geumlek and Chaudhuri 2019, Figure 2 redrawn from mechdesign solves (lower is better)")
    return save(fig, ctx.figure("figure2"))


def _figure3(ctx: Context, chains) -> str:
    plt = pyplot()
    sizes = sorted({c["profiles"] for c in chains})
    keys = [("rr", "randomized response (LDP)"), ("smooth_one_bit", "Smooth One Bit (5)"),
            ("design", "mechdesign design (min max off-diagonal)")]
    fig, axes = plt.subplots(len(keys), len(sizes), figsize=(5.5 * len(sizes), 3.4 * len(keys)),
                             squeeze=False, sharey=True)
    for col, n in enumerate(sizes):
        runs = sorted((c for c in chains if c["profiles"] == n), key=lambda c: c["epsilon"])
        eps = np.array([c["epsilon"] for c in runs])
        for row, (key, label) in enumerate(keys):
            ax = axes[row, col]
            values = np.array([c["pr_output_1"][key] for c in runs])  # (ε, profile)
            cmap = plt.get_cmap("viridis")
            for s in range(values.shape[1]):
                ax.plot(eps, values[:, s], "-", lw=1, color=cmap(s / max(values.shape[1] - 1, 1)))
            ax.axvline(0.2, color="k", lw=0.8, ls=":")
            ax.set_title(f"Bernoulli-Chain-{n}: {label}", fontsize=9)
            ax.set_xlabel("ε")
            ax.set_ylabel("Pr[output = 1]")
            ax.grid(alpha=0.3)
    fig.suptitle("Geumlek and Chaudhuri 2019, Figure 3 redrawn: one curve per profile (wider spread is better)")
    fig.tight_layout()
    return save(fig, ctx.figure("figure3"))
