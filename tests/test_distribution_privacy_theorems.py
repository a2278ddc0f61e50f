"""Kawamoto and Murakami’s (2019) theorems as checks on random instances: Theorem 1 (divergence DP lifts to DistP
over the lifted relation), Theorem 2 (XDP gives XDistP with noise proportional to W1), Theorem 3
(coupling mechanisms under approximate knowledge), Theorem 4 (DistP over point masses is DP)."""

import numpy as np
import pytest
from scipy.optimize import linprog

import mechdesign
from mechdesign.core.divergences import DIVERGENCES, F_DIVERGENCES, divergence
from mechdesign.core.domain import Domain
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.design.problem import Problem
from mechdesign.privacy import ApproximateKnowledge, DivergenceDistP, DivergenceDP, Side
from mechdesign.transport.coupling_kernel import mechanism_from_coupling


def reflexive_relation(rng, n):
    adj = rng.random((n, n)) < 0.4
    adj[0, 1] = True                       # at least one pair of distinct inputs
    return adj | adj.T | np.eye(n, dtype=bool)


def lifted_pair(rng, adj):
    """(λ0, λ1) ∈ Φ# with the coupling γ (supp γ ⊆ Φ) that witnesses it (Def. 14)."""
    g = rng.exponential(size=adj.shape) * adj
    g[rng.random(adj.shape) < 0.3] = 0.0
    if g.sum() == 0:
        g[0, 1] = 1.0
    g /= g.sum()
    return g.sum(axis=1), g.sum(axis=0), g


def w1_line(a, b):
    """W1 on the points 0..n−1 with |x − y|: Σ |F_a − F_b| (closed form)."""
    return float(np.abs(np.cumsum(a) - np.cumsum(b))[:-1].sum())


@pytest.mark.parametrize("name", F_DIVERGENCES)
@pytest.mark.parametrize("seed", range(10))
def test_theorem1_f_divergence_dp_lifts_to_distp_over_the_lifted_relation(name, seed):
    rng = np.random.default_rng(seed)
    n, m = 5, 4
    div = divergence(name)
    a = rng.dirichlet(np.ones(m) * 2, size=n)
    adj = reflexive_relation(rng, n)
    i, j = np.nonzero(np.triu(adj, 1))
    eps = DivergenceDP(1.0, name, (i, j)).audit({"default": a}).achieved["epsilon"]
    for _ in range(25):
        lam0, lam1, g = lifted_pair(rng, adj)
        level = div.value(lam0 @ a, lam1 @ a)
        # eq. (1) of the proof (joint convexity), then the theorem
        x0, x1 = np.nonzero(g)
        assert level <= float((g[x0, x1] * div.value(a[x0], a[x1])).sum()) + 1e-12
        assert level <= eps + 1e-12


def test_theorem1_holds_for_a_designed_kl_dp_mechanism():
    """Design (0.3, KL)-DP over a chain adjacency with the solver; audit KL-DistP on lifted pairs."""
    rng = np.random.default_rng(0)
    n = 5
    dom = Domain.from_size(n)
    chain = [(k, k + 1) for k in range(n - 1)]
    d = np.abs(np.subtract.outer(np.arange(n), np.arange(n))).astype(float)
    result = Problem(dom, ExpectedLoss(d, {"default": np.full(n, 1 / n)}),
                     [DivergenceDP(0.3, "kl", chain)]).solve()
    assert result.status == "optimal"
    adj = np.eye(n, dtype=bool)
    for a, b in chain:
        adj[a, b] = adj[b, a] = True
    pairs = []
    for t in range(30):
        lam0, lam1, _ = lifted_pair(rng, adj)
        pairs.append((Side(f"a{t}", lam0), Side(f"b{t}", lam1)))
    audit = mechdesign.audit(result.mechanism, DivergenceDistP(0.3, pairs, "kl"))
    assert audit.holds, audit.achieved


@pytest.mark.parametrize("name", F_DIVERGENCES)
@pytest.mark.parametrize("seed", range(10))
def test_theorem2_xdp_gives_xdistp_with_noise_proportional_to_w1(name, seed):
    """(ε, d, D_f)-XDP over all pairs ⇒ D_f(A#λ ‖ A#λ') <= ε·W1(λ, λ') for all λ, λ'."""
    rng = np.random.default_rng(seed)
    n, m = 5, 5
    div = divergence(name)
    x = np.arange(n, dtype=float)
    d = np.abs(x[:, None] - x[None, :])
    a = rng.dirichlet(np.ones(m) * 3, size=n)
    off = ~np.eye(n, dtype=bool)
    eps = float(np.max(div.value(a[:, None, :], a[None, :, :])[off] / d[off]))
    for _ in range(25):
        lam, lam2 = rng.dirichlet(np.ones(n) * 0.5), rng.dirichlet(np.ones(n) * 0.5)
        assert div.value(lam @ a, lam2 @ a) <= eps * w1_line(lam, lam2) + 1e-12


def test_theorem2_needs_an_f_divergence_the_max_divergence_breaks_w1_scaling():
    """D∞ is not an f-divergence: a geometric-like mechanism that is (ε, d, D∞)-XDP moves a tiny
    mass t across the line and D∞ grows like ln(1 + t(e^{ε(n−1)} − 1)) > ε·t(n−1) = ε·W1."""
    n, eps = 6, 1.0
    x = np.arange(n, dtype=float)
    a = np.exp(-eps * np.abs(x[:, None] - x[None, :]))
    a /= a.sum(axis=1, keepdims=True)
    off = ~np.eye(n, dtype=bool)
    d = np.abs(x[:, None] - x[None, :])
    level = np.max(divergence("max").value(a[:, None, :], a[None, :, :])[off] / d[off])
    t = 1e-3
    lam, lam2 = np.eye(n)[0], (1 - t) * np.eye(n)[0] + t * np.eye(n)[-1]
    assert divergence("max").value(lam2 @ a, lam @ a) > 2 * level * w1_line(lam, lam2)


def random_coupling(rng, lam, mu):
    """A vertex of cp(λ, μ) (random costs, SciPy's LP) or the independent coupling λ ⊗ μ."""
    if rng.random() < 0.3:
        return np.outer(lam, mu)
    n, m = lam.size, mu.size
    res = linprog(rng.random(n * m), A_eq=np.vstack([np.kron(np.eye(n), np.ones(m)),
                                                      np.kron(np.ones(n), np.eye(m))]),
                  b_eq=np.concatenate([lam, mu]), bounds=(0, None), method="highs")
    return np.clip(res.x.reshape(n, m), 0, None)


def perturbed(rng, lam, eta):
    """λ·e^u / Z with |u| <= eta: same support, D∞ both ways at most 2·eta."""
    v = lam * np.exp(rng.uniform(-eta, eta, lam.size))
    return v / v.sum()


@pytest.mark.parametrize("seed", range(40))
def test_theorem3_audited_divergences_never_exceed_the_bounds_under_perturbed_knowledge(seed):
    rng = np.random.default_rng(seed)
    n, m, contexts = 5, 4, 3
    mu = rng.dirichlet(np.ones(m))
    built, actual, mechs = {}, {}, {}
    for s in range(contexts):
        lam_hat = rng.dirichlet(np.ones(n))
        if seed % 2:
            lam_hat[rng.integers(n)] = 0.0        # zero-mass rows: the documented choice (μ)
            lam_hat /= lam_hat.sum()
        lam = perturbed(rng, lam_hat, rng.uniform(0, 0.4))
        k = mechanism_from_coupling(random_coupling(rng, lam_hat, mu), lam_hat, mu)
        assert np.allclose(lam_hat @ k, mu, atol=1e-12)            # a coupling mechanism
        built[f"s{s}"], actual[f"s{s}"], mechs[f"s{s}"] = lam_hat, lam, k
    eps = max(max(divergence("max").value(built[s], actual[s]), divergence("max").value(actual[s], built[s]))
              for s in built)
    outs = {s: actual[s] @ mechs[s] for s in built}
    for a, p in outs.items():
        for b, q in outs.items():
            if a == b:
                continue
            assert divergence("max").value(p, q) <= 2 * eps + 1e-12                    # part 1
            assert divergence("kl").value(p, q) <= 2 * eps * np.exp(eps) + 1e-12        # part 2
            for name in F_DIVERGENCES:                                                 # part 3
                f = divergence(name).generator
                assert divergence(name).value(p, q) <= np.exp(eps) * f(np.exp(2 * eps)) + 1e-12
    line = ApproximateKnowledge(built, actual).audit(mechs)
    assert line.holds
    assert line.detail["knowledge_epsilon"] == pytest.approx(eps)
    assert set(line.achieved) == set(DIVERGENCES)


@pytest.mark.parametrize("seed", range(10))
def test_theorem3_exact_knowledge_leaks_nothing(seed):
    """λ̂_s = λ_s: every context outputs exactly μ, (0, D)-DistP for every divergence."""
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet(np.ones(4))
    lams = {s: rng.dirichlet(np.ones(5)) for s in "abc"}
    mechs = {s: mechanism_from_coupling(random_coupling(rng, lam, mu), lam, mu) for s, lam in lams.items()}
    line = ApproximateKnowledge(lams, lams).audit(mechs)
    assert line.detail["knowledge_epsilon"] == 0.0
    assert all(v <= 1e-12 for v in line.achieved.values()) and line.holds
    pairs = [(Side(a, lams[a], a), Side(b, lams[b], b)) for a in lams for b in lams if a < b]
    for name in DIVERGENCES:
        assert DivergenceDistP(0.0, pairs, name).audit(mechs).holds


@pytest.mark.parametrize("name", list(DIVERGENCES))
def test_theorem4_distp_over_point_masses_is_divergence_dp(name):
    rng = np.random.default_rng(5)
    a = rng.dirichlet(np.ones(4), size=4)
    eye = np.eye(4)
    adj = [(0, 1), (1, 2), (0, 3)]
    dp = DivergenceDP(1.0, name, adj).audit({"default": a}).achieved["epsilon"]
    pairs = [(Side(str(x), eye[x]), Side(str(y), eye[y])) for x, y in adj]
    distp = DivergenceDistP(1.0, pairs, name).audit({"default": a}).achieved["epsilon"]
    assert distp == pytest.approx(dp, rel=1e-12)
