"""The command line: a thin layer over the Python API (commands, rendering, plots)."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Run the ``mechdesign`` command line (see ``mechdesign --help``)."""
    from mechdesign.cli.commands import main as run

    return run(argv)
