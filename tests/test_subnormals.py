"""Subnormal numbers flushed to zero around the single-precision factorisations, and only there."""

import threading

import numpy as np
import pytest

from mechdesign.core.subnormals import can_flush, flushed_subnormals
from mechdesign.solvers import metric_dense, metric_interior_kernels

needs_flush = pytest.mark.skipif(not can_flush(), reason="the modes are set only on Linux on x86-64")


def _product() -> float:
    """A float32 product whose exact value, 1e-40, is subnormal."""
    return float(np.float32(1e-30) * np.float32(1e-10))


def test_a_subnormal_product_is_kept_outside_the_context():
    assert 0.0 < _product() < 1.2e-38


@needs_flush
def test_inside_the_context_a_subnormal_product_is_zero_and_the_modes_come_back():
    with flushed_subnormals():
        assert _product() == 0.0
        assert float(np.float32(1e-30) * np.float32(1e-5)) > 0.0  # (normal results are untouched)
    assert _product() > 0.0


@needs_flush
def test_the_modes_come_back_after_an_error_and_after_a_nested_context():
    with pytest.raises(RuntimeError):
        with flushed_subnormals():
            raise RuntimeError("inside")
    assert _product() > 0.0
    with flushed_subnormals():
        with flushed_subnormals():
            pass
        assert _product() == 0.0  # the inner exit restores the outer context's modes
    assert _product() > 0.0


@needs_flush
def test_the_modes_are_the_threads_own():
    """A thread already running keeps its modes (a thread started inside the context would
    inherit them: threads start with their creator's)."""
    seen, go = [], threading.Event()

    def look():
        go.wait()
        seen.append(_product())

    other = threading.Thread(target=look)
    other.start()
    with flushed_subnormals():
        go.set()
        other.join()
    assert seen[0] > 0.0


def test_disabled_it_changes_nothing():
    with flushed_subnormals(False):
        assert _product() > 0.0


@needs_flush
@pytest.mark.parametrize("single", [True, False])
def test_the_blocks_are_factorised_with_subnormals_flushed_in_single_precision_only(single, monkeypatch):
    """Every thread that factorises blocks in single precision runs with the modes set (where
    the subnormals made them fourfold slower); in double precision none does."""
    seen = []
    kernel = metric_interior_kernels.factor_and_add_inverses

    def recording(*args):
        seen.append(_product())
        return kernel(*args)

    monkeypatch.setattr(metric_interior_kernels, "factor_and_add_inverses", recording)
    rng = np.random.default_rng(3)
    g, m = 5, 40
    a, b = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 4])
    rows = np.repeat(np.arange(4)[None, :], m, axis=0).ravel()
    out = np.repeat(np.arange(m), 4)
    factors, scale, total = metric_dense.factors_and_inverse_sum(
        rng.uniform(0.5, 2.0, rows.size), a[rows], b[rows], np.full(rows.size, 1.5), out,
        rng.uniform(0.5, 2.0, (g, m)), threads=2, single=single)
    assert len(seen) >= 2
    assert all((product == 0.0) == single for product in seen)
    assert _product() > 0.0  # (the caller's modes as before)
    assert np.isfinite(total).all() and factors.dtype == (np.float32 if single else np.float64)
