"""The Python API for people with arrays: problems built from NumPy arrays and names, with no
file, solve to the same optimum as the matching problem file or to a closed form; notions on the
problem's own domain and metric need only ε; bad shapes are ProblemErrors naming the argument
and the expected shape; reprs are short and readable; public functions carry type hints; the
docstring examples run."""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mechdesign
from mechdesign import (
    LDP,
    DistP,
    DivergenceDistP,
    DivergenceDP,
    DivergenceXDP,
    Domain,
    ErrorProbability,
    ExpectedLoss,
    GVulnerability,
    InformationPrivacy,
    MaxOffDiagonal,
    Metric,
    MetricPrivacy,
    MinEntropy,
    MutualInformation,
    Problem,
    ProblemError,
    ProfileMarginalError,
    ProfilePrivacy,
    Side,
    Target,
    WorstCaseLoss,
    XDistP,
)
from mechdesign.design.spec import problem_from_dict

PROBLEMS = Path(__file__).resolve().parent.parent / "problems"


def _file(name: str) -> Problem:
    return mechdesign.load_problem(PROBLEMS / f"{name}.toml")


def _distributions(name: str) -> dict[str, np.ndarray]:
    """The named distributions of a problem file (read through the loader's own record)."""
    return dict(_file(name).extras["model"].distributions)


def _same_optimum(built: Problem, reference: Problem) -> None:
    a, b = built.solve(), reference.solve()
    assert a.status == b.status == "optimal", (a.message, b.message)
    assert abs(a.objective - b.objective) <= 1e-9 * max(1.0, abs(b.objective)), (a.objective, b.objective)


# ---------------------------------------------------------------------------------------------
# every notion family from arrays, against its problem file

def _warner():
    return Problem(inputs=["no", "yes"], objective=ErrorProbability(prior=[0.5, 0.5]), privacy=[LDP(1.0)])


def _ldp_skewed():
    prior = _distributions("ldp-skewed-prior")["prior"]
    return Problem(inputs=10, metric="absolute", objective=ExpectedLoss("metric", prior=prior), privacy=LDP(1.0))


def _dprivacy_line():
    loss = np.abs(np.arange(20)[:, None] - np.arange(20)[None, :])  # a loss matrix, no name
    return Problem(inputs=np.arange(20.0), metric="absolute", objective=ExpectedLoss(loss),
                   privacy=[MetricPrivacy(1.0)])


def _geo_grid():
    points = np.array([[r, c] for r in range(5) for c in range(5)], dtype=float)
    return Problem(inputs=points, metric=Metric("euclidean"), objective=ExpectedLoss("metric"),
                   privacy=[MetricPrivacy(1.0)])


def _two_sources():
    d = _distributions("distp-two-sources")
    return Problem(inputs=6, metric="absolute", objective=ExpectedLoss(prior=d["mixture"]),
                   privacy=[DistP(0.3, [(Side("clinic", d["clinic"]), d["control"])])])


def _dinf_distp():
    d = _distributions("dinf-distp")
    return Problem(inputs=8, metric="absolute", objective=ExpectedLoss("metric", prior=d["mixture"]),
                   privacy=[DivergenceDistP(0.2, [(d["young"], d["old"])], "max")])


def _kl_distp():
    d = _distributions("kl-distp")
    return Problem(inputs=8, metric="absolute", objective=ExpectedLoss("metric", prior=d["mixture"]),
                   privacy=[DivergenceDistP(0.2, [(d["young"], d["old"])], "kl")])


def _couplet():
    return Problem(inputs=["0", "1"], contexts={"a": [0.7, 0.3], "b": [0.4, 0.6]}, objective=MaxOffDiagonal(),
                   privacy=[ProfilePrivacy(0.5, [("a", "b")])])


def _categorical_chain():
    d = _distributions("categorical-chain")
    return Problem(inputs=["c1", "c2", "c3", "c4"], contexts={k: d[k] for k in ("P1", "P2", "P3")},
                   objective=MaxOffDiagonal(), privacy=[ProfilePrivacy(0.5, [("P1", "P2"), ("P2", "P3")])])


def _coupling_fig2():
    return Problem(inputs=[1, 2, 3], metric="absolute", contexts={"lambda": [0.2, 0.5, 0.3]},
                   objective=ExpectedLoss("metric"), privacy=[Target(distribution=[0.3, 0.2, 0.5])])


def _coupling_barycenter():
    d = _distributions("coupling-barycenter")
    return Problem(inputs=6, metric="absolute", contexts={"P": d["P"], "Q": d["Q"]},
                   objective=ExpectedLoss(), privacy=[Target()])


def _information_capacity():
    prior = _distributions("information-capacity")["prior"]
    return Problem(inputs=6, metric="absolute", objective=ExpectedLoss(prior=prior),
                   privacy=[InformationPrivacy(0.5)])


def _mutual_information():
    prior = [0.5, 0.2, 0.15, 0.1, 0.05]
    return Problem(inputs=list("abcde"), objective=ErrorProbability(prior=prior),
                   privacy=[MutualInformation(0.3, prior)])


FROM_FILES = {
    "warner-rr": _warner, "ldp-skewed-prior": _ldp_skewed, "dprivacy-line": _dprivacy_line,
    "geo-grid": _geo_grid, "distp-two-sources": _two_sources, "dinf-distp": _dinf_distp,
    "kl-distp": _kl_distp, "bernoulli-couplet": _couplet, "categorical-chain": _categorical_chain,
    "coupling-fig2": _coupling_fig2, "coupling-barycenter": _coupling_barycenter,
    "information-capacity": _information_capacity, "mutual-information-skewed": _mutual_information,
}


@pytest.mark.parametrize("name", list(FROM_FILES))
def test_built_from_arrays_matches_the_problem_file(name):
    _same_optimum(FROM_FILES[name](), _file(name))


LINE4 = {"name": "line4", "inputs": {"size": 4}, "metric": {"kind": "absolute"},
         "distributions": {"a": [0.4, 0.3, 0.2, 0.1], "b": [0.1, 0.2, 0.3, 0.4]},
         "objective": {"kind": "expected-loss", "loss": "metric"}}


def _loaded(notion: dict, **more) -> Problem:
    return problem_from_dict({**LINE4, **more, "privacy": [notion]})


def test_xdistp_takes_its_distances_from_the_problem_metric():
    a, b = LINE4["distributions"]["a"], LINE4["distributions"]["b"]
    built = Problem(inputs=4, metric="absolute", objective=ExpectedLoss("metric"),
                    privacy=[XDistP(0.4, [(Side("a", a), Side("b", b))])])
    _same_optimum(built, _loaded({"notion": "xdistp", "epsilon": 0.4, "pairs": [["a", "b"]]}))


def test_divergence_xdp_takes_its_distances_and_pairs_from_the_problem():
    built = Problem(inputs=4, metric="absolute", objective=ExpectedLoss("metric"),
                    privacy=[DivergenceXDP(0.5, "tv")])
    _same_optimum(built, _loaded({"notion": "divergence-xdp", "epsilon": 0.5, "divergence": "tv"}))


def test_divergence_dp_is_over_every_pair_of_inputs_by_default():
    built = Problem(inputs=4, metric="absolute", objective=ExpectedLoss(), privacy=[DivergenceDP(0.5, "tv")])
    _same_optimum(built, _loaded({"notion": "divergence-dp", "epsilon": 0.5, "divergence": "tv"}))


def test_g_vulnerability_and_min_entropy_from_arrays():
    built = Problem(inputs=4, metric="absolute", objective=ExpectedLoss(),
                    privacy=[GVulnerability("identity", [0.4, 0.3, 0.2, 0.1], bits=0.5)])
    _same_optimum(built, _loaded({"notion": "g-vulnerability", "bits": 0.5, "prior": "a"}))
    built = Problem(inputs=4, metric="absolute", objective=ExpectedLoss(), privacy=[MinEntropy(0.5)])
    _same_optimum(built, _loaded({"notion": "min-entropy", "bits": 0.5}))


def test_worst_case_loss_and_profile_marginal_error_from_names():
    built = Problem(inputs=4, metric="absolute", objective=WorstCaseLoss("squared"), privacy=[LDP(1.0)])
    reference = problem_from_dict({**LINE4, "objective": {"kind": "worst-case-loss", "loss": "squared"},
                                   "privacy": [{"notion": "ldp", "epsilon": 1.0}]})
    _same_optimum(built, reference)
    contexts = {"a": LINE4["distributions"]["a"], "b": LINE4["distributions"]["b"]}
    built = Problem(inputs=4, contexts=contexts, objective=ProfileMarginalError(),
                    privacy=[ProfilePrivacy(0.5, [("a", "b")])])
    reference = problem_from_dict({**LINE4, "mechanism": {"contexts": ["a", "b"]},
                                   "objective": {"kind": "profile-marginal-error"},
                                   "privacy": [{"notion": "profile", "epsilon": 0.5, "edges": [["a", "b"]]}]})
    _same_optimum(built, reference)


# ---------------------------------------------------------------------------------------------
# closed forms

@pytest.mark.parametrize("k,eps", [(2, 1.0), (4, 0.7), (6, 2.0)])
def test_k_ary_randomized_response_is_optimal_under_ldp(k, eps):
    """Uniform prior, error probability: k-RR, error (k − 1)/(e^ε + k − 1) (Warner's for k = 2)."""
    result = Problem(inputs=[f"v{i}" for i in range(k)], objective=ErrorProbability(),
                     privacy=[LDP(eps)]).solve()
    assert result.status == "optimal"
    assert result.objective == pytest.approx((k - 1) / (np.exp(eps) + k - 1), abs=1e-9)


@pytest.mark.parametrize("d,eps", [(1.0, 1.0), (2.0, 0.5), (0.5, 3.0)])
def test_two_points_under_d_privacy(d, eps):
    """Two points d apart, uniform prior, loss |x − y|: each reports the other with probability
    1/(1 + e^{εd}), an expected loss of d/(1 + e^{εd})."""
    result = Problem(inputs=[0.0, d], metric="absolute", objective=ExpectedLoss("metric"),
                     privacy=[MetricPrivacy(eps)]).solve()
    assert result.objective == pytest.approx(d / (1 + np.exp(eps * d)), abs=1e-9)


def test_a_notion_keeps_its_own_metric():
    """ε·d-privacy under the metric 2|x − x'| is 2ε·|x − x'|-privacy: the notion's own metric is
    used, not the problem's."""
    doubled = Metric("matrix", matrix=2.0 * np.abs(np.arange(5)[:, None] - np.arange(5)[None, :]))
    own = Problem(inputs=5, metric="absolute", objective=ExpectedLoss("metric"),
                  privacy=[MetricPrivacy(0.4, doubled)]).solve()
    twice = Problem(inputs=5, metric="absolute", objective=ExpectedLoss("metric"),
                    privacy=[MetricPrivacy(0.8)]).solve()
    once = Problem(inputs=5, metric="absolute", objective=ExpectedLoss("metric"),
                   privacy=[MetricPrivacy(0.4)]).solve()
    assert own.objective == pytest.approx(twice.objective, abs=1e-9)
    assert own.objective < once.objective - 1e-3  # under the problem's metric: ε·|x − x'|, more loss


def test_one_notion_object_serves_problems_of_different_sizes():
    """Binding fills in a copy: the user's notion stays as built and can be reused."""
    notion = MetricPrivacy(1.0)
    small = Problem(inputs=[0.0, 1.0], metric="absolute", objective=ExpectedLoss("metric"), privacy=[notion])
    large = Problem(inputs=20, metric="absolute", objective=ExpectedLoss("metric"), privacy=[notion])
    assert notion.metric is None and notion.domain is None
    assert small.privacy[0].domain is small.inputs and large.privacy[0].domain is large.inputs
    assert small.solve().objective == pytest.approx(1 / (1 + np.e), abs=1e-9)
    assert large.solve().objective == pytest.approx(_file("dprivacy-line").solve().objective, abs=1e-9)


def test_inputs_given_as_labels_size_or_points():
    assert Problem(inputs=["a", "b", "c"], objective=ErrorProbability()).inputs.labels == ("a", "b", "c")
    by_size = Problem(inputs=4, objective=ErrorProbability()).inputs
    assert by_size.labels == ("0", "1", "2", "3") and by_size.points[:, 0].tolist() == [0, 1, 2, 3]
    points = Problem(inputs=np.array([[0.0, 0.0], [3.0, 4.0]]), metric="euclidean",
                     objective=ExpectedLoss("metric")).inputs
    assert points.points.shape == (2, 2)
    assert Metric("euclidean").distances(points)[0, 1] == 5.0
    domain = Domain.from_grid(2, 2)
    assert Problem(inputs=domain, objective=ErrorProbability()).inputs is domain


# ---------------------------------------------------------------------------------------------
# validation: the argument, the expected shape, never a NumPy broadcast error

def _bad(build) -> ProblemError:
    with pytest.raises(ProblemError) as err:
        build()
    message = str(err.value)
    assert "broadcast" not in message and "object at 0x" not in message
    return err.value


def test_a_prior_of_the_wrong_length_names_the_argument_and_the_shape():
    err = _bad(lambda: Problem(inputs=3, objective=ErrorProbability(prior=[0.25] * 4)))
    assert err.key == "objective.prior" and "expected 3 probabilities (one per input), got 4" in str(err)
    err = _bad(lambda: Problem(inputs=3, metric="absolute", objective=ExpectedLoss("metric", prior=[0.5, 0.5])))
    assert err.key == "objective.prior" and "expected 3" in err.detail and "got 2" in err.detail


@pytest.mark.parametrize("prior,words", [
    ([0.5, np.nan, 0.5], "finite"), ([0.5, np.inf, 0.5], "finite"), ([0.6, 0.6, -0.2], "non-negative"),
    ([0.5, 0.5, 0.5], "summing to 1"), ([[0.5, 0.5, 0.0]], "vector"), (["a", "b", "c"], "numbers"),
])
def test_a_prior_that_is_not_a_distribution(prior, words):
    err = _bad(lambda: Problem(inputs=3, objective=ErrorProbability(prior=prior)))
    assert err.key == "objective.prior" and words in err.detail


@pytest.mark.parametrize("build,key,words", [
    (lambda: Problem(inputs=3, objective=ErrorProbability(), privacy=[MetricPrivacy(1.0)]),
     "privacy[0].metric", "give the problem a metric= or the notion a metric"),
    (lambda: Problem(inputs=3, objective=ExpectedLoss("metric")), "objective.loss", "metric="),
    (lambda: Problem(inputs=3, objective=ExpectedLoss(np.ones((2, 2)))), "objective.loss", "(3, 3)"),
    (lambda: Problem(inputs=3, objective=ExpectedLoss(prior=[1, 0, 0], row_weights={"default": [1, 0, 0]})),
     "objective.prior", "not both"),
    (lambda: Problem(inputs=2, contexts={"a": [1, 0], "b": [0, 1]}, objective=ExpectedLoss(prior=[0.5, 0.5])),
     "objective.prior", "contexts"),
    (lambda: Problem(inputs=2, contexts={"a": [1, 0], "b": [0.5, 0.25, 0.25]}, objective=ExpectedLoss()),
     "mechanism.contexts[b]", "expected 2 probabilities"),
    (lambda: Problem(inputs=3, objective=ErrorProbability(), privacy=[DistP(1.0, [([0.5, 0.5], [0.2, 0.8])])]),
     "privacy[0].pairs[0]", "expected 3 probabilities (one per input), got 2"),
    (lambda: Problem(inputs=3, objective=ErrorProbability(), privacy=[DistP(1.0, [([0.5, 0.5, 0.5], [1, 0, 0])])]),
     "privacy[0].pairs[0]", "summing to 1"),
    (lambda: Problem(inputs=2, objective=MaxOffDiagonal(), privacy=[ProfilePrivacy(1.0, [("a", "b")])]),
     "privacy[0].edges", "contexts="),
    (lambda: Problem(inputs=2, contexts={"a": [1, 0], "b": [0, 1]}, objective=MaxOffDiagonal(),
                     privacy=[ProfilePrivacy(1.0, [("a", "c")])]), "privacy[0].edges", "'c'"),
    (lambda: Problem(inputs=2, contexts={"a": [1, 0]}, objective=ExpectedLoss(),
                     privacy=[Target(distribution=[0.2, 0.3, 0.5])]),
     "privacy[0].distribution", "expected 2 probabilities (one per output), got 3"),
    (lambda: Problem(inputs=2, objective=ExpectedLoss(), privacy=[Target(distribution=[0.5, 0.5])]),
     "privacy[0].contexts", "contexts="),
    (lambda: Problem(inputs=3, objective=ExpectedLoss(), privacy=[MutualInformation(0.5, [0.5, 0.5])]),
     "privacy[0].prior", "expected 3 probabilities"),
    (lambda: Problem(inputs=3, objective=ExpectedLoss(), privacy=[XDistP(0.5, [([1, 0, 0], [0, 0, 1])])]),
     "privacy[0].cost", "metric="),
    (lambda: Problem(inputs=3, objective=ExpectedLoss(),
                     privacy=[XDistP(0.5, [([1, 0, 0], [0, 0, 1])], cost=np.ones((2, 2)))]),
     "cost", "3 x 3"),  # the notion's own argument, refused when it is built
    (lambda: Problem(inputs=3, objective=ExpectedLoss(), privacy=[DivergenceDP(0.5, "kl", [(0, 5)])]),
     "privacy[0].adjacency", "index 5"),
    (lambda: Problem(inputs=3, objective=ExpectedLoss(), privacy=[DivergenceXDP(0.5, "kl", np.zeros((4, 4)))]),
     "privacy[0].distances", "3 x 3"),
    (lambda: Problem(inputs=3, objective=ExpectedLoss(), privacy=[MetricPrivacy(1.0, "absolute", Domain.from_size(4))]),
     "privacy[0].domain", "3 inputs"),
    (lambda: Problem(inputs=3, metric=np.zeros((2, 2)), objective=ExpectedLoss()), "metric.matrix", "2 x 2"),
    (lambda: Problem(inputs=3, metric="no-such-metric", objective=ExpectedLoss()), "metric.kind", "absolute"),
    (lambda: Problem(inputs=["a", "b"], metric="euclidean", objective=ExpectedLoss()), "metric.kind", "coordinates"),
    (lambda: Metric(np.zeros((2, 2))), "metric.kind", "Metric.coerce(matrix)"),
])
def test_misfits_name_the_argument_and_what_was_expected(build, key, words):
    err = _bad(build)
    assert err.key == key and words in err.detail, str(err)


@pytest.mark.parametrize("inputs", [2.5, [], None, "abc", [[0.0, 1.0], [2.0]], 0, True])
def test_inputs_that_are_no_domain(inputs):
    err = _bad(lambda: Problem(inputs=inputs, objective=ErrorProbability()))
    assert err.key == "inputs" and ("labels" in err.detail or "at least one value" in err.detail)


def test_a_notion_added_after_the_problem_was_built_must_be_complete():
    problem = Problem(inputs=3, metric="absolute", objective=ExpectedLoss("metric"), privacy=[LDP(1.0)])
    problem.privacy.append(MetricPrivacy(1.0))
    err = _bad(problem.solve)
    assert err.key == "privacy[1]" and "build the problem with it" in err.detail
    problem.privacy[1] = MetricPrivacy(1.0, "absolute", problem.inputs)  # complete: fine
    assert problem.solve().status == "optimal"


# ---------------------------------------------------------------------------------------------
# reprs

@pytest.mark.parametrize("path", sorted(PROBLEMS.glob("*.toml")), ids=lambda p: p.stem)
def test_reprs_of_every_shipped_problem_are_readable(path):
    problem = mechdesign.load_problem(path)
    texts = [repr(problem), repr(problem.objective), repr(problem.inputs), *map(repr, problem.privacy)]
    for text in texts:
        assert "object at 0x" not in text and len(text) < 1000, text
    assert repr(problem).startswith(f"Problem(name={problem.name!r}, inputs=Domain(")
    assert type(problem.objective).__name__ in repr(problem)
    for notion in problem.privacy:
        assert type(notion).__name__ in repr(problem)
        level = getattr(notion, "epsilon", None)
        if level is not None:
            shown = f"{level:.6g}"
            assert f"epsilon={shown}" in repr(notion) or f"bits={shown}" in repr(notion), repr(notion)


def test_reprs_of_results_mechanisms_and_pieces():
    result = _file("warner-rr").solve()
    text = repr(result)
    assert text.startswith("Result(problem='warner-rr', status='optimal', objective=0.268941421")
    assert "certificate=[ldp: holds]" in text
    assert repr(result.mechanism) == ("Mechanism(name='default', inputs=[no, yes], "
                                      "matrix=[[0.731059, 0.268941], [0.268941, 0.731059]])")
    assert repr(_warner()) == ("Problem(name='problem', inputs=Domain(2 values: no, yes), "
                               "objective=ErrorProbability(prior=[0.5, 0.5]), privacy=[LDP(epsilon=1)])")
    pieces = [Metric("absolute"), Metric.coerce(np.zeros((30, 30))), ExpectedLoss(np.zeros((30, 30))),
              WorstCaseLoss("metric"), MaxOffDiagonal(), ProfileMarginalError([0.5, 0.5]),
              MetricPrivacy(0.5), DistP(0.1, [([1, 0], [0, 1])], 0.01), XDistP(0.1, [("a", "b")]),
              DivergenceDP(1, "kl"), DivergenceXDP(1, "kl"), InformationPrivacy(1), MinEntropy(2),
              MutualInformation(0.1), GVulnerability("identity", [0.5, 0.5], bound=0.75), Target(),
              Side("a", np.full(100, 0.01)), mechdesign.ApproxLDP(1, 1e-6)]
    for piece in pieces:
        text = repr(piece)
        assert text.startswith(type(piece).__name__ + "(") and "object at" not in text and len(text) < 200, text
    assert repr(ExpectedLoss(np.zeros((30, 30)))) == "ExpectedLoss(loss=[[0, 0, 0, 0, 0, 0, ...], ...] (30x30))"
    assert repr(DistP(0.1, [([1, 0], [0, 1])], 0.01)) == "DistP(epsilon=0.1, pairs=[p0~q0], delta=0.01)"


# ---------------------------------------------------------------------------------------------
# the package surface: names, laziness, type hints, docstring examples

def test_the_constructors_are_top_level_names_and_load_lazily():
    code = ("import sys, mechdesign\n"
            "loaded = [m for m in ('mechdesign.core.objectives', 'mechdesign.privacy.metric', 'cvxpy') "
            "if m in sys.modules]\n"
            "from mechdesign import Problem, Domain, Metric, LDP, MetricPrivacy, ExpectedLoss\n"
            "print(','.join(loaded), MetricPrivacy.__module__, ExpectedLoss.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["mechdesign.privacy.metric", "mechdesign.core.objectives"]


#: the modules whose public functions and methods must be fully annotated
HINTED = ["mechdesign.core.domain", "mechdesign.core.metrics", "mechdesign.core.objectives",
          "mechdesign.core.mechanism", "mechdesign.core.preview", "mechdesign.core.setting",
          "mechdesign.design.problem", "mechdesign.design.result"] + [
    f"mechdesign.privacy.{m}" for m in ("audit", "base", "certify", "declarations", "distp", "divergence",
                                        "information", "ldp", "metric", "table_parsers", "target")]


def _public_callables(module):
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if isinstance(member, property):
                    member = member.fget
                if inspect.isfunction(member):
                    yield f"{name}.{attr}", member


@pytest.mark.parametrize("module_name", HINTED)
def test_public_functions_have_type_hints(module_name):
    module = importlib.import_module(module_name)
    missing = []
    for name, fn in _public_callables(module):
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values()
                  if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
        no_return = sig.return_annotation is inspect.Signature.empty and not name.endswith("__init__")
        if params or no_return:
            missing.append((name, [p.name for p in params], "no return" if no_return else ""))
    assert not missing


@pytest.mark.parametrize("module_name,at_least", [
    ("mechdesign.design.problem", 20), ("mechdesign.core.objectives", 2), ("mechdesign.core.metrics", 2),
    ("mechdesign.privacy.metric", 2), ("mechdesign.privacy.distp", 2), ("mechdesign.privacy.information", 1),
    ("mechdesign.privacy.target", 1), ("mechdesign.privacy.audit", 1),
])
def test_docstring_examples_run(module_name, at_least):
    """The examples compare each solve with its closed form in the same printed line (k-ary RR,
    two points under d-privacy, DistP between mirrored sources, profile privacy between two
    Bernoulli profiles, the binary symmetric channel at a capacity), so a wrong optimum fails."""
    module = importlib.import_module(module_name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failed == 0 and attempted >= at_least


def test_the_problem_examples_print_each_optimum_next_to_its_closed_form():
    """Each printed line of Problem's examples is a solved value and an independently computed
    one: the two columns must agree (guards against an expected output copied from a solve)."""
    pairs = [(float(m[1]), float(m[2])) for line in inspect.getdoc(Problem).splitlines()
             if (m := re.fullmatch(r"(?:optimal )?(\d+\.\d+) (\d+\.\d+)", line.strip()))]
    assert len(pairs) == 5 and all(a == b for a, b in pairs), pairs
