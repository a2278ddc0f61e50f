"""Mutation fuzzing of the shipped problem files: bad input never reaches a traceback.

Every shipped problem is mutated (keys deleted or misspelt, values replaced by other types and
extreme numbers, the text truncated, unicode and rich markup put into names and labels, a
byte-order mark, self-pairs, absurd sizes). Each mutant goes through the real loader and either
loads (and then a small one solves to a :class:`Result`) or raises :class:`ProblemError` naming
a key; a subset also runs through ``mechdesign.cli.main`` in-process and a handful through a
subprocess, which must exit 0, 1 or 2 with no traceback and, for exit 2, one line naming the
file. The mutants are deterministic (seeded), so a failure reproduces.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mechdesign.core.errors import ProblemError
from mechdesign.design.result import Result
from mechdesign.design.spec import load_problem

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = sorted((ROOT / "problems").glob("*.toml"))

#: values a mutant puts in place of a key's value: other types, extreme numbers, NaN-like strings
REPLACEMENTS = ["text", {"a": 1}, [1, 2], [], True, 0, -1, -5.5, 9223372036854775807, 1e308,
                math.inf, -math.inf, math.nan, "nan", "inf", "-inf", {"kind": ["x"]}]
#: strings put into names and labels: rich markup, mathtext, unicode, control characters
NASTY = ["rr[/]", "[bold]x[/bold]", "[link=file:///etc/passwd]p[/link]", "$\\nosuchcmd$", "a$b",
         ":smile:", "ε → ∞ 𝔛", "line\nbreak", "tab\there", "\u202eevil", "\\", "%s%d{0}"]


# --- a small TOML writer (the standard library only reads TOML) -----------------------------

def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def dumps(data: dict) -> str:
    """TOML text for ``data``: scalars first, then [tables] and [[arrays of tables]]."""
    lines: list[str] = []

    def table(prefix: str, d: dict) -> None:
        for k, v in d.items():
            if not isinstance(v, dict) and not _table_array(v):
                lines.append(f"{json.dumps(k)} = {_value(v)}")
        for k, v in d.items():
            name = f"{prefix}.{json.dumps(k)}" if prefix else json.dumps(k)
            if isinstance(v, dict):
                lines.append(f"[{name}]")
                table(name, v)
            elif _table_array(v):
                for item in v:
                    lines.append(f"[[{name}]]")
                    table(name, item)

    table("", data)
    return "\n".join(lines) + "\n"


def _table_array(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


# --- mutations --------------------------------------------------------------------------------

def _paths(d, prefix=()):
    """Every key path of a parsed problem (list items of [[privacy]] by index)."""
    items = d.items() if isinstance(d, dict) else enumerate(d)
    for k, v in items:
        path = prefix + (k,)
        if isinstance(d, dict):
            yield path
        if isinstance(v, dict) or _table_array(v):
            yield from _paths(v, path)


def _get(d, path):
    for k in path[:-1]:
        d = d[k]
    return d, path[-1]


def _copy(data):
    return json.loads(json.dumps(data, allow_nan=True))


def _typo(key: str, rng: random.Random) -> str:
    if len(key) < 2:
        return key + "x"
    i = rng.randrange(len(key) - 1)
    how = rng.randrange(3)
    if how == 0:
        return key[:i] + key[i + 1:]                      # drop a letter
    if how == 1:
        return key[:i] + key[i + 1] + key[i] + key[i + 2:]  # swap two letters
    return key[:i] + key[i].upper() + key[i + 1:]          # change the case


def _labelled(data) -> list:
    """Paths of string lists users name things with: labels, contexts, distribution names."""
    out = []
    for path in _paths(data):
        parent, k = _get(data, path)
        if k == "labels" and isinstance(parent[k], list):
            out.append(path)
    return out


def mutants(path: Path, seed: int) -> list[tuple[str, str]]:
    """(id, TOML text) mutants of one shipped problem file."""
    rng = random.Random(seed)
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    paths = list(_paths(data))
    out: list[tuple[str, str]] = []
    for p in rng.sample(paths, min(4, len(paths))):           # delete a key
        m = _copy(data)
        parent, k = _get(m, p)
        del parent[k]
        out.append((f"delete {'.'.join(map(str, p))}", dumps(m)))
    for p in rng.sample(paths, min(2, len(paths))):           # misspell a key
        m = _copy(data)
        parent, k = _get(m, p)
        if isinstance(parent, dict):
            parent[_typo(k, rng)] = parent.pop(k)
            out.append((f"typo {'.'.join(map(str, p))}", dumps(m)))
    for p in rng.sample(paths, min(6, len(paths))):           # another type or an extreme number
        m = _copy(data)
        parent, k = _get(m, p)
        value = rng.choice(REPLACEMENTS)
        parent[k] = _copy(value) if not isinstance(value, float) else value
        out.append((f"replace {'.'.join(map(str, p))} by {value!r}", dumps(m)))
    for key in ("notion", "kind"):                             # a table or an array for a name
        m = _copy(data)
        target = m["privacy"][0] if key == "notion" and m.get("privacy") else m.get("objective")
        if isinstance(target, dict):
            target[key] = rng.choice([{"x": 1}, ["ldp"], [["a"]]])
            out.append((f"{key} as a {type(target[key]).__name__}", dumps(m)))
    for cut in sorted(rng.sample(range(1, len(text)), 3)):   # broken TOML
        out.append((f"truncate at {cut}", text[:cut]))
    nasty = rng.sample(NASTY, 3)
    m = _copy(data)
    m["name"] = nasty[0]
    out.append((f"name {nasty[0]!r}", dumps(m)))
    m = _copy(data)
    m["description"] = nasty[1]
    out.append((f"description {nasty[1]!r}", dumps(m)))
    for p in _labelled(data)[:1]:                              # a label with markup or unicode
        m = _copy(data)
        parent, k = _get(m, p)
        parent[k][0] = nasty[2]
        out.append((f"label {nasty[2]!r}", dumps(m)))
    out.append(("byte-order mark", "\ufeff" + text))
    depth = rng.choice([100_000, 3_000])
    out.append((f"nesting {depth} deep", f"{text}\nextra = {'[' * depth}{']' * depth}\n"))
    for entry in data.get("privacy", []):                      # a self-pair
        for k in ("pairs", "edges", "adjacency"):
            if isinstance(entry.get(k), list):
                m = _copy(data)
                for e in m["privacy"]:
                    if isinstance(e.get(k), list):
                        e[k] = [[e[k][0][0], e[k][0][0]]]
                out.append((f"self-pair in {k}", dumps(m)))
    for size in (10**12, 10**9, 10**6, 1e308):                 # absurd sizes
        m = _copy(data)
        m["inputs"] = {"size": size}
        m.pop("outputs", None)
        out.append((f"inputs.size = {size}", dumps(m)))
    m = _copy(data)
    m["inputs"] = {"grid": {"rows": 3000, "cols": 3000}}
    out.append(("3000 x 3000 grid", dumps(m)))
    return out


CASES = [(p, label, text) for i, p in enumerate(PROBLEMS)
         for label, text in mutants(p, seed=1000 + i)]


def _ids(case):
    return f"{case[0].stem}: {case[1]}"[:90]


def _check_error(exc: ProblemError, label: str) -> None:
    msg = str(exc)
    assert "\n" not in msg, msg
    if label.startswith(("truncate", "nesting")):
        assert exc.key or "TOML" in msg, msg       # broken TOML: the file, line and column
    else:
        assert exc.key, f"no key named: {msg}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_every_mutant_loads_or_names_a_key(tmp_path, case):
    source, label, text = case
    path = tmp_path / "mutant.toml"
    path.write_text(text, encoding="utf-8")
    try:
        problem = load_problem(path)
    except ProblemError as exc:
        _check_error(exc, label)
        return
    if len(problem.inputs) * len(problem.outputs) <= 100:
        try:
            result = problem.solve()
        except ProblemError as exc:               # e.g. a solver that cannot take the problem
            _check_error(exc, label)
            return
        assert isinstance(result, Result)
        assert result.status in ("optimal", "infeasible", "unbounded", "failed")
        json.dumps(result.to_dict())


CLI_CASES = CASES[::7]


@pytest.mark.parametrize("case", CLI_CASES, ids=[_ids(c) for c in CLI_CASES])
def test_the_command_line_exits_2_with_one_line_or_runs(tmp_path, capsys, case):
    from mechdesign.cli.commands import main

    source, label, text = case
    path = tmp_path / "mutant.toml"
    path.write_text(text, encoding="utf-8")
    try:
        problem = load_problem(path)
        small = len(problem.inputs) * len(problem.outputs) <= 100
    except ProblemError:
        small = True
    if not small:
        return
    code = main(["solve", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out
    assert code in (0, 1, 2)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{path}: "), err
    else:
        json.loads(out)


SUBPROCESS_CASES = [c for c in CASES if c[1] in ("byte-order mark", "inputs.size = 1000000000000",
                                                 "3000 x 3000 grid", "notion as a dict")][:6]


@pytest.mark.parametrize("case", SUBPROCESS_CASES, ids=[_ids(c) for c in SUBPROCESS_CASES])
def test_mutants_through_a_subprocess(tmp_path, case):
    source, label, text = case
    path = tmp_path / "mutant.toml"
    path.write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "mechdesign", "solve", str(path), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr
    if label == "byte-order mark":
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["status"] == "optimal"
    else:
        assert proc.returncode == 2
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"{path}: ")
