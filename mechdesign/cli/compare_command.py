"""``mechdesign compare FILE``: the certified optimum next to baselines — objective, privacy
achieved, and (with ``--users``) the error of estimating the input distribution."""

from __future__ import annotations

import json

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
    positive_int,
    users,
)
from mechdesign.cli.out_formats import chosen_format, write_csv
from mechdesign.cli.output import Output
from mechdesign.cli.render import achieved_text, epsilon_text, plain, print_defaults
from mechdesign.core.errors import ProblemError

HELP = "the optimal design next to baselines: objective, privacy, estimation error"
FORMATS = ("json", "csv")
MEASURES = ("tv", "l1", "l2", "emd")
ESTIMATORS = ("inv", "ibu")


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help=HELP, description=HELP + ".", epilog=EPILOG)
    p.add_argument("file", help="problem file (TOML)")
    baselines_option(p, "to compare (default: all that apply), each calibrated to the problem's "
                        "privacy constraints unless --native")
    p.add_argument("--users", type=users, metavar="N", help="simulate N users and estimate their input "
                   "distribution by Inv and IBU")
    p.add_argument("--trials", type=positive_int, default=10, metavar="T", help="simulated collections (default 10)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--measure", default="emd", metavar="M", help="error shown in the table: tv, l1, l2, emd (default)")
    p.add_argument("--prior", metavar="NAME", help="distribution the simulated users' inputs follow "
                   "(default: the contexts' distributions or the objective's prior)")
    p.add_argument("--native", action="store_true",
                   help="put each baseline at the problem's ε in its own notion instead of calibrating it "
                        "to the problem's constraints")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    out_option(p, "compare", FORMATS)
    p.set_defaults(run=run)


def csv_rows(comparison) -> tuple[list[str], list[list]]:
    """The comparison as a table: one row per mechanism; with simulated users, each
    estimator's error (mean and std) under every measure."""
    header = ["mechanism", "kind", "status", "epsilon", "objective", "holds", "reveals_nothing",
              "privacy_achieved"]
    if comparison.users:
        header += [f"{e}_{m}_{s}" for e in ESTIMATORS for m in MEASURES for s in ("mean", "std")]
    rows = []
    for r in comparison.rows:
        privacy = "; ".join(", ".join(f"{k}={v!r}" for k, v in a.achieved.items()) for a in r.certificate or [])
        row = [r.name, r.kind, r.status, r.epsilon, r.objective,
               "" if r.holds is None else str(r.holds).lower(), str(r.reveals_nothing).lower(), privacy]
        if comparison.users:
            est = r.estimation
            for e in ESTIMATORS:
                for m in MEASURES:
                    have = est is not None and e in est.errors
                    row += [est.mean(e, m) if have else None, est.std(e, m) if have else None]
        rows.append(row)
    return header, rows


def write(comparison, data: dict, path: str, fmt: str) -> None:
    if fmt == "csv":
        write_csv(path, *csv_rows(comparison))
    else:
        from mechdesign.design.result import write_json_atomic

        write_json_atomic(path, data)


def prior_said(problem) -> str:
    """The prior an analyst answers with when a mechanism reveals nothing, in words."""
    if problem.contexts:
        return "each context's own distribution"
    defaults = problem.extras.get("defaults", {})
    return "uniform (no prior given)" if "prior" in defaults else "the objective's prior"


def run(args, out: Output) -> int:
    from mechdesign.estimation.compare import compare

    names = parse_baselines(args.baselines) or None
    problem = load_problem(args.file)
    if args.measure not in MEASURES:
        raise ProblemError(f"unknown measure '{args.measure}'; expected tv, l1, l2 or emd", key="--measure")
    fmt = chosen_format(args, FORMATS)
    check_paths(args)
    with out.status("comparing ...") as status:
        comparison = compare(problem, names, users=args.users, trials=args.trials, seed=args.seed,
                             calibrate=not args.native, prior=args.prior,
                             progress=lambda msg: status.update(plain(msg)))
    data = comparison.to_dict()
    data["defaults"] = dict(problem.extras.get("defaults", {}))
    writes = LateWrites()
    wrote = bool(args.out) and writes.run("--out", args.out, lambda: write(comparison, data, args.out, fmt))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print_comparison(problem, comparison, args, out)
        if wrote:
            out.line(f"wrote {plain(args.out)}")
    design = comparison.rows[0]
    if writes.report():
        return EXIT_FAIL
    return EXIT_OK if design.status == "optimal" else EXIT_FAIL


def mean_std(summary, estimator: str, measure: str, out: Output) -> str:
    """``mean ± std`` of an estimator's error (- when it did not run)."""
    if summary is None or estimator not in summary.errors:
        return "-"
    return (f"{out.number(summary.mean(estimator, measure), '.4g')} ± "
            f"{out.number(summary.std(estimator, measure), '.2g')}")


def print_comparison(problem, comparison, args, out: Output) -> None:
    title = (f"{plain(problem.name)}: {plain(problem.objective.kind)}, ε = {epsilon_text(comparison.epsilon, out)}"
             + (" (baselines calibrated to the problem's constraints)" if not args.native else ""))
    columns = [("mechanism", {"no_wrap": True}), ("ε used", {"no_wrap": True}), ("objective", {"no_wrap": True}),
               ("privacy achieved", {"overflow": "fold"}), ("holds", {"no_wrap": True})]
    measure = args.measure.upper()
    robust = any(r.nominal_loss is not None for r in comparison.rows)
    if robust:  # the objective is the loss under the worst prior of the set
        columns[2] = ("worst-prior loss", {"no_wrap": True})
        columns.insert(3, ("nominal-prior loss", {"no_wrap": True}))
    if args.users:
        columns += [(f"Inv {measure}", {"overflow": "fold"}), (f"IBU {measure}", {"overflow": "fold"})]
    rows = []
    for r in comparison.rows:
        name = plain(r.name) + (" (reveals nothing)" if r.reveals_nothing else "")
        if r.status == "n/a":
            cells = [name, "-", "n/a", "-", "-"] + (["-"] if robust else [])
        else:
            privacy = "-" if r.certificate is None else achieved_text(r.certificate, out)
            holds = "-" if r.holds is None else ("[green]yes[/]" if r.holds else "[red]NO[/]")
            cells = [name, epsilon_text(r.epsilon, out), out.number(r.objective, ".6g"),
                     privacy or "(no constraints)", holds]
            if robust:
                cells.insert(3, out.number(r.nominal_loss, ".6g"))
        if args.users:
            cells += [mean_std(r.estimation, e, args.measure, out) for e in ESTIMATORS]
        rows.append(cells)
    print_defaults(problem.extras.get("defaults", {}), problem, out)
    out.table(title, columns, rows)
    for r in comparison.rows:
        if r.status not in ("ok", "optimal"):
            out.line(plain(f"  {r.name}: {r.status}{': ' + r.note if r.note else ''}"))
        elif r.note:
            out.line(plain(f"  {r.name}: {r.note}"))
    if args.users:
        out.line(f"  estimation: {args.users} users x {args.trials} trials (seed {args.seed}), mean ± std "
                 f"of the {measure} between the simulated users' input distribution and its estimate")
        if any(r.reveals_nothing for r in comparison.rows):
            out.line(f"  a mechanism that reveals nothing is answered with the prior: {prior_said(problem)}")
