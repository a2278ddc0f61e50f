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
import time
from pathlib import Path

from mechdesign.bench import envelope
from mechdesign.bench.common import Context, now, record, write_record
from mechdesign.bench.executor import make_executor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("small", "large"))
    parser.add_argument("--families", help="comma-separated: " + ", ".join(envelope.FULL_SIZES))
    parser.add_argument("--epsilons", help="comma-separated subset of " + ", ".join(map(str, envelope.EPSILONS)))
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per instance (default 300)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/envelope")
    args = parser.parse_args(argv)
    families = args.families.split(",") if args.families else None
    epsilons = [float(e) for e in args.epsilons.split(",")] if args.epsilons else None
    todo = envelope.select(envelope.grid_of(False), families, args.size, epsilons)
    part = "-".join(x for x in (args.size, args.families and args.families.replace(",", "+")) if x)
    suite = "envelope" + (f"-{part}" if part else "")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with make_executor(workers=args.workers) as executor:
        ctx = Context(suite, out, False, executor, args.time_limit,
                      lambda label, done, total: print(f"{label}: {done}/{total}", file=sys.stderr, flush=True))
        started, start = now(), time.perf_counter()
        report = envelope.run(ctx, todo)
        data = record(suite, envelope.DESCRIPTION, report,
                      command="python benchmarks/bench_envelope.py " + " ".join(sys.argv[1:] if argv is None else argv),
                      quick=False, executor=executor, seconds=time.perf_counter() - start,
                      time_limit=args.time_limit, started=started)
    write_record(out / f"{suite}.json", data)
    title, _cols, rows = report.table
    print(title)
    for row in rows:
        print("  " + " | ".join(str(c) for c in row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
