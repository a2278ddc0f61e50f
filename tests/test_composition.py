"""Sequential compositions ⊙ and • (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, Def. 19-20) and the KL rows of Tables II and III
(Prop. 3-6), checked on random instances."""

import numpy as np
import pytest
from scipy.optimize import linprog

from mechdesign.core.divergences import divergence
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism
from mechdesign.mechanisms.composition import (
    compose_independent,
    compose_shared,
    product_distribution,
)

KL = divergence("kl")


def kl(p, q):
    return float(KL.value(p, q))


def w1(a, b, cost):
    """Earth mover's distance by the transportation LP (SciPy, independent of mechdesign)."""
    n, m = cost.shape
    rows = np.kron(np.eye(n), np.ones(m))
    cols = np.kron(np.ones(n), np.eye(m))
    res = linprog(cost.ravel(), A_eq=np.vstack([rows, cols]), b_eq=np.concatenate([a, b]),
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def random_mechanism(rng, n, m, concentration=2.0):
    return rng.dirichlet(np.ones(m) * concentration, size=n)


def adaptive(rng, m0, n, m1):
    return np.stack([random_mechanism(rng, n, m1) for _ in range(m0)])


def reflexive_relation(rng, n, p=0.5):
    adj = rng.random((n, n)) < p
    adj = adj | adj.T | np.eye(n, dtype=bool)
    return adj


def kl_dp_level(k, adj):
    """max over (x, x') in Φ of KL(K[x] ‖ K[x']) (Φ symmetric: both directions)."""
    i, j = np.nonzero(adj)
    return float(np.max(KL.value(k[i], k[j])))


def lifted_pair(rng, adj):
    """(λ0, λ1) in Φ#: the marginals of a random coupling supported on Φ (Def. 14)."""
    g = rng.random(adj.shape) * adj
    g /= g.sum()
    return g.sum(axis=1), g.sum(axis=0)


def test_shared_composition_by_hand():
    a0 = np.array([[0.75, 0.25], [0.25, 0.75]])
    a1 = np.array([[[0.9, 0.1], [0.2, 0.8]],      # A1(y0 = 0)
                   [[0.6, 0.4], [0.3, 0.7]]])     # A1(y0 = 1)
    both = compose_shared(a0, a1).matrix
    assert both[0].tolist() == pytest.approx([0.75 * 0.9, 0.75 * 0.1, 0.25 * 0.6, 0.25 * 0.4])
    assert both[1].tolist() == pytest.approx([0.25 * 0.2, 0.25 * 0.8, 0.75 * 0.3, 0.75 * 0.7])
    last = compose_shared(a0, a1, reveal="last").matrix
    assert last[1].tolist() == pytest.approx([0.25 * 0.2 + 0.75 * 0.3, 0.25 * 0.8 + 0.75 * 0.7])


def test_independent_composition_by_hand():
    a0 = np.array([[0.75, 0.25], [0.25, 0.75]])
    a1 = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.6, 0.4], [0.3, 0.7]]])
    k = compose_independent(a0, a1).matrix
    # input (x0, x1) = (0, 1): y0 from A0(0), then A1(y0) applied to x1 = 1
    assert k[1].tolist() == pytest.approx([0.75 * 0.2, 0.75 * 0.8, 0.25 * 0.3, 0.25 * 0.7])
    last = compose_independent(a0, a1, reveal="last").matrix
    assert last[1].tolist() == pytest.approx([0.75 * 0.2 + 0.25 * 0.3, 0.75 * 0.8 + 0.25 * 0.7])
    assert product_distribution([0.5, 0.5], [0.2, 0.8]).tolist() == pytest.approx([0.1, 0.4, 0.1, 0.4])


def test_composition_keeps_labels_and_rejects_bad_shapes():
    a0 = Mechanism([[0.5, 0.5], [0.1, 0.9]], ["no", "yes"], ["n", "y"])
    comp = compose_shared(a0, Mechanism([[0.5, 0.5], [0.2, 0.8]], ["no", "yes"], ["a", "b"]))
    assert comp.outputs.labels == ("(n, a)", "(n, b)", "(y, a)", "(y, b)")
    assert compose_independent(a0, a0).inputs.labels[1] == "(no, yes)"
    with pytest.raises(ProblemError, match="shape"):
        compose_shared(np.eye(2), np.ones((3, 2, 2)) / 2)
    with pytest.raises(ProblemError, match="reveal"):
        compose_shared(np.eye(2), np.eye(2), reveal="first")


@pytest.mark.parametrize("seed", range(25))
def test_kl_chain_rule_holds_exactly_for_the_independent_composition(seed):
    """The identity behind Prop. 5: KL of the joint (y0, y1) = KL of A0's outputs +
    E_{y0}[KL of A1(y0)'s outputs] — a wrong composition breaks the equality."""
    rng = np.random.default_rng(seed)
    n, m0, m1 = 3, 3, 4
    a0, a1 = random_mechanism(rng, n, m0), adaptive(rng, m0, n, m1)
    l0, l0p, l1, l1p = (rng.dirichlet(np.ones(n)) for _ in range(4))
    k = compose_independent(a0, a1).matrix
    lhs = kl(product_distribution(l0, l1) @ k, product_distribution(l0p, l1p) @ k)
    out0 = l0 @ a0
    rhs = kl(out0, l0p @ a0) + sum(out0[y] * kl(l1 @ a1[y], l1p @ a1[y]) for y in range(m0))
    assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("reveal", ["both", "last"])
def test_table2_shared_composition_of_kl_distp_adds_epsilons(seed, reveal):
    """Prop. 3 (Table II, ⊙): A0 (ε0, KL)-DistP and every A1(y0) (ε1, KL)-DistP w.r.t. Φ#
    give A1 ⊙ A0 (ε0 + ε1, KL)-DistP w.r.t. Φ#. By Theorems 1 and 4, the DistP level over Φ#
    is the KL-DP level over Φ."""
    rng = np.random.default_rng(seed)
    n, m0, m1 = 4, 3, 3
    adj = reflexive_relation(rng, n)
    a0, a1 = random_mechanism(rng, n, m0), adaptive(rng, m0, n, m1)
    eps0 = kl_dp_level(a0, adj)
    eps1 = max(kl_dp_level(a1[y], adj) for y in range(m0))
    comp = compose_shared(a0, a1, reveal).matrix
    assert kl_dp_level(comp, adj) <= eps0 + eps1 + 1e-12
    for _ in range(20):
        lam0, lam1 = lifted_pair(rng, adj)
        assert kl(lam0 @ comp, lam1 @ comp) <= eps0 + eps1 + 1e-12


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("reveal", ["both", "last"])
def test_table2_independent_composition_of_kl_distp_adds_epsilons(seed, reveal):
    """Prop. 5 (Table II, •): w.r.t. Ψ ◇ Ψ, the pairs of product distributions."""
    rng = np.random.default_rng(seed)
    n, m0, m1 = 3, 3, 3
    psi = [(rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))) for _ in range(3)]
    psi += [(b, a) for a, b in psi]
    a0, a1 = random_mechanism(rng, n, m0), adaptive(rng, m0, n, m1)
    eps0 = max(kl(a @ a0, b @ a0) for a, b in psi)
    eps1 = max(kl(a @ a1[y], b @ a1[y]) for a, b in psi for y in range(m0))
    comp = compose_independent(a0, a1, reveal).matrix
    for l0, l0p in psi:
        for l1, l1p in psi:
            level = kl(product_distribution(l0, l1) @ comp, product_distribution(l0p, l1p) @ comp)
            assert level <= eps0 + eps1 + 1e-12


def _line_metric(n):
    x = np.arange(n, dtype=float)
    return np.abs(x[:, None] - x[None, :])


def kl_xdp_level(k, d):
    """max over x != x' of KL(K[x] ‖ K[x']) / d(x, x')."""
    i, j = np.nonzero(~np.eye(len(d), dtype=bool))
    return float(np.max(KL.value(k[i], k[j]) / d[i, j]))


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("reveal", ["both", "last"])
def test_table3_shared_composition_of_kl_xdistp_adds_epsilons(seed, reveal):
    """Prop. 4 (Table III, ⊙): with Φ all pairs, (ε_b, W1, KL)-XDistP is (ε_b, d, KL)-XDP
    (Theorems 2 and 4), and the composition is (ε0 + ε1, W1, KL)-XDistP."""
    rng = np.random.default_rng(seed)
    n, m0, m1 = 4, 3, 3
    d = _line_metric(n)
    a0, a1 = random_mechanism(rng, n, m0, 5.0), adaptive(rng, m0, n, m1)
    eps0 = kl_xdp_level(a0, d)
    eps1 = max(kl_xdp_level(a1[y], d) for y in range(m0))
    comp = compose_shared(a0, a1, reveal).matrix
    assert kl_xdp_level(comp, d) <= eps0 + eps1 + 1e-12
    for _ in range(10):
        lam, lam2 = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        assert kl(lam @ comp, lam2 @ comp) <= (eps0 + eps1) * w1(lam, lam2, d) + 1e-12


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("reveal", ["both", "last"])
def test_table3_independent_composition_of_kl_xdistp_adds_epsilons(seed, reveal):
    """Prop. 6 (Table III, •): KL <= ε0 W1(λ0, λ0') + ε1 W1(λ1, λ1') <= (ε0 + ε1) W1 of the
    product distributions, for the max metric and the sum metric on X × X."""
    rng = np.random.default_rng(seed)
    n, m0, m1 = 3, 3, 3
    d = _line_metric(n)
    psi = [(rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))) for _ in range(3)]
    a0, a1 = random_mechanism(rng, n, m0, 5.0), adaptive(rng, m0, n, m1)
    eps0 = max(kl(a @ a0, b @ a0) / w1(a, b, d) for a, b in psi)
    eps1 = max(kl(a @ a1[y], b @ a1[y]) / w1(a, b, d) for a, b in psi for y in range(m0))
    comp = compose_independent(a0, a1, reveal).matrix
    d_max = np.maximum(d[:, None, :, None], d[None, :, None, :]).reshape(n * n, n * n)
    d_sum = (d[:, None, :, None] + d[None, :, None, :]).reshape(n * n, n * n)
    for l0, l0p in psi:
        for l1, l1p in psi:
            p, q = product_distribution(l0, l1), product_distribution(l0p, l1p)
            level = kl(p @ comp, q @ comp)
            assert level <= eps0 * w1(l0, l0p, d) + eps1 * w1(l1, l1p, d) + 1e-12
            assert level <= (eps0 + eps1) * w1(p, q, d_max) + 1e-12
            assert level <= (eps0 + eps1) * w1(p, q, d_sum) + 1e-12
