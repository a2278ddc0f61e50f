"""Where the command line's human output goes, and how it looks there.

On a terminal: rich tables with box characters and colour, numbers rounded to fit the screen,
progress as a spinner. Anywhere else (a pipe, a file): a plain layout for ``grep``, ``awk`` and
``cut`` — no width limit, no wrapping, no truncation, no box characters and no colour codes;
each table is a title line, a header line and one line per row, the cells separated by tabs
(``cut -f2``, ``awk -F'\\t'``); numbers are printed in full precision (the shortest decimal
that reads back as the same double, ``repr(float(v))``); and progress goes to stderr, so stdout
carries only the result. ``--json`` output is the same on both.

Strings from the user (names, labels) reach this module already escaped for rich markup
(:func:`mechdesign.cli.render.plain`); the plain layout reads the markup back to the literal
text, so a label such as ``[bold]`` prints as written on both.
"""

from __future__ import annotations

import contextlib
import math
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text


def full(value) -> str:
    """A number in full precision: a float as ``repr(float(v))`` (reads back to the same
    double; ``inf``, ``-inf``, ``nan`` as such), an integer as itself, None as ``-``."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        return str(value)


def rounded(value, spec: str = ".10g") -> str:
    """A number for the screen: ``format(value, spec)``, ∞ for infinity, - for None."""
    if value is None:
        return "-"
    if isinstance(value, (bool, str)):
        return str(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    return format(v, spec)


def literal(markup: str) -> str:
    """The text a rich markup string shows, one line (tabs and newlines written as \\t, \\n)."""
    text = Text.from_markup(markup, emoji=False).plain
    return text.replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n")


class Output:
    """The human output of one command: rich on a terminal, the plain layout elsewhere.

    ``terminal`` (default: whether stdout is a terminal) picks the layout. :meth:`number`
    formats a number for it, :meth:`line` and :meth:`table` print, :meth:`progress` and
    :meth:`status` report work under way (on stderr when stdout is not a terminal).
    """

    def __init__(self, terminal: bool | None = None) -> None:
        if terminal is None:
            try:
                terminal = sys.stdout.isatty()
            except (AttributeError, ValueError):
                terminal = False
        self.terminal = terminal
        self.console = Console(emoji=False, force_terminal=terminal or None)
        self.errors = Console(stderr=True, emoji=False, no_color=not terminal, highlight=False,
                              soft_wrap=True)

    @property
    def file(self):
        """The stream the result goes to (stdout), for commands that write plain text."""
        return sys.stdout

    def number(self, value, spec: str = ".10g") -> str:
        """``value`` rounded by ``spec`` on a terminal, in full precision otherwise."""
        return rounded(value, spec) if self.terminal else full(value)

    def line(self, markup: str = "") -> None:
        """One line of rich markup (user strings escaped); plain text off a terminal."""
        if self.terminal:
            self.console.print(markup)
        else:
            sys.stdout.write(literal(markup) + "\n")

    def warning(self, text: str) -> None:
        """A warning line in the result (yellow on a terminal): ``warning: TEXT``."""
        self.line(f"  [yellow]warning: {text}[/]")

    def table(self, title: str, columns: list, rows: list[list[str]]) -> None:
        """A table: ``columns`` are names or (name, rich column options) pairs; cells are markup.

        Off a terminal: the title, then the header and each row as tab-separated cells."""
        names = [c if isinstance(c, str) else c[0] for c in columns]
        if not self.terminal:
            out = [literal(title), "\t".join(literal(n) for n in names)]
            out += ["\t".join(literal(str(cell)) for cell in row) for row in rows]
            sys.stdout.write("\n".join(out) + "\n")
            return
        table = Table(title=title, title_justify="left")
        for c in columns:
            name, options = (c, {}) if isinstance(c, str) else c
            table.add_column(name, **options)
        for row in rows:
            table.add_row(*[str(cell) for cell in row])
        self.console.print(table)

    def progress(self, markup: str) -> None:
        """A progress line (``--verbose``): on stdout on a terminal, on stderr otherwise."""
        if self.terminal:
            self.console.print(markup, highlight=False)
        else:
            self.errors.print(literal(markup), markup=False)

    def status(self, text: str):
        """A spinner showing ``text`` (``.update(text)`` changes it) on a terminal; elsewhere
        a context whose updates are silent."""
        if self.terminal:
            return self.console.status(text, spinner="dots")
        return _Silent()


class _Silent(contextlib.AbstractContextManager):
    def update(self, *args, **kwargs) -> None:
        pass

    def __exit__(self, *exc):
        return False
