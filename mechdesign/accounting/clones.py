"""Amplification by shuffling from the local ε alone: the numerical clone bound of Feldman,
McMillan and Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal Analysis of Privacy
Amplification by Shuffling", FOCS 2021.

For ε0-LDP randomizers (any, even chosen adaptively) and neighbouring datasets differing in
user 1, each other user's output is, with probability e^{−ε0}, a *clone*: a draw from user 1's
output law under the first input or under the second, with probability ½ each (their Lemma 3.3,
with p = e^{ε0} the ratio bound of user 1's two laws). The shuffled view is then a
post-processing of the counts of the two kinds of clone, and (their Theorem 3.2) δ(ε) is at
most the hockey-stick divergence between

    P = (A + Δ, C − A + 1 − Δ)   and   Q = (A + 1 − Δ, C − A + Δ),
    C ~ Bin(n − 1, e^{−ε0}),  A ~ Bin(C, ½),  Δ ~ Bernoulli(e^{ε0} / (e^{ε0} + 1)).

This is the count model of :mod:`mechdesign.accounting.shuffled_counts` with user 1's component
probabilities (e^{ε0}/(e^{ε0} + 1), 1/(e^{ε0} + 1), 0), clone probability e^{−ε0}/2 for each
component and no third component; its δ(ε) is evaluated exactly up to the pessimistic binning
documented there, and ε for a target δ by :func:`~mechdesign.accounting.epsilon_search.smallest_epsilon`.

**Monotone in ε0** (what a design for a central target needs to bisect over ε0): let
ε0 < ε0'. The view of the model at ε0' can be turned into the view of the model at ε0 by two
post-processings that use no knowledge of the input: (1) flip the label of every clone
independently with probability φ, chosen so that user 1's Bernoulli(e^{ε0'}/(e^{ε0'} + 1))
becomes Bernoulli(e^{ε0}/(e^{ε0} + 1)) — the other clones are labelled ½/½ and stay so; (2) add
clones: each non-clone user becomes a clone with probability
(e^{−ε0} − e^{−ε0'}) / (1 − e^{−ε0'}), which turns Bin(n − 1, e^{−ε0'}) into
Bin(n − 1, e^{−ε0}) (the number of non-clones is known from the counts). Post-processing does
not increase a hockey-stick divergence, so δ(ε) at ε0 is at most δ(ε) at ε0', for every ε, and
the ε for a target δ is non-decreasing in ε0. At ε0 = 0 the two laws coincide and ε = 0.
"""

from __future__ import annotations

import math

from mechdesign.accounting.epsilon_search import largest_argument, smallest_epsilon
from mechdesign.accounting.shuffled_counts import CountModel


def clone_model(local_epsilon: float, users: int, tail: float = 1e-13) -> CountModel:
    """The count model of Feldman, McMillan and Talwar's clone reduction (module docstring)."""
    p = math.exp(local_epsilon)
    return CountModel(int(users), (p / (p + 1.0), 1.0 / (p + 1.0), 0.0), 0.5 / p, 0.0, tail=tail)


def clone_epsilon(local_epsilon: float, users: int, delta: float) -> float:
    """The central ε after shuffling ``users`` reports of any ``local_epsilon``-LDP randomizer,
    at ``delta``, by the clone bound (an upper bound, within 1e-10)."""
    if local_epsilon <= 0 or users <= 1 or delta <= 0:
        return 0.0 if local_epsilon <= 0 else local_epsilon
    if not math.isfinite(local_epsilon):
        return math.inf
    model = clone_model(local_epsilon, users, tail=_tail(delta))
    return smallest_epsilon(model.delta, delta, local_epsilon)


def clone_local_level(central_epsilon: float, users: int, delta: float,
                      tolerance: float = 1e-8) -> float:
    """The largest local ε0 whose clone bound after shuffling ``users`` reports is at most
    ``central_epsilon`` at ``delta`` (checked from below; a bisection, valid because the bound
    is non-decreasing in ε0 — module docstring)."""
    if users <= 1:
        return central_epsilon
    upper = max(2.0 * central_epsilon, central_epsilon + 1.0)
    while clone_epsilon(upper, users, delta) <= central_epsilon:
        if upper > 745:  # e^{−ε0} underflows: no clone left, the bound is ε0 itself
            return upper
        upper *= 2.0

    def central(local: float) -> float:
        return clone_epsilon(local, users, delta)

    return largest_argument(central, central_epsilon, central_epsilon, upper, tolerance)


def _tail(delta: float) -> float:
    """The probability the count model may leave out (counted in full): 1e-4 of δ, at most 1e-13."""
    return min(1e-13, 1e-4 * delta) if delta > 0 else 1e-300
