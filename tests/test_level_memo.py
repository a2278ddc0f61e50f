"""Levels are remembered only inside one certification, by notion and matrix bytes."""

from __future__ import annotations

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.metrics import Metric
from mechdesign.privacy import MetricPrivacy
from mechdesign.privacy import certify as certify_module
from mechdesign.privacy.level_memo import remembered_level, remembering_levels


def test_a_level_is_computed_once_per_matrix_inside_the_block_and_always_outside():
    calls = []

    def compute():
        calls.append(1)
        return 0.5

    owner, k = object(), np.eye(3)
    assert remembered_level(owner, k, compute) == 0.5
    assert remembered_level(owner, k, compute) == 0.5
    assert len(calls) == 2  # no block: nothing remembered
    with remembering_levels():
        remembered_level(owner, k, compute)
        remembered_level(owner, k.copy(), compute)  # same bytes
        assert len(calls) == 3
        k2 = k.copy()
        k2[0, 1] = 1e-300  # one entry differs
        remembered_level(owner, k2, compute)
        remembered_level(object(), k, compute)  # another notion
        assert len(calls) == 5
    remembered_level(owner, k, compute)
    assert len(calls) == 6  # the block's memory is gone


def test_certification_computes_the_final_matrix_level_once(monkeypatch):
    rng = np.random.default_rng(3)
    pts = rng.random((12, 2))
    notion = MetricPrivacy(2.0, Metric("euclidean"), Domain.from_points(pts))
    d = Metric("euclidean").distances(Domain.from_points(pts))
    K = np.exp(-d)
    K /= K.sum(1, keepdims=True)  # e^{d(x,y) − d(x′,y)} ≤ e^{d(x,x′)}, Z′/Z ≤ e^{d(x,x′)}: ε = 2
    seen = []
    original = MetricPrivacy._all_pairs_level

    def counting(self, k):
        seen.append(np.asarray(k).copy())
        return original(self, k)

    monkeypatch.setattr(MetricPrivacy, "_all_pairs_level", counting)
    mechs, audits, _ = certify_module.certify([notion], {"default": K})
    assert audits[0].holds
    assert len(seen) == 1  # the repair's check, read back by the audit
    assert audits[0].achieved["epsilon"] == notion._all_pairs_level(mechs["default"])


def test_the_solvers_deadline_keeps_the_certificates_expected_time_in_reserve():
    from mechdesign.core.limits import Limits
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.design.problem import Problem
    from mechdesign.privacy.metric import PAIR_ENTRY_SECONDS

    lim = Limits(10.0, reserve=3.0)
    assert 6.9 < lim.remaining() <= 7.0 and not lim.expired()
    assert Limits(10.0, reserve=30.0).reserve == 5.0  # at most half the limit
    assert Limits(None, reserve=30.0).reserve == 0.0 and Limits(None).remaining() == np.inf
    pts = np.random.default_rng(0).random((30, 2))
    dom = Domain.from_points(pts)
    d = Metric("euclidean").distances(dom)
    plane = Problem(inputs=dom, privacy=[MetricPrivacy(1.0, Metric("euclidean"), dom)],
                    objective=ExpectedLoss(d, {"default": np.full(30, 1 / 30)}))
    assert plane.certification_seconds() == 30 * 30 * 30 * PAIR_ENTRY_SECONDS
    line = Domain.from_size(30)
    on_line = Problem(inputs=line, privacy=[MetricPrivacy(1.0, Metric("absolute"), line)],
                      objective=ExpectedLoss(Metric("absolute").distances(line),
                                             {"default": np.full(30, 1 / 30)}))
    assert on_line.certification_seconds() == 0.0  # consecutive pairs only


def test_levels_asked_from_two_threads_at_once_agree_with_the_main_thread(monkeypatch):
    # the compiled kernels run on the main thread only (numba's built-in threading layer ends
    # the process when two threads enter it); other threads take the NumPy twins
    import threading

    from mechdesign.privacy import metric

    monkeypatch.setattr(metric, "NUMPY_PAIRS_ENTRIES", 0)  # the compiled path from any size
    rng = np.random.default_rng(4)
    pts = rng.random((40, 2))
    notion = MetricPrivacy(1.0, Metric("euclidean"), Domain.from_points(pts))
    K = rng.dirichlet(np.ones(7), size=40)
    expected = notion.level(K)
    out = []
    threads = [threading.Thread(target=lambda: out.append(notion.level(K))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 4 and np.allclose(out, expected, rtol=1e-12)
