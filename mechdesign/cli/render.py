"""Human-readable output of results and audits (tables on a terminal, the plain layout
elsewhere: see :mod:`mechdesign.cli.output`).

Every string that comes from the user (problem names, labels, context and notion names,
messages) is printed literally: rich would read ``[bold]`` or ``[/]`` in it as markup, so it
goes through :func:`plain` first.
"""

from __future__ import annotations

import math

from rich.markup import escape

from mechdesign.cli.output import Output

#: on a terminal, matrices are shown up to this many rows and columns
MATRIX_LIMIT = 12
#: off a terminal (the plain layout), up to this many: every matrix of a problem solved in
#: seconds, without printing megabytes (--out or --json give any matrix)
PLAIN_MATRIX_LIMIT = 200


def plain(value) -> str:
    """``str(value)`` escaped for rich markup, so that it prints exactly as written."""
    return escape(str(value))


def levels(d: dict, out: Output) -> str:
    return ", ".join(f"{plain(k)}={plain(v if isinstance(v, str) else out.number(v))}"
                     for k, v in d.items())


def certificate_table(audits, out: Output, title: str = "Certificate") -> None:
    rows = [[plain(a.notion), levels(a.requested, out), levels(a.achieved, out),
             "[green]yes[/]" if a.holds else "[red]NO[/]"] for a in audits]
    out.table(plain(title), ["notion", "requested", "achieved", "holds"], rows)


def matrix_table(name: str, mech, out: Output) -> None:
    columns = ["x \\ y"] + [(plain(label), {"justify": "right"}) for label in mech.outputs.labels]
    rows = [[plain(label), *[out.number(v, ".4f") for v in row]]
            for label, row in zip(mech.inputs.labels, mech.matrix.tolist())]
    out.table(f"Mechanism {plain(name)}", columns, rows)


#: how each default the problem loader filled in is said (see mechdesign.design.spec.filled_defaults)
DEFAULT_LINES = {
    "prior": "prior: {} (no prior given)",
    "loss": "loss: {} (no loss given)",
    "weights": "context weights: {} (no weights given)",
    "outputs": "outputs: {} (no [outputs] given)",
}


def print_defaults(defaults: dict, problem, out: Output) -> None:
    """The defaults that are not obvious, one line each; a warning when there is no privacy
    constraint. The outputs are said only for inputs that are points in the plane or beyond
    (where reports could have been other places); ``solver: auto`` is said on the solver line."""
    for key, text in DEFAULT_LINES.items():
        if key not in defaults:
            continue
        if key == "outputs":
            points = getattr(problem.inputs, "points", None)
            if points is None or points.shape[1] < 2:
                continue
        out.line("  " + plain(text.format(defaults[key])))
    if defaults.get("privacy") == "none":
        out.warning("no privacy constraint: the design is the non-private optimum")


def print_result(result, out: Output, problem=None) -> None:
    colour = "green" if result.status == "optimal" else "red"
    out.line(f"[bold]{plain(result.problem)}[/]: [{colour}]{plain(result.status)}[/]")
    if result.message:
        out.line(f"  {plain(result.message)}")
    if result.objective is not None:
        out.line(f"  objective {plain(result.objective_kind)} = {out.number(result.objective)}")
    defaults = result.extra.get("defaults", {})
    if problem is not None:
        print_defaults(defaults, problem, out)
    s = result.solver
    times = f"compile {s.get('compile_seconds', 0):.3f} s, solve {s.get('solve_seconds') or 0:.3f} s"
    gap = f", gap {s['gap']:.2e}" if "gap" in s else ""
    chosen = " (chosen automatically: no \\[solve] solver given)" if defaults.get("solver") == "auto" else ""
    out.line(f"  solver {plain(s.get('name', '-'))}{chosen}: {times}{gap}")
    if s.get("privacy") and defaults.get("privacy") != "none":
        out.line(f"  privacy {plain(s['privacy'])}")
    if result.certificate:
        certificate_table(result.certificate, out)
    limit = MATRIX_LIMIT if out.terminal else PLAIN_MATRIX_LIMIT
    for name, mech in result.mechanisms.items():
        if max(mech.shape) <= limit:
            matrix_table(name, mech, out)
        else:
            out.line(f"Mechanism {plain(name)}: {mech.shape[0]} x {mech.shape[1]} "
                     "(use --json or --out for the matrix)")


def epsilon_text(value, out: Output) -> str:
    """A privacy level for a table: within 1e-12 of a whole number (zero included) it prints as
    that number (0, not 2.22045e-16); otherwise six significant digits on a terminal and full
    precision elsewhere. ∞ (or inf) for infinity, - for None."""
    if value is None or isinstance(value, str):
        return "-" if value is None else plain(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return plain(value)
    if not math.isfinite(v):
        return out.number(v)
    nearest = round(v)
    if abs(v - nearest) <= 1e-12:
        return str(int(nearest))
    return out.number(v, ".6g")


def achieved_text(certificate, out: Output) -> str:
    """Each audit's achieved levels, ``ε=…, δ=…``, audits separated by ``;``."""
    symbols = {"epsilon": "ε", "delta": "δ"}
    return "; ".join(", ".join(f"{symbols.get(k, plain(k))}={epsilon_text(v, out)}"
                               for k, v in (a["achieved"] if isinstance(a, dict) else a.achieved).items())
                     for a in certificate)


def print_baselines(result, baselines: list[dict], out: Output, epsilon: float | None = None) -> None:
    """The optimum (at the problem's ``epsilon``) next to each baseline (records of
    :func:`mechdesign.estimation.compare.baseline_row` ``.to_dict()``)."""
    rows = [["optimal design", epsilon_text(epsilon, out), out.number(result.objective),
             achieved_text(result.certificate, out), "yes" if result.holds else "NO"]]
    notes = []
    for b in baselines:
        if b["status"] == "n/a":
            rows.append([plain(b["name"]), "-", "n/a", "-", "-"])
        else:
            holds = "-" if b["holds"] is None else ("yes" if b["holds"] else "NO")
            name = plain(b["name"]) + (" (reveals nothing)" if b.get("reveals_nothing") else "")
            rows.append([name, epsilon_text(b["epsilon"], out), out.number(b["objective"]),
                         achieved_text(b["certificate"] or [], out) or "-", holds])
        if b.get("note"):
            notes.append(f"  {plain(b['name'])}: {plain(b['note'])}")
    out.table("Baselines (each calibrated to the problem's privacy constraints)",
              ["mechanism", "ε used", "objective", "privacy achieved", "holds"], rows)
    for line in notes:
        out.line(line)


def print_explanation(result, out: Output) -> None:
    """The solver choice of a solve: each special solver in the order tried, whether it applied
    (and why not), what it did; then the general route if it ran, and the solver's own path."""
    s = result.solver
    records = s.get("special_solvers") or []
    rows = [[plain(r["solver"]), {True: "yes", False: "no", None: "-"}[r.get("applies")],
             plain(r["outcome"])] for r in records]
    if not records:
        rows.append(["special solvers", "-", "not tried: the problem names its solver"])
    if not any(r["outcome"] == "solved" for r in records):
        rows.append([plain(s.get("name", "general convex route")), "yes",
                     plain(f"general convex route: {result.status}")])
    out.table("Solver choice (in the order tried)", ["solver", "applies", "outcome"], rows)
    for step in s.get("path") or []:
        out.line(f"  path: {plain(step)}")
    for run in s.get("resolves") or []:  # the runs after the first: re-solves, another route
        out.line(f"  then: {plain(resolve_text(run))}")


def resolve_text(run: dict) -> str:
    """One run of a result's ``solver["resolves"]`` in a line: the route, or the units and
    options it was solved again in; its status, objective and bound."""
    if "route" in run:
        what = str(run["route"])
    else:
        options = ", ".join(f"{k}={v}" for k, v in (run.get("options") or {}).items())
        what = f"solved again in units of {run.get('scale'):.6g}" + (f" ({options})" if options else "")
    numbers = [f"{key} {run[key]:.10g}" for key in ("objective", "bound") if isinstance(run.get(key), float)]
    return f"{what}: {run.get('status')}" + (f", {', '.join(numbers)}" if numbers else "")
