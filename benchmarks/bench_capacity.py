"""Shannon capacity of random k x k channels to a certified 1e-9-bit gap, against peers.

    python benchmarks/bench_capacity.py [--sizes 10 100 1000] [--timeout 900] [--peers qif dit cvxpy]

Channels: rows drawn from a uniform Dirichlet(1) ("dense") and a sparse Dirichlet(0.1), seed
fixed per (k, kind). mechdesign's ``shannon_capacity`` (Blahut–Arimoto warm start + active-set
Newton, stopping only on the certified bound gap) is timed (best of 3) and compared in the same
run with

* ``qif.measure.shannon.add_capacity(C, md=1e-9, mrd=0)`` (qif's Blahut–Arimoto; with the
  default ``mrd`` its ``md`` is ignored),
* ``dit.algorithms.channel_capacity`` (default tolerances),
* a cvxpy exponential-cone maximisation of I(p; K) solved by Clarabel,

each in a child process killed after ``--timeout`` seconds. Agreement: each peer's reported value
against mechdesign's certified bracket [lower, upper] (0 when inside), and the exact mutual
information of the peer's prior (a rigorous lower bound, so it shows how far the peer's prior
is from capacity-achieving). Writes benchmarks/results/capacity.json.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import queue as queue_module
import time
import traceback
from importlib import metadata

import numpy as np
from common import write_results

from mechdesign.information.capacity import shannon_capacity
from mechdesign.information.channel import LN2
from mechdesign.information.leakage import mutual_information

TOL = 1e-9


def channel(k: int, kind: str) -> np.ndarray:
    alpha = 1.0 if kind == "dense" else 0.1
    rng = np.random.default_rng(1000 * k + (0 if kind == "dense" else 1))
    K = rng.dirichlet(np.full(k, alpha), size=k)
    return K / K.sum(axis=1, keepdims=True)


def _qif(K):
    from qif.measure import shannon

    value, prior = shannon.add_capacity(K, 1e-9, 0.0)
    return float(value), np.asarray(prior, dtype=float).ravel()


def _dit(K):
    from dit.algorithms import channel_capacity

    value, prior = channel_capacity(K)
    return float(value), np.asarray(prior, dtype=float).ravel()


def _cvxpy(K):
    import cvxpy as cp

    negH = np.where(K > 0, K * np.log(np.where(K > 0, K, 1.0)), 0.0).sum(axis=1)
    p = cp.Variable(K.shape[0], nonneg=True)
    prob = cp.Problem(cp.Maximize(negH @ p + cp.sum(cp.entr(K.T @ p))), [cp.sum(p) == 1])
    prob.solve(solver=cp.CLARABEL)
    return float(prob.value) / LN2, np.asarray(p.value, dtype=float)


PEERS = {"qif": _qif, "dit": _dit, "cvxpy": _cvxpy}


def _child(name, K, queue):
    try:
        start = time.perf_counter()
        value, prior = PEERS[name](K)
        queue.put(("ok", time.perf_counter() - start, value, prior))
    except Exception:  # noqa: BLE001 — reported in the JSON
        queue.put(("error", None, traceback.format_exc(limit=3), None))


def run_peer(name: str, K: np.ndarray, timeout: float) -> dict:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(name, K, queue))
    proc.start()
    try:
        status, seconds, value, prior = queue.get(timeout=timeout)
    except queue_module.Empty:  # the peer ran out of time
        proc.kill()
        proc.join()
        return {"status": "timeout", "seconds": None, "timeout_seconds": timeout}
    proc.join()
    if status != "ok":
        return {"status": "error", "message": value}
    prior = np.clip(prior, 0.0, None)
    out = {"status": "ok", "seconds": seconds, "value_bits": value}
    if prior.size == K.shape[0] and prior.sum() > 0:
        out["prior_mutual_information_bits"] = mutual_information(prior / prior.sum(), K)
    return out


def ours(K: np.ndarray, repeats: int = 3) -> dict:
    best, res = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        res = shannon_capacity(K, tol=TOL)
        best = min(best, time.perf_counter() - start)
    return {"seconds": best, "lower_bits": res.lower, "upper_bits": res.upper, "gap_bits": res.gap,
            "iterations": res.iterations, "converged": res.converged,
            "support": int((res.prior > 0).sum())}


def installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--peers", nargs="*", default=list(PEERS))
    args = parser.parse_args()
    peer_versions = {"qif": installed("qif"), "dit": installed("dit"), "clarabel": installed("clarabel")}
    available = {"qif": peer_versions["qif"] is not None, "dit": peer_versions["dit"] is not None,
                 "cvxpy": True}
    rows = []
    for k in args.sizes:
        for kind in ("dense", "sparse"):
            K = channel(k, kind)
            me = ours(K)
            row = {"k": k, "rows": "Dirichlet(1)" if kind == "dense" else "Dirichlet(0.1)",
                   "mechdesign": me, "peers": {}}
            print(f"k={k} {kind}: mechdesign [{me['lower_bits']:.12f}, {me['upper_bits']:.12f}] "
                  f"gap {me['gap_bits']:.1e} in {me['seconds']:.3f} s", flush=True)
            for name in args.peers:
                if not available.get(name):
                    row["peers"][name] = {"status": "not installed"}
                    continue
                peer = run_peer(name, K, args.timeout)
                if peer["status"] == "ok":
                    v = peer["value_bits"]
                    peer["outside_bracket_bits"] = max(me["lower_bits"] - v, v - me["upper_bits"], 0.0)
                    peer["abs_error_bits"] = abs(v - 0.5 * (me["lower_bits"] + me["upper_bits"]))
                    peer["time_ratio"] = peer["seconds"] / me["seconds"]
                    if "prior_mutual_information_bits" in peer:
                        peer["prior_shortfall_bits"] = me["lower_bits"] - peer["prior_mutual_information_bits"]
                    print(f"   {name}: {v:.12f} ({peer['abs_error_bits']:.1e} off) in {peer['seconds']:.2f} s "
                          f"= {peer['time_ratio']:.0f}x", flush=True)
                else:
                    print(f"   {name}: {peer['status']}", flush=True)
                row["peers"][name] = peer
            rows.append(row)
    k_max = [r for r in rows if r["k"] == max(args.sizes)]
    summary = {
        "target": "k = 1000 to a certified 1e-9-bit gap in <= 2 s",
        "worst_seconds_at_largest_k": max(r["mechdesign"]["seconds"] for r in k_max),
        "all_converged": all(r["mechdesign"]["converged"] for r in rows),
    }
    path = write_results("capacity", rows, tolerance_bits=TOL, peer_versions=peer_versions,
                         summary=summary)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
