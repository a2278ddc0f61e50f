"""The formats ``--out PATH`` writes: json, csv and npy (``--format``, default from PATH's suffix).

* ``json`` — the whole result, as ``--json`` prints it.
* ``csv`` — for ``solve``, the matrix K[x, y]: a header row of output labels (its first cell
  empty) and one row per input, its label first; numbers in full precision (the shortest
  decimal that reads back as the same double). With several contexts, one file per context
  named ``STEM.CONTEXT.csv`` next to PATH (STEM is PATH without its suffix). For ``sweep`` and
  ``compare``, their table, one row per point or mechanism.
* ``npy`` — for ``solve``, :func:`numpy.save` of the matrix (rows: inputs, columns: outputs,
  in the problem's order); with several contexts, :func:`numpy.savez` of every context's
  matrix keyed by its name, written to PATH with the suffix ``.npz``.

Every file is written atomically, with the mode a plain ``open`` gives under your umask.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence

from mechdesign.core.errors import ProblemError

FORMATS = ("json", "csv", "npy")
#: what ``--format`` writes, per command (for ``--help``)
FORMAT_HELP = {
    "solve": "json: the whole result; csv: the matrix, output labels as header and input labels "
             "as first column (several contexts: one file STEM.CONTEXT.csv each); npy: "
             "numpy.save of the matrix (several contexts: one STEM.npz keyed by context)",
    "sweep": "json: the whole sweep; csv: one row per ε (status, objective, each baseline's "
             "objective, seconds)",
    "compare": "json: the whole comparison; csv: one row per mechanism (ε used, objective, "
               "holds, reveals nothing, and the estimation errors' mean and std)",
}
SUFFIXES = {".json": "json", ".csv": "csv", ".npy": "npy", ".npz": "npy"}


def chosen_format(args, formats: Sequence[str]) -> str | None:
    """The format of ``--out`` (None without ``--out``): ``--format``, else the suffix of the
    path when it names a format, else json. A suffix naming a format the command cannot
    write is an error (ProblemError naming ``--out``), found before any work."""
    path = getattr(args, "out", None)
    if not path:
        if getattr(args, "format", None):
            raise ProblemError("--format needs --out PATH", key="--format")
        return None
    if args.format:
        return args.format
    suffix = os.path.splitext(str(path))[1].lower()
    fmt = SUFFIXES.get(suffix, "json")
    if fmt not in formats:
        raise ProblemError(f"'{path}' has the suffix {suffix}, but this command writes "
                           f"{', '.join(formats)}; choose a suffix or --format", key="--out")
    return fmt


def matrix_paths(path: str, keys: Sequence[str], fmt: str) -> dict[str, str] | str:
    """Where ``solve --out PATH`` writes a csv or npy result: PATH for one context; for several,
    ``STEM.CONTEXT.csv`` per context (csv) or one file ``STEM.npz`` (npy)."""
    stem, suffix = os.path.splitext(str(path))
    if fmt == "npy":
        return f"{stem}.npz" if len(keys) > 1 or suffix.lower() == ".npz" else str(path)
    if len(keys) == 1:
        return str(path)
    return {k: f"{stem}.{k}.csv" for k in keys}


def write_result(result, path: str, fmt: str) -> list[str]:
    """Write a solve's result to ``path`` in ``fmt``; returns the paths written."""
    from mechdesign.design.result import write_file_atomic

    if fmt == "json":
        result.write(path)
        return [str(path)]
    mechs = result.mechanisms
    if not mechs:
        raise ProblemError(f"the solve returned no mechanism to write as {fmt}", key="--out")
    where = matrix_paths(path, list(mechs), fmt)
    if fmt == "npy":
        import numpy as np

        if where.endswith(".npz"):
            arrays = {k: m.matrix for k, m in mechs.items()}
            write_file_atomic(where, lambda fh: np.savez(fh, **arrays), binary=True)
        else:
            matrix = next(iter(mechs.values())).matrix
            write_file_atomic(where, lambda fh: np.save(fh, matrix), binary=True)
        return [where]
    files = where if isinstance(where, dict) else {next(iter(mechs)): where}
    for key, file in files.items():
        mech = mechs[key]
        rows = [[str(x), *row] for x, row in zip(mech.inputs.labels, mech.matrix.tolist())]
        write_csv(file, ["", *map(str, mech.outputs.labels)], rows)
    return list(files.values())


def write_csv(path: str, header: Sequence[str], rows: Sequence[Sequence]) -> None:
    """A CSV file (atomically): the header, then the rows; floats in full precision."""
    from mechdesign.cli.output import full
    from mechdesign.design.result import write_file_atomic

    def cell(value) -> str:
        if value is None:
            return ""
        return value if isinstance(value, str) else full(value)

    def fill(fh) -> None:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        writer.writerows([[cell(v) for v in row] for row in rows])

    write_file_atomic(path, fill)
