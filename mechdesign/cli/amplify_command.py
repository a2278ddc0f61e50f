"""``mechdesign amplify RESULT.json --users N --delta D [--json]``: the central ε of a designed
matrix behind a shuffler.

The file is a solve result (``{"mechanisms": {context: mechanism, ...}, ...}``) or one mechanism
(``{"matrix": [[...]], "inputs": [...], "outputs": [...]}``), as ``mechdesign audit`` reads
them, with no problem file: the rows are checked to be distributions. For each matrix it prints
the local level ε0, both shuffle bounds where they apply — the clone bound of Feldman, McMillan
and Talwar (from ε0) and the variation-ratio bound of Wang et al. (from the matrix) — and the
smaller one as the central ε (:func:`mechdesign.accounting.shuffle.amplification`).

Exit codes: 0; 2 for a file that cannot be read or holds no valid matrix (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from mechdesign.cli.options import EPILOG, EXIT_OK, probability, users
from mechdesign.cli.output import Output
from mechdesign.cli.render import plain
from mechdesign.core.errors import ProblemError

HELP = "the central ε of a designed mechanism when its users' reports are shuffled"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``amplify`` on ``subparsers`` (from ``add_subparsers``)."""
    p = subparsers.add_parser("amplify", help=HELP, description=HELP + ": both shuffle bounds where they "
                              "apply, and the smaller as the result.", epilog=EPILOG)
    p.add_argument("mechanism", help="JSON: a solve result, or an object with 'matrix' (and labels)")
    p.add_argument("--users", type=users, required=True, metavar="N",
                   help="number of users whose reports are shuffled (e.g. 100000 or 1e8)")
    p.add_argument("--delta", type=probability, required=True, metavar="D", help="the central δ, in (0, 1]")
    p.add_argument("--json", action="store_true", help="print the bounds as JSON")
    p.set_defaults(run=cmd_amplify)
    return p


def read_matrices(path: str) -> dict[str, np.ndarray]:
    """The matrices of a solve result or mechanism file, keyed by context ("default" for a lone
    mechanism), each checked to be row-stochastic; rows and columns as the file orders them."""
    from mechdesign.core.mechanism_file import mechanism_matrix, read_json

    data = read_json(path)
    if isinstance(data, dict) and "mechanisms" in data and isinstance(data["mechanisms"], dict) \
            and data["mechanisms"]:
        entries = {str(k): (v, f"mechanisms.{k}") for k, v in data["mechanisms"].items()}
    elif isinstance(data, dict) and "matrix" in data:
        entries = {"default": (data, "")}
    else:
        raise ProblemError("expected a result object with 'mechanisms' or an object with 'matrix'", file=path)
    try:
        return {name: mechanism_matrix(entry, *_domains(entry, key), key) for name, (entry, key) in entries.items()}
    except ProblemError as exc:
        raise exc.located(path)


def _domains(entry, key: str):
    """The input and output domains a mechanism entry declares (its labels, else its sizes), so
    that :func:`mechanism_matrix` checks the entry against itself."""
    from mechdesign.core.domain import Domain

    at = f"{key}." if key else ""
    if not isinstance(entry, dict):
        raise ProblemError("expected an object with 'matrix' (and 'inputs', 'outputs')", key=key or None)
    matrix = entry.get("matrix")
    rows = len(matrix) if isinstance(matrix, list) and matrix else 1
    cols = len(matrix[0]) if isinstance(matrix, list) and matrix and isinstance(matrix[0], list) and matrix[0] else 1
    out = []
    for name, size in (("inputs", rows), ("outputs", cols)):
        labels = entry.get(name)
        try:
            out.append(Domain(tuple(str(v) for v in labels)) if isinstance(labels, list) and labels
                       else Domain.from_size(size))
        except ProblemError as exc:
            raise ProblemError(exc.detail, key=f"{at}{name}")
    return out


def cmd_amplify(args: argparse.Namespace, console: Output) -> int:
    """Run ``mechdesign amplify`` (module docstring)."""
    from mechdesign.accounting.shuffle import amplification

    matrices = read_matrices(str(args.mechanism))
    found = {name: amplification(k, args.users, args.delta) for name, k in matrices.items()}
    if args.json:
        print(json.dumps({"users": args.users, "delta": args.delta,
                          "mechanisms": {name: _jsonable(a.to_dict()) for name, a in found.items()}}, indent=2))
        return EXIT_OK
    rows = [[plain(name), console.number(a.local_epsilon), _bound(a.clones, console),
             _bound(a.variation_ratio, console), f"[bold]{console.number(a.epsilon)}[/]", a.bound]
            for name, a in found.items()]
    console.table(f"Central ε after shuffling {args.users} users' reports (δ = {console.number(args.delta)})",
                  ["mechanism", "local ε0", "clone bound", "variation-ratio bound", "central ε", "smaller"], rows)
    return EXIT_OK


def _bound(value, console: Output) -> str:
    return "n/a (ε0 = ∞)" if value is None else console.number(value)


def _jsonable(data: dict) -> dict:
    from mechdesign.core.audit_record import jsonable

    return jsonable(data)
