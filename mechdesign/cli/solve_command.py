"""``mechdesign solve FILE``: the certified optimum of a problem file, with baselines next to it."""

from __future__ import annotations

from mechdesign.cli.limits import solve_with_progress, time_limit_option
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
from mechdesign.cli.out_formats import FORMATS, chosen_format
from mechdesign.cli.output import Output
from mechdesign.cli.render import plain
from mechdesign.cli.reports import add_reports_options, check_reports_options

HELP = "solve a problem file and print the certified optimum"


def add_parser(sub) -> None:
    p = sub.add_parser("solve", help=HELP, description=HELP + ".", epilog=EPILOG)
    p.add_argument("file", help="problem file (TOML)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    out_option(p, "solve", FORMATS)
    baselines_option(p, "to print next to the optimum with their objective and audited privacy, each calibrated "
                        "to the problem's privacy constraints as compare does")
    p.add_argument("--plot", metavar="PNG", help="draw the mechanism as a heat map (one per context; needs matplotlib; "
                   "the extension names the format: png, pdf, svg, ...)")
    time_limit_option(p, "the solve")
    verbose_option(p, "the solver's log and each round of the iterative solvers (value, proven bound, gap)")
    add_reports_options(p)
    p.add_argument("--explain", action="store_true",
                   help="print which solvers were considered, in order: whether each applied and why not, what it "
                        "did, and the path the one that solved took (in --json output: solver.special_solvers)")
    p.set_defaults(run=run)


def baseline_records(problem, names: list[str]) -> list[dict]:
    """Each named baseline built for the problem, calibrated to its privacy constraints as
    ``compare`` does, with its objective and audited privacy (a JSON-ready record)."""
    from mechdesign.estimation.compare import baseline_row

    return [baseline_row(problem, name).to_dict() for name in names]


def run(args, out: Output) -> int:
    names = parse_baselines(args.baselines)
    problem = load_problem(args.file)
    fmt = chosen_format(args, FORMATS)
    check_reports_options(args)
    check_paths(args)
    baselines = baseline_records(problem, names) if names else None
    result = solve_with_progress(problem, args, out)
    defaults = problem.extras.get("defaults", {})
    result.extra["defaults"] = dict(defaults)
    if baselines is not None:
        result.extra["baselines"] = baselines
    if args.reports is not None and result.mechanisms:
        from mechdesign.cli.reports import reports_guarantee

        result.extra["reports"] = {name: reports_guarantee(m.matrix, args.reports, args.delta)
                                   for name, m in result.mechanisms.items()}
    writes = LateWrites()
    written: list[str] = []
    if args.out:
        from mechdesign.cli.out_formats import write_result

        writes.run("--out", args.out, lambda: written.extend(write_result(result, args.out, fmt)))
    wrote_plot = False
    if args.plot and result.mechanisms:
        from mechdesign.cli.plots import plot_mechanisms

        wrote_plot = writes.run("--plot", args.plot, lambda: plot_mechanisms(result, args.plot))
    if args.json:
        print(result.to_json())
    else:
        from mechdesign.cli.render import print_baselines, print_explanation, print_result

        print_result(result, out, problem)
        if baselines:
            from mechdesign.estimation.compare import problem_epsilon

            print_baselines(result, baselines, out, problem_epsilon(problem))
        if result.extra.get("reports"):
            from mechdesign.cli.reports import print_reports_guarantee

            print_reports_guarantee(result.extra["reports"], out)
        if args.explain:
            print_explanation(result, out)
        for path in written:
            out.line(f"wrote {plain(path)}")
        if wrote_plot:
            out.line(f"wrote {plain(args.plot)}")
        elif args.plot and not result.mechanisms:
            out.line("no plot: the solve returned no mechanism")
    if writes.report():
        return EXIT_FAIL
    return EXIT_OK if result.status == "optimal" else EXIT_FAIL
