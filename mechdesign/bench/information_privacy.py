"""Suite ``information-privacy``: "Achieving Dalenius' Goal of Data Privacy with Practical Assumptions" —
ε-information privacy (Shannon capacity ≤ ε bits) and the paper's privacy channels.

1. **Capacity of the privacy channels against their parameter**, each certified by
   :func:`mechdesign.information.capacity.shannon_capacity` (a lower and an upper bound) next to its closed
   form or bound: the binary symmetric channel (flip p; 1 − H(p)), k-ary RR on 10 values (ε;
   log2 k − H(row)), the discrete exponential channel on 10 values (α; at most log2 n − H(row),
   eq. (63)) and the Gaussian channel on the values 0..9 discretised to 201 cells (σ; at most
   ½ log2(1 + (Δ/2)²/σ²), the power-constrained bound).
2. **Calibrated channels against k-ary RR at equal capacity.** For capacity budgets c bits, each
   family's parameter is calibrated (bisection on the certified bound: capacity ≤ c) — the
   exponential channel, the Gaussian channel, k-ary RR — and mechdesign designs the optimal
   mechanism under ``information`` ≤ c bits itself (exponential cone; Clarabel). Utility: the
   expected |x − y| under the uniform prior on 0..9 (Gaussian outputs are cell centres).

Facts checked: every certified bracket contains the closed form (BSC, kRR) or lies below the
bound (exponential, Gaussian); every calibrated channel's certified capacity is ≤ c; the design is
certified, its capacity ≤ c, and its error is no larger than kRR's or the exponential channel's
at the same capacity (both are feasible for it).
"""

from __future__ import annotations

import time

import numpy as np

from mechdesign.bench.common import Check, Context, Report, check, fmt, pyplot, save

NAME = "information-privacy"
DESCRIPTION = "Wu, Xia and He, “Achieving Dalenius’ Goal of Data Privacy with Practical Assumptions”, arXiv 2017: information privacy, capacities of the privacy channels, calibration"
N_VALUES = 10
TOL = 1e-9


def capacity_task(p: dict) -> dict:
    """One channel family over its parameter grid: certified capacity and closed form / bound."""
    from mechdesign.information.capacity import shannon_capacity
    from mechdesign.mechanisms.channels import (
        binary_entropy,
        binary_symmetric,
        entropy_bits,
        exponential_channel,
        exponential_row_entropy,
        gaussian_capacity_bound,
        gaussian_channel,
    )
    from mechdesign.mechanisms.randomized_response import krr

    family, grid = p["family"], [float(v) for v in p["grid"]]
    n = N_VALUES
    values = np.arange(n, dtype=float)
    rows = []
    for t in grid:
        if family == "binary-symmetric":
            K = binary_symmetric(t).matrix
            reference, kind = 1.0 - binary_entropy(t), "closed form 1 − H(p)"
        elif family == "krr":
            K = krr(n, t).matrix
            reference, kind = float(np.log2(n) - entropy_bits(K[0])), "closed form log2 k − H(row)"
        elif family == "exponential":
            K = exponential_channel(n, t).matrix
            reference, kind = float(np.log2(n) - exponential_row_entropy(n, t)), "bound log2 n − H(row)"
        elif family == "gaussian":
            K = gaussian_channel(values, t).matrix
            reference, kind = gaussian_capacity_bound(values.max() - values.min(), t), "bound ½ log2(1 + (Δ/2)²/σ²)"
        else:
            raise ValueError(f"unknown channel family {family!r}")
        start = time.perf_counter()
        cap = shannon_capacity(K, tol=1e-10)
        rows.append({"parameter": t, "lower_bits": cap.lower, "upper_bits": cap.upper,
                     "converged": cap.converged, "reference_bits": reference,
                     "seconds": time.perf_counter() - start})
    return {"family": family, "reference": kind, "points": rows}


def calibration_task(p: dict) -> dict:
    """At capacity budget c: calibrated exponential, Gaussian and kRR channels, and the optimal
    design under ``information <= c`` bits; expected |x − y| under the uniform prior."""
    from mechdesign.core.domain import Domain
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.design.problem import Problem
    from mechdesign.information.capacity import shannon_capacity
    from mechdesign.mechanisms.channels import (
        calibrate_exponential,
        calibrate_gaussian,
        calibrate_krr,
    )
    from mechdesign.privacy import InformationPrivacy

    c = float(p["bits"])
    n = N_VALUES
    values = np.arange(n, dtype=float)
    uniform = np.full(n, 1.0 / n)
    out = {"bits": c, "channels": {}}

    def loss(K, outputs):
        return float(uniform @ (K * np.abs(values[:, None] - outputs[None, :])).sum(axis=1))

    for name, fn in (("krr", lambda: calibrate_krr(n, c)), ("exponential", lambda: calibrate_exponential(n, c)),
                     ("gaussian", lambda: calibrate_gaussian(values, c))):
        start = time.perf_counter()
        cal = fn()
        outputs = cal.mechanism.outputs.points[:, 0] if cal.mechanism.outputs.points is not None else values
        out["channels"][name] = {"parameter": cal.parameter, "capacity_lower_bits": cal.capacity.lower,
                                 "capacity_upper_bits": cal.capacity.upper,
                                 "expected_abs_error": loss(cal.mechanism.matrix, outputs),
                                 "seconds": time.perf_counter() - start}
    dom = Domain.from_size(n)
    problem = Problem(inputs=dom, privacy=[InformationPrivacy(c)],
                      objective=ExpectedLoss(np.abs(values[:, None] - values[None, :]), {"default": uniform}),
                      name="information-design")
    start = time.perf_counter()
    result = problem.solve()
    seconds = time.perf_counter() - start
    cap = shannon_capacity(result.mechanism.matrix, tol=1e-10) if result.mechanisms else None
    out["channels"]["design"] = {"status": result.status, "holds": result.holds, "solver": result.solver.get("name"),
                                 "capacity_lower_bits": None if cap is None else cap.lower,
                                 "capacity_upper_bits": None if cap is None else cap.upper,
                                 "expected_abs_error": result.objective, "seconds": seconds}
    return out


def parameters(quick: bool) -> dict:
    if quick:
        return {"grids": {"binary-symmetric": [0.0, 0.1, 0.3, 0.5], "krr": [0.0, 1.0, 3.0],
                          "exponential": [0.0, 0.5, 2.0], "gaussian": [0.5, 2.0, 8.0]},
                "bits": [0.5, 1.5]}
    return {"grids": {"binary-symmetric": np.round(np.linspace(0, 0.5, 26), 10).tolist(),
                      "krr": np.round(np.linspace(0, 8, 33), 10).tolist(),
                      "exponential": np.round(np.linspace(0, 4, 33), 10).tolist(),
                      "gaussian": np.round(np.geomspace(0.1, 30, 30), 10).tolist()},
            "bits": [0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0]}


def run(ctx: Context) -> Report:
    params = parameters(ctx.quick)
    caps = ctx.map(capacity_task, [{"family": f, "grid": g} for f, g in params["grids"].items()],
                   "capacity vs parameter")
    cals = ctx.map(calibration_task, [{"bits": c} for c in params["bits"]], "calibrated channels")
    inputs = {**params, "values": f"0..{N_VALUES - 1}", "gaussian_outputs": 201, "prior": "uniform",
              "utility": "expected |x − y|"}
    results = {"capacity": caps, "calibration": cals}
    return Report(inputs, results, _checks(caps, cals), [_figure(ctx, caps, cals)], _table(caps, cals))


def _checks(caps, cals) -> list[Check]:
    out = []
    for fam in caps:
        pts = fam["points"]
        if fam["family"] in ("binary-symmetric", "krr"):
            ok = all(r["lower_bits"] - 1e-9 <= r["reference_bits"] <= r["upper_bits"] + 1e-9 for r in pts)
            worst = max(abs(r["reference_bits"] - 0.5 * (r["lower_bits"] + r["upper_bits"])) for r in pts)
            out.append(check(f"{fam['family']}: certified capacity bracket contains the closed form", ok,
                             f"largest deviation {worst:.1e} bits"))
        else:
            out.append(check(f"{fam['family']}: certified capacity <= {fam['reference']}",
                             all(r["lower_bits"] <= r["reference_bits"] + 1e-9 for r in pts)))
        out.append(check(f"{fam['family']}: every capacity certified to 1e-10 bits", all(r["converged"] for r in pts)))
    chans = [(c["bits"], name, v) for c in cals for name, v in c["channels"].items()]
    out.append(check("every calibrated channel and the design have certified capacity <= the budget",
                     all(v["capacity_upper_bits"] is not None and v["capacity_upper_bits"] <= b + TOL
                         for b, _, v in chans)))
    out.append(check("every information-private design certified optimal",
                     all(c["channels"]["design"]["status"] == "optimal" and c["channels"]["design"]["holds"]
                         for c in cals)))
    out.append(check("the design's error <= kRR's and the exponential channel's at equal capacity",
                     all(c["channels"]["design"]["expected_abs_error"]
                         <= min(c["channels"]["krr"]["expected_abs_error"],
                                c["channels"]["exponential"]["expected_abs_error"]) * (1 + 1e-6) + 1e-9
                         for c in cals),
                     ", ".join(f"{c['bits']:g} bits: {c['channels']['design']['expected_abs_error']:.3f} vs "
                               f"kRR {c['channels']['krr']['expected_abs_error']:.3f}" for c in cals)))
    return out


def _table(caps, cals):
    rows = []
    for c in cals:
        ch = c["channels"]
        rows.append([fmt(c["bits"]), *(f"{ch[k]['expected_abs_error']:.3f}" for k in ("design", "krr", "exponential",
                                                                                      "gaussian")),
                     (f"ε = {ch['krr']['parameter']:.4g}, α = {ch['exponential']['parameter']:.4g}, "
                     f"σ = {ch['gaussian']['parameter']:.4g}")])
    return ("Wu, Xia and He 2017: expected |x − y| at equal Shannon capacity (uniform prior on 0..9; lower is better)",
            ["capacity (bits)", "optimal design", "kRR", "exponential", "Gaussian", "calibrated parameters"], rows)


def _figure(ctx, caps, cals) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 5, figsize=(23, 4.2))
    labels = {"binary-symmetric": ("binary symmetric channel", "flip probability p"),
              "krr": ("k-ary RR, k = 10", "ε"), "exponential": ("exponential channel, n = 10", "α"),
              "gaussian": ("Gaussian channel, values 0..9", "σ")}
    for ax, fam in zip(axes, caps):
        title, xlabel = labels[fam["family"]]
        x = [r["parameter"] for r in fam["points"]]
        ax.plot(x, [r["upper_bits"] for r in fam["points"]], "o-", ms=3, label="certified capacity")
        ax.plot(x, [r["reference_bits"] for r in fam["points"]], "k--", lw=1, label=fam["reference"])
        if fam["family"] == "gaussian":
            ax.set_xscale("log")
            ax.set_ylim(0, np.log2(N_VALUES) * 1.05)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("capacity (bits)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    ax = axes[-1]
    bits = [c["bits"] for c in cals]
    for key, label in (("design", "optimal design (information ≤ c)"), ("krr", "k-ary RR"),
                       ("exponential", "exponential channel"), ("gaussian", "Gaussian channel")):
        ax.plot(bits, [c["channels"][key]["expected_abs_error"] for c in cals], "o-", ms=3, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("capacity budget c (bits)")
    ax.set_ylabel("expected |x − y|")
    ax.set_title("calibrated to equal capacity")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.suptitle("Wu, Xia and He 2017: Shannon capacity of the privacy channels (ε-information privacy)")
    return save(fig, ctx.figure("capacity"))
