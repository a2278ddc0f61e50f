"""Target output distributions (coupling mechanisms) and approximate knowledge.

:class:`Target` — problem-file ``notion = "target"``: every context's output distribution equals
one target, λ_s K_s = μ for all s (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, §VI-B: a mechanism that produces μ whatever the
context leaks nothing about which λ_s its input came from, Def. 15 with ε = 0 for every
divergence). With ``distribution = "free"`` the LP chooses μ too: minimising expected loss
then gives a W1 barycenter of the contexts' distributions.

:class:`ApproximateKnowledge` — the certificate line of Kawamoto and Murakami’s (2019) Theorem 3: the mechanism was
built from distributions λ̂_s, inputs actually follow λ_s. It audits D∞, KL and every f-divergence
DistP between the actual output distributions λ_s K_s and reports next to them the bounds
Theorem 3 guarantees for a coupling mechanism with ε = max_s D∞(λ̂_s ‖ λ_s) ∨ D∞(λ_s ‖ λ̂_s).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import permutations
from typing import TYPE_CHECKING, Any

import numpy as np

from mechdesign.core import preview
from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.divergences import DIVERGENCES, max_divergence
from mechdesign.core.divergences import divergence as lookup
from mechdesign.core.errors import ProblemError
from mechdesign.core.setting import Setting, probabilities
from mechdesign.core.tables import read_distribution
from mechdesign.privacy.base import Notion

if TYPE_CHECKING:
    from mechdesign.privacy.coefficients import Coefficients
    from mechdesign.privacy.declarations import Declarations

FREE = "free"
#: Output deviations up to this are round-off of an exact construction (a coupling mechanism):
#: :func:`match_target` leaves such matrices as they are.
EXACT = 1e-12


class Target(Notion):
    """λ_s K_s = μ for every context s (coupling mechanisms, Kawamoto and Murakami 2019 Def. 16 / Def. 18).

    Parameters
    ----------
    contexts : mapping name -> λ_s, optional
        The distribution each context's mechanism is built from (λ̂_s in Theorem 3); by
        default the problem's mechanism contexts (filled in by :meth:`bind`).
    distribution : array over the outputs, or None
        The target μ; None leaves it free (one common μ chosen by the optimiser).
    label : str
        The target's name, for the certificate.
    weights : mapping name -> weight, optional
        Context weights, used to average the outputs into the free target when repairing.

    Examples
    --------
    >>> Target(distribution=[0.3, 0.2, 0.5])
    Target(distribution=[0.3, 0.2, 0.5])
    """

    name = "target"

    def __init__(self, contexts: Mapping[str, Any] | None = None, distribution: Any = None,
                 label: str = "mu", weights: Mapping[str, float] | None = None):
        if contexts is not None and not contexts:
            raise ProblemError("a target needs at least one mechanism context", key="mechanism.contexts")
        self.mu = None if distribution is None else np.asarray(distribution, dtype=float)
        if self.mu is not None and self.mu.ndim != 1:
            raise ProblemError(f"expected a distribution over the outputs, got shape {self.mu.shape}",
                               key="distribution")
        self.label = label if distribution is not None else FREE
        self.given_weights = weights
        self.contexts = None
        if contexts is None:  # the problem's contexts, filled in by bind
            return
        self.contexts = {k: np.asarray(v, dtype=float) for k, v in contexts.items()}
        w = weights or {k: 1.0 for k in self.contexts}
        total = float(sum(w[k] for k in self.contexts))
        self.weights = {k: float(w[k]) / total for k in self.contexts}

    def bind(self, setting: Setting) -> Target:
        """The problem's contexts unless the target has its own; μ checked to be a probability
        vector over the outputs and every context's distribution one over the inputs."""
        if self.mu is not None:
            probabilities(self.mu, len(setting.outputs), "distribution", per="output")
        contexts = self.contexts
        if contexts is None:
            contexts = setting.need_contexts("a target", "contexts", "the target its contexts")
        for k, lam in contexts.items():
            probabilities(lam, len(setting.inputs), f"contexts[{k}]")
        if contexts is self.contexts:
            return self
        return Target(contexts, self.mu, self.label, self.given_weights)

    def __repr__(self) -> str:
        mu = repr(self.label) if self.label not in ("mu", "inline") else preview.array(self.mu)
        contexts = None if self.contexts is None else "[" + preview.labels(list(self.contexts)) + "]"
        return preview.call("Target", [("distribution", mu), ("contexts", contexts)])

    @property
    def free(self) -> bool:
        return self.mu is None

    def keys(self, available: list[str]) -> list[str]:
        return list(self.contexts)

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        if not self.free:
            return [lam @ K[s] == self.mu for s, lam in self.contexts.items()]
        names = list(self.contexts)
        first = self.contexts[names[0]] @ K[names[0]]
        return [self.contexts[s] @ K[s] == first for s in names[1:]]

    def outputs(self, mechs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """λ_s K_s per context."""
        return {s: lam @ mechs[s] for s, lam in self.contexts.items()}

    def target_of(self, mechs: Mapping[str, np.ndarray]) -> np.ndarray:
        """μ, or for a free target the weighted mean of the contexts' outputs."""
        if not self.free:
            return self.mu
        outs = self.outputs(mechs)
        return sum(self.weights[s] * o for s, o in outs.items())

    def deviations(self, mechs: Mapping[str, np.ndarray]) -> dict[str, float]:
        """Per context, max_y |λ_s K_s − μ|_y."""
        mu = self.target_of(mechs)
        return {s: float(np.abs(o - mu).max()) for s, o in self.outputs(mechs).items()}

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        dev = self.deviations(mechs)
        worst = max(dev.values())
        detail = {"deviations": dev}
        if self.free:
            detail["mu"] = self.target_of(mechs)
        return Audit(self.name, {"distribution": self.label, "deviation": 0.0}, {"deviation": worst},
                     worst <= AUDIT_TOL, detail)

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Make every λ_s K_s equal μ exactly (the solver meets equalities only to tolerance).

        With γ = diag(λ_s) K_s: scale down the columns where γ carries more than μ, then give the
        freed row mass to the columns that lack mass, in proportion: one exact step,
        γ' = γ·diag(min(1, μ/c)) + d eᵀ/Σe with c the column sums, e the column deficits and d
        the freed row mass (Σd = Σe = 1 − Σ min(c, μ)). Rows with λ_s[x] = 0 are untouched.
        """
        mu = self.target_of(mechs)
        out = {}
        for s, lam in self.contexts.items():
            out[s] = match_target(mechs[s], lam, mu)
        return out

    def neutral_row(self, n_outputs: int, mechs: Mapping[str, np.ndarray] | None = None) -> np.ndarray | None:
        """μ for a fixed target; for a free one the mean output of the matrices being repaired
        (which the contexts must all meet), or None without matrices (any common row will do)."""
        if not self.free:
            return self.mu if self.mu.size == n_outputs else None
        if mechs:
            mu = self.target_of(mechs)
            return mu if mu.size == n_outputs else None
        return None


def match_target(k: np.ndarray, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The matrix closest in kind to ``k`` whose output distribution λK is exactly μ (see
    :meth:`Target.repair`)."""
    rows = lam > 0
    if not rows.any() or np.max(np.abs(lam @ k - mu)) <= EXACT:
        return k
    gamma = lam[rows, None] * k[rows]
    c = gamma.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(c > mu, mu / np.where(c > 0, c, 1.0), 1.0)
    gamma = gamma * scale[None, :]
    deficit = np.maximum(mu - gamma.sum(axis=0), 0.0)
    freed = np.maximum(lam[rows] - gamma.sum(axis=1), 0.0)
    if deficit.sum() > 0 and freed.sum() > 0:
        gamma = gamma + freed[:, None] * (deficit / deficit.sum())[None, :]
    out = k.copy()
    out[rows] = gamma / gamma.sum(axis=1, keepdims=True)
    return out


class ApproximateKnowledge(Notion):
    """Theorem 3 of Kawamoto and Murakami 2019 as a certificate line (adds no constraint).

    Parameters
    ----------
    built : mapping context -> λ̂_s
        The distributions the mechanisms were built from.
    actual : mapping context -> λ_s
        The distributions inputs actually follow.
    divergences : sequence of str
        Divergences to audit (default: D∞ and every registered f-divergence).

    Notes
    -----
    The audit computes the knowledge error ε = max_s max(D∞(λ̂_s ‖ λ_s), D∞(λ_s ‖ λ̂_s)) and, for
    each divergence D, the achieved DistP level max over ordered context pairs (s, s') of
    D(λ_s K_s ‖ λ_s' K_s'); ``requested`` holds the Theorem 3 bounds (2ε for D∞, 2εe^ε for KL,
    e^ε f(e^{2ε}) for the others) and the line holds when no achieved value exceeds its bound.
    The theorem assumes a coupling mechanism (λ̂_s K_s = μ for all s): problem files may use this
    line only together with a ``target``.
    """

    name = "approximate-knowledge"

    def __init__(self, built: Mapping[str, Any], actual: Mapping[str, Any],
                 divergences: Sequence[str] | None = None):
        if set(built) != set(actual):
            raise ProblemError("built-from and actual distributions must name the same contexts",
                               key="mechanism.actual")
        self.built = {k: np.asarray(v, dtype=float) for k, v in built.items()}
        self.actual = {k: np.asarray(actual[k], dtype=float) for k in self.built}
        self.divergences = [lookup(d) for d in (divergences or list(DIVERGENCES))]

    def __repr__(self) -> str:
        return preview.call("ApproximateKnowledge", [
            ("contexts", "[" + preview.labels(list(self.built)) + "]"),
            ("divergences", "[" + preview.labels([d.name for d in self.divergences]) + "]")])

    def keys(self, available: list[str]) -> list[str]:
        return list(self.built)

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        return []

    def knowledge_epsilon(self) -> float:
        """max_s max(D∞(λ̂_s ‖ λ_s), D∞(λ_s ‖ λ̂_s)): the ε of Theorem 3's assumption."""
        return float(max(max(max_divergence(self.built[s], self.actual[s]),
                             max_divergence(self.actual[s], self.built[s])) for s in self.built))

    def achieved(self, mechs: Mapping[str, np.ndarray]) -> dict[str, float]:
        """Per divergence, max over ordered context pairs of D(λ_s K_s ‖ λ_s' K_s')."""
        outs = {s: lam @ mechs[s] for s, lam in self.actual.items()}
        pairs = list(permutations(outs, 2))
        out = {}
        for div in self.divergences:
            if not pairs:
                out[div.name] = 0.0
                continue
            p = np.stack([outs[a] for a, _ in pairs])
            q = np.stack([outs[b] for _, b in pairs])
            out[div.name] = float(np.max(div.value(p, q)))
        return out

    def bounds(self) -> dict[str, float]:
        eps = self.knowledge_epsilon()
        return {div.name: div.theorem3_bound(eps) for div in self.divergences}

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        eps = self.knowledge_epsilon()
        achieved = self.achieved(mechs)
        bounds = self.bounds()
        holds = all(achieved[k] <= bounds[k] + AUDIT_TOL for k in achieved)
        detail = {"knowledge_epsilon": eps, "theorem": "Kawamoto and Murakami 2019, Theorem 3"}
        if "kl" in bounds:
            detail["kl_f_form_bound"] = lookup("kl").f_form_bound(eps)
        built_out = {s: lam @ mechs[s] for s, lam in self.built.items()}
        mean = np.mean(list(built_out.values()), axis=0)
        detail["coupling_deviation"] = float(max(np.abs(o - mean).max() for o in built_out.values()))
        return Audit(self.name, bounds, achieved, holds, detail)


def target_from_table(table: dict, declared: Declarations) -> Target:
    """``notion = "target"``: every context's output distribution is the ``distribution`` (a name,
    "uniform", a list of probabilities over the outputs) or, with "free", one common distribution
    the design chooses."""
    declared.allow(table, {"distribution"})
    contexts, weights = declared.contexts, declared.weights
    if contexts is None:
        raise declared.error("a target constrains each context's output distribution: set "
                             "[mechanism] contexts", f"{declared.key}.notion")
    value = table.get("distribution")
    key = f"{declared.key}.distribution"
    m = len(declared.outputs)
    if value is None:
        raise declared.error("missing 'distribution': a distribution name, \"uniform\", \"free\" "
                             f"or a list of {m} probabilities over the outputs", key)
    if value == FREE:
        return Target(contexts, None, weights=weights)
    if value == "uniform":
        return Target(contexts, np.full(m, 1.0 / m), "uniform", weights)
    if isinstance(value, list):
        mu = read_distribution(value, m, "target distribution over the outputs", declared.file, key)
        return Target(contexts, mu, "inline", weights)
    mu = declared.distribution(value, key)
    if mu.size != m:
        raise declared.error(f"'{value}' has {mu.size} entries but the target is over the {m} "
                             "outputs; give a list of probabilities over the outputs", key)
    return Target(contexts, mu, value, weights)
