"""The scale targets: the scale suite's instances at the sizes the targets name, one fresh process
each (``mechdesign.bench.scale.instance`` through ``mechdesign.bench.isolate``).

    python benchmarks/bench_scale_targets.py [--time-limit SECONDS]

Writes benchmarks/results/scale_targets.json. The whole family sweep with growth exponents is
``mechdesign bench scale`` (results in benchmarks/results/scale/).
"""

from __future__ import annotations

import argparse

from common import write_results

from mechdesign.bench.isolate import run_isolated

TARGETS = [  # (instance, target seconds)
    ({"family": "ldp", "k": 300}, 20), ({"family": "ldp", "k": 1000}, 120),
    ({"family": "dline", "n": 1000}, 20), ({"family": "dline", "n": 2000}, 60),
    ({"family": "grid", "rows": 10}, 20), ({"family": "grid", "rows": 20}, 300),
    ({"family": "grid", "rows": 40, "gap_tolerance": 0.05}, 600),
    ({"family": "profile", "profiles": 100, "categories": 50}, 30),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--time-limit", type=float, default=900)
    parser.add_argument("--only", help="comma-separated families")
    args = parser.parse_args()
    rows = []
    for spec, target in TARGETS:
        if args.only and spec["family"] not in args.only.split(","):
            continue
        record = run_isolated({"target": "mechdesign.bench.scale:instance", "params": spec,
                               "timeout": args.time_limit})
        record = {"instance": spec, "target_seconds": target, **record}
        value = record.get("value") if isinstance(record.get("value"), dict) else {}
        seconds = value.get("total_seconds")
        record["met"] = bool(value.get("status") == "optimal" and seconds is not None and seconds <= target)
        print(spec, value.get("status", record.get("status")), seconds, "gap", value.get("gap"),
              "target", target, "met" if record["met"] else "NOT met", flush=True)
        rows.append(record)
    print("wrote", write_results("scale_targets", rows))


if __name__ == "__main__":
    main()
