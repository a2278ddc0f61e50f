"""The interior point's long passes are split over threads: by ranges of rows or entries, and its
sums into (inputs, outputs) by ranges of outputs. Split or not, on any number of threads, they
must give the same numbers, bit for bit (the iterations' path must not depend on the machine),
and the numbers of the dense pair map."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.solvers import metric_interior_kernels as kernels
from mechdesign.solvers import metric_passes
from tests.test_metric_rows import _joined_in_random_order, _line, _scattered, assert_chain_blocks


@pytest.fixture
def small_pieces(monkeypatch):
    """Passes of a few hundred entries split into pieces, on up to ``threads`` threads."""
    monkeypatch.setattr(metric_passes, "MIN_PIECE", 64)

    def threads(n: int) -> None:
        monkeypatch.setenv("MECHDESIGN_THREADS", str(n))
    return threads


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("shape", [_line, _scattered])
def test_rows_maps_split_over_threads_equal_one_pass_and_the_dense_map(seed, shape, small_pieces):
    rng = np.random.default_rng(seed)
    g, m = (40, 9) if shape is _line else (14, 11)
    lp = shape(g, m, rng)
    rows = _joined_in_random_order(lp, m, rng)
    K = rng.random((g, m))
    values, denominator, weights = rng.standard_normal(rows.size), rng.random(rows.size) + 0.5, rng.random(rows.size)
    start = rng.standard_normal((g, m))
    found = {}
    for threads in (1, 2, 3):
        small_pieces(threads)
        assert len(metric_passes.pieces(rows.size)) == threads
        ratio = start.copy()
        rows.add_transpose_ratio(values, denominator, ratio)
        found[threads] = [rows.slack(K), rows.transpose(values), ratio, *(rows.chain(weights) if lp.chain else ())]
    for threads in (2, 3):
        for one, split in zip(found[1], found[threads]):
            assert np.array_equal(one, split)
    full = np.zeros((lp.a.size, m))
    full[rows.pair, rows.out] = values
    slack, transpose, ratio = found[3][:3]
    np.testing.assert_allclose(slack, (lp.G @ K)[rows.pair, rows.out], rtol=1e-14)
    np.testing.assert_allclose(transpose, lp.G.T @ full, rtol=1e-13, atol=1e-14)
    full[rows.pair, rows.out] = values / denominator
    np.testing.assert_allclose(ratio, start + lp.G.T @ full, rtol=1e-13, atol=1e-14)
    if lp.chain:
        assert_chain_blocks(lp, rows, weights, *found[3][3:])


@pytest.mark.parametrize("seed", range(3))
def test_entry_passes_split_over_threads_equal_one_pass(seed, small_pieces):
    rng = np.random.default_rng(seed)
    shape = (23, 31)  # 713 entries: several pieces of 64 and up
    primal, dual = rng.random(shape) + 1e-3, rng.random(shape) + 1e-3
    dprimal, ddual = rng.standard_normal(shape), rng.standard_normal(shape)
    t = rng.standard_normal(shape) * 0.01
    whole = np.empty(shape)
    steps = kernels.recover(t, dual, dprimal, primal, whole)
    whole_targets = np.empty(shape)
    kernels.centred_targets(primal, dprimal, dual, ddual, 0.7, 0.4, t, 0.02, 0.2, whole_targets)
    for threads in (1, 2, 3):
        small_pieces(threads)
        out, targets = np.empty(shape), np.empty(shape)
        assert metric_passes.recover(t, dual, dprimal, primal, out) == steps
        assert np.array_equal(out, whole)
        metric_passes.centred_targets(primal, dprimal, dual, ddual, 0.7, 0.4, t, 0.02, 0.2, targets)
        assert np.array_equal(targets, whole_targets)
    # the step lengths are the ratio tests' minima (capped at 1), and the steps keep every
    # entry non-negative
    a_p, a_d = steps
    assert np.all(primal + a_p * dprimal >= -1e-15) and np.all(dual + a_d * whole >= -1e-15)
    assert a_p == pytest.approx(min(1.0, float(np.min(-primal[dprimal < 0] / dprimal[dprimal < 0]))), rel=1e-15)


def test_passes_refuse_arrays_they_would_copy():
    x = np.ones((6, 4))[:, ::2]  # a strided view: a flat copy would lose what is written into it
    with pytest.raises(ValueError, match="C-contiguous"):
        metric_passes.recover(x, x, x, x, np.empty((6, 2))[:, :])
    with pytest.raises(ValueError, match="C-contiguous"):
        metric_passes.centred_targets(np.ones(4), np.ones(4), np.ones(4), np.ones(4), 1.0, 1.0, np.ones(4), 0.1, 1.0,
                                      np.ones(8)[::2])
