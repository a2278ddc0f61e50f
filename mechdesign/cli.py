"""Command line: a thin layer over the Python API (DESIGN §9).

Exit codes: 0 optimal (or audit holds), 2 problem-file error, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from rich.console import Console

from .audit import as_matrices
from .certify import audit_all
from .errors import ProblemError
from .mechanism import Mechanism
from .privacy.ldp import LDP
from .result import write_json_atomic
from .spec import load_problem

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2
BASELINES = ("krr",)


def _baseline(problem, name: str) -> dict:
    """A baseline applied to every context, with its objective and audited privacy."""
    from . import baselines

    if name == "krr":
        eps = [n.epsilon for n in problem.privacy if isinstance(n, LDP)]
        if not eps:
            raise ProblemError("--baseline krr needs an ε-LDP constraint in the problem", key="--baseline")
        if not problem.outputs.same_as(problem.inputs):
            raise ProblemError("--baseline krr needs the outputs to equal the inputs", key="--baseline")
        mech = baselines.krr(problem.inputs, min(eps))
    else:
        raise ProblemError(f"unknown baseline '{name}'; expected one of: {', '.join(BASELINES)}",
                           key="--baseline")
    mechs = {k: mech.matrix for k in problem.keys}
    return {
        "name": mech.name,
        "objective": problem.objective.value(mechs),
        "certificate": [a.to_dict() for a in audit_all(problem.privacy, mechs)],
    }


def cmd_solve(args, console: Console) -> int:
    problem = load_problem(args.file)
    extra = [_baseline(problem, b) for b in (args.baseline or [])]
    with console.status(f"solving {problem.name} ...", spinner="dots") if not args.json else _Null():
        result = problem.solve()
    if extra:
        result.extra["baselines"] = extra
    if args.out:
        result.write(args.out)
    if args.json:
        print(result.to_json())
    else:
        from .render import print_result
        print_result(result, console, extra)
        if args.out:
            console.print(f"wrote {args.out}")
    return EXIT_OK if result.status == "optimal" else EXIT_FAIL


def cmd_audit(args, console: Console) -> int:
    problem = load_problem(args.problem)
    path = Path(args.mechanism)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ProblemError("no such file", file=str(path))
    except (OSError, json.JSONDecodeError) as exc:
        raise ProblemError(f"not a readable JSON file: {exc}", file=str(path))
    try:
        if isinstance(data, dict) and "mechanisms" in data:
            mechs = {k: Mechanism.from_dict(v) for k, v in data["mechanisms"].items()}
        elif isinstance(data, dict) and "matrix" in data:
            mechs = Mechanism.from_dict(data)
        else:
            raise ProblemError("expected a result object with 'mechanisms' or an object with 'matrix'")
        matrices = as_matrices(mechs)
    except ProblemError as exc:
        raise exc.located(str(path))
    for key, k in matrices.items():
        if k.shape != (len(problem.inputs), len(problem.outputs)):
            raise ProblemError(f"mechanism '{key}' is {k.shape[0]} x {k.shape[1]}, the problem needs "
                               f"{len(problem.inputs)} x {len(problem.outputs)}", file=str(path))
    if set(matrices) != set(problem.keys):
        if len(matrices) == 1:
            only = next(iter(matrices.values()))
            matrices = {k: only for k in problem.keys}
        else:
            raise ProblemError(f"mechanisms {sorted(matrices)} do not match the problem's contexts "
                               f"{problem.keys}", file=str(path))
    audits = audit_all(problem.privacy, matrices)
    value = problem.objective.value(matrices)
    holds = all(a.holds for a in audits)
    if args.json:
        print(json.dumps({"problem": problem.name, "objective": {"kind": problem.objective.kind, "value": value},
                          "certificate": [a.to_dict() for a in audits], "holds": holds}, indent=2))
    else:
        from .render import certificate_table, fmt
        console.print(f"[bold]{problem.name}[/]: objective {problem.objective.kind} = {fmt(value)}")
        console.print(certificate_table(audits, "Audit"))
    return EXIT_OK if holds else EXIT_FAIL


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mechdesign", description="Design certified optimal local privacy mechanisms.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("solve", help="solve a problem file and print the certified optimum")
    p.add_argument("file", help="problem file (TOML)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (DESIGN §8)")
    p.add_argument("--out", metavar="PATH", help="write the JSON result to PATH (atomically)")
    p.add_argument("--baseline", action="append", metavar="NAME", choices=BASELINES,
                   help="also evaluate a baseline at the same ε (krr)")
    p.set_defaults(run=cmd_solve)

    p = sub.add_parser("audit", help="audit a mechanism (JSON) against a problem's privacy constraints")
    p.add_argument("mechanism", help="JSON: a solve result, or an object with 'matrix' (and labels)")
    p.add_argument("--problem", required=True, help="problem file whose constraints to check")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_audit)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_INPUT if exc.code not in (0, None) else EXIT_OK
    console = Console(stderr=False)
    warnings.filterwarnings("ignore", module="cvxpy")
    try:
        return args.run(args, console)
    except ProblemError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
