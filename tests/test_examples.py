"""The shipped examples: they are the repository's problems/ files, each loads, and copies (with
the data tables they come with) load too; the ``examples`` command lists, prints and copies
them as plain text."""

from __future__ import annotations

import argparse
import io
import math
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from rich.console import Console

import mechdesign
from mechdesign import examples
from mechdesign.cli.examples_command import add_parser, cmd_examples
from mechdesign.core.errors import ProblemError

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS = ROOT / "problems"
AIRPORTS_DATA = "data/airports-tx-ok.csv"


def test_the_names_are_the_stems_of_the_problem_files():
    stems = sorted(p.stem for p in PROBLEMS.glob("*.toml"))
    assert examples.names() == stems
    named_in_the_guide = {"warner-rr", "geo-grid", "dprivacy-line", "ldp-skewed-prior",
                          "categorical-chain"}
    assert named_in_the_guide <= set(stems)


def test_from_mechdesign_import_examples_is_the_examples_module():
    assert "examples" in mechdesign.__all__
    assert mechdesign.examples is examples


@pytest.mark.parametrize("name", sorted(p.stem for p in PROBLEMS.glob("*.toml")))
def test_every_example_is_the_repository_file_and_loads(name):
    path = examples.path(name)
    assert isinstance(path, Path) and path.name == f"{name}.toml"
    assert path.read_bytes() == (PROBLEMS / f"{name}.toml").read_bytes()
    declared = tomllib.loads(path.read_text(encoding="utf-8"))["name"]
    assert mechdesign.load_problem(path).name == declared


def test_description_is_the_problem_files_own():
    assert examples.description("warner-rr").startswith("Binary secret, uniform prior, ε-LDP")
    for name in examples.names():
        text = examples.description(name)
        assert text and "\n" not in text


def test_an_unknown_name_is_an_error_listing_the_known_ones(tmp_path):
    target = tmp_path / "never-made"
    for call in (examples.path, examples.description, examples.data_files,
                 lambda n: examples.copy_to(target, ["geo-grid", n])):
        with pytest.raises(ProblemError) as err:
            call("warner")
        message = str(err.value)
        assert "'warner'" in message and "warner-rr" in message and "geo-grid" in message
    assert not target.exists()  # names are checked before anything is made


def test_the_airports_problems_come_with_their_data_table():
    assert examples.data_files("airports-distp") == [AIRPORTS_DATA]
    assert examples.data_files("airports-coupling") == [AIRPORTS_DATA]
    assert examples.data_files("warner-rr") == []


def test_copy_all_then_every_copy_loads(tmp_path):
    target = tmp_path / "new" / "problems"
    written = examples.copy_to(target)
    relative = sorted(str(p.relative_to(target)) for p in written)
    assert relative == sorted([f"{n}.toml" for n in examples.names()] + [AIRPORTS_DATA])
    for path in written:
        assert path.read_bytes() == (PROBLEMS / path.relative_to(target)).read_bytes()
    for name in examples.names():
        problem = mechdesign.load_problem(target / f"{name}.toml")
        assert problem.name == name  # every shipped problem is named like its file


def test_copy_some_takes_only_their_files(tmp_path):
    written = examples.copy_to(tmp_path, ["warner-rr", "airports-distp", "airports-coupling"])
    assert [str(p.relative_to(tmp_path)) for p in written] == [
        "warner-rr.toml", "airports-distp.toml", "airports-coupling.toml", AIRPORTS_DATA]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "airports-coupling.toml", "airports-distp.toml", "data", "warner-rr.toml"]
    result = mechdesign.load_problem(tmp_path / "warner-rr.toml").solve()
    assert result.status == "optimal"
    assert result.objective == pytest.approx(1 / (1 + math.e), rel=1e-9)  # Warner's RR, ε = 1


def test_copy_refuses_to_overwrite_a_different_file(tmp_path):
    mine = tmp_path / "warner-rr.toml"
    mine.write_text("# my own problem\n", encoding="utf-8")
    with pytest.raises(ProblemError) as err:
        examples.copy_to(tmp_path, ["geo-grid", "warner-rr"])
    assert str(mine) in str(err.value) and "overwrite" in str(err.value)
    assert mine.read_text(encoding="utf-8") == "# my own problem\n"
    assert not (tmp_path / "geo-grid.toml").exists()  # nothing written before the refusal

    written = examples.copy_to(tmp_path, ["geo-grid", "warner-rr"], overwrite=True)
    assert mine in written and mine.read_bytes() == (PROBLEMS / "warner-rr.toml").read_bytes()


def test_copy_again_over_identical_files_is_fine(tmp_path):
    first = examples.copy_to(tmp_path, ["geo-grid"])
    assert examples.copy_to(tmp_path, ["geo-grid"]) == first
    assert examples.copy_to(tmp_path, "geo-grid") == first  # a string is one name


def test_copy_into_a_file_is_an_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ProblemError, match="expected a directory"):
        examples.copy_to(blocker)


def test_copies_are_written_with_the_users_umask(tmp_path):
    old = os.umask(0o027)
    try:
        [copy] = examples.copy_to(tmp_path, ["warner-rr"])
    finally:
        os.umask(old)
    assert copy.stat().st_mode & 0o777 == 0o640


# --- the command -----------------------------------------------------------------------------

def _parse(*argv):
    parser = argparse.ArgumentParser(prog="mechdesign")
    add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["examples", *argv])


def _run(*argv):
    out = io.StringIO()
    code = cmd_examples(_parse(*argv), Console(file=out))
    return code, out.getvalue()


def test_the_listing_is_one_aligned_plain_line_per_example():
    code, out = _run()
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == examples.names()
    starts = {len(line) - len(line[len(name):].lstrip())
              for line, name in zip(lines, examples.names(), strict=True)}
    assert len(starts) == 1  # the descriptions start in one column
    warner = lines[examples.names().index("warner-rr")]
    assert warner.split(None, 1)[1] == examples.description("warner-rr")
    assert "\x1b" not in out and "│" not in out


def test_a_name_prints_the_file_exactly():
    code, out = _run("warner-rr")
    assert code == 0 and out == (PROBLEMS / "warner-rr.toml").read_text(encoding="utf-8")


def test_to_copies_and_prints_each_path(tmp_path):
    code, out = _run("airports-distp", "--to", str(tmp_path))
    assert code == 0
    assert out.splitlines() == [str(tmp_path / "airports-distp.toml"),
                                str(tmp_path / AIRPORTS_DATA)]


def test_unknown_name_and_blocked_directory_exit_2(tmp_path, capsys):
    code, out = _run("nonesuch")
    assert code == 2 and out == ""
    err = capsys.readouterr().err
    assert "'nonesuch'" in err and "warner-rr" in err and len(err.splitlines()) == 1

    (tmp_path / "warner-rr.toml").write_text("mine\n", encoding="utf-8")
    code, _ = _run("warner-rr", "--to", str(tmp_path))
    assert code == 2 and (tmp_path / "warner-rr.toml").read_text(encoding="utf-8") == "mine\n"
    assert "--force" in capsys.readouterr().err
    code, _ = _run("warner-rr", "--to", str(tmp_path), "--force")
    assert code == 0
    assert (tmp_path / "warner-rr.toml").read_bytes() == (PROBLEMS / "warner-rr.toml").read_bytes()


def _cli(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "mechdesign", "examples", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False)


def test_the_command_in_a_pipe(tmp_path):
    listed = _cli(cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == examples.names()
    assert "\x1b" not in listed.stdout

    printed = _cli("warner-rr", cwd=tmp_path)
    assert printed.returncode == 0
    assert printed.stdout == (PROBLEMS / "warner-rr.toml").read_text(encoding="utf-8")

    copied = _cli("--to", "mine", cwd=tmp_path)
    assert copied.returncode == 0, copied.stderr
    assert len(copied.stdout.splitlines()) == len(examples.names()) + 1
    assert (tmp_path / "mine" / AIRPORTS_DATA).is_file()

    unknown = _cli("nonesuch", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "warner-rr" in unknown.stderr and "Traceback" not in unknown.stderr
