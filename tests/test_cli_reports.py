"""The central guarantees on the command line: ``solve --reports T --delta D`` (repeated reports)
and ``mechdesign amplify`` (shuffling), against the accounting functions and closed forms."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

from mechdesign.accounting.shuffle import amplification

WARNER = Path(__file__).resolve().parent.parent / "problems" / "warner-rr.toml"


def randomized_response_delta(eps0: float, times: int, eps: float) -> float:
    """δ(ε) of T reports through Warner's randomized response at ε0: the privacy loss is ε0 per
    report that keeps the truth and −ε0 per lie, so with k lies out of T the loss is (T − 2k)ε0,
    and δ(ε) = Σ_k Pr[k] (1 − e^{ε − (T − 2k)ε0})_+ with k ~ Bin(T, 1/(1 + e^{ε0}))."""
    k = np.arange(times + 1)
    loss = (times - 2 * k) * eps0
    weights = binom.pmf(k, times, 1 / (1 + math.exp(eps0)))
    return float(np.sum(weights * np.maximum(0.0, 1 - np.exp(eps - loss))))


def test_solve_reports_the_composed_guarantee(run_cli):
    code, out, _ = run_cli("solve", WARNER, "--reports", 50, "--delta", 1e-5, "--json")
    assert code == 0
    found = json.loads(out)["reports"]["default"]
    assert found["times"] == 50 and found["local_epsilon"] == pytest.approx(1.0, abs=1e-9)
    eps = found["epsilon"]
    assert eps <= 50 * 1.0 + 1e-9  # never above basic composition
    # the reported ε is an upper bound within T·step of the exact one: δ at the reported ε is
    # at most the target, and a little below it δ exceeds the target
    assert randomized_response_delta(1.0, 50, eps) <= 1e-5 * (1 + 1e-9)
    assert randomized_response_delta(1.0, 50, eps - 50 * found["step"] - 1e-6) > 1e-5


def test_reports_are_printed_beside_the_certificate(run_cli):
    code, out, _ = run_cli("solve", WARNER, "--reports", 10, "--delta", 1e-6)
    assert code == 0 and "10 reports per user" in out


def test_reports_need_a_delta(run_cli):
    code, _, err = run_cli("solve", WARNER, "--reports", 10)
    assert code == 2 and "--delta" in err


def test_amplify_prints_both_bounds_and_the_smaller(tmp_path):
    result = tmp_path / "warner.json"
    subprocess.run([sys.executable, "-m", "mechdesign", "solve", str(WARNER), "--out", str(result)],
                   check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-m", "mechdesign", "amplify", str(result), "--users", "1e6",
                           "--delta", "1e-6", "--json"], check=True, capture_output=True, text=True)
    found = json.loads(done.stdout)["mechanisms"]["default"]
    matrix = np.array(json.loads(result.read_text())["mechanisms"]["default"]["matrix"])
    expected = amplification(matrix, 1_000_000, 1e-6)
    assert found["epsilon"] == pytest.approx(expected.epsilon, rel=1e-12)
    assert found["epsilon"] == pytest.approx(min(found["bounds"]["clones"], found["bounds"]["variation_ratio"]), rel=1e-12)
    assert 0 < found["epsilon"] < 1.0  # shuffling a million reports amplifies ε0 = 1
