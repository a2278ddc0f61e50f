"""The envelope suite: its grid covers every family, ε, prior and loss; its instances are the
problems they say they are (checked against closed forms); its worst-case summary is right."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.bench import SUITES, envelope
from mechdesign.bench.isolate import run_isolated
from mechdesign.bench.peers import remapped_geometric_loss


def test_the_suite_is_registered():
    assert "envelope" in SUITES


def test_full_grid_covers_every_family_epsilon_prior_and_loss():
    grid = envelope.grid_of(quick=False)
    families = {p["family"] for p in grid}
    assert families == {"ldp", "line", "grid", "points", "haversine", "graph", "profile", "distp"}
    for fam in families:
        mine = [p for p in grid if p["family"] == fam]
        assert {p["epsilon"] for p in mine} == {0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0}
        assert {p["prior"] for p in mine} == {"uniform", "dirichlet", "zipf"}
        assert len({str(p["size"]) for p in mine}) == 2
        if fam in envelope.NO_LOSS:
            assert all("loss" not in p for p in mine)
        else:
            assert {p["loss"] for p in mine} == {"metric", "squared", "random"}


@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0])
def test_line_instance_with_uniform_prior_is_the_closed_form_problem(eps):
    out = envelope.instance({"family": "line", "size": 12, "epsilon": eps, "prior": "uniform", "loss": "metric"})
    assert out["status"] == "optimal" and out["certificate_holds"]
    assert out["objective"] == pytest.approx(remapped_geometric_loss(12, eps), rel=1e-7)


def test_priors_are_distributions_of_the_named_shape():
    rng = np.random.default_rng(1)
    z = envelope.prior("zipf", 50, rng)
    assert z.sum() == pytest.approx(1.0) and z.max() / z.min() == pytest.approx(50 ** 1.1)
    assert np.allclose(envelope.prior("uniform", 4, rng), 0.25)
    d = envelope.prior("dirichlet", 30, rng)
    assert d.sum() == pytest.approx(1.0) and np.all(d > 0)


def test_haversine_instances_are_locations_in_a_50_km_box():
    problem = envelope.build({"family": "haversine", "size": 30, "epsilon": 1.0, "prior": "uniform",
                              "loss": "metric"})
    d = problem.privacy[0].metric.distances(problem.inputs)
    assert 20.0 < d.max() < 80.0  # km: the box's diagonal is about 67 km


def test_worst_case_summary_names_the_slowest_and_every_failure():
    rows = [
        {"parameters": {"family": "line", "size": 10, "epsilon": 0.5, "prior": "uniform", "loss": "metric"},
         "status": "optimal", "certificate_holds": True, "total_seconds": 2.0, "isolation": {}},
        {"parameters": {"family": "line", "size": 10, "epsilon": 1.0, "prior": "zipf", "loss": "random"},
         "status": "optimal", "certificate_holds": True, "total_seconds": 5.0, "isolation": {}},
        {"parameters": {"family": "line", "size": 10, "epsilon": 0.1, "prior": "zipf", "loss": "squared"},
         "status": "timeout", "message": "timed out after 3 s", "isolation": {"wall_seconds": 3.5}},
    ]
    worst = envelope.worst_cases(rows)["line 10"]
    assert worst["instances"] == 3
    assert worst["worst_seconds"] == 5.0 and worst["worst"] == {"epsilon": 1.0, "prior": "zipf", "loss": "random"}
    assert [b["status"] for b in worst["not_optimal"]] == ["timeout"]
    checks = envelope._checks(rows)
    assert [c.holds for c in checks] == [False, False]


@pytest.mark.parametrize("families", [["grid"], ["line", "grid", "ldp", "points", "graph"]])
def test_the_figure_has_one_panel_per_family_and_no_empty_row(families, monkeypatch, tmp_path):
    """One family draws one panel, not a row of four with three left empty; five draw two rows
    of four (the last three panels off)."""
    drawn = {}

    def keep(fig, path):
        drawn["fig"] = fig
        return str(path)

    monkeypatch.setattr(envelope, "save", keep)

    class Ctx:
        def figure(self, name):
            return tmp_path / f"{name}.png"

    rows = [{"parameters": {"family": f, "size": 10, "epsilon": e, "prior": "uniform", "loss": "metric"},
             "status": "optimal", "certificate_holds": True, "total_seconds": 1.0 + e, "isolation": {}}
            for f in families for e in (0.1, 1.0)]
    envelope._figure(Ctx(), rows)
    axes = drawn["fig"].axes
    shown = [ax for ax in axes if ax.axison]
    assert [ax.get_title() for ax in shown] == families
    assert len(axes) == (1 if len(families) == 1 else 8)
    assert drawn["fig"].get_figwidth() >= 6.5  # room for the title


def test_an_isolated_instance_reports_status_path_and_memory():
    rec = run_isolated({"target": "mechdesign.bench.envelope:instance",
                        "params": {"family": "grid", "size": 3, "epsilon": 2.0, "prior": "zipf", "loss": "squared"},
                        "timeout": 120})
    assert rec["status"] == "ok", rec.get("message")
    assert rec["value"]["certificate_holds"] and rec["value"]["solver"]
    assert rec["peak_rss_mb"] > 0


def test_select_takes_a_part_of_the_grid():
    grid = envelope.grid_of(quick=False)
    small = envelope.select(grid, ["line", "profile"], "small", [0.1, 8.0])
    assert {p["family"] for p in small} == {"line", "profile"}
    assert {str(p["size"]) for p in small} == {"300", "(25, 12)"}
    assert {p["epsilon"] for p in small} == {0.1, 8.0}
    assert len(small) == 2 * 3 * 3 + 2 * 3  # line: ε × priors × losses; profile: ε × priors
    large = envelope.select(grid, None, "large", None)
    assert len(large) + len(envelope.select(grid, None, "small", None)) == len(grid)


def test_select_takes_priors_losses_and_another_size():
    grid = envelope.grid_of(quick=False)
    part = envelope.select(grid, ["line", "profile"], "large", [1.0], ["uniform", "zipf"], ["random"],
                           {"line": 2000, "profile": (10, 5)})
    line = [p for p in part if p["family"] == "line"]
    assert [(p["size"], p["prior"], p["loss"]) for p in line] == [(2000, "uniform", "random"), (2000, "zipf", "random")]
    # the loss axis does not apply to profile graphs: both priors stay, at the size asked for
    assert sorted((p["size"], p["prior"]) for p in part if p["family"] == "profile") == [((10, 5), "uniform"),
                                                                                       ((10, 5), "zipf")]
    # without small/large, both sizes of a family map to the one asked for, and appear once
    both = envelope.select(grid, ["line"], None, [1.0], ["uniform"], ["metric"], {"line": 2000})
    assert both == [{"family": "line", "size": 2000, "epsilon": 1.0, "prior": "uniform", "loss": "metric"}]


def test_the_worst_case_loss_is_run_only_when_asked_for_on_the_metric_families():
    from mechdesign.core.objectives import WorstCaseLoss

    assert not [p for p in envelope.grid_of(quick=False) if p.get("loss") == "worst-case"]
    grid = envelope.grid_of(quick=False, opt_in=("worst-case",))
    worst = [p for p in grid if p.get("loss") == "worst-case"]
    # five families with a metric other than ε-LDP's, two sizes, seven ε, no prior axis
    assert {p["family"] for p in worst} == {"line", "grid", "points", "haversine", "graph"}
    assert len(worst) == 5 * 2 * 7 and {p["prior"] for p in worst} == {"uniform"}
    part = envelope.select(grid, ["grid"], "small", [0.5], None, ["worst-case"])
    assert part == [{"family": "grid", "size": 10, "epsilon": 0.5, "prior": "uniform", "loss": "worst-case"}]
    problem = envelope.build(part[0])
    assert isinstance(problem.objective, WorstCaseLoss)
    # the loss is the grid's Euclidean distances: between the corners (0, 0) and (9, 9), 9√2
    assert problem.objective.loss[0, 99] == pytest.approx(9 * 2 ** 0.5)


@pytest.mark.parametrize("args,message", [
    (["--sizes", "line=big"], "expected family=size"),
    (["--sizes", "lines=2000"], "no family lines"),
    (["--sizes", "line=20x20"], "line takes one whole number, got 20x20"),
    (["--sizes", "profile=100"], "profile takes PxC"),
    (["--priors", "uniform,flat"], "--priors: expected a comma-separated subset"),
])
def test_the_entry_point_names_what_is_wrong_with_its_arguments(args, message, capsys):
    from benchmarks import bench_envelope

    with pytest.raises(SystemExit) as stop:
        bench_envelope.main(args)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_an_instance_past_its_time_limit_returns_a_certified_design():
    out = envelope.instance({"family": "ldp", "size": 300, "epsilon": 0.5, "prior": "dirichlet",
                             "loss": "squared", "time_limit": 1e-4})
    assert out["status"] == "time-limit" and out["certificate_holds"]
    assert out["bound"] is not None and out["bound"] <= out["objective"]


@pytest.mark.parametrize("family", ["points", "haversine", "graph"])
def test_every_epsilon_and_loss_of_a_family_sees_the_same_instance(family):
    """Time against ε compares like with like: the domain, the prior and the random loss do not
    change with ε, and the prior does not change with the loss."""
    def built(eps, loss):
        return envelope.build({"family": family, "size": 8, "epsilon": eps, "prior": "dirichlet", "loss": loss})

    a, b, c = built(0.1, "random"), built(4.0, "random"), built(4.0, "squared")
    np.testing.assert_array_equal(a.privacy[0].distances(), b.privacy[0].distances())
    np.testing.assert_array_equal(a.objective.loss, b.objective.loss)
    np.testing.assert_array_equal(b.objective.row_weights["default"], c.objective.row_weights["default"])
