"""The all-pairs d-privacy audit and envelope have a NumPy form (small problems, no numba to
load) and a compiled form (large ones): both must give the same numbers, including the rules
for zeros, coincident inputs and huge ratios."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.privacy import metric as M
from mechdesign.privacy.metric_kernels import max_level, max_plus


@pytest.mark.parametrize("seed", range(5))
def test_numpy_and_compiled_kernels_agree(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n, m = rng.integers(2, 12), rng.integers(1, 8)
        k = rng.random((n, m))
        k[rng.random((n, m)) < 0.2] = 0.0
        if rng.random() < 0.4:
            k[1] = k[0]  # often coincident inputs with equal rows
        pts = rng.integers(0, 4, (n, 2)).astype(float)  # coincident points are frequent
        d = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
        logk = M._kernel_log(k)
        a, b = M._max_level_numpy(logk, d), max_level(logk, np.ascontiguousarray(d))
        assert a == b or abs(a - b) <= 1e-12 * max(1.0, abs(b))
        pen = np.where(0.7 * d <= 1e-9, 0.0, 0.7 * d)
        np.testing.assert_allclose(M._max_plus_numpy(pen, logk), max_plus(np.ascontiguousarray(pen), logk),
                                   rtol=1e-13)


def test_numpy_level_rules_by_hand():
    d = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    same = M._kernel_log(np.array([[0.5, 0.5], [0.5, 0.5], [0.8, 0.2]]))
    assert M._max_level_numpy(same, d) == pytest.approx(np.log(0.5 / 0.2))
    split = M._kernel_log(np.array([[0.6, 0.4], [0.5, 0.5], [0.5, 0.5]]))  # coincident, rows differ
    assert M._max_level_numpy(split, d) == np.inf
    zero = M._kernel_log(np.array([[1.0, 0.0], [1.0, 0.0], [0.5, 0.5]]))  # 0 next to 0.5
    assert M._max_level_numpy(zero, d) == np.inf
