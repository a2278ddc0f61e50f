"""``mechdesign examples [NAME ...] [--to DIR] [--force]``: the shipped example problems.

* no NAME, no ``--to``: one line per example, ``name  description``, names aligned;
* NAME ...: the problem files' text exactly as shipped (``mechdesign examples warner-rr >
  my.toml``);
* ``--to DIR``: copy the named examples (all when none is named) and the data tables they come
  with into DIR, printing each path written; ``--force`` replaces files that differ.

The output is plain text (no tables, no colour), so it reads the same in a pipe. Exit codes: 0,
or 2 for an unknown name or a directory that cannot be written (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys

from rich.console import Console

from mechdesign import examples
from mechdesign.core.errors import ProblemError

EXIT_OK = 0
EXIT_INPUT = 2


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``examples`` command on ``subparsers`` (from ``add_subparsers``)."""
    p = subparsers.add_parser(
        "examples", help="list the example problems shipped with mechdesign, print or copy them",
        description="With no NAME: list the examples. With NAME: print its problem file. "
                    "With --to: copy the examples named (all when none is) and the data tables "
                    "they come with into DIR.")
    p.add_argument("names", nargs="*", metavar="NAME", help="example names (see the list)")
    p.add_argument("--to", metavar="DIR",
                   help="copy into DIR (created if missing) instead of printing")
    p.add_argument("--force", action="store_true",
                   help="with --to: replace files in DIR that differ from the examples")
    p.set_defaults(run=cmd_examples)
    return p


def cmd_examples(args: argparse.Namespace, console: Console) -> int:
    """Run ``mechdesign examples``; writes to ``console.file`` (stdout) as plain text."""
    out = console.file
    try:
        if args.to is not None:
            for copy in examples.copy_to(args.to, args.names or None, overwrite=args.force):
                out.write(f"{copy}\n")
        elif args.names:
            texts = [examples.path(name).read_text(encoding="utf-8") for name in args.names]
            for text in texts:
                out.write(text)
        else:
            out.write(listing())
    except ProblemError as exc:
        print(f"mechdesign examples: {exc}", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK


def listing() -> str:
    """Every example as ``name  description``, one per line, the descriptions aligned."""
    names = examples.names()
    width = max(map(len, names), default=0)
    return "".join(f"{name.ljust(width)}  {examples.description(name)}\n" for name in names)
