"""One option, ``--baselines NAMES``, on solve, compare and sweep; solve takes every baseline
compare takes and prints each one's objective and audited privacy next to the optimum."""

from __future__ import annotations

import json
import math

import pytest

KARY = """
name = "kary"
[inputs]
size = 5
[[privacy]]
notion = "ldp"
epsilon = 1.5
[objective]
kind = "error-probability"
"""


@pytest.fixture
def kary(tmp_path):
    path = tmp_path / "kary.toml"
    path.write_text(KARY)
    return path


def test_the_help_lists_the_registry_of_baselines():
    from mechdesign.cli.options import BASELINE_NAMES
    from mechdesign.estimation.compare import BASELINES

    assert BASELINE_NAMES == tuple(BASELINES)


def test_solve_takes_every_baseline_compare_takes(kary, run_cli):
    from mechdesign.estimation.compare import BASELINES

    names = ",".join(BASELINES)
    code, out, err = run_cli("solve", kary, "--baselines", names, "--json")
    assert code == 0, err
    solved = {b["name"]: b for b in json.loads(out)["baselines"]}
    code, out, _ = run_cli("compare", kary, "--baselines", names, "--json")
    compared = {r["name"]: r for r in json.loads(out)["rows"]}
    assert list(solved) == list(BASELINES)
    for name, row in solved.items():
        assert (row["status"], row["epsilon"], row["objective"], row["holds"]) == (
            compared[name]["status"], compared[name]["epsilon"], compared[name]["objective"],
            compared[name]["holds"]), name


def test_solve_baselines_are_next_to_the_optimum(kary, run_cli):
    code, out, _ = run_cli("solve", kary, "--baselines", "krr,uniform", "--json")
    data = json.loads(out)
    krr, uniform = data["baselines"]
    # k-ary RR at ε on k values: error 1 - e^ε / (e^ε + k - 1), which is the optimum here
    assert krr["objective"] == pytest.approx(1 - math.exp(1.5) / (math.exp(1.5) + 4), abs=1e-12)
    assert data["objective"]["value"] == pytest.approx(krr["objective"], abs=1e-9)
    assert krr["certificate"][0]["achieved"]["epsilon"] == pytest.approx(1.5, abs=1e-9)
    assert uniform["objective"] == pytest.approx(0.8) and uniform["reveals_nothing"] is True
    code, out, _ = run_cli("solve", kary, "--baselines", "krr,uniform")
    assert code == 0
    lines = out.splitlines()
    rows = {r.split("\t")[0]: r.split("\t") for r in lines[lines.index(
        "Baselines (each calibrated to the problem's privacy constraints)") + 2:] if "\t" in r}
    assert rows["optimal design"][1] == "1.5" and rows["optimal design"][4] == "yes"
    assert float(rows["krr"][2]) == krr["objective"] and rows["krr"][3] == "ε=1.5"
    assert rows["uniform (reveals nothing)"][3] == "ε=0"


def test_a_baseline_that_does_not_apply_says_why(kary, run_cli):
    code, out, _ = run_cli("solve", kary, "--baselines", "planar-laplace")
    assert code == 0
    assert "planar-laplace\t-\tn/a\t-\t-" in out and "  planar-laplace: " in out


@pytest.mark.parametrize("command", [["solve"], ["compare"], ["sweep", "--epsilon", "0.5:1:2"]])
def test_an_unknown_baseline_exits_2_before_any_work(kary, run_cli, command):
    code, out, err = run_cli(command[0], kary, *command[1:], "--baselines", "krr,laplace")
    assert code == 2 and out == ""
    assert "key '--baselines'" in err and "unknown baseline 'laplace'" in err


def test_the_old_singular_option_is_gone_and_options_are_not_abbreviated(kary, run_cli):
    code, out, err = run_cli("solve", kary, "--baseline", "krr")
    assert code == 2 and out == "" and "--baseline" in err
    code, _, _ = run_cli("solve", kary, "--ex")  # a prefix of --explain is not --explain
    assert code == 2
