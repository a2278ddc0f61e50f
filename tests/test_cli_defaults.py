"""What the problem file left out is said: in the human output of solve, compare and sweep, and
under ``defaults`` in their JSON; a problem with no privacy constraint says so."""

from __future__ import annotations

import json
import math

import pytest

BARE = """
name = "bare"
[inputs]
size = 4
[[privacy]]
notion = "ldp"
epsilon = 1.0
[objective]
kind = "error-probability"
"""


def write(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_missing_prior_is_uniform_and_said(tmp_path, run_cli):
    path = write(tmp_path, BARE)
    code, out, _ = run_cli("solve", path, "--json")
    data = json.loads(out)
    assert code == 0
    assert data["defaults"] == {"outputs": "the inputs", "prior": "uniform", "solver": "auto"}
    # the optimum under a uniform prior is k-ary RR's error: 1 - e^ε / (e^ε + k - 1)
    assert data["objective"]["value"] == pytest.approx(1 - math.e / (math.e + 3), abs=1e-9)
    code, out, _ = run_cli("solve", path)
    assert "  prior: uniform (no prior given)" in out.splitlines()
    assert "(chosen automatically: no [solve] solver given)" in out
    assert "outputs:" not in out  # outputs = inputs on a line of values goes without saying


def test_what_the_file_gives_is_not_called_a_default(tmp_path, run_cli):
    text = BARE.replace('kind = "error-probability"', 'kind = "error-probability"\nprior = "p"')
    text = text.replace("[[privacy]]", "[outputs]\nsize = 4\n[distributions]\np = [0.1, 0.2, 0.3, 0.4]\n"
                                       "[solve]\nsolver = \"highs\"\n[[privacy]]")
    path = write(tmp_path, text)
    code, out, _ = run_cli("solve", path, "--json")
    assert code == 0 and json.loads(out)["defaults"] == {}
    code, out, _ = run_cli("solve", path)
    assert "no prior given" not in out and "chosen automatically" not in out


def test_losses_weights_and_grid_outputs_are_said(tmp_path, run_cli):
    grid = """
name = "g"
[inputs]
grid = { rows = 2, cols = 2 }
[[privacy]]
notion = "metric"
epsilon = 1.0
[metric]
kind = "euclidean"
[objective]
kind = "expected-loss"
"""
    code, out, _ = run_cli("solve", write(tmp_path, grid), "--json")
    assert code == 0
    assert json.loads(out)["defaults"] == {"outputs": "the inputs", "prior": "uniform", "loss": "metric",
                                           "solver": "auto"}
    code, out, _ = run_cli("solve", write(tmp_path, grid))
    lines = out.splitlines()
    assert "  loss: metric (no loss given)" in lines
    assert "  outputs: the inputs (no [outputs] given)" in lines  # points in the plane: said
    profiles = """
name = "c"
[inputs]
size = 2
[distributions]
a = [0.3, 0.7]
b = [0.6, 0.4]
[mechanism]
contexts = ["a", "b"]
[[privacy]]
notion = "profile"
epsilon = 1.0
edges = [["a", "b"]]
[objective]
kind = "expected-loss"
"""
    code, out, _ = run_cli("solve", write(tmp_path, profiles), "--json")
    assert code == 0
    defaults = json.loads(out)["defaults"]
    assert defaults["weights"] == "equal" and defaults["loss"] == "hamming" and "prior" not in defaults
    code, out, _ = run_cli("solve", write(tmp_path, profiles))
    assert "  context weights: equal (no weights given)" in out.splitlines()


FREE = """
name = "free"
[inputs]
labels = ["a", "b", "c"]
[objective]
kind = "error-probability"
"""


def test_no_privacy_constraint_is_a_warning(tmp_path, run_cli):
    path = write(tmp_path, FREE)
    code, out, _ = run_cli("solve", path)
    assert code == 0
    assert "warning: no privacy constraint: the design is the non-private optimum" in [line.strip() for line in out.splitlines()]
    code, out, _ = run_cli("solve", path, "--json")
    data = json.loads(out)
    assert data["defaults"]["privacy"] == "none" and data["objective"]["value"] == 0.0  # the identity
    code, out, _ = run_cli("compare", path, "--baselines", "identity")
    assert "warning: no privacy constraint: the design is the non-private optimum" in out


def test_compare_and_sweep_say_the_defaults_too(tmp_path, run_cli):
    path = write(tmp_path, BARE)
    for args in (["compare", path, "--baselines", "krr"], ["sweep", path, "--epsilon", "0.5:1:2"]):
        code, out, _ = run_cli(*args)
        assert code == 0 and "  prior: uniform (no prior given)" in out.splitlines()
        code, out, _ = run_cli(*args, "--json")
        assert json.loads(out)["defaults"]["prior"] == "uniform"
