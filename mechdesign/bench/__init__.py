"""Benchmark suites: the papers' experiments reproduced, peers side by side, scale.

``mechdesign bench [SUITE ...] [--out DIR] [--quick]`` runs suites from :data:`SUITES`; each
writes ``DIR/SUITE.json`` (inputs, versions, machine, times, values, checked facts) and its PNG
figures ``DIR/SUITE_*.png``, and prints a summary table. ``--quick`` runs a small version of
every suite (seconds; the test suite runs them). The independent solves of a suite go through
one :class:`~mechdesign.bench.executor.Executor`: a local process pool, or Dask distributed.

Python::

    from mechdesign.bench import run_suite
    from mechdesign.bench.executor import make_executor
    with make_executor(workers=2) as ex:
        data, report = run_suite("profile-privacy", out="bench-results", quick=True, executor=ex)
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from pathlib import Path

from mechdesign.bench.common import Context, Report, now, record, write_record
from mechdesign.bench.executor import Executor, SerialExecutor
from mechdesign.core.errors import ProblemError

#: suite name -> (module, one-line description); order = the order `mechdesign bench` runs them
SUITES: dict[str, tuple[str, str]] = {
    "profile-privacy": ("mechdesign.bench.profile_privacy",
                 ("Geumlek and Chaudhuri, “Profile-Based Privacy for Locally Private Computations”, ISIT 2019 §6: Bernoulli-Couplet, Bernoulli-Chain-6/21, Categorical-Chain against "
                 "(k-ary) RR — Figures 2 and 3 redrawn")),
    "distribution-privacy": ("mechdesign.bench.distribution_privacy",
                 ("Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019: coupling-mechanism loss = W1 = LP (Prop. 2), Theorem 3 under perturbed "
                 "knowledge, XDistP calibrated by W1 vs W∞ / diameter on the airports data (§V-B)")),
    "hybrid-estimation": ("mechdesign.bench.hybrid_estimation",
                 "Palamidessi, “Privacy vs Utility, Differential Privacy and the Hybrid Model”, lecture slides: EMD vs ε for kRR + Inv and d-privacy + IBU, optimal designs alongside"),
    "information-privacy": ("mechdesign.bench.information_privacy",
                 ("Wu, Xia and He, “Achieving Dalenius’ Goal of Data Privacy with Practical Assumptions”, arXiv 2017: capacity of the privacy channels vs their parameter; calibrated "
                 "information-private channels vs kRR at equal capacity")),
    "peers": ("mechdesign.bench.peers",
              ("the same instances through mechdesign and through qif, POT and dit: optimal values, "
              "agreement, time ratios, independent audits of the peers' outputs")),
    "scale": ("mechdesign.bench.scale",
              ("ε-LDP k ≤ 1000, d-privacy line n ≤ 2000, Euclidean grids ≤ 40×40, profile graphs "
              "≤ 100×50, couplings ≤ 10^6 points: time, memory, gap, growth exponent")),
    "envelope": ("mechdesign.bench.envelope",
                 ("every special-solver family over ε ∈ {0.1 … 8}, uniform / Dirichlet / Zipf priors and "
                  "three losses, two sizes each: worst time, status, proven gap, solver path")),
    "information-utilities": ("mechdesign.bench.information_utilities",
                              ("Kairouz, Oh and Viswanath, “Extremal Mechanisms for Local Differential Privacy”, "
                               "NeurIPS 2014: mutual information under ε-LDP by staircases, k ≤ 50, against kRR "
                               "and the binary mechanism")),
    "robust-priors": ("mechdesign.bench.robust_priors",
                      "ε-LDP designs robust over a total-variation ball of priors around an estimate, against the "
                      "design optimal for the estimate alone"),
    "shuffle": ("mechdesign.bench.shuffle", "central ε of designed matrices: shuffled reports (k = 1000, n = 10^8), T = 1000 repeated reports (k = 100), ε against n for the optimal design vs k-ary RR"),
}

#: default per-instance time limits (seconds) of suites that isolate instances in subprocesses
DEFAULT_TIME_LIMITS = {"scale": 3600.0, "peers": 600.0, "envelope": 300.0}
QUICK_TIME_LIMIT = 120.0


def suite_names() -> list[str]:
    return list(SUITES)


def check_names(names) -> list[str]:
    """Validate suite names (ProblemError naming the unknown ones); none given = every suite."""
    names = list(names or [])
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise ProblemError(f"unknown suite{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                           f"expected one of: {', '.join(SUITES)}", key="bench")
    out: list[str] = []
    for n in names or SUITES:
        if n not in out:
            out.append(n)
    return out


def load(name: str):
    """The suite's module (``NAME``, ``DESCRIPTION``, ``run(ctx) -> Report``)."""
    check_names([name])
    return importlib.import_module(SUITES[name][0])


def run_suite(name: str, out: str | Path = "bench-results", *, quick: bool = False,
              executor: Executor | None = None, time_limit: float | None = None,
              command: str | None = None,
              progress: Callable[[str, int, int], None] | None = None,
              todo: list | None = None, label: str | None = None) -> tuple[dict, Report]:
    """Run one suite and write ``out/LABEL.json`` (LABEL: the suite's name unless given);
    returns (the JSON object, the Report).

    ``time_limit`` (seconds) bounds each isolated instance (scale, peers, envelope); default:
    120 s with ``quick``, else :data:`DEFAULT_TIME_LIMITS`. ``todo`` runs a selection of a
    suite's instances (suites whose ``run`` takes one, e.g. the envelope's ``select``).
    """
    module = load(name)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    executor = executor or SerialExecutor()
    if time_limit is None:
        time_limit = QUICK_TIME_LIMIT if quick else DEFAULT_TIME_LIMITS.get(name)
    label = label or name
    ctx = Context(label, out, quick, executor, time_limit, progress)
    started = now()
    start = time.perf_counter()
    report: Report = module.run(ctx) if todo is None else module.run(ctx, todo)
    seconds = time.perf_counter() - start
    command = command or f"mechdesign bench {name}" + (" --quick" if quick else "")
    data = record(label, SUITES[name][1], report, command=command, quick=quick, executor=executor,
                  seconds=seconds, time_limit=time_limit, started=started)
    write_record(out / f"{label}.json", data)
    return data, report
