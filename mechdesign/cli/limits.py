"""Time limits and progress on the command line: the ``--time-limit`` option of ``solve`` and
``sweep``, and a solve that shows each round of the iterative solvers as it comes."""

from __future__ import annotations

import argparse

from rich.console import Console

from mechdesign.cli.render import plain


def seconds(text: str) -> float:
    """A command-line number of seconds: positive and finite (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (value > 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def time_limit_option(parser, what: str) -> None:
    parser.add_argument("--time-limit", type=seconds, metavar="SECONDS",
                        help=f"bound {what}: when reached, the best design so far is returned, certified "
                             "private, with its proven bound and gap, and status time-limit (exit 1); "
                             "default: the problem file's [solve] time_limit, else none")


def solve_with_progress(problem, args, console: Console):
    """Solve with the command line's time limit; the spinner shows each round the iterative
    solvers report (value, proven bound, gap), and ``--verbose`` prints them as they come."""
    if args.json:
        return problem.solve(time_limit=args.time_limit, verbose=args.verbose)
    title = f"solving {plain(problem.name)}"
    with console.status(title + " ...", spinner="dots") as status:
        def show(entry: dict) -> None:
            gap = "-" if entry["gap"] is None else f"{entry['gap']:.2e}"
            line = (f"{plain(entry['solver'])} round {entry['round']}: value {entry['value']:.10g}, "
                    f"proven bound {entry['bound']:.10g}, gap {gap} ({entry['seconds']:g} s)")
            status.update(f"{title}: {line}")
            if args.verbose:
                console.print(line, highlight=False)
        return problem.solve(time_limit=args.time_limit, verbose=args.verbose, progress=show)
