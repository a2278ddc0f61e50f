"""`mechdesign compare`, `mechdesign sweep` and `solve --plot`: results, files, and bad input."""

import json
import math
import sys

import pytest

PNG = b"\x89PNG\r\n\x1a\n"


def rows_by_name(data):
    return {r["name"]: r for r in data["rows"]}


def test_compare_puts_every_baseline_at_the_problems_privacy_and_the_design_wins(run_cli):
    code, out, _ = run_cli("compare", "problems/ldp-skewed-prior.toml", "--baselines",
                           "krr,geometric,exponential,uniform,identity", "--json")
    assert code == 0
    data = json.loads(out)
    rows = rows_by_name(data)
    design = rows["optimal design"]
    assert design["status"] == "optimal" and design["holds"]
    for name in ("krr", "geometric", "exponential", "uniform"):
        assert rows[name]["holds"] is True
        assert rows[name]["objective"] >= design["objective"] - 1e-9
    # calibrated to ε-LDP on 10 ordered values: kRR keeps ε; the geometric is ε·9-LDP, so ε/9
    assert rows["krr"]["epsilon"] == 1.0
    assert rows["geometric"]["epsilon"] == pytest.approx(1 / 9, rel=1e-9)
    assert rows["identity"]["holds"] is False
    assert rows["identity"]["certificate"][0]["achieved"]["epsilon"] == "inf"


def test_compare_native_keeps_the_problems_epsilon_in_each_baselines_own_notion(run_cli):
    _, out, _ = run_cli("compare", "problems/ldp-skewed-prior.toml", "--baselines", "geometric",
                        "--native", "--json")
    data = json.loads(out)
    geo = rows_by_name(data)["geometric"]
    assert data["calibration"] == "native" and geo["epsilon"] == 1.0
    assert geo["holds"] is False  # the truncated geometric at ε·d is 9ε-LDP
    assert geo["certificate"][0]["achieved"]["epsilon"] == pytest.approx(9.0, rel=1e-12)
    assert geo["claims"][0]["holds"] is True  # its own claim (ε·d-privacy) holds


def test_compare_marks_baselines_that_do_not_apply(run_cli):
    _, out, _ = run_cli("compare", "problems/ldp-skewed-prior.toml", "--baselines",
                        "planar-laplace,smooth-one-bit", "--json")
    rows = rows_by_name(json.loads(out))
    assert rows["planar-laplace"]["status"] == "n/a" and "grid" in rows["planar-laplace"]["note"]
    assert rows["smooth-one-bit"]["status"] == "n/a"


def test_compare_profile_problem_with_paper_004_mechanisms(run_cli):
    _, out, _ = run_cli("compare", "problems/bernoulli-chain-6.toml", "--baselines",
                        "one-bit-cluster,smooth-one-bit,smooth-categorical,krr", "--json")
    rows = rows_by_name(json.loads(out))
    design = rows["optimal design"]["objective"]
    for name in ("one-bit-cluster", "smooth-one-bit", "smooth-categorical", "krr"):
        assert rows[name]["holds"] is True
    assert rows["smooth-one-bit"]["objective"] <= rows["one-bit-cluster"]["objective"] + 1e-9
    # bit flips are a special case of the designer's 2 x 2 matrices
    assert design <= rows["smooth-one-bit"]["objective"] + 1e-9
    assert rows["smooth-categorical"]["objective"] == pytest.approx(design, abs=1e-9)


def test_compare_paper_002_dprivacy_with_ibu_beats_krr_with_inv_in_emd(run_cli):
    code, out, _ = run_cli("compare", "problems/paper002-hybrid.toml", "--baselines", "krr,geometric",
                           "--users", "20000", "--trials", "5", "--seed", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["users"] == 20000 and data["trials"] == 5 and data["seed"] == 3
    rows = rows_by_name(data)
    krr_inv = rows["krr"]["estimation"]["estimators"]["inv"]["emd"]["mean"]
    geo_ibu = rows["geometric"]["estimation"]["estimators"]["ibu"]["emd"]["mean"]
    design_ibu = rows["optimal design"]["estimation"]["estimators"]["ibu"]["emd"]["mean"]
    assert geo_ibu < krr_inv and design_ibu < krr_inv
    for r in rows.values():
        for est in ("inv", "ibu"):
            stats = r["estimation"]["estimators"][est]
            assert set(stats) == {"tv", "l1", "l2", "emd"}
            assert stats["emd"]["std"] >= 0 and math.isfinite(stats["emd"]["mean"])


def test_compare_table_shows_estimation_columns(run_cli):
    code, out, _ = run_cli("compare", "problems/warner-rr.toml", "--baselines", "krr,uniform",
                           "--users", "1000", "--trials", "3", "--measure", "tv")
    assert code == 0
    assert "Inv TV" in out and "IBU TV" in out and "optimal design" in out and "±" in out


def test_compare_with_unary_encodings_estimates_by_their_own_estimator(run_cli):
    _, out, _ = run_cli("compare", "problems/ldp-skewed-prior.toml", "--baselines", "oue,rappor",
                        "--users", "5000", "--trials", "2", "--json")
    rows = rows_by_name(json.loads(out))
    for name in ("oue", "rappor"):
        assert rows[name]["holds"] is True and rows[name]["objective"] is None
        assert "inv" in rows[name]["estimation"]["estimators"]


def test_sweep_cli_json_out_and_plot(run_cli, tmp_path):
    out_json, png = tmp_path / "sweep.json", tmp_path / "sweep.png"
    code, out, _ = run_cli("sweep", "problems/dprivacy-line.toml", "--epsilon", "0.5:2:4",
                           "--baselines", "krr,geometric", "--json", "--out", out_json, "--plot", png)
    assert code == 0
    data = json.loads(out)
    assert data == json.loads(out_json.read_text())
    assert data["compiles"] <= 1 and data["epsilons"] == [0.5, 1.0, 1.5, 2.0]  # 0: a special solver
    # the truncated geometric is ε·d-private on the line, so it is put at the swept ε
    assert [c["epsilon_used"] for c in data["baselines"]["geometric"]] == [0.5, 1.0, 1.5, 2.0]
    assert all(p["status"] == "optimal" for p in data["points"])
    assert png.read_bytes()[:8] == PNG


def test_sweep_cli_table(run_cli):
    code, out, _ = run_cli("sweep", "problems/dinf-distp.toml", "--epsilon", "0.5:1.5:3")
    assert code == 0 and "3 points" in out and "compiled 1 time" in out and "optimal" in out


def test_sweep_cli_names_the_special_solver(run_cli):
    code, out, _ = run_cli("sweep", "problems/categorical-chain.toml", "--epsilon", "0.5:1.5:3")
    assert code == 0 and "3 points" in out and "Charnes–Cooper" in out and "compiled" not in out


def test_solve_plot_draws_a_heat_map_per_context(run_cli, tmp_path):
    png = tmp_path / "heat.png"
    code, out, _ = run_cli("solve", "problems/categorical-chain.toml", "--plot", png)
    assert code == 0 and png.read_bytes()[:8] == PNG and f"wrote {png}" in out


# --- bad input: exit 2 with a clear message --------------------------------------------------

def test_unknown_baseline_exits_2(run_cli):
    code, out, err = run_cli("compare", "problems/warner-rr.toml", "--baselines", "krr,laplace")
    assert code == 2 and out == ""
    assert "--baselines" in err and "unknown baseline 'laplace'" in err and "geometric" in err


def test_unknown_baseline_in_sweep_exits_2(run_cli):
    code, _, err = run_cli("sweep", "problems/warner-rr.toml", "--epsilon", "0.1:1:3", "--baselines", "nope")
    assert code == 2 and "unknown baseline 'nope'" in err


@pytest.mark.parametrize("spec", ["0.1:2", "x:2:3", "0.1:2:0", "2:1:-4", "-1:1:3"])
def test_malformed_epsilon_range_exits_2(run_cli, spec):
    code, _, err = run_cli("sweep", "problems/warner-rr.toml", "--epsilon", spec)
    assert code == 2 and "--epsilon" in err


def test_sweep_of_a_problem_with_no_epsilon_exits_2(run_cli, tmp_path):
    f = tmp_path / "free.toml"
    f.write_text('name = "free"\n[inputs]\nsize = 3\n[objective]\nkind = "error-probability"\n')
    code, _, err = run_cli("sweep", f, "--epsilon", "0.1:1:3")
    assert code == 2 and "no privacy constraint with an ε" in err


@pytest.mark.parametrize("args", [["--users", "abc"], ["--users", "0"], ["--users", "1.5"],
                                  ["--trials", "0"], ["--measure", "kl"]])
def test_bad_compare_options_exit_2(run_cli, args):
    code, _, err = run_cli("compare", "problems/warner-rr.toml", *args)
    assert code == 2 and err


def test_missing_problem_file_exits_2(run_cli):
    code, _, err = run_cli("compare", "problems/does-not-exist.toml")
    assert code == 2 and "no such file" in err


def test_plots_without_matplotlib_exit_2(run_cli, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    code, out, err = run_cli("sweep", "problems/warner-rr.toml", "--epsilon", "0.1:1:3", "--plot",
                             tmp_path / "s.png")
    assert code == 2 and "matplotlib" in err and "mechdesign[plot]" in err
    code, out, err = run_cli("solve", "problems/warner-rr.toml", "--plot", tmp_path / "h.png")
    assert code == 2 and "matplotlib" in err and out == ""


def test_compare_prior_option_picks_the_simulated_population(run_cli):
    args = ("compare", "problems/distp-two-sources.toml", "--baselines", "krr", "--users", "3000",
            "--trials", "2", "--json")
    _, clinic, _ = run_cli(*args, "--prior", "clinic")
    _, control, _ = run_cli(*args, "--prior", "control")
    a = rows_by_name(json.loads(clinic))["krr"]["estimation"]["estimators"]["inv"]["tv"]["mean"]
    b = rows_by_name(json.loads(control))["krr"]["estimation"]["estimators"]["inv"]["tv"]["mean"]
    assert a != b  # different populations, different errors
    code, _, err = run_cli(*args, "--prior", "nobody")
    assert code == 2 and "unknown distribution 'nobody'" in err and "--prior" in err
