"""Command line: a thin layer over the Python API.

Exit codes: 0 optimal (or audit holds), 2 problem-file or usage error, 1 otherwise, 141 when
stdout is a pipe closed early (128 + SIGPIPE, as a shell reports a process SIGPIPE ended), 143
when SIGTERM arrives while a result file is being written (the partial file is removed).

Bad input never ends in a traceback: every :class:`ProblemError` prints as one line
``FILE: key 'KEY': message`` on stderr (exit 2). Output paths (``--out``, ``--plot``) are checked
before the work starts; if writing still fails afterwards, the result is printed first and the
write error reported after it (exit 1), so no result is lost.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

from rich.console import Console

from mechdesign.cli.limits import seconds, solve_with_progress, time_limit_option
from mechdesign.cli.render import plain
from mechdesign.core.errors import ProblemError
from mechdesign.design.result import check_output_path, write_json_atomic


def load_problem(path):
    """Read a problem file (the package's loader, imported when a command needs it, so that
    ``--help`` does not load the solvers)."""
    from mechdesign.design.spec import load_problem as load

    return load(path)


def audit_all(notions, matrices):
    from mechdesign.privacy.certify import audit_all as run

    return run(notions, matrices)


EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2
EXIT_PIPE = 141  # 128 + SIGPIPE: stdout was closed early (``mechdesign solve ... | head``)
EPILOG = ("exit status: 0 optimal (or the audit holds), 1 otherwise (time-limit included), "
          "2 bad problem file or usage, "
          "141 stdout closed early (a pipe such as '| head'), 143 SIGTERM while writing a file")
BASELINES = ("krr",)


def _baseline(problem, name: str) -> dict:
    """A baseline applied to every context, with its objective and audited privacy."""
    from mechdesign.mechanisms.randomized_response import krr

    if name == "krr":
        from mechdesign.privacy.ldp import LDP

        eps = [n.epsilon for n in problem.privacy if isinstance(n, LDP)]
        if not problem.outputs.same_as(problem.inputs):
            raise ProblemError("--baseline krr needs the outputs to equal the inputs", key="--baseline")
        if eps:
            mech = krr(problem.inputs, min(eps))
        else:
            # no LDP constraint: kRR calibrated to the problem's information bound
            from mechdesign.mechanisms.channels import krr_matching

            mech = krr_matching(problem)
            if mech is None:
                raise ProblemError("--baseline krr needs an ε-LDP constraint or an information "
                                   "bound (information, mutual-information, min-entropy)",
                                   key="--baseline")
    else:
        raise ProblemError(f"unknown baseline '{name}'; expected one of: {', '.join(BASELINES)}",
                           key="--baseline")
    mechs = {k: mech.matrix for k in problem.keys}
    return {
        "name": mech.name,
        "objective": problem.objective.value(mechs),
        "certificate": [a.to_dict() for a in audit_all(problem.privacy, mechs)],
    }


def _check_paths(args) -> None:
    """Refuse an unwritable ``--out`` or ``--plot`` (or an image format matplotlib cannot save)
    before any work starts (exit 2)."""
    if getattr(args, "out", None):
        check_output_path(args.out, "--out")
    if getattr(args, "plot", None):
        from mechdesign.cli.plots import check_plot_path

        check_plot_path(args.plot, "--plot")


class _Writes:
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
            print(_one_line(line), file=sys.stderr)
        return bool(self.errors)


def cmd_solve(args, console: Console) -> int:
    problem = load_problem(args.file)
    _check_paths(args)
    extra = [_baseline(problem, b) for b in (args.baseline or [])]
    result = solve_with_progress(problem, args, console)
    if extra:
        result.extra["baselines"] = extra
    writes = _Writes()
    wrote_out = bool(args.out) and writes.run("--out", args.out, lambda: result.write(args.out))
    wrote_plot = False
    if args.plot and result.mechanisms:
        from mechdesign.cli.plots import plot_mechanisms

        wrote_plot = writes.run("--plot", args.plot, lambda: plot_mechanisms(result, args.plot))
    if args.json:
        print(result.to_json())
    else:
        from mechdesign.cli.render import print_explanation, print_result
        print_result(result, console, extra)
        if args.explain:
            print_explanation(result, console)
        if wrote_out:
            console.print(f"wrote {plain(args.out)}")
        if wrote_plot:
            console.print(f"wrote {plain(args.plot)}")
        elif args.plot and not result.mechanisms:
            console.print("no plot: the solve returned no mechanism")
    if writes.report():
        return EXIT_FAIL
    return EXIT_OK if result.status == "optimal" else EXIT_FAIL


def _audits(problem, matrices: dict, exact: bool) -> list:
    """Each notion's audit of the matrices; with ``exact``, by :func:`mechdesign.privacy.audit.audit`
    with ``exact=True``."""
    if not exact:
        return audit_all(problem.privacy, matrices)
    from mechdesign.privacy.audit import audit

    return [audit({k: matrices[k] for k in n.keys(list(matrices))}, n, exact=True) for n in problem.privacy]


def cmd_audit(args, console: Console) -> int:
    from mechdesign.core.mechanism_file import read_mechanisms

    problem = load_problem(args.problem)
    file = str(args.mechanism)
    matrices = read_mechanisms(file, problem.inputs, problem.outputs)
    if set(matrices) != set(problem.keys):
        if len(matrices) == 1:
            only = next(iter(matrices.values()))
            matrices = {k: only for k in problem.keys}
        else:
            raise ProblemError(f"mechanisms {sorted(matrices)} do not match the problem's contexts "
                               f"{problem.keys}", file=file, key="mechanisms")
    audits = _audits(problem, matrices, args.exact)
    value = problem.objective.value(matrices)
    holds = all(a.holds for a in audits)
    if args.json:
        print(json.dumps({"problem": problem.name, "objective": {"kind": problem.objective.kind, "value": value},
                          "certificate": [a.to_dict() for a in audits], "holds": holds}, indent=2))
    else:
        from mechdesign.cli.render import certificate_table, fmt
        console.print(f"[bold]{plain(problem.name)}[/]: objective {plain(problem.objective.kind)} = {fmt(value)}")
        console.print(certificate_table(audits, "Audit (exact)" if args.exact else "Audit"))
    return EXIT_OK if holds else EXIT_FAIL


# --- compare and sweep -----------------------------------------------------------

def _users(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of users (e.g. 100000 or 1e6), got {text!r}")
    if not value.is_integer() or not 1 <= value <= 2**62:
        raise argparse.ArgumentTypeError(f"expected a whole number of users in [1, 2^62], got {text!r}")
    return int(value)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


_SYMBOLS = {"epsilon": "ε", "delta": "δ"}


def _short(value) -> str:
    """Six significant digits for the compare table (the JSON keeps full precision)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "∞" if value == float("inf") else f"{value:.6g}"
    return "-" if value is None else str(value)


def cmd_compare(args, console: Console) -> int:
    from mechdesign.cli.render import fmt
    from mechdesign.estimation.compare import compare, fmt_mean_std, parse_baselines

    names = parse_baselines(args.baselines) if args.baselines is not None else None
    problem = load_problem(args.file)
    if args.measure not in ("tv", "l1", "l2", "emd"):
        raise ProblemError(f"unknown measure '{args.measure}'; expected tv, l1, l2 or emd", key="--measure")
    _check_paths(args)
    quiet = args.json
    with (console.status("comparing ...", spinner="dots") if not quiet else _Null()) as status:
        def note(msg):
            if not quiet:
                status.update(plain(msg))
        comparison = compare(problem, names, users=args.users, trials=args.trials, seed=args.seed,
                             calibrate=not args.native, prior=args.prior, progress=note)
    data = comparison.to_dict()
    writes = _Writes()
    wrote = bool(args.out) and writes.run("--out", args.out, lambda: write_json_atomic(args.out, data))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        from rich.table import Table

        title = (f"{plain(problem.name)}: {plain(problem.objective.kind)}, ε = {fmt(comparison.epsilon)}"
                 + (" (baselines calibrated to the problem's constraints)" if not args.native else ""))
        table = Table(title=title, title_justify="left")
        for col in ("mechanism", "ε used", "objective"):
            table.add_column(col, no_wrap=True)
        table.add_column("privacy achieved", overflow="fold")
        table.add_column("holds", no_wrap=True)
        if args.users:
            table.add_column(f"Inv {args.measure.upper()}", overflow="fold")
            table.add_column(f"IBU {args.measure.upper()}", overflow="fold")
        for r in comparison.rows:
            if r.status == "n/a":
                cells = [plain(r.name), "-", "n/a", "-", "-"]
            else:
                privacy = "-" if r.certificate is None else "; ".join(
                    ", ".join(f"{_SYMBOLS.get(k, k)}={_short(v)}" for k, v in a.achieved.items())
                    for a in r.certificate)
                holds = "-" if r.holds is None else ("[green]yes[/]" if r.holds else "[red]NO[/]")
                cells = [plain(r.name), _short(r.epsilon), _short(r.objective), plain(privacy or "(no constraints)"),
                         holds]
            if args.users:
                cells += [fmt_mean_std(r.estimation, "inv", args.measure),
                          fmt_mean_std(r.estimation, "ibu", args.measure)]
            table.add_row(*cells)
        console.print(table)
        for r in comparison.rows:
            if r.status not in ("ok", "optimal") or r.note:
                console.print(plain(f"  {r.name}: {r.status}{': ' + r.note if r.note else ''}"))
        if args.users:
            console.print(f"  estimation: {args.users} users x {args.trials} trials (seed {args.seed}), "
                          f"mean ± std of the {args.measure.upper()} between λ and its estimate")
        if wrote:
            console.print(f"wrote {plain(args.out)}")
    design = comparison.rows[0]
    if writes.report():
        return EXIT_FAIL
    return EXIT_OK if design.status == "optimal" else EXIT_FAIL


def cmd_sweep(args, console: Console) -> int:
    from mechdesign.design.sweep import parse_range, sweep, sweepable
    from mechdesign.estimation.compare import baseline_curves, parse_baselines

    epsilons = parse_range(args.epsilon)
    names = parse_baselines(args.baselines) if args.baselines is not None else []
    problem = load_problem(args.file)
    _check_paths(args)  # also fails fast (exit 2) when --plot is given and matplotlib is missing
    sweepable(problem)
    at_each_point = baseline_curves(names, calibrate=not args.native) if names else None
    if args.json:
        result = sweep(problem, epsilons, at_each_point=at_each_point, time_limit=args.time_limit)
    else:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        with Progress(TextColumn("sweeping {task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True) as bar:
            task = bar.add_task(plain(problem.name), total=len(epsilons))

            def advance(i, n, point):
                bar.update(task, completed=i, description=f"{plain(problem.name)} (ε = {point.epsilon:.4g})")
            result = sweep(problem, epsilons, at_each_point=at_each_point, progress=advance,
                           time_limit=args.time_limit)
    data = result.to_dict()
    writes = _Writes()
    wrote_out = bool(args.out) and writes.run("--out", args.out, lambda: write_json_atomic(args.out, data))
    wrote_plot = False
    if args.plot:
        from mechdesign.cli.plots import plot_sweep
        wrote_plot = writes.run("--plot", args.plot, lambda: plot_sweep(result, args.plot))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        from rich.table import Table

        from mechdesign.cli.render import fmt
        table = Table(title=f"{plain(problem.name)}: {plain(problem.objective.kind)} against ε",
                      title_justify="left")
        for col in ("ε", "status", "objective", *names, "seconds"):
            table.add_column(col)
        for i, p in enumerate(result.points):
            colour = "green" if p.result.status == "optimal" else "red"
            base = [fmt(result.baselines[n][i]["objective"]) for n in names]
            table.add_row(f"{p.epsilon:.6g}", f"[{colour}]{p.result.status}[/]", fmt(p.result.objective),
                          *base, f"{p.seconds:.3f}")
        console.print(table)
        how = (f"program compiled {result.compiles} time(s)" if result.compiles else
               f"solved by {plain(result.points[0].result.solver.get('name', 'a special solver'))} at each point")
        console.print(f"  {len(result.points)} points in {result.seconds:.2f} s; {how}")
        if wrote_out:
            console.print(f"wrote {plain(args.out)}")
        if wrote_plot:
            console.print(f"wrote {plain(args.plot)}")
    if writes.report():
        return EXIT_FAIL
    return EXIT_OK if all(p.result.status == "optimal" for p in result.points) else EXIT_FAIL


# --- bench ------------------------------------------------------------------------

def cmd_bench(args, console: Console) -> int:
    from mechdesign.bench import SUITES, check_names
    from mechdesign.bench.common import pyplot
    from mechdesign.bench.executor import make_executor

    if args.list:
        from rich.table import Table

        table = Table(title="benchmark suites (mechdesign bench SUITE ...)", title_justify="left")
        table.add_column("suite", no_wrap=True)
        table.add_column("what it runs", overflow="fold")
        for name, (_, text) in SUITES.items():
            table.add_row(name, text)
        console.print(table)
        return EXIT_OK
    names = check_names(args.suites)
    pyplot()  # fail fast (exit 2) when matplotlib is missing
    command = "mechdesign bench " + " ".join(args.argv)
    status = EXIT_OK
    with make_executor(args.workers, args.scheduler, args.dask_local) as executor:
        for name in names:
            try:
                data, report = _run_bench_suite(name, args, executor, command, console)
            except ProblemError:
                raise
            except Exception as exc:  # noqa: BLE001 — one failing suite does not stop the others
                import traceback

                where = traceback.extract_tb(exc.__traceback__)[-1]
                console.print(f"[red]{name}: failed: {type(exc).__name__}: {exc}[/] "
                              f"({Path(where.filename).name}:{where.lineno})", markup=True, highlight=False)
                status = EXIT_FAIL
                continue
            _print_bench(name, data, report, args.out, console)
            if report.status == "ok" and not report.holds:
                status = EXIT_FAIL
    return status


def _run_bench_suite(name, args, executor, command, console):
    from mechdesign.bench import run_suite

    if not console.is_terminal:
        console.print(f"running {name}{' (quick)' if args.quick else ''} ...")

        def lines(label, done, total):  # a line per tenth of the tasks (logs, CI)
            step = max(1, -(-total // 10))
            if done and (done % step == 0 or done == total):
                console.print(f"  {label}: {done}/{total}", highlight=False)
        return run_suite(name, args.out, quick=args.quick, executor=executor, time_limit=args.time_limit,
                         command=command, progress=lines)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        tasks: dict = {}

        def progress(label, done, total):
            key = f"{name}: {label}"
            if key not in tasks:
                tasks[key] = bar.add_task(key, total=total)
            bar.update(tasks[key], completed=done, total=total)
        return run_suite(name, args.out, quick=args.quick, executor=executor, time_limit=args.time_limit,
                         command=command, progress=progress)


def _print_bench(name, data, report, out, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    if report.status != "ok":
        console.print(f"[yellow]{name}: {report.status}[/]: {escape(report.message)}")
    if report.table is not None:
        title, columns, rows = report.table
        table = Table(title=escape(f"{name}: {title}"), title_justify="left")
        for col in columns:
            table.add_column(escape(str(col)), overflow="fold")
        for row in rows:
            table.add_row(*[escape(str(c)) for c in row])
        console.print(table)
    if report.checks:
        bad = [c for c in report.checks if not c.holds]
        console.print(f"  facts checked: {len(report.checks) - len(bad)} of {len(report.checks)} hold")
        for c in report.checks:
            mark = "[green]✓[/]" if c.holds else "[red]✗[/]"
            console.print(f"   {mark} {escape(c.name)}" + (f" — {escape(c.detail)}" if c.detail and not c.holds else ""))
    files = [f"{name}.json", *data.get("figures", [])]
    console.print(f"  {data['seconds']:.1f} s; wrote {', '.join(str(Path(out) / f) for f in files)}")


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mechdesign", description="Design certified optimal local privacy mechanisms.",
                                     epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("solve", help="solve a problem file and print the certified optimum", epilog=EPILOG)
    p.add_argument("file", help="problem file (TOML)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--out", metavar="PATH", help="write the JSON result to PATH (atomically; the directory must exist)")
    p.add_argument("--baseline", action="append", metavar="NAME", choices=BASELINES,
                   help="also evaluate a baseline at the same ε (krr)")
    p.add_argument("--plot", metavar="PNG", help="draw the mechanism as a heat map (one per context; needs matplotlib; "
                   "the extension names the format: png, pdf, svg, ...)")
    time_limit_option(p, "the solve")
    p.add_argument("--verbose", action="store_true",
                   help="print the solver's log and each round of the iterative solvers (value, proven bound, gap)")
    p.add_argument("--explain", action="store_true",
                   help="print which solvers were considered, in order: whether each applied and why not, what it "
                        "did, and the path the one that solved took (in --json output: solver.special_solvers)")
    p.set_defaults(run=cmd_solve)

    p = sub.add_parser("audit", help="audit a mechanism (JSON) against a problem's privacy constraints",
                       epilog=EPILOG)
    p.add_argument("mechanism", help="JSON: a solve result, or an object with 'matrix' (and labels)")
    p.add_argument("--problem", required=True, help="problem file whose constraints to check")
    p.add_argument("--exact", action="store_true",
                   help="audit in exact arithmetic (mechdesign.privacy.audit.audit(..., exact=True))")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_audit)

    p = sub.add_parser("compare", help="the optimal design next to baselines: objective, privacy, estimation error",
                       epilog=EPILOG)
    p.add_argument("file", help="problem file (TOML)")
    p.add_argument("--baselines", metavar="NAMES",
                   help="comma-separated: krr, geometric, exponential, planar-laplace, planar-geometric, rappor, "
                        "oue, one-bit-cluster, smooth-one-bit, smooth-categorical, uniform, identity "
                        "(default: all that apply)")
    p.add_argument("--users", type=_users, metavar="N", help="simulate N users and estimate λ by Inv and IBU")
    p.add_argument("--trials", type=_positive_int, default=10, metavar="T", help="simulated collections (default 10)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--measure", default="emd", metavar="M", help="error shown in the table: tv, l1, l2, emd (default)")
    p.add_argument("--prior", metavar="NAME", help="distribution the simulated users' inputs follow "
                   "(default: the contexts' distributions or the objective's prior)")
    p.add_argument("--native", action="store_true",
                   help="put each baseline at the problem's ε in its own notion instead of calibrating it "
                        "to the problem's constraints")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--out", metavar="PATH", help="write the JSON to PATH (atomically)")
    p.set_defaults(run=cmd_compare)

    p = sub.add_parser("sweep", help="solve across ε (compiled once) and draw the privacy-utility curve",
                       epilog=EPILOG)
    p.add_argument("file", help="problem file (TOML)")
    p.add_argument("--epsilon", required=True, metavar="START:STOP:COUNT", help="e.g. 0.1:2:20")
    p.add_argument("--plot", metavar="PNG", help="objective against ε with the baselines' curves (needs matplotlib)")
    p.add_argument("--baselines", metavar="NAMES", help="comma-separated baselines to draw alongside")
    p.add_argument("--native", action="store_true", help="baselines at the swept ε in their own notion")
    p.add_argument("--json", action="store_true", help="print the sweep as JSON")
    p.add_argument("--out", metavar="PATH", help="write the JSON to PATH (atomically)")
    time_limit_option(p, "each point's solve")
    p.set_defaults(run=cmd_sweep)

    p = sub.add_parser("bench", help="benchmark suites: the papers' experiments, peers, scale (JSON + PNG)")
    p.add_argument("suites", nargs="*", metavar="SUITE", help="suites to run (default: all; see --list)")
    p.add_argument("--list", action="store_true", help="name the suites and exit")
    p.add_argument("--out", default="bench-results", metavar="DIR",
                   help="folder for SUITE.json and the PNG figures (default bench-results/)")
    p.add_argument("--quick", action="store_true", help="a small version of every suite (seconds)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="run the solves on this Dask scheduler "
                       "(pip install 'mechdesign[dask]')")
    where.add_argument("--dask-local", action="store_true", help="start a Dask LocalCluster for the run")
    p.add_argument("--workers", type=_positive_int, metavar="N",
                   help="local processes or LocalCluster workers (default: the CPUs; 1 runs in this process)")
    p.add_argument("--time-limit", type=seconds, metavar="SECONDS",
                   help="per-instance limit for isolated instances (scale, peers): a slower instance is "
                        "recorded as timed out (default: 3600 s scale, 600 s peers, 120 s with --quick)")
    p.set_defaults(run=cmd_bench)
    return parser


def _one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _report(exc: ProblemError, args) -> None:
    """Print a ProblemError as one line ``FILE: key 'KEY': message`` (the problem file when the
    error names none)."""
    file = exc.file or getattr(args, "file", None) or getattr(args, "problem", None)
    print(_one_line(str(exc.located(str(file) if file else None))), file=sys.stderr)


def _stdout_to_devnull() -> None:
    """After a closed pipe: point stdout at /dev/null so that the interpreter's final flush is
    quiet (the Python documentation's recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # an in-process stdout with no descriptor
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring and ``--help``)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_INPUT if exc.code not in (0, None) else EXIT_OK
    if args.command == "bench":
        args.argv = list(argv if argv is not None else sys.argv[1:])[1:]
    console = Console(stderr=False, emoji=False)  # ":smile:" in a label prints as written
    warnings.filterwarnings("ignore", module="cvxpy")
    try:
        code = args.run(args, console)
        sys.stdout.flush()  # a closed pipe shows here, inside the try
        return code
    except ProblemError as exc:
        _report(exc, args)
        return EXIT_INPUT
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_PIPE
    except MemoryError:
        print("out of memory: the problem is too large for this machine", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
