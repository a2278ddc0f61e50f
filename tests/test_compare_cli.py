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
    code, out, _ = run_cli("compare", "problems/hybrid-estimation.toml", "--baselines", "krr,geometric",
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


# --- a mechanism that reveals nothing, and ε printed rounded ----------------------------------

UNIFORM_PRIOR = """
name = "u"
[inputs]
size = 4
[distributions]
p = [0.4, 0.3, 0.2, 0.1]
q = [0.1, 0.2, 0.3, 0.4]
[[privacy]]
notion = "ldp"
epsilon = {epsilon}
[objective]
kind = "error-probability"
{prior}
"""


def users_histograms(seed, users, trials, lam):
    """The simulated users' input histograms, drawn independently of the package's trial loop
    from the documented seeds: trial t of the one mechanism key uses
    SeedSequence(seed).spawn(1)[0].spawn(trials)[t], whose first draw is the users' inputs."""
    import numpy as np

    children = np.random.SeedSequence(seed).spawn(1)[0].spawn(trials)
    return [np.random.default_rng(c).multinomial(users, lam) / users for c in children]


def test_a_mechanism_that_reveals_nothing_is_answered_with_the_uniform_prior(run_cli, tmp_path):
    import numpy as np

    path = tmp_path / "u.toml"
    path.write_text(UNIFORM_PRIOR.format(epsilon=1.0, prior=""))
    code, out, _ = run_cli("compare", path, "--baselines", "uniform,identity,krr", "--users", "200",
                           "--trials", "40", "--seed", "7", "--json")
    assert code == 0
    rows = rows_by_name(json.loads(out))
    assert rows["uniform"]["reveals_nothing"] is True
    assert rows["krr"]["reveals_nothing"] is False and rows["optimal design"]["reveals_nothing"] is False
    truths = users_histograms(7, 200, 40, np.full(4, 0.25))
    tv = np.array([0.5 * np.abs(t - 0.25).sum() for t in truths])
    l2 = np.array([np.linalg.norm(t - 0.25) for t in truths])
    assert tv.mean() > 0  # not 0 ± 0: the users are not exactly the prior
    for est in ("inv", "ibu"):
        stats = rows["uniform"]["estimation"]["estimators"][est]
        assert stats["tv"]["mean"] == pytest.approx(tv.mean(), rel=1e-12)
        assert stats["tv"]["std"] == pytest.approx(tv.std(ddof=1), rel=1e-12)
        assert stats["l2"]["mean"] == pytest.approx(l2.mean(), rel=1e-12)
        assert stats["emd"]["mean"] == pytest.approx(tv.mean(), rel=1e-9)  # no metric: EMD = TV
    # the identity reports the users' own inputs: Inv recovers their histogram exactly
    assert rows["identity"]["estimation"]["estimators"]["inv"]["tv"]["mean"] == pytest.approx(0, abs=1e-12)


def test_answering_with_the_prior_has_the_binomial_error_on_average():
    # two values, uniform prior, n users: the error of answering (1/2, 1/2) is |X/n - 1/2| in TV
    # with X ~ Binomial(n, 1/2), whose mean is a finite sum (no seeds involved)
    import numpy as np
    from scipy import stats

    from mechdesign.estimation.compare import collection_trials
    from mechdesign.mechanisms.trivial_mechanisms import uniform

    n, trials, half = 50, 4000, np.full(2, 0.5)
    summary = collection_trials(uniform(2), half, n, trials, 1, 1 - np.eye(2), ["tv"], prior=half)
    errors = summary.errors["inv"]["tv"]
    k = np.arange(n + 1)
    expected = float(np.sum(stats.binom.pmf(k, n, 0.5) * np.abs(k / n - 0.5)))
    assert errors.mean() == pytest.approx(expected, abs=5 * errors.std() / np.sqrt(trials))
    assert np.array_equal(summary.errors["ibu"]["tv"], errors)


def test_the_analysts_prior_is_the_objectives_not_the_simulated_population(run_cli, tmp_path):
    import numpy as np

    path = tmp_path / "u.toml"
    path.write_text(UNIFORM_PRIOR.format(epsilon=1.0, prior='prior = "p"'))
    code, out, _ = run_cli("compare", path, "--baselines", "uniform", "--users", "300", "--trials", "5",
                           "--seed", "2", "--prior", "q", "--json")
    assert code == 0
    row = rows_by_name(json.loads(out))["uniform"]
    p = np.array([0.4, 0.3, 0.2, 0.1])
    tv = [0.5 * np.abs(t - p).sum() for t in users_histograms(2, 300, 5, np.array([0.1, 0.2, 0.3, 0.4]))]
    assert row["estimation"]["estimators"]["ibu"]["tv"]["mean"] == pytest.approx(np.mean(tv), rel=1e-12)


def test_the_table_marks_it_and_prints_its_epsilon_as_0(run_cli, tmp_path):
    path = tmp_path / "u.toml"
    path.write_text(UNIFORM_PRIOR.format(epsilon=1.0, prior=""))
    code, out, _ = run_cli("compare", path, "--baselines", "uniform,krr", "--users", "100", "--trials", "2")
    assert code == 0
    rows = {line.split("\t")[0]: line.split("\t") for line in out.splitlines() if "\t" in line}
    assert rows["uniform (reveals nothing)"][3] == "ε=0"
    assert rows["krr"][1] == "1" and rows["krr"][3] == "ε=1"
    assert "e-16" not in out and "e-17" not in out
    assert "answered with the prior: uniform (no prior given)" in out


def test_at_epsilon_0_everything_reveals_nothing_and_compare_ends(run_cli, tmp_path):
    path = tmp_path / "u.toml"
    path.write_text(UNIFORM_PRIOR.format(epsilon=0.0, prior=""))
    code, out, _ = run_cli("compare", path, "--baselines", "krr,uniform", "--json")
    assert code == 0
    rows = rows_by_name(json.loads(out))
    assert all(r["reveals_nothing"] for r in rows.values())
    assert rows["krr"]["epsilon"] == 0.0 and rows["krr"]["objective"] == pytest.approx(0.75)


@pytest.mark.parametrize("value, terminal, text", [
    (2.220446049250313e-16, True, "0"), (-1e-13, False, "0"), (3.0000000000004, True, "3"),
    (1.0000000000000002, False, "1"), (0.123456789, True, "0.123457"),
    (0.123456789, False, "0.123456789"), (float("inf"), True, "∞"), (float("inf"), False, "inf"),
    (None, True, "-"), (1e-11, True, "1e-11")])
def test_privacy_levels_print_rounded(value, terminal, text):
    from mechdesign.cli.output import Output
    from mechdesign.cli.render import epsilon_text

    assert epsilon_text(value, Output(terminal=terminal)) == text
