"""Command line: solve, audit, JSON result format, exit codes and bad input."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = sorted((ROOT / "problems").glob("*.toml"))

GOOD = """
name = "t"
[inputs]
size = 3
[metric]
kind = "absolute"
[distributions]
p = [0.2, 0.3, 0.5]
q = [0.5, 0.3, 0.2]
[[privacy]]
notion = "ldp"
epsilon = 1.0
[objective]
kind = "expected-loss"
prior = "p"
"""


def write(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("path", PROBLEMS, ids=[p.stem for p in PROBLEMS])
def test_every_shipped_problem_solves_with_a_holding_certificate(run_cli, path):
    code, out, _ = run_cli("solve", path, "--json")
    data = json.loads(out)
    assert code == 0, data.get("message")
    assert data["status"] == "optimal"
    assert data["certificate"] and all(c["holds"] for c in data["certificate"])
    assert set(data) >= {"problem", "status", "objective", "mechanisms", "certificate", "solver"}
    for mech in data["mechanisms"].values():
        m = np.array(mech["matrix"])
        assert m.shape == (len(mech["inputs"]), len(mech["outputs"]))
        assert np.allclose(m.sum(axis=1), 1.0, atol=1e-12) and m.min() >= 0


def test_single_mechanism_is_keyed_default_and_out_file_matches_stdout(run_cli, tmp_path):
    out_path = tmp_path / "r.json"  # the directory must exist: --out does not create it
    code, out, _ = run_cli("solve", write(tmp_path, GOOD), "--json", "--out", out_path)
    assert code == 0
    printed, written = json.loads(out), json.loads(out_path.read_text())
    assert printed == written
    assert list(printed["mechanisms"]) == ["default"]
    assert "highs" in printed["solver"]["name"].lower()
    assert printed["objective"]["kind"] == "expected-loss"


def test_human_output_shows_certificate_and_krr_baseline(run_cli):
    code, out, _ = run_cli("solve", ROOT / "problems/warner-rr.toml", "--baselines", "krr")
    assert code == 0
    assert "Certificate" in out and "krr" in out and "optimal" in out


def test_audit_command_accepts_a_result_and_rejects_a_tampered_one(run_cli, tmp_path):
    problem = ROOT / "problems/ldp-skewed-prior.toml"
    result_path = tmp_path / "r.json"
    assert run_cli("solve", problem, "--out", result_path)[0] == 0
    code, out, _ = run_cli("audit", result_path, "--problem", problem, "--json")
    assert code == 0 and json.loads(out)["holds"] is True
    data = json.loads(result_path.read_text())
    m = np.array(data["mechanisms"]["default"]["matrix"])
    m[0] = 0.0
    m[0, 0] = 1.0  # deterministic row: infinite ε
    data["mechanisms"]["default"]["matrix"] = m.tolist()
    result_path.write_text(json.dumps(data))
    code, out, _ = run_cli("audit", result_path, "--problem", problem, "--json")
    assert code == 1 and json.loads(out)["holds"] is False


def test_infeasible_constraints_give_status_infeasible_and_no_mechanism():
    from mechdesign import Domain, Problem
    from mechdesign.core.audit_record import Audit
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.privacy.base import Notion

    class AtLeastTwo(Notion):  # an impossible user-defined constraint: K[0, 0] >= 2
        name = "impossible"

        def constraints(self, K, coefficients):
            return [K["default"][0, 0] >= 2]

        def audit(self, mechs):
            return Audit(self.name, {}, {}, bool(mechs["default"][0, 0] >= 2))

    dom = Domain.from_size(2)
    result = Problem(inputs=dom, privacy=[AtLeastTwo()],
                     objective=ExpectedLoss(np.ones((2, 2)), {"default": np.full(2, 0.5)})).solve()
    assert result.status == "infeasible"
    assert result.mechanisms == {} and result.objective is None


BAD = {
    "syntax error": ("name = \"t\"\n[inputs\nsize = 3", "not valid TOML"),
    "unknown top-level key": (GOOD + "\ncolour = 3\n", "colour"),
    "unknown key in a table": (GOOD.replace("size = 3", "size = 3\nsizes = 4"), "inputs.sizes"),
    "unknown notion": (GOOD.replace('notion = "ldp"', 'notion = "ldpp"'), "privacy[0].notion"),
    "unknown distribution": (GOOD.replace('prior = "p"', 'prior = "nope"'), "objective.prior"),
    "not a distribution": (GOOD.replace("p = [0.2, 0.3, 0.5]", "p = [0.2, 0.3, 0.6]"), "distributions.p"),
    "negative probability": (GOOD.replace("p = [0.2, 0.3, 0.5]", "p = [-0.2, 0.7, 0.5]"), "non-negative"),
    "nan in a distribution": (GOOD.replace("p = [0.2, 0.3, 0.5]", "p = [nan, 0.5, 0.5]"), "distributions.p"),
    "wrong length": (GOOD.replace("p = [0.2, 0.3, 0.5]", "p = [0.5, 0.5]"), "3 entries"),
    "negative epsilon": (GOOD.replace("epsilon = 1.0", "epsilon = -1.0"), "privacy[0].epsilon"),
    "nan epsilon": (GOOD.replace("epsilon = 1.0", "epsilon = nan"), "privacy[0].epsilon"),
    "string epsilon": (GOOD.replace("epsilon = 1.0", 'epsilon = "one"'), "privacy[0].epsilon"),
    "missing epsilon": (GOOD.replace("epsilon = 1.0", ""), "privacy[0].epsilon"),
    "missing name": (GOOD.replace('name = "t"', ""), "'name'"),
    "metric notion without metric": (
        GOOD.replace('[metric]\nkind = "absolute"', "").replace('notion = "ldp"', 'notion = "metric"')
        .replace('prior = "p"', 'prior = "p"\nloss = "hamming"'), "[metric]"),
    "unknown metric kind": (GOOD.replace('kind = "absolute"', 'kind = "taxicab"'), "metric.kind"),
    "unknown objective": (GOOD.replace('kind = "expected-loss"', 'kind = "utility"'), "objective.kind"),
    "loss matrix of the wrong size": (GOOD.replace('prior = "p"', 'prior = "p"\nloss = [[0, 1], [1, 0]]'), "3 x 3"),
    "profile without contexts": (GOOD.replace('notion = "ldp"', 'notion = "profile"\nedges = [["p", "q"]]'),
                                 "contexts"),
    "unknown context in edges": (GOOD.replace('[[privacy]]', '[mechanism]\ncontexts = ["p", "q"]\n\n[[privacy]]')
                                 .replace('notion = "ldp"', 'notion = "profile"\nedges = [["p", "r"]]')
                                 .replace('prior = "p"\n', ''), "privacy[0].edges"),
    "unknown label in graph edges": (GOOD.replace('kind = "absolute"', 'kind = "graph"\nedges = [["0", "9", 1.0]]'),
                                     "unknown label '9'"),
    "distp pair naming unknown distribution": (
        GOOD.replace('notion = "ldp"', 'notion = "distp"\npairs = [["p", "zz"]]'), "privacy[0].pairs"),
    "weights that disagree with contexts": (
        GOOD.replace('[[privacy]]', '[mechanism]\ncontexts = ["p", "q"]\nweights = [1.0]\n\n[[privacy]]')
        .replace('prior = "p"\n', ''), "mechanism.weights"),
    "two domain kinds": (GOOD.replace("size = 3", "size = 3\nlabels = ['a', 'b', 'c']"), "exactly one"),
    "unknown solver": (GOOD + '\n[solve]\nsolver = "gurobi"\n', "solve.solver"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_exits_2_with_one_line_naming_file_and_key(run_cli, tmp_path, case):
    text, expected = BAD[case]
    path = write(tmp_path, text)
    code, out, err = run_cli("solve", path)
    assert code == 2
    assert "Traceback" not in err + out
    message = " ".join(err.split())
    assert str(path.name) in message
    assert expected in message


def test_missing_file_exits_2(run_cli, tmp_path):
    code, _, err = run_cli("solve", tmp_path / "absent.toml")
    assert code == 2 and "no such file" in err


def test_console_script_runs_as_a_subprocess():
    proc = subprocess.run([sys.executable, "-m", "mechdesign", "solve", str(ROOT / "problems/warner-rr.toml"),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["objective"]["value"] == pytest.approx(1 / (1 + np.e), abs=1e-9)
