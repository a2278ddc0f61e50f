"""``mechdesign bench [SUITE ...]``: the benchmark suites (JSON and figures per suite)."""

from __future__ import annotations

from pathlib import Path

from mechdesign.cli.limits import seconds
from mechdesign.cli.options import EPILOG, EXIT_FAIL, EXIT_OK, positive_int
from mechdesign.cli.output import Output
from mechdesign.cli.render import plain
from mechdesign.core.errors import ProblemError

HELP = "benchmark suites: published experiments reproduced, peer libraries, scale (JSON + PNG)"


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help=HELP, description=HELP + ".", epilog=EPILOG)
    p.add_argument("suites", nargs="*", metavar="SUITE", help="suites to run (default: all; see --list)")
    p.add_argument("--list", action="store_true", help="name the suites and exit")
    p.add_argument("--out", default="bench-results", metavar="DIR",
                   help="folder for SUITE.json and the PNG figures (default bench-results/)")
    p.add_argument("--quick", action="store_true", help="a small version of every suite (seconds)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="run the solves on this Dask scheduler "
                       "(pip install 'mechdesign[dask]')")
    where.add_argument("--dask-local", action="store_true", help="start a Dask LocalCluster for the run")
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="local processes or LocalCluster workers (default: the CPUs; 1 runs in this process)")
    p.add_argument("--time-limit", type=seconds, metavar="SECONDS",
                   help="per-instance limit for isolated instances (scale, peers): a slower instance is "
                        "recorded as timed out (default: 3600 s scale, 600 s peers, 300 s envelope, 120 s with --quick)")
    p.set_defaults(run=run)


def run(args, out: Output) -> int:
    from mechdesign.bench import SUITES, check_names
    from mechdesign.bench.common import pyplot
    from mechdesign.bench.executor import make_executor

    if args.list:
        out.table("benchmark suites (mechdesign bench SUITE ...)",
                  [("suite", {"no_wrap": True}), ("what it runs", {"overflow": "fold"})],
                  [[plain(name), plain(text)] for name, (_, text) in SUITES.items()])
        return EXIT_OK
    names = check_names(args.suites)
    pyplot()  # fail fast (exit 2) when matplotlib is missing
    command = "mechdesign bench " + " ".join(args.argv)
    status = EXIT_OK
    with make_executor(args.workers, args.scheduler, args.dask_local) as executor:
        for name in names:
            try:
                data, report = run_suite(name, args, executor, command, out)
            except ProblemError:
                raise
            except Exception as exc:  # noqa: BLE001 — one failing suite does not stop the others
                import traceback

                where = traceback.extract_tb(exc.__traceback__)[-1]
                out.line(f"[red]{plain(name)}: failed: {plain(type(exc).__name__)}: {plain(exc)}[/] "
                         f"({plain(Path(where.filename).name)}:{where.lineno})")
                status = EXIT_FAIL
                continue
            print_report(name, data, report, args.out, out)
            if report.status == "ok" and not report.holds:
                status = EXIT_FAIL
    return status


def run_suite(name, args, executor, command, out: Output):
    """One suite, with a progress bar on a terminal; elsewhere a line per tenth of its tasks
    on stderr (logs, CI)."""
    from mechdesign.bench import run_suite as run_one

    options = {"quick": args.quick, "executor": executor, "time_limit": args.time_limit, "command": command}
    if not out.terminal:
        out.progress(f"running {plain(name)}{' (quick)' if args.quick else ''} ...")

        def lines(label, done, total):
            step = max(1, -(-total // 10))
            if done and (done % step == 0 or done == total):
                out.progress(f"  {plain(label)}: {done}/{total}")
        return run_one(name, args.out, progress=lines, **options)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=out.console, transient=True) as bar:
        tasks: dict = {}

        def progress(label, done, total):
            key = plain(f"{name}: {label}")
            if key not in tasks:
                tasks[key] = bar.add_task(key, total=total)
            bar.update(tasks[key], completed=done, total=total)
        return run_one(name, args.out, progress=progress, **options)


def print_report(name, data, report, directory, out: Output) -> None:
    if report.status != "ok":
        out.line(f"[yellow]{plain(name)}: {plain(report.status)}[/]: {plain(report.message)}")
    if report.table is not None:
        title, columns, rows = report.table
        out.table(plain(f"{name}: {title}"), [(plain(c), {"overflow": "fold"}) for c in columns],
                  [[plain(c) for c in row] for row in rows])
    if report.checks:
        bad = [c for c in report.checks if not c.holds]
        out.line(f"  facts checked: {len(report.checks) - len(bad)} of {len(report.checks)} hold")
        for c in report.checks:
            mark = "[green]✓[/]" if c.holds else "[red]✗[/]"
            out.line(f"   {mark} {plain(c.name)}" + (f" — {plain(c.detail)}" if c.detail and not c.holds else ""))
    files = [f"{name}.json", *data.get("figures", [])]
    out.line(f"  {data['seconds']:.1f} s; wrote {plain(', '.join(str(Path(directory) / f) for f in files))}")
