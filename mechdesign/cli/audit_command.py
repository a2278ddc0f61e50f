"""``mechdesign audit MECHANISM --problem FILE``: check a mechanism against a problem's privacy
constraints."""

from __future__ import annotations

import json

from mechdesign.cli.options import EPILOG, EXIT_FAIL, EXIT_OK, load_problem
from mechdesign.cli.output import Output
from mechdesign.cli.render import certificate_table, plain
from mechdesign.core.errors import ProblemError

HELP = "audit a mechanism (JSON) against a problem's privacy constraints"


def add_parser(sub) -> None:
    p = sub.add_parser("audit", help=HELP, description=HELP + ".", epilog=EPILOG)
    p.add_argument("mechanism", help="JSON: a solve result, or an object with 'matrix' (and labels)")
    p.add_argument("--problem", required=True, help="problem file whose constraints to check")
    p.add_argument("--exact", action="store_true",
                   help="audit in exact arithmetic (mechdesign.privacy.audit.audit(..., exact=True))")
    p.add_argument("--json", action="store_true", help="print the audit as JSON")
    p.set_defaults(run=run)


def audits(problem, matrices: dict, exact: bool) -> list:
    """Each notion's audit of the matrices; with ``exact``, by :func:`mechdesign.privacy.audit.audit`
    with ``exact=True``."""
    if not exact:
        from mechdesign.privacy.certify import audit_all

        return audit_all(problem.privacy, matrices)
    from mechdesign.privacy.audit import audit

    return [audit({k: matrices[k] for k in n.keys(list(matrices))}, n, exact=True) for n in problem.privacy]


def run(args, out: Output) -> int:
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
    found = audits(problem, matrices, args.exact)
    value = problem.objective.value(matrices)
    holds = all(a.holds for a in found)
    if args.json:
        print(json.dumps({"problem": problem.name, "objective": {"kind": problem.objective.kind, "value": value},
                          "certificate": [a.to_dict() for a in found], "holds": holds}, indent=2))
    else:
        out.line(f"[bold]{plain(problem.name)}[/]: objective {plain(problem.objective.kind)} = {out.number(value)}")
        if not problem.privacy:
            out.warning("no privacy constraint: nothing to audit")
        certificate_table(found, out, "Audit (exact)" if args.exact else "Audit")
    return EXIT_OK if holds else EXIT_FAIL
