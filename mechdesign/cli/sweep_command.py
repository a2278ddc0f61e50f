"""``mechdesign sweep FILE --epsilon START:STOP:COUNT``: the certified optimum across ε (the
program compiled once), with baselines' curves."""

from __future__ import annotations

import json

from mechdesign.cli.limits import round_line, time_limit_option
from mechdesign.cli.options import (
    EPILOG,
    EXIT_FAIL,
    EXIT_OK,
    LateWrites,
    baselines_option,
    check_paths,
    load_problem,
    out_option,
    parse_baselines,
    verbose_option,
)
from mechdesign.cli.out_formats import chosen_format, write_csv
from mechdesign.cli.output import Output, full
from mechdesign.cli.render import plain, print_defaults

HELP = "solve across ε (compiled once) and draw the privacy-utility curve"
FORMATS = ("json", "csv")


def add_parser(sub) -> None:
    p = sub.add_parser("sweep", help=HELP, description=HELP + ".", epilog=EPILOG)
    p.add_argument("file", help="problem file (TOML)")
    p.add_argument("--epsilon", required=True, metavar="START:STOP:COUNT",
                   help="COUNT evenly spaced ε from START to STOP, e.g. 0.1:2:20")
    p.add_argument("--plot", metavar="PNG", help="objective against ε with the baselines' curves (needs matplotlib)")
    baselines_option(p, "to evaluate at each ε and draw alongside, each calibrated to the problem's "
                        "privacy constraints at that ε unless --native")
    p.add_argument("--native", action="store_true", help="baselines at the swept ε in their own notion")
    p.add_argument("--json", action="store_true", help="print the sweep as JSON")
    out_option(p, "sweep", FORMATS)
    time_limit_option(p, "each point's solve")
    verbose_option(p, "each point's status and objective, and each round of the iterative solvers")
    p.set_defaults(run=run)


def csv_rows(result, names: list[str]) -> tuple[list[str], list[list]]:
    """The sweep as a table: one row per ε."""
    header = ["epsilon", "status", "objective", *names, "seconds"]
    rows = [[p.epsilon, p.result.status, p.result.objective,
             *[result.baselines[n][i]["objective"] for n in names], p.seconds]
            for i, p in enumerate(result.points)]
    return header, rows


def point_line(point) -> str:
    """A point of the sweep as it completes, its numbers in full precision."""
    return (f"ε = {full(point.epsilon)}: {plain(point.result.status)}, objective "
            f"{full(point.result.objective)} ({point.seconds:.3f} s)")


def run_sweep(problem, epsilons, at_each_point, args, out: Output):
    """The sweep, with a progress bar on a terminal and, with ``--verbose``, a line per point
    and per solver round (on stderr when stdout is not a terminal or carries ``--json``)."""
    from mechdesign.design.sweep import sweep

    to_stderr = args.json or not out.terminal
    say = (lambda text: out.errors.print(text, highlight=False)) if to_stderr else out.progress
    rounds = (lambda entry: say(round_line(entry))) if args.verbose else None
    if to_stderr:
        point = (lambda i, n, p: say(f"point {i}/{n}: {point_line(p)}")) if args.verbose else None
        return sweep(problem, epsilons, at_each_point=at_each_point, progress=point,
                     time_limit=args.time_limit, rounds=rounds)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("sweeping {task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=out.console, transient=True) as bar:
        task = bar.add_task(plain(problem.name), total=len(epsilons))

        def advance(i, n, p):
            if args.verbose:
                say(f"point {i}/{n}: {point_line(p)}")
            bar.update(task, completed=i, description=f"{plain(problem.name)} (ε = {p.epsilon:.4g})")
        return sweep(problem, epsilons, at_each_point=at_each_point, progress=advance,
                     time_limit=args.time_limit, rounds=rounds)


def run(args, out: Output) -> int:
    from mechdesign.design.sweep import parse_range, sweepable
    from mechdesign.estimation.compare import baseline_curves

    epsilons = parse_range(args.epsilon)
    names = parse_baselines(args.baselines)
    problem = load_problem(args.file)
    fmt = chosen_format(args, FORMATS)
    check_paths(args)  # also fails fast (exit 2) when --plot is given and matplotlib is missing
    sweepable(problem)
    at_each_point = baseline_curves(names, calibrate=not args.native) if names else None
    result = run_sweep(problem, epsilons, at_each_point, args, out)
    data = result.to_dict()
    data["defaults"] = dict(problem.extras.get("defaults", {}))
    writes = LateWrites()

    def write() -> None:
        if fmt == "csv":
            write_csv(args.out, *csv_rows(result, names))
        else:
            from mechdesign.design.result import write_json_atomic

            write_json_atomic(args.out, data)
    wrote_out = bool(args.out) and writes.run("--out", args.out, write)
    wrote_plot = False
    if args.plot:
        from mechdesign.cli.plots import plot_sweep
        wrote_plot = writes.run("--plot", args.plot, lambda: plot_sweep(result, args.plot))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print_sweep(problem, result, names, out)
        if wrote_out:
            out.line(f"wrote {plain(args.out)}")
        if wrote_plot:
            out.line(f"wrote {plain(args.plot)}")
    if writes.report():
        return EXIT_FAIL
    return EXIT_OK if all(p.result.status == "optimal" for p in result.points) else EXIT_FAIL


def print_sweep(problem, result, names: list[str], out: Output) -> None:
    print_defaults(problem.extras.get("defaults", {}), problem, out)
    rows = []
    for i, p in enumerate(result.points):
        colour = "green" if p.result.status == "optimal" else "red"
        base = [out.number(result.baselines[n][i]["objective"]) for n in names]
        rows.append([out.number(p.epsilon, ".6g"), f"[{colour}]{plain(p.result.status)}[/]",
                     out.number(p.result.objective), *base, f"{p.seconds:.3f}"])
    out.table(f"{plain(problem.name)}: {plain(problem.objective.kind)} against ε",
              ["ε", "status", "objective", *[plain(n) for n in names], "seconds"], rows)
    how = (f"program compiled {result.compiles} time(s)" if result.compiles else
           f"solved by {plain(result.points[0].result.solver.get('name', 'a special solver'))} at each point")
    out.line(f"  {len(result.points)} points in {result.seconds:.2f} s; {how}")
