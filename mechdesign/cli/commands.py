"""Command line: the parser, the entry point and how errors end.

Each command lives in its own module (``solve_command``, ``audit_command``, ``compare_command``,
``sweep_command``, ``amplify_command``, ``bench_command``, ``examples_command``) with
``add_parser(sub)``, which sets the function that runs it.

Exit codes: 0 optimal (or audit holds), 2 problem-file or usage error, 1 otherwise, 141 when
stdout is a pipe closed early (128 + SIGPIPE, as a shell reports a process SIGPIPE ended), 143
when SIGTERM arrives while a result file is being written (the partial file is removed).

Bad input never ends in a traceback: every :class:`ProblemError` prints as one line
``FILE: key 'KEY': message`` on stderr (exit 2). Output paths (``--out``, ``--plot``) are checked
before the work starts; if writing still fails afterwards, the result is printed first and the
write error reported after it (exit 1), so no result is lost.

Human output is laid out for where it goes (:mod:`mechdesign.cli.output`): tables on a
terminal; full values in a plain tab-separated layout in a pipe or a file.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from mechdesign import __version__
from mechdesign.cli import (
    amplify_command,
    audit_command,
    bench_command,
    compare_command,
    examples_command,
    solve_command,
    sweep_command,
)
from mechdesign.cli.options import EPILOG, EXIT_FAIL, EXIT_INPUT, EXIT_OK, EXIT_PIPE, report_problem
from mechdesign.cli.output import Output
from mechdesign.core.errors import ProblemError

COMMANDS = (solve_command, audit_command, compare_command, sweep_command, amplify_command, bench_command,
            examples_command)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mechdesign", description="Design certified optimal local privacy mechanisms.",
                                     epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"mechdesign {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    for command_parser in (parser, *sub.choices.values()):
        command_parser.allow_abbrev = False  # options are spelled in full: scripts stay valid
    return parser


def _stdout_to_devnull() -> None:
    """After a closed pipe: point stdout at /dev/null so that the interpreter's final flush is
    quiet (the Python documentation's recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # an in-process stdout with no descriptor
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring and ``--help``)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_INPUT if exc.code not in (0, None) else EXIT_OK
    if args.command == "bench":
        args.argv = list(argv if argv is not None else sys.argv[1:])[1:]
    warnings.filterwarnings("ignore", module="cvxpy")
    try:
        code = args.run(args, Output())
        sys.stdout.flush()  # a closed pipe shows here, inside the try
        return code
    except ProblemError as exc:
        report_problem(exc, args)
        return EXIT_INPUT
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_PIPE
    except MemoryError:
        print("out of memory: the problem is too large for this machine", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
