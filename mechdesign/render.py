"""Human-readable output (rich tables) for results and audits."""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.table import Table

from .privacy.base import Audit
from .result import Result

MATRIX_LIMIT = 12  # show matrices up to this many rows and columns


def fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, (float, np.floating)):
        if np.isinf(value):
            return "∞"
        return f"{value:.10g}"
    return str(value)


def levels(d: dict) -> str:
    return ", ".join(f"{k}={fmt(v)}" for k, v in d.items())


def certificate_table(audits: list[Audit], title: str = "Certificate") -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("notion")
    table.add_column("requested")
    table.add_column("achieved")
    table.add_column("holds")
    for a in audits:
        table.add_row(a.notion, levels(a.requested), levels(a.achieved),
                      "[green]yes[/]" if a.holds else "[red]NO[/]")
    return table


def matrix_table(name: str, mech) -> Table:
    table = Table(title=f"Mechanism {name}", title_justify="left")
    table.add_column("x \\ y")
    for label in mech.outputs.labels:
        table.add_column(label, justify="right")
    for label, row in zip(mech.inputs.labels, mech.matrix):
        table.add_row(label, *[f"{v:.4f}" for v in row])
    return table


def print_result(result: Result, console: Console, baselines: list[dict] | None = None) -> None:
    colour = "green" if result.status == "optimal" else "red"
    console.print(f"[bold]{result.problem}[/]: [{colour}]{result.status}[/]")
    if result.message:
        console.print(f"  {result.message}")
    if result.objective is not None:
        console.print(f"  objective {result.objective_kind} = {fmt(result.objective)}")
    s = result.solver
    times = f"compile {s.get('compile_seconds', 0):.3f} s, solve {s.get('solve_seconds') or 0:.3f} s"
    gap = f", gap {s['gap']:.2e}" if "gap" in s else ""
    console.print(f"  solver {s.get('name', '-')}: {times}{gap}")
    if s.get("privacy"):
        console.print(f"  privacy {s['privacy']}")
    if result.certificate:
        console.print(certificate_table(result.certificate))
    for name, mech in result.mechanisms.items():
        if max(mech.shape) <= MATRIX_LIMIT:
            console.print(matrix_table(name, mech))
        else:
            console.print(f"Mechanism {name}: {mech.shape[0]} x {mech.shape[1]} (use --json or --out for the matrix)")
    if baselines:
        table = Table(title="Baselines", title_justify="left")
        for col in ("mechanism", "objective", "privacy achieved", "holds"):
            table.add_column(col)
        table.add_row("optimal design", fmt(result.objective),
                      "; ".join(levels(a.achieved) for a in result.certificate), "yes" if result.holds else "NO")
        for b in baselines:
            table.add_row(b["name"], fmt(b["objective"]),
                          "; ".join(levels(a["achieved"]) for a in b["certificate"]),
                          "yes" if all(a["holds"] for a in b["certificate"]) else "NO")
        console.print(table)
