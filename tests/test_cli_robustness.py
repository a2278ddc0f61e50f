"""Bad input and hostile environments never end in a traceback: problem files, output paths,
signals, closed pipes, mechanism files for ``audit``, strings that look like markup."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mechdesign.core.audit_record import Audit
from mechdesign.core.errors import ProblemError
from mechdesign.core.sizes import check_design_size, design_bytes, largest_square, machine_memory
from mechdesign.design.problem import Problem
from mechdesign.design.result import sigterm_remover, write_json_atomic
from mechdesign.design.spec import load_problem

ROOT = Path(__file__).resolve().parents[1]
WARNER = ROOT / "problems" / "warner-rr.toml"
SKEWED = ROOT / "problems" / "ldp-skewed-prior.toml"
AIRPORTS = ROOT / "problems" / "airports-distp.toml"

SMALL = """
name = "{name}"
[inputs]
labels = {labels}
[distributions]
p = [0.5, 0.3, 0.2]
q = [0.2, 0.3, 0.5]
[[privacy]]
notion = "{notion}"
{extra}
[objective]
kind = "error-probability"
prior = "p"
"""


def small(tmp_path, name="t", labels=("a", "b", "c"), notion="ldp", extra="epsilon = 1.0",
          file="p.toml"):
    path = tmp_path / file
    path.write_text(SMALL.format(name=name.replace("\\", "\\\\"), labels=json.dumps(list(labels)),
                                 notion=notion, extra=extra), encoding="utf-8")
    return path


def one_line_naming(err: str, path, key: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{path}: "), err
    assert f"key '{key}'" in lines[0], err
    assert "Traceback" not in err
    return lines[0]


# --- problem files ----------------------------------------------------------------------------

@pytest.mark.parametrize("notion, key", [
    ('notion = {kind = "ldp"}', "privacy[0].notion"),
    ('notion = ["ldp"]', "privacy[0].notion"),
])
def test_a_table_or_array_for_a_name_is_refused_naming_the_key(tmp_path, run_cli, notion, key):
    path = tmp_path / "p.toml"
    path.write_text(WARNER.read_text().replace('notion = "ldp"', notion))
    code, _, err = run_cli("solve", path)
    assert code == 2
    one_line_naming(err, path, key)
    text = WARNER.read_text().replace('kind = "error-probability"', 'kind = ["error-probability"]')
    path.write_text(text)
    code, _, err = run_cli("solve", path)
    assert code == 2
    one_line_naming(err, path, "objective.kind")


def test_a_byte_order_mark_is_accepted_and_changes_nothing(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + WARNER.read_bytes())
    with_bom, plain_file = load_problem(path).solve(), load_problem(WARNER).solve()
    assert with_bom.status == "optimal"
    assert with_bom.objective == pytest.approx(1 / (1 + math.e), abs=1e-9)  # Warner: 1/(1+e^ε)
    assert with_bom.objective == pytest.approx(plain_file.objective, abs=1e-12)


@pytest.mark.parametrize("notion, extra, key", [
    ("distp", 'epsilon = 0.5\npairs = [["p", "p"]]', "privacy[0].pairs"),
    ("distp", 'epsilon = 0.5\npairs = [["p", "q"], ["q", "q"]]', "privacy[0].pairs"),
    ("divergence-dp", 'epsilon = 0.5\ndivergence = "kl"\nadjacency = [["a", "a"]]',
     "privacy[0].adjacency"),
])
def test_self_pairs_are_refused_everywhere(tmp_path, notion, extra, key):
    with pytest.raises(ProblemError) as info:
        load_problem(small(tmp_path, notion=notion, extra=extra))
    assert info.value.key == key
    assert "itself" in str(info.value) or "two different" in str(info.value)


def test_self_pairs_are_refused_for_xdistp_and_profile(tmp_path):
    text = (ROOT / "problems" / "distp-two-sources.toml").read_text()
    path = tmp_path / "x.toml"
    path.write_text(text.replace('notion = "distp"', 'notion = "xdistp"')
                    .replace('pairs = [["clinic", "control"]]', 'pairs = [["clinic", "clinic"]]'))
    with pytest.raises(ProblemError) as info:
        load_problem(path)
    assert info.value.key == "privacy[0].pairs"
    contexts = ('[distributions]\nP = [0.5, 0.5]\nQ = [0.9, 0.1]\n'
                '[mechanism]\ncontexts = ["P", "Q"]\n\n[[privacy]]')
    text = WARNER.read_text().replace("[[privacy]]", contexts)
    path.write_text(text.replace('notion = "ldp"', 'notion = "profile"\nedges = [["P", "P"]]')
                    .replace('prior = "uniform"', ""))
    with pytest.raises(ProblemError) as info:
        load_problem(path)
    assert info.value.key == "privacy[0].edges"


def test_the_size_rule_is_the_stated_closed_form():
    # 8 bytes x (3 C |X||Y| + [metric] |X|^2 + 2 P |Y|)
    expected = 8 * (3 * 2 * 70 + 100 + 2 * 3 * 7)
    assert design_bytes(10, 7, contexts=2, metric=True, pairs=3) == expected
    for memory in (10**5, 320_000, 7 * 10**9):
        for contexts, metric, pairs in ((1, False, 0), (1, True, 0), (3, True, 5)):
            n = largest_square(memory, contexts, metric, pairs)
            assert design_bytes(n, n, contexts, metric, pairs) <= memory
            assert design_bytes(n + 1, n + 1, contexts, metric, pairs) > memory


def test_a_problem_over_the_memory_bound_is_refused_before_allocation():
    memory = 8 * (3 * 100 * 100 + 100 * 100)  # exactly a 100-value domain with a metric
    data = {"inputs": {"size": 100}, "metric": {"kind": "absolute"}}
    check_design_size(data, "f.toml", memory=memory)
    data["inputs"]["size"] = 101
    with pytest.raises(ProblemError) as info:
        check_design_size(data, "f.toml", memory=memory)
    assert info.value.key == "inputs.size"
    assert "101 inputs x 101 outputs" in str(info.value) and "at most 100 inputs" in str(info.value)
    for size in (1e308, 10**400):  # a whole-number float, an integer beyond any float
        with pytest.raises(ProblemError) as info:
            check_design_size({"inputs": {"size": size}}, "f.toml", memory=memory)
        assert info.value.key == "inputs.size" and "GiB" in str(info.value)
    grid = {"inputs": {"grid": {"rows": 10, "cols": 10}}, "outputs": {"size": 50}}
    with pytest.raises(ProblemError) as info:
        check_design_size(grid, "f.toml", memory=8 * 3 * 100 * 49)
    assert info.value.key == "inputs.grid"


@pytest.mark.parametrize("domain, key, n", [
    ("size = 1000000000000", "inputs.size", 10**12),
    ("grid = { rows = 3000, cols = 3000 }", "inputs.grid", 9 * 10**6),
])
def test_absurd_sizes_exit_2_with_the_machine_memory(tmp_path, run_cli, domain, key, n):
    path = tmp_path / "big.toml"
    path.write_text(WARNER.read_text().replace('labels = ["no", "yes"]', domain))
    code, _, err = run_cli("solve", path)
    assert code == 2
    line = one_line_naming(err, path, key)
    assert f"{n:,} inputs x {n:,} outputs" in line
    assert f"{design_bytes(n, n) / 2**30:.3g} GiB" in line
    assert f"at most {largest_square(machine_memory() or 2**40):,} inputs" in line


# --- every ProblemError is one line, on every command --------------------------------------

def test_problem_rejects_an_unknown_solver():
    problem = load_problem(WARNER)
    with pytest.raises(ProblemError) as info:
        Problem(inputs=problem.inputs, outputs=problem.outputs, objective=problem.objective,
                privacy=problem.privacy, solver="gurobi")
    assert "gurobi" in str(info.value)


@pytest.mark.parametrize("command", [["solve"], ["sweep", "--epsilon", "0.5:1:2"], ["compare"],
                                     ["audit"]])
def test_every_command_prints_a_problem_error_as_one_line(tmp_path, run_cli, command):
    bad = tmp_path / "bad.toml"
    bad.write_text(WARNER.read_text() + '\n[solve]\nsolver = "gurobi"\n')
    if command == ["audit"]:
        result = tmp_path / "r.json"
        assert run_cli("solve", WARNER, "--out", result)[0] == 0
        args = ["audit", result, "--problem", bad]
    else:
        args = [command[0], bad, *command[1:]]
    code, out, err = run_cli(*args)
    assert code == 2
    assert "gurobi" in one_line_naming(err, bad, "solve.solver")


# --- output paths ------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["missing-dir", "directory", "root", "proc"])
def test_unwritable_out_paths_exit_2_before_the_solve(tmp_path, run_cli, where):
    target = {"missing-dir": tmp_path / "no" / "r.json", "directory": tmp_path, "root": Path("/"),
              "proc": Path("/proc/mechdesign-r.json")}[where]
    code, out, err = run_cli("solve", WARNER, "--json", "--out", target)
    assert code == 2 and out == ""  # nothing solved, nothing printed
    assert "key '--out'" in err and "Traceback" not in err and err.count("\n") == 1
    assert not (tmp_path / "no").exists()  # the missing directory is not created


def _chattr(path, flag) -> bool:
    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


def test_an_immutable_directory_is_refused_before_the_solve(tmp_path, run_cli):
    folder = tmp_path / "frozen"
    folder.mkdir()
    if not _chattr(folder, "+i"):
        pytest.skip("this file system or user cannot set the immutable attribute")
    try:
        code, out, err = run_cli("solve", WARNER, "--json", "--out", folder / "r.json")
    finally:
        _chattr(folder, "-i")
    assert code == 2 and out == "" and "key '--out'" in err


def test_a_write_failing_after_the_solve_still_prints_the_result(tmp_path, run_cli):
    target = tmp_path / "r.json"
    target.write_text("old")
    if not _chattr(target, "+i"):  # the directory is writable, the file cannot be replaced
        pytest.skip("this file system or user cannot set the immutable attribute")
    try:
        code, out, err = run_cli("solve", WARNER, "--json", "--out", target)
        human = run_cli("solve", WARNER, "--out", target)
    finally:
        _chattr(target, "-i")
    assert code == 1
    assert json.loads(out)["objective"]["value"] == pytest.approx(1 / (1 + math.e), abs=1e-9)
    assert err.startswith(f"{target}: key '--out': cannot write") and err.count("\n") == 1
    assert human[0] == 1 and "optimal" in human[1] and "wrote" not in human[1]
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_out_files_get_the_users_umask(tmp_path, run_cli, umask, mode):
    old = os.umask(umask)
    try:
        assert run_cli("solve", WARNER, "--out", tmp_path / "r.json")[0] == 0
        write_json_atomic(tmp_path / "s.json", {"a": 1})
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == mode
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == mode


@pytest.mark.parametrize("name, message", [("x.txt", "png"), ("no/x.png", "does not exist")])
def test_bad_plot_paths_exit_2_before_the_solve(tmp_path, run_cli, name, message):
    code, out, err = run_cli("solve", WARNER, "--json", "--plot", tmp_path / name)
    assert code == 2 and out == ""
    assert "key '--plot'" in err and message in err and err.count("\n") == 1


def test_sigterm_handler_removes_the_temporary_file(tmp_path):
    tmp = tmp_path / ".tmp-x.json"
    tmp.write_text("{")
    with pytest.raises(SystemExit) as info:
        sigterm_remover(str(tmp))(signal.SIGTERM, None)
    assert info.value.code == 143 and not tmp.exists()
    before = signal.getsignal(signal.SIGTERM)
    write_json_atomic(tmp_path / "ok.json", {"a": [1, 2]})
    assert signal.getsignal(signal.SIGTERM) is before  # the handler lives only during the write


SLOW_WRITE = textwrap.dedent("""
    import sys, time
    from mechdesign.design.result import write_json_atomic

    class Rows(list):  # the JSON encoder iterates it: announce, then block inside the write
        def __iter__(self):
            yield 1
            print("writing", flush=True)
            time.sleep(600)
            yield 2

    write_json_atomic(sys.argv[1], {"rows": Rows([1, 2])})
""")


def test_sigterm_during_the_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "r.json"
    with subprocess.Popen([sys.executable, "-c", SLOW_WRITE, str(target)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout.readline().strip() == "writing"
            assert [p.name.startswith(".tmp-") for p in tmp_path.iterdir()] == [True]
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 143
    assert list(tmp_path.iterdir()) == []
    assert "Traceback" not in err


# --- strings that look like markup -----------------------------------------------------------

@pytest.mark.parametrize("name, label", [("rr[/]", "[bold]x[/bold]"), ("[red]n[/red]", ":smile:"),
                                         ("a\\[b]", "[/]")])
def test_names_and_labels_print_literally(tmp_path, run_cli, name, label):
    path = small(tmp_path, name=name, labels=(label, "b", "c"))
    code, out, err = run_cli("solve", path)
    assert code == 0, err
    assert name in out and label in out
    result = tmp_path / "r.json"
    assert run_cli("solve", path, "--out", result)[0] == 0
    code, out, err = run_cli("audit", result, "--problem", path)
    assert code == 0 and name in out
    code, out, err = run_cli("sweep", path, "--epsilon", "0.5:1:2")
    assert code == 0 and name in out


def test_mathtext_in_names_and_labels_is_drawn_literally(tmp_path, run_cli):
    import matplotlib.text

    from mechdesign.cli.plots import literal

    path = small(tmp_path, name="$\\nosuchcmd$", labels=("$\\alpha", "b$", "c"))
    code, _, err = run_cli("solve", path, "--plot", tmp_path / "k.png")
    assert code == 0, err
    assert (tmp_path / "k.png").stat().st_size > 0
    code, _, err = run_cli("sweep", path, "--epsilon", "0.5:1:2", "--plot", tmp_path / "s.png")
    assert code == 0, err
    probe = matplotlib.text.Text()
    for s in ["$\\nosuchcmd$", "a$b", "\\$x", "a\\b", "\\", "$$", "\\\\$"]:
        assert probe._preprocess_math(literal(s)) == (s, False)  # drawn as written, no mathtext


# --- audit -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def skewed_result(tmp_path_factory):
    from mechdesign.cli.commands import main

    path = tmp_path_factory.mktemp("audit") / "r.json"
    assert main(["solve", str(SKEWED), "--out", str(path)]) == 0
    return json.loads(path.read_text())


def _audit(run_cli, tmp_path, data, *extra, raw: bytes | None = None):
    path = tmp_path / "m.json"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(json.dumps(data))
    code, out, err = run_cli("audit", path, "--problem", SKEWED, "--json", *extra)
    return code, out, err, path


def test_audit_matches_rows_and_columns_by_label(tmp_path, run_cli, skewed_result):
    mech = skewed_result["mechanisms"]["default"]
    k = np.array(mech["matrix"])
    rng = np.random.default_rng(7)
    rows, cols = rng.permutation(k.shape[0]), rng.permutation(k.shape[1])
    permuted = {"matrix": k[np.ix_(rows, cols)].tolist(),
                "inputs": [mech["inputs"][i] for i in rows],
                "outputs": [mech["outputs"][j] for j in cols]}
    code, out, err, _ = _audit(run_cli, tmp_path, permuted)
    assert code == 0, err
    report = json.loads(out)
    # ε-LDP level of the unpermuted matrix, computed directly: max over y of ln max_x K / min_x K
    # (an all-zero column contributes nothing; a zero beside a positive entry is ∞)
    top, low = k.max(axis=0), k.min(axis=0)
    level = max(0.0 if t == 0 else math.inf if b == 0 else math.log(t / b)
                for t, b in zip(top, low))
    assert 0.5 < level < math.inf
    assert report["certificate"][0]["achieved"]["epsilon"] == pytest.approx(level, abs=1e-9)
    expected = skewed_result["objective"]["value"]
    assert report["objective"]["value"] == pytest.approx(expected, abs=1e-12)
    assert report["holds"] is True


@pytest.mark.parametrize("case, key, words", [
    ("unknown labels", "inputs", "'z0'"),
    ("string number", "matrix", "'0.1'"),
    ("boolean", "matrix", "True"),
    ("ragged", "matrix", "equal length"),
    ("matrix text", "matrix", "'abc'"),
    ("mechanisms list", "mechanisms", "context"),
    ("repeated label", "inputs", "twice"),
    ("not stochastic", "matrix", "row-stochastic"),
])
def test_malformed_mechanisms_exit_2_naming_the_key(tmp_path, run_cli, skewed_result, case, key,
                                                   words):
    mech = json.loads(json.dumps(skewed_result["mechanisms"]["default"]))
    n = len(mech["inputs"])
    data = {"matrix": mech["matrix"], "inputs": mech["inputs"], "outputs": mech["outputs"]}
    if case == "unknown labels":
        data["inputs"] = [f"z{i}" for i in range(n)]
    elif case == "string number":
        data["matrix"][0][0] = "0.1"
    elif case == "boolean":
        data["matrix"][1][1] = True
    elif case == "ragged":
        data["matrix"][2] = data["matrix"][2][:-1]
    elif case == "matrix text":
        data["matrix"] = "abc"
    elif case == "mechanisms list":
        data = {"mechanisms": [mech]}
    elif case == "repeated label":
        data["inputs"][1] = data["inputs"][0]
    else:
        data["matrix"][0][0] += 0.5
    code, out, err, path = _audit(run_cli, tmp_path, data)
    assert code == 2 and out == ""
    line = one_line_naming(err, path, key)
    assert words in line


@pytest.mark.parametrize("raw", [b"\xff\xfe\x00\xd8{}", b'{"matrix": "\xc3\x28"}', b"\x80\x81",
                                 b"[" * 100_000 + b"]" * 100_000, b'{"matrix": [[0.5, 0.5]',
                                 "{\"matrix\": [[1]]}".encode("utf-16")])
def test_unreadable_mechanism_files_exit_2(tmp_path, run_cli, raw):
    code, out, err, path = _audit(run_cli, tmp_path, None, raw=raw)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f"{path}: ") and err.count("\n") == 1


def test_audit_exact_flag(tmp_path, run_cli, skewed_result):
    code, out, err, path = _audit(run_cli, tmp_path, skewed_result, "--exact")
    assert code == 0, err
    assert json.loads(out)["holds"] is True
    tampered = json.loads(json.dumps(skewed_result))
    m = tampered["mechanisms"]["default"]["matrix"]
    m[0][0], m[0][1] = m[0][0] + m[0][1], 0.0
    code, out, err, path = _audit(run_cli, tmp_path, tampered, "--exact")
    assert code == 1 and json.loads(out)["holds"] is False


# --- closed pipes and JSON -------------------------------------------------------------------

def test_a_closed_pipe_ends_quietly_with_141():
    # the result is ~200 kB, more than a pipe holds, so the write must meet the closed pipe
    script = (f'"{sys.executable}" -m mechdesign solve "{AIRPORTS}" --json | head -c 10; '
              'echo " ${PIPESTATUS[0]}"')
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.stdout.startswith('{\n  "probl') and proc.stdout.endswith(" 141\n")
    assert proc.stderr == ""


def test_json_of_numpy_scalars_tuples_and_sets():
    detail = {"flag": np.bool_(False), "pair": (np.int8(1), np.uint64(2)), "set": {3, 1},
              "arr": np.array([[1, np.nan]]), "n": np.int64(7)}
    audit = Audit("x", {"epsilon": np.float32(1.5)}, {"epsilon": np.float64(np.inf)},
                  np.bool_(True), detail=detail)
    data = json.loads(json.dumps(audit.to_dict()))
    assert data == {"notion": "x", "requested": {"epsilon": 1.5}, "achieved": {"epsilon": "inf"},
                    "holds": True, "detail": {"flag": False, "pair": [1, 2], "set": [1, 3],
                                              "arr": [[1.0, "nan"]], "n": 7}}
    result = load_problem(WARNER).solve()
    result.solver["certified"] = np.bool_(True)
    result.extra["levels"] = (np.float64(0.5), {np.int32(2)})
    assert json.loads(result.to_json())["solver"]["certified"] is True
    assert json.loads(result.to_json())["levels"] == [0.5, [2]]
