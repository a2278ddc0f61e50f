"""Suite ``peers``: the same instances through mechdesign and through qif, POT and dit.

Peers are an optional extra (``pip install 'mechdesign[peers]'``: qif, POT, dit); mechdesign
itself never imports them — only this suite's child processes do. Without any of them the suite
is skipped with a message; a missing one is reported as "not installed".

Every (instance, tool) runs in its own process with a time limit
(:func:`mechdesign.bench.isolate.run_isolated`), so a peer that hangs or crashes is recorded as
such without stopping the others. The cases:

* **d-privacy on a line** (ε = 1, uniform prior, loss |x − y|; n = 10 … 200) and **on Euclidean
  grids** (geo-indistinguishability; 3×3 … 8×8): mechdesign's certified optimum against
  ``qif.mechanism.d_privacy.min_loss_given_d`` with all pairs (on the line up to n = 60: it fails
  from n ≈ 48) and, on the line, with qif's chain predicate ``metric.euclidean_chain(qif.uint)``
  (adjacent pairs only). The line's exact optimum (the optimally remapped truncated
  geometric mechanism, closed form) is the independent reference. Each peer matrix is audited
  by mechdesign (row sums, the exact ε·d level) and by ``qif.measure.d_privacy.smallest_epsilon``,
  which is also run on mechdesign's matrices.
* **Shannon capacity** of random channels (rows Dirichlet(1), k = 10 … 200): mechdesign's
  certified bracket against ``qif.measure.shannon.add_capacity`` (md = 1e-9, mrd = 0) and
  ``dit.algorithms.channel_capacity``; the exact mutual information of each peer's prior is a
  rigorous lower bound on the capacity, so it must not exceed mechdesign's upper bound.
* **W1 couplings**: on a line (|x − y|, n = 100 … 10^5) mechdesign's North-West corner against
  ``ot.emd_1d`` (and ``ot.emd`` while the dense cost fits), in the plane (Euclidean, n = 100 …
  3000) mechdesign's certified transport LP against ``ot.emd``; each POT plan is audited (its
  marginals and its cost). mechdesign's time is that of the plan alone, as POT returns it
  (``certified_seconds``: the plan with its optimality certificate, a second call).

Times are of a user's warm call, for every tool alike (:func:`warm_call`): each tool runs the
instance once (which loads what it loads on first use: cvxpy and the compiled kernels for
mechdesign, which a fresh installation also compiles then, once; the LP solver for qif), then
again, timed, up to thirty times within a second, and the least of those times is kept. The first
call's time is kept as ``first_call_seconds``.

Recorded per case: values, agreement with mechdesign, time ratios (peer / mechdesign), peak
memory, and any failure, timeout or failed audit of a peer's output.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from mechdesign.bench.common import Check, Context, Report, check, fmt, pyplot, save, seconds_text
from mechdesign.bench.isolate import run_isolated

NAME = "peers"
DESCRIPTION = "mechdesign against qif, POT and dit on the same instances"
PEERS = {"qif": "qif", "POT": "ot", "dit": "dit"}
EPSILON = 1.0
INSTALL = "pip install 'mechdesign[peers]' (qif, POT, dit)"


#: warm calls timed per tool and instance, at most, and the seconds after which no more are made
#: (a call of milliseconds varies by a fifth from one call to the next; the least of several is
#: the tool's time, as timeit takes it). Five were too few for a call of about a millisecond: the
#: first calls after the warm one were still slower (a 10-point line, least of five: 0.93–1.01
#: ms; of fifty: 0.81–0.83 ms), the more so the more Python a tool runs.
TIMED_CALLS, TIMING_SECONDS = 30, 1.0


def warm_call(solve):
    """(value, seconds, first_call_seconds) of ``solve()``: called once, then again, timed, up
    to :data:`TIMED_CALLS` times while the timed calls have taken less than
    :data:`TIMING_SECONDS` (at least once): the seconds are the least of them, the value the
    last call's. An exception of any call propagates, with the seconds that call spent as the
    attribute ``seconds``."""
    start = time.perf_counter()
    try:
        solve()
        first = time.perf_counter() - start
        began, seconds = time.perf_counter(), math.inf
        for _ in range(TIMED_CALLS):
            start = time.perf_counter()
            value = solve()
            seconds = min(seconds, time.perf_counter() - start)
            if time.perf_counter() - began >= TIMING_SECONDS:
                break
    except Exception as exc:
        exc.seconds = time.perf_counter() - start
        raise
    return value, seconds, first


def installed() -> dict[str, str | None]:
    """Peer name -> version, or None when it cannot be imported."""
    from importlib import import_module, metadata

    out = {}
    for name, module in PEERS.items():
        try:
            import_module(module)
        except Exception:  # noqa: BLE001 — ImportError, or a broken install
            out[name] = None
            continue
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "unknown"
    return out


# ---------------------------------------------------------------------------------------------
# instances (pure functions of their parameters)

def geometry(kind: str, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(points, distance matrix): a line 0..n−1 or an r×r unit grid (Euclidean)."""
    if kind == "line":
        x = np.arange(size, dtype=float)
        return x[:, None], np.abs(x[:, None] - x[None, :])
    r, c = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    pts = np.column_stack([r.ravel(), c.ravel()]).astype(float)
    diff = pts[:, None, :] - pts[None, :, :]
    return pts, np.sqrt((diff ** 2).sum(axis=2))


def remapped_geometric_loss(n: int, eps: float) -> float:
    """Exact d-privacy optimum on the line 0..n−1 (uniform prior, loss |x − y|): the truncated
    geometric mechanism followed by the Bayes-optimal remap (Ghosh, Roughgarden, Sundararajan)."""
    a = math.exp(-eps)
    x = np.arange(n)
    g = a ** np.abs(x[:, None] - x[None, :]) * (1 - a) / (1 + a)
    g[:, 0] = a ** x / (1 + a)
    g[:, -1] = a ** (n - 1 - x) / (1 + a)
    return float(((g / n).T @ np.abs(x[:, None] - x[None, :])).min(axis=1).sum())


def random_channel(k: int) -> np.ndarray:
    rng = np.random.default_rng(1000 * k)
    K = rng.dirichlet(np.ones(k), size=k)
    return K / K.sum(axis=1, keepdims=True)


def transport_instance(kind: str, n: int):
    rng = np.random.default_rng(7 * n + (0 if kind == "line" else 1))
    a, b = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    pts = np.arange(n, dtype=float)[:, None] if kind == "line" else rng.random((n, 2))
    return a, b, pts


# ---------------------------------------------------------------------------------------------
# tools (run in the isolated child)

def _audit_dprivacy(C, D, pi, eps):
    """mechdesign's independent audit of a d-privacy matrix (any source)."""
    from mechdesign.core.domain import Domain
    from mechdesign.core.metrics import Metric
    from mechdesign.privacy import MetricPrivacy

    C = np.asarray(C, dtype=float)
    n = C.shape[0]
    dom = Domain(tuple(str(i) for i in range(n)))
    level = MetricPrivacy(eps, Metric("matrix", matrix=D), dom).level(np.maximum(C, 0.0))
    row_error = float(np.abs(C.sum(axis=1) - 1).max())
    return {"loss": float(pi @ (C * D).sum(axis=1)), "audited_epsilon": level, "row_sum_error": float(row_error),
            "min_entry": float(C.min()), "zeros": int((C <= 0).sum()),
            "audit_holds": bool(level <= eps + 1e-9 and row_error <= 1e-9 and C.min() >= -1e-12)}


def _qif_smallest_epsilon(C, D) -> float | None:
    try:
        from qif import metric
        from qif.measure import d_privacy
    except ImportError:
        return None
    return float(d_privacy.smallest_epsilon(np.asarray(C, dtype=float), metric.from_distance_matrix(D)))


def _dprivacy(p: dict) -> dict:
    from mechdesign.core.domain import Domain
    from mechdesign.core.metrics import Metric
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.design.problem import Problem
    from mechdesign.privacy import MetricPrivacy

    kind, size, tool, eps = p["geometry"], int(p["size"]), p["tool"], float(p.get("epsilon", EPSILON))
    _pts, D = geometry(kind, size)
    n = D.shape[0]
    pi = np.full(n, 1.0 / n)
    if tool == "mechdesign":
        dom = Domain.from_size(size) if kind == "line" else Domain.from_grid(size, size)
        metric = Metric("absolute" if kind == "line" else "euclidean")
        problem = Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)],
                          objective=ExpectedLoss(D, {"default": pi}), name=f"dprivacy-{kind}")
        result, seconds, first = warm_call(problem.solve)
        C = result.mechanism.matrix
        out = {"status": result.status, "seconds": seconds, "first_call_seconds": first,
               "objective": result.objective,
               "solver": result.solver.get("name"), "certificate_holds": result.holds, **_audit_dprivacy(C, D, pi, eps)}
        if kind == "line":
            out["reference"] = remapped_geometric_loss(size, eps)
    else:
        import qif
        from qif import metric
        from qif.mechanism import d_privacy

        d = metric.euclidean() if kind == "line" else metric.from_distance_matrix(D)
        args = [pi, n, metric.scale(d, eps), d]
        if tool == "qif-chain":  # skip pairs (x, x') with |x − x'| != 1 (implied on a line)
            args += ["all", metric.euclidean_chain(qif.uint)]
        try:
            C, seconds, first = warm_call(lambda: np.asarray(d_privacy.min_loss_given_d(*args), dtype=float))
        except Exception as exc:  # noqa: BLE001 — the peer's failure is the result
            return {"status": "failed", "message": f"{type(exc).__name__}: {exc}", "seconds": exc.seconds}
        out = {"status": "ok", "seconds": seconds, "first_call_seconds": first, **_audit_dprivacy(C, D, pi, eps)}
        out["objective"] = out["loss"]
    out["qif_smallest_epsilon"] = _qif_smallest_epsilon(C, D)
    return out


def _capacity(p: dict) -> dict:
    from mechdesign.information.capacity import shannon_capacity
    from mechdesign.information.leakage import mutual_information

    k, tool = int(p["size"]), p["tool"]
    K = random_channel(k)
    if tool == "mechdesign":
        res, seconds, first = warm_call(lambda: shannon_capacity(K, tol=1e-9))
        return {"status": "ok", "seconds": seconds, "first_call_seconds": first, "lower_bits": res.lower,
                "upper_bits": res.upper, "objective": 0.5 * (res.lower + res.upper), "converged": res.converged}
    if tool == "qif":
        from qif.measure import shannon

        def solve():
            return shannon.add_capacity(K, 1e-9, 0.0)
    else:
        from dit.algorithms import channel_capacity

        def solve():
            return channel_capacity(K)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            (value, prior), seconds, first = warm_call(solve)
        except Exception as exc:  # noqa: BLE001 — the peer's failure is the result
            return {"status": "failed", "message": f"{type(exc).__name__}: {exc}", "seconds": exc.seconds}
    prior = np.clip(np.asarray(prior, dtype=float).ravel(), 0.0, None)
    out = {"status": "ok", "seconds": seconds, "first_call_seconds": first, "objective": float(value)}
    if prior.size == k and prior.sum() > 0:
        out["prior_mutual_information_bits"] = mutual_information(prior / prior.sum(), K)
    return out


def _transport(p: dict) -> dict:
    from mechdesign.transport.coupling import coupling

    kind, n, tool = p["geometry"], int(p["size"]), p["tool"]
    a, b, pts = transport_instance(kind, n)
    if tool == "mechdesign":
        cost = "absolute" if kind == "line" else "euclidean"
        where = {"points_x": pts[:, 0] if kind == "line" else pts, "points_y": pts[:, 0] if kind == "line" else pts}
        # the plan alone, as POT returns it (the first call loads the compiled network simplex
        # from numba's disk cache, about 0.4 s once per process)
        _, seconds, first = warm_call(lambda: coupling(a, b, cost, **where))
        start = time.perf_counter()
        _, cert = coupling(a, b, cost, **where, return_duals=True)  # plan + optimality certificate
        return {"status": "ok", "seconds": seconds, "certified_seconds": time.perf_counter() - start,
                "first_call_seconds": first,
                "objective": cert.primal, "certified_optimal": cert.optimal, "certificate_gap": cert.gap,
                "method": cert.method}
    import ot

    messages = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        def plan():
            if tool == "POT emd_1d":
                return ot.emd_1d(pts[:, 0], pts[:, 0], a, b, metric="euclidean", dense=False)
            return ot.emd(a, b, ot.dist(pts, pts, metric="euclidean"))

        try:
            G, seconds, first = warm_call(plan)
        except Exception as exc:  # noqa: BLE001 — the peer's failure is the result
            return {"status": "failed", "message": f"{type(exc).__name__}: {exc}", "seconds": exc.seconds}
        messages = sorted({str(w.message)[:200] for w in caught})
    import scipy.sparse as sp

    G = sp.coo_array(G)
    diff = pts[G.row] - pts[G.col]
    value = float(np.sum(G.data * np.sqrt((diff ** 2).sum(axis=1))))
    rows = np.bincount(G.row, weights=G.data, minlength=n)
    cols = np.bincount(G.col, weights=G.data, minlength=n)
    error = float(max(np.abs(rows - a).max(), np.abs(cols - b).max()))
    out = {"status": "ok", "seconds": seconds, "first_call_seconds": first, "objective": value,
           "marginal_error": error,
           "audit_holds": bool(error <= 1e-9 and G.data.min(initial=0.0) >= -1e-15)}
    if messages:
        out["warnings"] = messages
    return out


CASES = {"dprivacy": _dprivacy, "capacity": _capacity, "transport": _transport}


def tool_task(p: dict) -> dict:
    """Run one or more tools on one instance (in the isolated child)."""
    return {tool: CASES[p["case"]]({**p, "tool": tool}) for tool in p["tools"]}


# ---------------------------------------------------------------------------------------------

def parameters(quick: bool) -> list[dict]:
    """The instances: case, geometry, size and the tools that run it."""
    qif_d = ["qif"]
    if quick:
        return [
            {"case": "dprivacy", "geometry": "line", "size": 10, "tools": ["mechdesign", "qif", "qif-chain"]},
            {"case": "dprivacy", "geometry": "grid", "size": 3, "tools": ["mechdesign", *qif_d]},
            {"case": "capacity", "geometry": "channel", "size": 10, "tools": ["mechdesign", "qif", "dit"]},
            {"case": "transport", "geometry": "line", "size": 100, "tools": ["mechdesign", "POT emd_1d", "POT emd"]},
            {"case": "transport", "geometry": "plane", "size": 50, "tools": ["mechdesign", "POT emd"]},
        ]
    # qif with all pairs fails from n ≈ 48: run it up to 60 only, its chain form throughout
    out = [{"case": "dprivacy", "geometry": "line", "size": n,
            "tools": ["mechdesign", *(["qif"] if n <= 60 else []), "qif-chain"]} for n in (10, 20, 40, 60, 100, 200)]
    out += [{"case": "dprivacy", "geometry": "grid", "size": r, "tools": ["mechdesign", "qif"]} for r in (3, 4, 5, 6, 8)]
    out += [{"case": "capacity", "geometry": "channel", "size": k, "tools": ["mechdesign", "qif", "dit"]}
            for k in (10, 50, 100, 200)]
    out += [{"case": "transport", "geometry": "line", "size": n,
             "tools": ["mechdesign", "POT emd_1d"] + (["POT emd"] if n <= 3000 else [])}
            for n in (100, 1000, 10_000, 100_000)]
    out += [{"case": "transport", "geometry": "plane", "size": n, "tools": ["mechdesign", "POT emd"]}
            for n in (100, 300, 1000, 3000)]
    return out


PEER_OF_TOOL = {"qif": "qif", "qif-chain": "qif", "dit": "dit", "POT emd_1d": "POT", "POT emd": "POT",
                "mechdesign": None}


def run(ctx: Context) -> Report:
    have = installed()
    missing = [n for n, v in have.items() if v is None]
    instances = parameters(ctx.quick)
    inputs = {"instances": instances, "epsilon": EPSILON, "peer_versions": have}
    if len(missing) == len(PEERS):
        return Report(inputs, [], status="skipped",
                      message=f"no peer is installed ({', '.join(PEERS)}); {INSTALL}")
    specs, where = [], []
    for i, inst in enumerate(instances):
        tools = [t for t in inst["tools"] if PEER_OF_TOOL[t] is None or have[PEER_OF_TOOL[t]]]
        # quick: one child per instance; full: one child per tool (a slow peer cannot hold up ours)
        groups = [tools] if ctx.quick else [[t] for t in tools]
        for g in groups:
            specs.append({"target": "mechdesign.bench.peers:tool_task", "timeout": ctx.time_limit,
                          "params": {**{k: v for k, v in inst.items() if k != "tools"}, "tools": g}})
            where.append((i, g))
    records = ctx.map(run_isolated, specs, "peers")
    rows = []
    for i, inst in enumerate(instances):
        row = {k: v for k, v in inst.items() if k != "tools"}
        row["tools"] = {}
        for t in inst["tools"]:
            peer = PEER_OF_TOOL[t]
            if peer is not None and not have[peer]:
                row["tools"][t] = {"status": "not installed", "message": INSTALL}
        rows.append(row)
    for (i, group), rec in zip(where, records):
        for t in group:
            if rec["status"] == "ok":
                entry = dict(rec["value"][t])
                if len(group) == 1:
                    entry["peak_rss_mb"] = rec.get("peak_rss_mb")
                    entry["peak_increase_mb"] = rec.get("peak_increase_mb")
            else:
                entry = {"status": rec["status"], "message": rec.get("message", "")}
            rows[i]["tools"][t] = entry
    for row in rows:
        _compare(row)
    message = f"not installed: {', '.join(missing)} ({INSTALL})" if missing else ""
    return Report(inputs, rows, _checks(rows), [_figure(ctx, rows)], _table(rows), message=message)


def _compare(row: dict) -> None:
    """Agreement with mechdesign and time ratios, per peer tool."""
    ours = row["tools"].get("mechdesign", {})
    if ours.get("objective") is None:
        return
    for name, t in row["tools"].items():
        if name == "mechdesign" or t.get("objective") is None:
            continue
        t["difference"] = t["objective"] - ours["objective"]
        t["relative_difference"] = t["difference"] / max(abs(ours["objective"]), 1e-300)
        if t.get("seconds") and ours.get("seconds"):
            t["time_ratio"] = t["seconds"] / ours["seconds"]
        if row["case"] == "capacity":
            t["outside_bracket_bits"] = max(ours["lower_bits"] - t["objective"], t["objective"] - ours["upper_bits"], 0.0)


def _checks(rows) -> list[Check]:
    out = []
    ours = [(r, r["tools"]["mechdesign"]) for r in rows if r["tools"].get("mechdesign", {}).get("status") in ("ok", "optimal")]
    dp = [(r, m) for r, m in ours if r["case"] == "dprivacy"]
    lines = [(r, m) for r, m in dp if "reference" in m]
    out.append(check("mechdesign's d-privacy optimum on a line = the remapped truncated geometric (closed form)",
                     all(abs(m["objective"] - m["reference"]) <= 1e-8 * m["reference"] for _, m in lines),
                     f"{len(lines)} lines"))
    out.append(check("every mechdesign d-privacy matrix passes the independent audits (mechdesign's and qif's "
                     "smallest_epsilon)",
                     all(m["audit_holds"] and m["certificate_holds"]
                         and (m["qif_smallest_epsilon"] is None or m["qif_smallest_epsilon"] <= EPSILON * (1 + 1e-6))
                         for _, m in dp)))
    feasible = [(r, m, t) for r, m in dp for n, t in r["tools"].items()
                if n != "mechdesign" and t.get("audit_holds")]
    out.append(check("no peer mechanism that passes the audit beats mechdesign's certified optimum",
                     all(t["loss"] >= m["objective"] - 1e-9 * max(1.0, m["objective"]) for _, m, t in feasible),
                     f"{len(feasible)} audited peer matrices"))
    caps = [(r, m) for r, m in ours if r["case"] == "capacity"]
    out.append(check("capacity: mechdesign's bracket is certified to 1e-9 bits; no peer prior's exact mutual "
                     "information exceeds its upper bound",
                     all(m["converged"] and all(t.get("prior_mutual_information_bits", -1) <= m["upper_bits"] + 1e-12
                                                for n, t in r["tools"].items() if n != "mechdesign")
                         for r, m in caps)))
    tr = [(r, m) for r, m in ours if r["case"] == "transport"]
    out.append(check("W1: every mechdesign coupling certified optimal", all(m["certified_optimal"] for _, m in tr)))
    valid = [(r, m, t) for r, m in tr for n, t in r["tools"].items() if n != "mechdesign" and t.get("audit_holds")]
    out.append(check("W1: no valid POT plan costs less than mechdesign's certified optimum",
                     all(t["objective"] >= m["objective"] - 1e-9 * max(1.0, m["objective"]) for _, m, t in valid),
                     f"{len(valid)} valid plans"))
    return out


def _peer_cell(t: dict) -> str:
    if t.get("status") not in ("ok", "optimal"):
        msg = t.get("message", "")
        return f"{t.get('status')}: {msg[:60]}" if msg else str(t.get("status"))
    parts = [fmt(t["objective"], 10)]
    if "relative_difference" in t:
        parts.append(f"(Δ {t['relative_difference']:+.1e})")
    return " ".join(parts)


def _audit_cell(case: str, t: dict) -> str:
    if t.get("status") not in ("ok", "optimal"):
        return "-"
    if case == "dprivacy":
        eps = t.get("audited_epsilon")
        text = "holds" if t.get("audit_holds") else f"FAILS: ε = {fmt(eps)}"
        if t.get("zeros"):
            text += f", {t['zeros']} zeros"
        return text
    if case == "capacity":
        gap = t.get("outside_bracket_bits")
        if gap is None:
            return "-"
        return ("inside the certified bracket" if gap == 0 else f"agrees to {gap:.0e} bits" if gap < 1e-10
                else f"{gap:.1e} bits outside the certified bracket")
    if case == "transport":
        text = "plan valid" if t.get("audit_holds") else f"marginals off {t.get('marginal_error', float('nan')):.1e}"
        if t.get("warnings"):
            text += "; warned: " + t["warnings"][0][:50]
        return text
    return "-"


def _table(rows):
    table = []
    for r in rows:
        ours = r["tools"].get("mechdesign", {})
        label = {"dprivacy": f"d-privacy {r['geometry']}", "capacity": "capacity",
                 "transport": f"W1 {r['geometry']}"}[r["case"]]
        size = f"{r['size']}×{r['size']}" if r["geometry"] == "grid" else str(r["size"])
        for name, t in r["tools"].items():
            if name == "mechdesign":
                continue
            ratio = t.get("time_ratio")
            table.append([label, size, _peer_cell(ours) if ours else "-", seconds_text(ours.get("seconds")), name,
                          _peer_cell(t), seconds_text(t.get("seconds")),
                          "-" if ratio is None else f"{ratio:.3g}×", _audit_cell(r["case"], t)])
    return (("peers: optimal values, agreement, times (ratio = peer / mechdesign), independent audit of the "
            "peer's output"), ["case", "size", "mechdesign", "time", "peer", "peer value (Δ rel.)", "peer time",
                              "ratio", "audit of peer output"], table)


def _figure(ctx, rows) -> str:
    plt = pyplot()
    cases = [("dprivacy", "line", "d-privacy, line (n)"), ("dprivacy", "grid", "d-privacy, grid (cells)"),
             ("capacity", "channel", "capacity (k)"), ("transport", "line", "W1, line (n)"),
             ("transport", "plane", "W1, plane (n)")]
    fig, axes = plt.subplots(1, len(cases), figsize=(4.3 * len(cases), 3.8))
    for ax, (case, geo, title) in zip(axes, cases):
        rs = sorted((r for r in rows if r["case"] == case and r["geometry"] == geo), key=lambda r: r["size"])
        tools = sorted({n for r in rs for n in r["tools"]}, key=lambda n: (n != "mechdesign", n))
        for name in tools:
            xs, ys, bad = [], [], []
            for r in rs:
                t = r["tools"].get(name, {})
                x = r["size"] ** 2 if geo == "grid" else r["size"]
                if t.get("status") in ("ok", "optimal") and t.get("seconds"):
                    xs.append(x)
                    ys.append(t["seconds"])
                    if case == "dprivacy" and name != "mechdesign" and not t.get("audit_holds"):
                        bad.append((x, t["seconds"]))
            if xs:
                ax.loglog(xs, ys, "o-" if name == "mechdesign" else "s--", ms=4, label=name)
            if bad:
                ax.loglog(*zip(*bad), "rx", ms=9)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("size")
        ax.set_ylabel("seconds")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("peers: time per instance (red ×: the peer's matrix fails the independent audit; "
                 "missing points: failed or timed out)", fontsize=10)
    fig.tight_layout()
    return save(fig, ctx.figure("times"))
