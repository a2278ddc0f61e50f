"""Human-readable output (rich tables) for results and audits.

Every string that comes from the user (problem names, labels, context and notion names,
messages) is printed literally: rich would read ``[bold]`` or ``[/]`` in it as markup, so it
goes through :func:`plain` first.
"""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mechdesign.core.audit_record import Audit
from mechdesign.design.result import Result

MATRIX_LIMIT = 12  # show matrices up to this many rows and columns


def plain(value) -> str:
    """``str(value)`` escaped for rich markup, so that it prints exactly as written."""
    return escape(str(value))


def fmt(value) -> str:
    """A number to ten significant digits (∞ for infinity, - for None); anything else as text,
    escaped for rich markup."""
    if value is None:
        return "-"
    if isinstance(value, (float, np.floating)):
        if np.isinf(value):
            return "∞"
        return f"{value:.10g}"
    return plain(value)


def levels(d: dict) -> str:
    return ", ".join(f"{plain(k)}={fmt(v)}" for k, v in d.items())


def certificate_table(audits: list[Audit], title: str = "Certificate") -> Table:
    table = Table(title=plain(title), title_justify="left")
    table.add_column("notion")
    table.add_column("requested")
    table.add_column("achieved")
    table.add_column("holds")
    for a in audits:
        table.add_row(plain(a.notion), levels(a.requested), levels(a.achieved),
                      "[green]yes[/]" if a.holds else "[red]NO[/]")
    return table


def matrix_table(name: str, mech) -> Table:
    table = Table(title=f"Mechanism {plain(name)}", title_justify="left")
    table.add_column("x \\ y")
    for label in mech.outputs.labels:
        table.add_column(plain(label), justify="right")
    for label, row in zip(mech.inputs.labels, mech.matrix):
        table.add_row(plain(label), *[f"{v:.4f}" for v in row])
    return table


def print_result(result: Result, console: Console, baselines: list[dict] | None = None) -> None:
    colour = "green" if result.status == "optimal" else "red"
    console.print(f"[bold]{plain(result.problem)}[/]: [{colour}]{plain(result.status)}[/]")
    if result.message:
        console.print(f"  {plain(result.message)}")
    if result.objective is not None:
        console.print(f"  objective {plain(result.objective_kind)} = {fmt(result.objective)}")
    s = result.solver
    times = f"compile {s.get('compile_seconds', 0):.3f} s, solve {s.get('solve_seconds') or 0:.3f} s"
    gap = f", gap {s['gap']:.2e}" if "gap" in s else ""
    console.print(f"  solver {plain(s.get('name', '-'))}: {times}{gap}")
    if s.get("privacy"):
        console.print(f"  privacy {plain(s['privacy'])}")
    if result.certificate:
        console.print(certificate_table(result.certificate))
    for name, mech in result.mechanisms.items():
        if max(mech.shape) <= MATRIX_LIMIT:
            console.print(matrix_table(name, mech))
        else:
            console.print(f"Mechanism {plain(name)}: {mech.shape[0]} x {mech.shape[1]} (use --json or --out for the matrix)")
    if baselines:
        table = Table(title="Baselines", title_justify="left")
        for col in ("mechanism", "objective", "privacy achieved", "holds"):
            table.add_column(col)
        table.add_row("optimal design", fmt(result.objective),
                      "; ".join(levels(a.achieved) for a in result.certificate), "yes" if result.holds else "NO")
        for b in baselines:
            table.add_row(plain(b["name"]), fmt(b["objective"]),
                          "; ".join(levels(a["achieved"]) for a in b["certificate"]),
                          "yes" if all(a["holds"] for a in b["certificate"]) else "NO")
        console.print(table)


def print_explanation(result: Result, console: Console) -> None:
    """The solver choice of a solve: each special solver in the order tried, whether it applied
    (and why not), what it did; then the general route if it ran, and the solver's own path."""
    s = result.solver
    table = Table(title="Solver choice (in the order tried)", title_justify="left")
    for col in ("solver", "applies", "outcome"):
        table.add_column(col)
    records = s.get("special_solvers") or []
    for r in records:
        applies = {True: "yes", False: "no", None: "-"}[r.get("applies")]
        table.add_row(plain(r["solver"]), applies, plain(r["outcome"]))
    if not records:
        table.add_row("special solvers", "-", "not tried: the problem names its solver")
    if not any(r["outcome"] == "solved" for r in records):
        table.add_row(plain(s.get("name", "general convex route")), "yes",
                      plain(f"general convex route: {result.status}"))
    console.print(table)
    for step in s.get("path") or []:
        console.print(f"  path: {plain(step)}")
