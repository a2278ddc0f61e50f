"""The envelope suite, whole or in parts that fit a time budget.

    python benchmarks/bench_envelope.py [--size small|large] [--families line,grid,...]
        [--epsilons 0.1,0.5,...] [--priors uniform,...] [--losses metric,...]
        [--sizes line=2000,...] [--time-limit SECONDS] [--workers N] [--out DIR]

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


def _sizes(text: str) -> dict:
    """``line=2000,profile=100x50`` -> {"line": 2000, "profile": (100, 50)}."""
    out = {}
    for item in text.split(","):
        family, _, size = item.partition("=")
        try:
            parts = tuple(int(v) for v in size.lower().split("x"))
        except ValueError:
            parts = ()
        if not family or not parts or min(parts) < 1 or len(parts) > 2:
            raise argparse.ArgumentTypeError(f"expected family=size (a positive whole number, or PxC), got {item!r}")
        out[family] = parts[0] if len(parts) == 1 else parts
    return out


def _label(size) -> str:
    return "x".join(map(str, size)) if isinstance(size, tuple) else str(size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("small", "large"))
    parser.add_argument("--families", help="comma-separated: " + ", ".join(envelope.FULL_SIZES))
    parser.add_argument("--epsilons", help="comma-separated subset of " + ", ".join(map(str, envelope.EPSILONS)))
    parser.add_argument("--priors", help="comma-separated subset of " + ", ".join(envelope.PRIORS))
    all_losses = envelope.LOSSES + envelope.OPT_IN_LOSSES
    parser.add_argument("--losses", help="comma-separated subset of " + ", ".join(all_losses)
                        + " (worst-case only when named)")
    parser.add_argument("--sizes", type=_sizes, default={},
                        help="family=size,... : the chosen instances of a family at another size "
                             "(a number; PxC for profile), e.g. line=2000")
    default = DEFAULT_TIME_LIMITS["envelope"]
    parser.add_argument("--time-limit", type=seconds, default=default,
                        help=f"seconds per instance (default {default:g})")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/envelope")
    args = parser.parse_args(argv)
    families = args.families.split(",") if args.families else None
    epsilons = [float(e) for e in args.epsilons.split(",")] if args.epsilons else None
    priors = args.priors.split(",") if args.priors else None
    losses = args.losses.split(",") if args.losses else None
    for name, chosen, known in (("--priors", priors, envelope.PRIORS), ("--losses", losses, all_losses)):
        if chosen and not set(chosen) <= set(known):
            parser.error(f"{name}: expected a comma-separated subset of {', '.join(known)}, got {','.join(chosen)}")
    unknown = set(args.sizes) - set(envelope.FULL_SIZES)
    if unknown:
        parser.error(f"--sizes: no family {', '.join(sorted(unknown))} (expected {', '.join(envelope.FULL_SIZES)})")
    for family, size in args.sizes.items():
        if isinstance(size, tuple) != (family == "profile"):
            parser.error(f"--sizes: {family} takes " + ("PxC (profiles x categories)" if family == "profile"
                                                         else "one whole number") + f", got {_label(size)}")
    opt_in = tuple(loss for loss in losses or () if loss in envelope.OPT_IN_LOSSES)
    todo = envelope.select(envelope.grid_of(False, opt_in), families, args.size, epsilons, priors, losses, args.sizes)
    part = "-".join(x for x in (args.size, args.families and args.families.replace(",", "+"),
                                args.epsilons and "eps" + args.epsilons.replace(",", "+"),
                                args.priors and args.priors.replace(",", "+"),
                                args.losses and args.losses.replace(",", "+"),
                                args.sizes and "+".join(f"{f}{_label(v)}" for f, v in args.sizes.items())) if x)
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
