"""Mechanism type: lifting, sampling, post-processing, validation."""

import numpy as np
import pytest

from mechdesign import Domain, Mechanism, ProblemError


def test_lift_is_the_output_distribution():
    k = Mechanism([[0.9, 0.1], [0.2, 0.8]], ["a", "b"])
    assert np.allclose(k.lift([0.5, 0.5]), [0.55, 0.45])


def test_sampling_frequencies_match_the_row():
    k = Mechanism([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]], ["x", "y", "z"])
    draws = k.sample("x", rng=0, size=20000)
    freq = np.array([draws.count(label) for label in ["x", "y", "z"]]) / 20000
    assert np.allclose(freq, [0.7, 0.2, 0.1], atol=0.015)
    assert k.sample("y", rng=1) in ("x", "y", "z")


def test_post_processing_composes_matrices_and_keeps_labels():
    k = Mechanism([[0.9, 0.1], [0.2, 0.8]], ["a", "b"])
    post = Mechanism([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]], ["a", "b"], ["u", "v", "w"])
    out = k.then(post)
    assert out.outputs.labels == ("u", "v", "w")
    assert np.allclose(out.matrix, [[0.45, 0.45, 0.1], [0.1, 0.1, 0.8]])


@pytest.mark.parametrize("matrix,expected", [
    ([[0.5, 0.6], [0.5, 0.5]], "row-stochastic"),
    ([[1.2, -0.2], [0.5, 0.5]], "non-negative"),
    ([[np.nan, 1.0], [0.5, 0.5]], "finite"),
])
def test_invalid_matrices_are_rejected_with_a_reason(matrix, expected):
    with pytest.raises(ProblemError, match=expected):
        Mechanism(matrix)


def test_unknown_label_is_named():
    with pytest.raises(ProblemError, match="unknown label 'q'"):
        Mechanism(np.eye(2), ["a", "b"]).sample("q")


def test_grid_domain_labels_and_points():
    g = Domain.from_grid(2, 3, cell=0.5)
    assert g.labels == ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2")
    assert np.allclose(g.points[4], [0.5, 0.5])
