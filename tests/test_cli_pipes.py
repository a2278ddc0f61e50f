"""The command line in a pipe (a real subprocess, stdout a pipe): full values in a plain
tab-separated layout, no truncation, wrapping, box characters or colour; progress on stderr."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

WIDE = """
name = "wide"
[inputs]
size = {n}
[[privacy]]
notion = "ldp"
epsilon = 2.0
[objective]
kind = "error-probability"
"""

SKEWED = """
name = "skewed"
[inputs]
size = 10
[metric]
kind = "absolute"
[distributions]
prior = [0.3414, 0.1707, 0.1138, 0.0854, 0.0683, 0.0569, 0.0488, 0.0427, 0.0379, 0.0341]
[[privacy]]
notion = "ldp"
epsilon = 1.0
[objective]
kind = "expected-loss"
prior = "prior"
"""

DECORATION = re.compile("[\u2500-\u257f\u2026\x1b]")  # box drawing, the ellipsis, escape codes


def mechdesign(*args, cwd=None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "mechdesign", *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=cwd, check=False)  # stdout: a pipe
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def table(lines: list[str], title: str) -> list[list[str]]:
    """The tab-separated header and rows following a title line, up to the next title."""
    start = lines.index(title) + 1
    rows = []
    for line in lines[start:]:
        if "\t" not in line:
            break
        rows.append(line.split("\t"))
    return rows


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    path = tmp_path_factory.mktemp("wide") / "wide.toml"
    path.write_text(WIDE.format(n=30))
    return path, mechdesign("solve", path), json.loads(mechdesign("solve", path, "--json").stdout)


def test_a_piped_matrix_keeps_every_column_and_every_digit(wide):
    _, proc, data = wide
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    rows = table(lines, "Mechanism default")
    header, body = rows[0], rows[1:]
    matrix = np.array(data["mechanisms"]["default"]["matrix"])
    assert header == ["x \\ y"] + data["mechanisms"]["default"]["outputs"]  # all 30 outputs
    assert len(body) == 30 and all(len(r) == 31 for r in body)
    assert [r[0] for r in body] == data["mechanisms"]["default"]["inputs"]
    printed = np.array([[float(v) for v in r[1:]] for r in body])
    assert np.array_equal(printed, matrix)  # exactly the doubles of the JSON result
    assert f"  objective error-probability = {data['objective']['value']!r}" in lines


def test_a_piped_result_has_no_decoration_and_no_line_split_inside_a_word(wide):
    _, proc, data = wide
    assert not DECORATION.search(proc.stdout), proc.stdout[:500]
    lines = proc.stdout.splitlines()
    assert lines[0] == "wide: optimal"
    certificate = table(lines, "Certificate")
    assert certificate[0] == ["notion", "requested", "achieved", "holds"]
    achieved = data["certificate"][0]["achieved"]["epsilon"]
    assert certificate[1] == ["ldp", "epsilon=2.0", f"epsilon={achieved!r}", "yes"]
    solver = next(line for line in lines if line.startswith("  solver "))
    assert data["solver"]["name"] in solver  # the whole name on one line


def test_a_terminal_still_gets_the_rich_tables():
    from mechdesign.cli.output import Output

    # the same renderer, told that stdout is a terminal (a pty is not needed to check the layout)
    code = ("import sys\nfrom mechdesign.cli.output import Output\n"
            "out = Output(terminal=True)\nout.table('T', ['a', 'b'], [['1', '0.123456789']])\n")
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, check=True)
    assert "┃" in proc.stdout or "│" in proc.stdout
    assert not Output(terminal=False).terminal


def test_json_in_a_pipe_is_unchanged_and_the_verbose_log_goes_to_stderr(tmp_path):
    path = tmp_path / "skewed.toml"
    path.write_text(SKEWED)
    plain = mechdesign("solve", path, "--json")
    verbose = mechdesign("solve", path, "--json", "--verbose")
    assert plain.returncode == verbose.returncode == 0
    a, b = json.loads(plain.stdout), json.loads(verbose.stdout)  # the solver's log is not in it
    assert a["mechanisms"] == b["mechanisms"] and a["objective"] == b["objective"]
    assert "round 1" in verbose.stderr and "proven bound" in verbose.stderr


def test_verbose_solve_in_a_pipe_keeps_stdout_to_the_result(tmp_path):
    path = tmp_path / "skewed.toml"
    path.write_text(SKEWED)
    quiet, verbose = mechdesign("solve", path), mechdesign("solve", path, "--verbose")
    assert quiet.returncode == verbose.returncode == 0
    assert "round" not in verbose.stdout and "round 1" in verbose.stderr and quiet.stderr == ""

    def without_times(text):
        return re.sub(r"compile .* s, solve .* s", "", text)
    assert without_times(verbose.stdout) == without_times(quiet.stdout)


def test_verbose_sweep_reports_each_point_and_round_on_stderr(tmp_path):
    path = tmp_path / "skewed.toml"
    path.write_text(SKEWED)
    proc = mechdesign("sweep", path, "--epsilon", "0.5:1:2", "--verbose")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(mechdesign("sweep", path, "--epsilon", "0.5:1:2", "--json").stdout)
    err = proc.stderr.splitlines()
    for i, point in enumerate(data["points"], 1):
        value = point["objective"]
        assert any(line.startswith(f"point {i}/2: ε = {point['epsilon']!r}: optimal, objective {value!r}")
                   for line in err), proc.stderr
    assert any(" round 1: value " in line and "proven bound" in line for line in err)
    assert "point 1/2" not in proc.stdout and "round" not in proc.stdout
    rows = table(proc.stdout.splitlines(), "skewed: expected-loss against ε")
    assert rows[0] == ["ε", "status", "objective", "seconds"]
    assert [float(r[2]) for r in rows[1:]] == [p["objective"] for p in data["points"]]
    assert not DECORATION.search(proc.stdout)


def test_compare_in_a_pipe_prints_full_values(tmp_path):
    path = tmp_path / "skewed.toml"
    path.write_text(SKEWED)
    proc = mechdesign("compare", path, "--baselines", "krr,geometric")
    data = json.loads(mechdesign("compare", path, "--baselines", "krr,geometric", "--json").stdout)
    assert proc.returncode == 0, proc.stderr
    assert not DECORATION.search(proc.stdout)
    title = next(line for line in proc.stdout.splitlines() if line.startswith("skewed: expected-loss"))
    rows = {r[0]: r for r in table(proc.stdout.splitlines(), title)[1:]}
    for row in data["rows"]:
        assert float(rows[row["name"]][2]) == row["objective"]
    assert rows["geometric"][1] == repr(data["rows"][2]["epsilon"])  # 1/9, every digit
