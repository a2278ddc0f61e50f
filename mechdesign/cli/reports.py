"""``solve --reports T --delta D``: the (ε, δ) of T reports per user through the designed
matrix, beside the one-shot certificate (exact composition of its privacy loss distributions,
:mod:`mechdesign.accounting.composition`)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from mechdesign.cli.options import positive_int, probability
from mechdesign.cli.output import Output
from mechdesign.cli.render import plain
from mechdesign.core.errors import ProblemError


def add_reports_options(parser: argparse.ArgumentParser) -> None:
    """``--reports T`` and ``--delta D``, for a command that prints the guarantee of T reports
    per user beside the one-shot certificate (:func:`reports_guarantee`)."""
    parser.add_argument("--reports", type=positive_int, metavar="T",
                        help="also print the (ε, δ) of T reports per user through the design (exact "
                             "composition of its privacy loss distributions; needs --delta)")
    parser.add_argument("--delta", type=probability, metavar="D", help="the δ of --reports, in (0, 1]")


def check_reports_options(args: argparse.Namespace) -> None:
    """``--reports`` and ``--delta`` come together (a ProblemError naming the missing one)."""
    if (args.reports is None) != (args.delta is None):
        missing = "--delta" if args.delta is None else "--reports"
        raise ProblemError(f"--reports and --delta go together: give {missing} too", key=missing)


def reports_guarantee(matrix: Any, times: int, delta: float) -> dict:
    """The (ε, δ) of ``times`` reports per user through ``matrix``, for ``solve --reports``: the
    worst pair's ε at ``delta`` from the exact composition of the privacy loss distributions
    (:func:`mechdesign.accounting.composition.compose_pairs`, an upper bound within times·step
    of the exact one, ``step`` the grid it ended on), beside the one-shot level ε0 and basic
    composition times·ε0; ``pair_laws`` is how many distinct pair laws were composed."""
    from mechdesign.accounting.composition import compose_pairs
    from mechdesign.accounting.reading import local_level

    composed = compose_pairs(matrix, times)
    local = local_level(matrix)
    return {"times": int(times), "delta": float(delta), "epsilon": composed.epsilon(delta),
            "local_epsilon": local, "basic_composition": times * local if math.isfinite(local) else math.inf,
            "step": max(law.step for law, _ in composed.laws), "pair_laws": len(composed.laws)}


def print_reports_guarantee(guarantees: dict[str, dict], console: Output) -> None:
    """The :func:`reports_guarantee` of each context as one table."""
    first = next(iter(guarantees.values()))
    rows = [[plain(name), console.number(g["local_epsilon"]), console.number(g["basic_composition"]),
             f"[bold]{console.number(g['epsilon'])}[/]"] for name, g in guarantees.items()]
    console.table(f"{first['times']} reports per user (δ = {console.number(first['delta'])})",
                  ["mechanism", "one report ε0", f"{first['times']}·ε0", f"ε after {first['times']} reports"], rows)
