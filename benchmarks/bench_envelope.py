"""The envelope suite, whole or in parts that fit a time budget.

    python benchmarks/bench_envelope.py [--size small|large] [--families line,grid,...]
        [--epsilons 0.1,0.5,...] [--time-limit SECONDS] [--workers N] [--out DIR]

The whole suite is ``mechdesign bench envelope``; this entry point runs a selection of its grid
(:func:`mechdesign.bench.envelope.select`) and writes ``DIR/envelope[-PART].json`` and the
figure, with the command that made them.
"""

from __future__ import annotations

import argparse
import sys

from mechdesign.bench import DEFAULT_TIME_LIMITS, envelope, run_suite
from mechdesign.bench.executor import make_executor
from mechdesign.cli.limits import seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("small", "large"))
    parser.add_argument("--families", help="comma-separated: " + ", ".join(envelope.FULL_SIZES))
    parser.add_argument("--epsilons", help="comma-separated subset of " + ", ".join(map(str, envelope.EPSILONS)))
    default = DEFAULT_TIME_LIMITS["envelope"]
    parser.add_argument("--time-limit", type=seconds, default=default,
                        help=f"seconds per instance (default {default:g})")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/envelope")
    args = parser.parse_args(argv)
    families = args.families.split(",") if args.families else None
    epsilons = [float(e) for e in args.epsilons.split(",")] if args.epsilons else None
    todo = envelope.select(envelope.grid_of(False), families, args.size, epsilons)
    part = "-".join(x for x in (args.size, args.families and args.families.replace(",", "+"),
                                args.epsilons and "eps" + args.epsilons.replace(",", "+")) if x)
    command = "python benchmarks/bench_envelope.py " + " ".join(sys.argv[1:] if argv is None else argv)
    with make_executor(workers=args.workers) as executor:
        _data, report = run_suite("envelope", args.out, executor=executor, time_limit=args.time_limit,
                                  command=command, todo=todo, label="envelope" + (f"-{part}" if part else ""),
                                  progress=lambda label, done, total: print(f"{label}: {done}/{total}",
                                                                            file=sys.stderr, flush=True))
    title, _cols, rows = report.table
    print(title)
    for row in rows:
        print("  " + " | ".join(str(c) for c in row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
