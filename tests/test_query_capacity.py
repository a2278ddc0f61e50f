"""Individual channel capacity of a query (Wu, Xia and He, “Achieving Dalenius’ Goal of Data Privacy with Practical Assumptions”, arXiv 2017, Def. 5, Theorem 3.1), its group and
composition properties (§6, §7) and the max-information theorem (Theorem 2.1)."""

import itertools

import numpy as np
import pytest

from mechdesign import ProblemError
from mechdesign.information.capacity import shannon_capacity
from mechdesign.information.leakage import mutual_information
from mechdesign.information.query_capacity import (
    individual_channel_capacity,
    query_dp_epsilon,
    query_max_information,
)
from mechdesign.mechanisms.channels import binary_entropy, binary_symmetric


def info_of_record(f, universes, K, joint, i):
    """I(X_i; Y) for a joint prior over all datasets (brute force, independent of the module)."""
    datasets = list(itertools.product(*universes))
    n_i = len(universes[i])
    marg = np.zeros(n_i)
    rows = np.zeros((n_i, K.shape[1]))
    for w, x in zip(joint, datasets):
        a = universes[i].index(x[i])
        marg[a] += w
        rows[a] += w * K[f(x)]
    keep = marg > 0
    rows = rows[keep] / marg[keep][:, None]
    return mutual_information(marg[keep] / marg[keep].sum(), rows)


def parity(x):
    return sum(x) % 2


@pytest.mark.parametrize("p", [0.1, 0.3])
def test_parity_through_a_bsc_leaks_one_minus_h_per_individual(p):
    # Wu, Xia and He 2017 §4.1: every record can steer f to both values, so C_1 = 1 − H(p)
    K = binary_symmetric(p).matrix
    res = individual_channel_capacity(parity, [[0, 1]] * 3, K)
    assert res.lower - 1e-9 <= 1 - binary_entropy(p) <= res.upper + 1e-9


def test_correlated_knowledge_makes_an_unused_record_leak_as_much():
    # f reads record 0 only; with correlated priors record 1 leaks through record 0 (Def. 5)
    K = binary_symmetric(0.2).matrix
    res = individual_channel_capacity(lambda x: x[0], [[0, 1], [0, 1]], K)
    assert res.per_individual[(1,)][0] == pytest.approx(1 - binary_entropy(0.2), abs=1e-9)
    # ... while under independent priors it leaks nothing (max-information 0) and record 0
    # leaks the BSC's ε = ln(0.8/0.2)
    f = lambda x: x[0]
    assert query_max_information(f, [[0, 1], [0, 1]], K, records=[1]) == 0.0
    assert query_max_information(f, [[0, 1], [0, 1]], K, records=[0]) == pytest.approx(np.log(4.0))


def test_no_joint_prior_beats_the_individual_capacity_and_the_witness_reaches_it():
    rng = np.random.default_rng(0)
    universes = [[0, 1, 2], [0, 1]]
    table = rng.integers(0, 4, size=(3, 2))
    f = lambda x: int(table[x[0], x[1]])
    K = rng.dirichlet(np.ones(5), size=4)
    res = individual_channel_capacity(f, universes, K)
    for _ in range(300):
        joint = rng.dirichlet(np.full(6, 0.3))
        for i in range(2):
            assert info_of_record(f, universes, K, joint, i) <= res.upper + 1e-9
    # the witness: record i's values take the chosen completions, with the capacity prior
    rows = sorted(set(res.choice.values()))
    cap = shannon_capacity(K[rows])
    assert cap.lower == pytest.approx(res.lower, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_max_information_under_independent_priors_equals_dp_epsilon(seed):
    # Wu, Xia and He 2017, Theorem 2.1: max-information privacy = differential privacy
    rng = np.random.default_rng(seed)
    universes = [[0, 1, 2], [0, 1], [0, 1]]
    table = rng.integers(0, 5, size=(3, 2, 2))
    f = lambda x: int(table[x])
    K = rng.dirichlet(np.ones(4), size=5)
    assert query_max_information(f, universes, K) == pytest.approx(query_dp_epsilon(f, universes, K),
                                                                   abs=1e-12)


def test_group_capacity_is_at_most_the_group_size_times_the_individual_capacity():
    # Wu, Xia and He 2017 §6, Lemma 4 / Theorem 6.1 with b = 0
    rng = np.random.default_rng(3)
    universes = [[0, 1]] * 3
    f = lambda x: x[0] + x[1] + x[2]
    K = rng.dirichlet(np.ones(4), size=4)
    single = individual_channel_capacity(f, universes, K)
    pair = individual_channel_capacity(f, universes, K, groups=[(0, 1)])
    assert pair.lower <= 2 * single.upper + 1e-9
    assert pair.upper >= single.lower - 1e-9


def test_basic_composition_is_bounded_by_the_sum():
    # Wu, Xia and He 2017 §7.1, Theorem 7.1 with b = 0: two independent channels on the same query
    rng = np.random.default_rng(4)
    universes = [[0, 1]] * 3
    K1 = rng.dirichlet(np.ones(3), size=4)
    K2 = rng.dirichlet(np.ones(2), size=4)
    both = np.einsum("ra,rb->rab", K1, K2).reshape(4, -1)
    f = lambda x: x[0] + x[1] + x[2]
    c1 = individual_channel_capacity(f, universes, K1)
    c2 = individual_channel_capacity(f, universes, K2)
    c = individual_channel_capacity(f, universes, both)
    assert c.lower <= c1.upper + c2.upper + 1e-9
    assert c.upper >= max(c1.lower, c2.lower) - 1e-9


def test_parallel_composition_fails_under_correlated_knowledge():
    # Wu, Xia and He 2017 §7.3, Proposition 7: channels on disjoint records still add up for one person
    p = 0.2
    B = binary_symmetric(p).matrix
    universes = [[0, 1], [0, 1]]
    both = np.kron(B, B)  # output (BSC(x_0), BSC(x_1)), range index 2 x_0 + x_1
    each = 1 - binary_entropy(p)
    c = individual_channel_capacity(lambda x: 2 * x[0] + x[1], universes, both)
    assert c.lower > each + 1e-3  # strictly more than the worst single channel
    assert c.upper <= 2 * each + 1e-9


def test_family_size_limit_and_bad_queries_are_errors():
    K = np.eye(3)
    with pytest.raises(ProblemError, match="channels"):
        individual_channel_capacity(lambda x: sum(x) % 3, [[0, 1, 2]] * 3, K, limit=5)
    with pytest.raises(ProblemError, match="outside"):
        individual_channel_capacity(lambda x: 7, [[0, 1]], K)
    with pytest.raises(ProblemError, match="universe"):
        individual_channel_capacity(lambda x: 0, [[]], K)
