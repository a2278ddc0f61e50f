"""The interior point's working set of pair rows walks its rows as runs (one pair on consecutive
outputs); its maps must equal the pair map G applied densely whatever order the rows joined in,
and the compiled ratio tests must give the step lengths a direct computation gives."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mechdesign.solvers.metric_interior_kernels import centred_targets, recover
from mechdesign.solvers.metric_reduced import ReducedLP
from mechdesign.solvers.metric_rows import Rows


def _line(g, m, rng):
    """The reduced LP of points on a line with their neighbour pairs (a chain)."""
    points = np.sort(rng.random(g))
    x = np.arange(g - 1)
    i, j = np.concatenate([x, x + 1]), np.concatenate([x + 1, x])
    return ReducedLP(np.zeros((g, m)), i, j, np.abs(points[i] - points[j]), 1.0)


def _scattered(g, m, rng):
    """The reduced LP of points in the plane with every ordered pair."""
    points = rng.random((g, 2))
    i, j = (index.ravel() for index in np.meshgrid(np.arange(g), np.arange(g), indexing="ij"))
    keep = i != j
    i, j = i[keep], j[keep]
    return ReducedLP(np.zeros((g, m)), i, j, np.linalg.norm(points[i] - points[j], axis=1), 1.0)


def _joined_in_random_order(lp, m, rng, shuffled=True):
    """A first set of some pairs on every output, then the other rows joining in shuffled
    batches (so that runs are broken, short, and out of pair order), or in pair order
    (``shuffled=False``: batches that end inside one pair's stretch of outputs)."""
    p = lp.a.size
    first = np.zeros((p, m), bool)
    first[rng.random(p) < 0.4] = True
    rows = Rows(lp, first)
    rest = np.argwhere(~first)
    if shuffled:
        rng.shuffle(rest)
    for batch in np.array_split(rest, 3):
        if batch.size:
            rows.add(batch[:, 0], batch[:, 1])
    return rows


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("shape", [_line, _scattered])
@pytest.mark.parametrize("shuffled", [True, False])
def test_runs_of_rows_map_like_the_dense_pair_map(seed, shape, shuffled):
    rng = np.random.default_rng(seed)
    g, m = 7, 5
    lp = shape(g, m, rng)
    assert lp.chain == (shape is _line)
    rows = _joined_in_random_order(lp, m, rng, shuffled)
    assert rows.size == lp.a.size * m
    assert np.array_equal(np.sort(rows.pair * m + rows.out), np.arange(rows.size))  # each row once
    # the growing buffers never hold room for more rows than there are
    assert max(grown.buffer.size for grown in [*rows._rows.values(), *rows._runs]) <= rows.member.size
    for per_row, of_pair in ((rows.a, lp.a), (rows.b, lp.b), (rows.c, lp.coef)):
        assert np.array_equal(per_row, of_pair[rows.pair])
    K = rng.random((g, m))
    dense = lp.G @ K
    np.testing.assert_allclose(rows.slack(K), dense[rows.pair, rows.out], rtol=1e-14)
    values = rng.standard_normal(rows.size)
    full = np.zeros((lp.a.size, m))
    full[rows.pair, rows.out] = values
    np.testing.assert_allclose(rows.transpose(values), lp.G.T @ full, rtol=1e-13, atol=1e-14)
    if shape is _line:
        weights = rng.random(rows.size)
        assert_chain_blocks(lp, rows, weights, *rows.chain(weights))
    # the slacks' direction with the duals' in one pass: as the two passes give them, and the
    # step lengths as a direct computation over the rows gives them
    dK = rng.standard_normal((g, m))
    t, dual, primal = rng.standard_normal(rows.size), rng.random(rows.size) + 0.1, rng.random(rows.size) + 0.1
    dS, dz, a_p, a_d = rows.slack_recovered(dK, t, dual, primal)
    np.testing.assert_array_equal(dS, rows.slack(dK))
    np.testing.assert_allclose(dz, (t - dual * dS) / primal, rtol=1e-14)
    for step, x, dx in ((a_p, primal, dS), (a_d, dual, dz)):
        falling = dx < 0
        assert step == pytest.approx(min(1.0, (-x[falling] / dx[falling]).min(initial=np.inf)), rel=1e-14)


def assert_chain_blocks(lp, rows, weights, diagonal, off):
    """The tridiagonal blocks (diagonals (inputs, outputs), off-diagonals (inputs − 1, outputs))
    are G_yᵀ diag(w) G_y for every output, with the rows' ``weights`` as w."""
    m = diagonal.shape[1]
    w = np.zeros((lp.a.size, m))
    w[rows.pair, rows.out] = weights
    for y in range(m):
        block = (lp.G.T @ sp.diags(w[:, y]) @ lp.G).toarray()
        np.testing.assert_allclose(diagonal[:, y], np.diag(block), rtol=1e-13)
        np.testing.assert_allclose(off[:, y], np.diag(block, -1), rtol=1e-13)


@pytest.mark.parametrize("seed", range(6))
def test_ratio_tests_give_the_largest_interior_steps(seed):
    rng = np.random.default_rng(seed)
    n = 200
    primal, dual = rng.random(n) + 1e-3, rng.random(n) + 1e-3
    dprimal = rng.standard_normal(n) * rng.choice([0.1, 1.0, 10.0])
    t = rng.standard_normal(n) * 0.01
    out = np.empty(n)
    a_p, a_d = recover(t, dual, dprimal, primal, out)
    ddual = (t - dual * dprimal) / primal
    np.testing.assert_allclose(out, ddual, rtol=1e-15)
    expect_p = min(1.0, *(-primal[dprimal < 0] / dprimal[dprimal < 0]))
    expect_d = min(1.0, *(-dual[ddual < 0] / ddual[ddual < 0]))
    assert a_p == pytest.approx(expect_p, rel=1e-15)
    assert a_d == pytest.approx(expect_d, rel=1e-15)
    # the steps found keep everything non-negative, and a step a hair longer would not
    assert np.all(primal + a_p * dprimal >= -1e-15) and np.all(dual + a_d * ddual >= -1e-15)
    if a_p < 1.0:
        assert np.any(primal + 1.001 * a_p * dprimal < 0)


def test_centred_targets_move_products_into_the_band():
    rng = np.random.default_rng(3)
    x, z = rng.random(50), rng.random(50)
    dx, dz = rng.standard_normal(50) * 0.1, rng.standard_normal(50) * 0.1
    t = rng.standard_normal(50)
    lo, hi = 0.02, 0.2
    out = np.empty(50)
    centred_targets(x, dx, z, dz, 0.7, 0.4, t, lo, hi, out)
    v = (x + 0.7 * dx) * (z + 0.4 * dz)
    inside, low, high = (v >= lo) & (v <= hi), v < lo, v > hi
    assert np.all(out[inside] == t[inside])
    np.testing.assert_allclose(out[low], t[low] + (lo - v[low]), rtol=1e-14)
    np.testing.assert_allclose(out[high], t[high] + np.maximum(hi - v[high], -hi), rtol=1e-14)
    assert np.any(low) and np.any(high) and np.any(inside)
