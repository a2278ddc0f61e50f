"""What the commands share: exit codes, option validators, the ``--baselines``, ``--out`` and
``--format`` options, the problem loader, output-path checks and late file writes.

Heavy modules (the solvers, cvxpy) are imported only when a command runs, so that ``--help``
and ``--version`` start quickly.
"""

from __future__ import annotations

import argparse
import sys

from mechdesign.core.errors import ProblemError

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2
EXIT_PIPE = 141  # 128 + SIGPIPE: stdout was closed early (``mechdesign solve ... | head``)
EPILOG = ("exit status: 0 optimal (or the audit holds), 1 otherwise (time-limit included), "
          "2 bad problem file or usage, "
          "141 stdout closed early (a pipe such as '| head'), 143 SIGTERM while writing a file")
#: the baselines every command's ``--baselines`` accepts (the registry of
#: :mod:`mechdesign.estimation.compare`, named here so that ``--help`` loads no solver)
BASELINE_NAMES = ("krr", "geometric", "exponential", "planar-laplace", "planar-geometric", "rappor",
                  "oue", "one-bit-cluster", "smooth-one-bit", "smooth-categorical", "uniform",
                  "identity")


def load_problem(path):
    """Read a problem file (the package's loader, imported when a command needs it, so that
    ``--help`` does not load the solvers)."""
    from mechdesign.design.spec import load_problem as load

    return load(path)


def parse_baselines(text: str | None) -> list[str]:
    """The names given to ``--baselines`` (checked against the registry; [] when absent)."""
    if text is None:
        return []
    from mechdesign.estimation.compare import parse_baselines as parse

    return parse(text)


def users(text: str) -> int:
    """A number of simulated users: a whole number in [1, 2^62] (``1e6`` accepted)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of users (e.g. 100000 or 1e6), got {text!r}")
    if not value.is_integer() or not 1 <= value <= 2**62:
        raise argparse.ArgumentTypeError(f"expected a whole number of users in [1, 2^62], got {text!r}")
    return int(value)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def baselines_option(parser, what: str) -> None:
    parser.add_argument("--baselines", metavar="NAMES",
                        help=f"comma-separated baselines {what}; names: {', '.join(BASELINE_NAMES)}")


def out_option(parser, command: str, formats: tuple[str, ...]) -> None:
    """``--out PATH`` and ``--format`` (one of ``formats``; default from PATH's suffix)."""
    from mechdesign.cli.out_formats import FORMAT_HELP

    parser.add_argument("--out", metavar="PATH",
                        help="write the result to PATH (atomically, with your umask; the directory "
                             "must exist)")
    parser.add_argument("--format", choices=formats,
                        help=f"format of --out, default from the suffix of PATH (.{', .'.join(formats)}"
                             f"{', .npz' if 'npy' in formats else ''}), else json. "
                             f"{FORMAT_HELP[command]}")


def verbose_option(parser, what: str) -> None:
    parser.add_argument("--verbose", action="store_true",
                        help=f"print {what} as it goes (on stderr when stdout is not a terminal)")


def check_paths(args) -> None:
    """Refuse an unwritable ``--out`` or ``--plot`` (or an image format matplotlib cannot save)
    before any work starts (exit 2)."""
    from mechdesign.design.result import check_output_path

    if getattr(args, "out", None):
        check_output_path(args.out, "--out")
    if getattr(args, "plot", None):
        from mechdesign.cli.plots import check_plot_path

        check_plot_path(args.plot, "--plot")


def one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


class LateWrites:
    """Files written after the work: a failure is kept and reported after the result is printed,
    so the result is never lost (exit 1)."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def run(self, key: str, path: str, write) -> bool:
        try:
            write()
            return True
        except (OSError, ValueError) as exc:  # ProblemError is a ValueError
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.errors.append(f"{path}: key '{key}': cannot write: {reason}")
            return False

    def report(self) -> bool:
        for line in self.errors:
            print(one_line(line), file=sys.stderr)
        return bool(self.errors)


def report_problem(exc: ProblemError, args) -> None:
    """Print a ProblemError as one line ``FILE: key 'KEY': message`` (the problem file when the
    error names none)."""
    file = exc.file or getattr(args, "file", None) or getattr(args, "problem", None)
    print(one_line(str(exc.located(str(file) if file else None))), file=sys.stderr)


def probability(text: str) -> float:
    """A δ for the command line: a number in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}")
    return value
