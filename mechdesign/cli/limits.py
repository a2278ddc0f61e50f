"""Time limits and progress on the command line: the ``--time-limit`` option of ``solve`` and
``sweep``, and a solve that shows each round of the iterative solvers as it comes."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from mechdesign.cli.output import Output
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


def round_line(entry: dict) -> str:
    """One round of an iterative solver: value, proven bound and gap (rich markup)."""
    gap = "-" if entry["gap"] is None else f"{entry['gap']:.2e}"
    bound = "-" if entry["bound"] is None else f"{entry['bound']:.10g}"
    return (f"{plain(entry['solver'])} round {entry['round']}: value {entry['value']:.10g}, "
            f"proven bound {bound}, gap {gap} ({entry['seconds']:g} s)")


@contextlib.contextmanager
def solver_log_to_stderr(wanted: bool):
    """While the solver runs, its own log (written by Python or by the C library to file
    descriptor 1) goes to stderr, when ``wanted``; otherwise nothing changes."""
    if not wanted:
        yield
        return
    sys.stdout.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no descriptors to move: the Python-level log is moved all the same
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def solve_with_progress(problem, args, out: Output):
    """Solve with the command line's time limit. On a terminal a spinner shows each round the
    iterative solvers report (value, proven bound, gap); ``--verbose`` prints the rounds and
    the solver's log, on stderr when stdout is not a terminal or carries ``--json``."""
    quiet_stdout = args.json or not out.terminal
    with solver_log_to_stderr(args.verbose and quiet_stdout):
        if quiet_stdout:
            show = (lambda entry: out.errors.print(round_line(entry), highlight=False)) if args.verbose else None
            return problem.solve(time_limit=args.time_limit, verbose=args.verbose, progress=show)
        title = f"solving {plain(problem.name)}"
        with out.status(title + " ...") as status:
            def show_round(entry: dict) -> None:
                status.update(f"{title}: {round_line(entry)}")
                if args.verbose:
                    out.progress(round_line(entry))
            return problem.solve(time_limit=args.time_limit, verbose=args.verbose, progress=show_round)
