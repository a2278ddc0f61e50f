"""Information-theoretic notions (Wu, Xia and He, “Achieving Dalenius’ Goal of Data Privacy with Practical Assumptions”, arXiv 2017; quantitative information flow).

* :class:`InformationPrivacy` — ε-information privacy (Wu, Xia and He 2017, Def. 6): Shannon capacity
  C(K) <= c bits, compiled exactly through the minimax identity C(K) = min_q max_x D(K[x] ‖ q):
  an auxiliary q in the simplex over Y with D(K[x] ‖ q) <= c ln 2 for every x (exponential cone).
* :class:`MutualInformation` — I(π; K) = Σ_x π_x D(K[x] ‖ πK) <= c bits under a prior π
  (exponential cone; πK is affine in K).
* :class:`MinEntropy` — min-entropy (multiplicative Bayes) capacity log2 Σ_y max_x K[x, y] <= c:
  the LP t_y >= K[x, y], Σ_y t_y <= 2^c.
* :class:`GVulnerability` — posterior g-vulnerability Σ_y max_w Σ_x π_x g(w, x) K[x, y] <= v
  (Alvim et al., "Measuring information leakage using generalized gain functions", CSF 2012):
  the LP t_y >= Σ_x π_x g(w, x) K[x, y] for all w, Σ_y t_y <= v. g = identity is Bayes
  vulnerability; a bound in bits is a bound on the multiplicative g-leakage log2(V_g(π,K)/V_g(π)).

Each audits the returned matrices with the solvers of :mod:`mechdesign.information.capacity` (the capacity
audit reports both certified bounds and holds on the upper one). All four quantities are convex
in K and vanish on data-independent channels, so each repairs a slightly violating matrix by
mixing it with the uniform channel by the exact weight convexity prescribes. With per-context
mechanisms every notion applies to each context's matrix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from mechdesign.core import preview
from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.errors import ProblemError, float_array
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.setting import DEFAULT, Setting, probabilities
from mechdesign.core.tables import is_number_list, read_distribution, read_matrix, read_number
from mechdesign.information.capacity import shannon_capacity
from mechdesign.information.channel import LN2
from mechdesign.information.leakage import gain_matrix, mutual_information_of
from mechdesign.privacy.base import Notion, check_epsilon

if TYPE_CHECKING:
    from mechdesign.privacy.coefficients import Coefficients
    from mechdesign.privacy.declarations import Declarations

#: gap of the capacity solves in audits (bits), below AUDIT_TOL
CAPACITY_AUDIT_TOL = 1e-10


def _bits(bits: Any, key: str = "bits") -> float:
    return check_epsilon(bits, key)


def _exp2(bits: float) -> float:
    """2^bits, held at 2^1000 beyond (Python's 2.0 ** 1100 raises OverflowError). Every bound
    that uses it is vacuous long before: Σ_y max_x K[x, y] <= |Y| and V_g(π, K) <= V_g(π)·|Y|."""
    return 2.0 ** min(float(bits), 1000.0)


def _entropy_bits(pi: np.ndarray) -> float:
    """H(π) in bits."""
    p = pi[pi > 0]
    return float(-(p * np.log2(p)).sum())


def _mix_uniform(k: np.ndarray, t: float) -> np.ndarray:
    t = min(max(t, 0.0), 1.0)
    return (1.0 - t) * k + t / k.shape[1]


def _broadcast_row(v: Any, m: int) -> Any:
    """The (m, n) expression whose every row is the vector variable v."""
    return np.ones((m, 1)) @ cp.reshape(v, (1, v.shape[0]), order="C")


class _BitsNotion(Notion):
    """A bound in bits; ``epsilon`` is the same number so ε-sweeps sweep the bound.

    A bound of 0 bits is linear for Shannon capacity and mutual information (equal rows, see
    :meth:`equal_rows`), so the program is then an LP rather than a degenerate exponential cone.
    """

    def __init__(self, bits: float):
        self.epsilon = _bits(bits)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(bits={preview.number(self.epsilon)})"

    @property
    def linear(self) -> bool:  # type: ignore[override]
        return self.epsilon == 0

    def structure(self) -> Any:
        return self.epsilon == 0

    @staticmethod
    def equal_rows(var: Any, rows: np.ndarray) -> list:
        """The rows ``rows`` of ``var`` all equal to the first of them: every row then equals
        the output distribution πK (a mixture of equal rows), so I(π; K) = Σ_x π_x D(K[x] ‖ πK)
        = 0 and, over all rows, C(K) = 0; conversely D(K[x] ‖ q) = 0 only at K[x] = q."""
        if rows.size < 2:
            return []
        return [var[rows[1:], :] == np.ones((rows.size - 1, 1)) @ var[rows[:1], :]]

    @property
    def bits(self) -> float:
        return self.epsilon

    def _requested(self) -> dict:
        return {"bits": self.bits}


class InformationPrivacy(_BitsNotion):
    """Shannon capacity <= c bits for every mechanism (Wu, Xia and He 2017, Def. 6).

    Exact convex form: for each matrix K, a variable q in the simplex over Y with
    Σ_y rel_entr(K[x, y], q_y) <= c ln 2 for every row x. Feasible q certifies
    C(K) <= max_x D(K[x] ‖ q) <= c; conversely q = the capacity-achieving output distribution
    is feasible whenever C(K) <= c.
    """

    name = "information"

    def __init__(self, bits: float, sizes: tuple[int, int] | None = None):
        super().__init__(bits)
        #: (|X|, |Y|) of the problem's mechanisms, filled in by :meth:`bind` (None before)
        self.sizes = None if sizes is None else (int(sizes[0]), int(sizes[1]))

    def bind(self, setting: Setting) -> InformationPrivacy:
        """The problem's numbers of inputs and outputs, which say when the bound is vacuous."""
        sizes = (len(setting.inputs), len(setting.outputs))
        return self if self.sizes == sizes else InformationPrivacy(self.epsilon, sizes)

    def vacuous(self, sizes: tuple[int, int] | None = None) -> bool:
        """C(K) <= log2 min(|X|, |Y|) for every channel: from there the bound constrains
        nothing. ``sizes`` are (|X|, |Y|), by default the problem's (unknown before :meth:`bind`)."""
        sizes = sizes or self.sizes
        return sizes is not None and self.epsilon >= np.log2(min(sizes))

    @property
    def linear(self) -> bool:  # type: ignore[override]
        return self.epsilon == 0 or self.vacuous()

    def structure(self) -> tuple:
        return (self.epsilon == 0, self.vacuous())

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        if self.epsilon == 0:
            return [c for var in K.values() for c in self.equal_rows(var, np.arange(var.shape[0]))]
        if self.vacuous(next(iter(K.values())).shape if K else None):
            return []
        out = []
        bound = coefficients.coefficient(self, "nats", lambda c: c * LN2)
        for var in K.values():
            m, n = var.shape
            q = cp.Variable(n, nonneg=True)
            out += [cp.sum(q) == 1,
                    cp.sum(cp.rel_entr(var, _broadcast_row(q, m)), axis=1) <= bound]
        return out

    def measure(self, k: np.ndarray) -> Any:
        """The Shannon capacity of ``k`` with certified lower and upper bounds (bits)."""
        return shannon_capacity(k, tol=CAPACITY_AUDIT_TOL, max_iter=20_000)

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        res = {key: self.measure(k) for key, k in mechs.items()}
        worst = max(res, key=lambda key: res[key].upper)
        r = res[worst]
        detail = {"lower_bits": r.lower, "upper_bits": r.upper, "gap_bits": r.gap,
                  "iterations": r.iterations}
        if len(res) > 1:
            detail["worst_context"] = worst
            detail["contexts"] = {key: {"lower_bits": v.lower, "upper_bits": v.upper}
                                  for key, v in res.items()}
        return Audit(self.name, self._requested(), {"bits": r.upper},
                     r.upper <= self.bits + AUDIT_TOL, detail)

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        # C is convex in K and 0 on the uniform channel: C((1−t)K + tU) <= (1−t) C(K); at 0
        # bits every row is set to the rows' mean (equal to round-off already: mixing would
        # go all the way to the uniform channel)
        if self.epsilon == 0:
            return {key: np.broadcast_to(k.mean(axis=0), k.shape).copy() for key, k in mechs.items()}
        out = {}
        for key, k in mechs.items():
            up = self.measure(k).upper
            out[key] = k if up <= self.bits else _mix_uniform(k, 1.0 - self.bits / up * (1 - 1e-10))
        return out


class MutualInformation(_BitsNotion):
    """I(π; K) <= c bits under a prior π (one per mechanism key).

    Compiled as Σ_x π_x Σ_y rel_entr(K[x, y], (πK)_y) <= c ln 2 over the rows with π_x > 0.

    Parameters
    ----------
    bits : float
        c, the largest mutual information in bits.
    priors : mapping key -> π, or one array π, optional
        The prior per mechanism key, or one prior for every mechanism. By default (filled in by
        :meth:`bind`) each mechanism context's own distribution, else the uniform prior.
    prior_name : str
        The prior's name in the certificate.

    Examples
    --------
    >>> MutualInformation(0.3, [0.5, 0.2, 0.15, 0.1, 0.05])
    MutualInformation(bits=0.3, prior=[0.5, 0.2, 0.15, 0.1, 0.05])
    """

    name = "mutual-information"

    def __init__(self, bits: float, priors: Mapping[str, Any] | Any = None, prior_name: str = "prior"):
        super().__init__(bits)
        self.priors, self.shared_prior = prior_table(priors)
        self.prior_name = prior_name

    def bind(self, setting: Setting) -> MutualInformation:
        """The default priors (the contexts' distributions, else uniform), one shared prior
        given to every mechanism, and every prior checked against the inputs."""
        priors, name = bound_priors(self.priors, self.shared_prior, self.prior_name, setting)
        if priors is self.priors:
            return self
        return MutualInformation(self.epsilon, priors, name)

    def __repr__(self) -> str:
        return preview.call("MutualInformation", [("bits", preview.number(self.epsilon)),
                                                  ("prior", prior_text(self.priors, self.prior_name))])

    def keys(self, available: list[str]) -> list[str]:
        return [k for k in available if k in self.priors]

    def vacuous(self, key: str) -> bool:
        """I(π; K) <= H(π) for every channel: a bound of at least H(π) bits constrains nothing."""
        return self.epsilon >= _entropy_bits(self.priors[key])

    @property
    def linear(self) -> bool:  # type: ignore[override]
        return self.epsilon == 0 or all(self.vacuous(k) for k in self.priors)

    def structure(self) -> tuple:
        return (self.epsilon == 0, tuple(self.vacuous(k) for k in self.priors))

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        out = []
        bound = coefficients.coefficient(self, "nats", lambda c: c * LN2) if self.epsilon > 0 else 0.0
        for key, var in K.items():
            pi = self.priors[key]
            rows = np.flatnonzero(pi > 0)
            if self.epsilon == 0:  # I = 0 exactly when every row with π_x > 0 equals πK
                out += self.equal_rows(var, rows)
                continue
            if self.vacuous(key):
                continue
            q = pi @ var
            terms = cp.rel_entr(var[rows, :], _broadcast_row(q, len(rows)))
            out.append(cp.sum(pi[rows] @ terms) <= bound)
        return out

    def level(self, key: str, k: np.ndarray) -> float:
        return mutual_information_of(self.priors[key], k)

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        levels = {key: self.level(key, k) for key, k in mechs.items()}
        worst = max(levels, key=levels.get)
        detail = {"prior": self.prior_name}
        if len(levels) > 1:
            detail.update(worst_context=worst, contexts=levels)
        return Audit(self.name, {"bits": self.bits, "prior": self.prior_name},
                     {"bits": levels[worst]}, levels[worst] <= self.bits + AUDIT_TOL, detail)

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        # I(π; ·) is convex in K and 0 on the uniform channel; at 0 bits the rows with π_x > 0
        # are set to πK exactly (the solver leaves them equal only to round-off, and mixing
        # would go all the way to the uniform channel)
        out = {}
        for key, k in mechs.items():
            if self.epsilon == 0:
                rows = self.priors[key] > 0
                k = k.copy()
                k[rows] = self.priors[key] @ k
                out[key] = k
                continue
            v = self.level(key, k)
            out[key] = k if v <= self.bits else _mix_uniform(k, 1.0 - self.bits / v * (1 - 1e-12))
        return out


class MinEntropy(_BitsNotion):
    """Min-entropy (multiplicative Bayes) capacity log2 Σ_y max_x K[x, y] <= c: an LP."""

    name = "min-entropy"

    @property
    def linear(self) -> bool:  # type: ignore[override]
        return True

    def structure(self) -> None:
        return None

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        out = []
        bound = coefficients.coefficient(self, "budget", _exp2)
        for var in K.values():
            m, n = var.shape
            t = cp.Variable(n, nonneg=True)
            out += [var <= _broadcast_row(t, m), cp.sum(t) <= bound]
        return out

    def level(self, k: np.ndarray) -> float:
        return float(np.log2(k.max(axis=0).sum()))

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        levels = {key: self.level(k) for key, k in mechs.items()}
        worst = max(levels, key=levels.get)
        detail = {"worst_context": worst} if len(levels) > 1 else {}
        return Audit(self.name, self._requested(), {"bits": levels[worst]},
                     levels[worst] <= self.bits + AUDIT_TOL, detail)

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        # Σ_y max_x ((1−t)K + t/n) = (1−t) S + t: exact weight for S <= 2^c
        out = {}
        budget = _exp2(self.bits)
        for key, k in mechs.items():
            s = float(k.max(axis=0).sum())
            out[key] = k if s <= budget or s <= 1 else _mix_uniform(k, (s - budget) / (s - 1) + 1e-15)
        return out


class GVulnerability(Notion):
    """Posterior g-vulnerability V_g(π, K) = Σ_y max_w Σ_x π_x g(w, x) K[x, y] <= v.

    Parameters
    ----------
    gain : array (|W|, |X|) or "identity"
        Gain g(w, x) of guessing w when the secret is x ("identity": Bayes vulnerability).
    priors : mapping key -> π, or one array π
        The adversary's prior per mechanism key, or one prior for every mechanism.
    bound : float, optional
        v, the largest allowed posterior vulnerability.
    bits : float, optional
        Instead of ``bound``: the largest multiplicative g-leakage log2(V_g(π, K)/V_g(π)), i.e.
        v = V_g(π) 2^bits (needs V_g(π) > 0). Exactly one of ``bound`` and ``bits``.
    """

    name = "g-vulnerability"

    def __init__(self, gain: str | Any, priors: Mapping[str, Any] | Any, bound: float | None = None,
                 bits: float | None = None, prior_name: str = "prior"):
        if (bound is None) == (bits is None):
            raise ProblemError("give exactly one of 'bound' (a vulnerability) and 'bits' (a leakage)",
                               key="bound")
        if priors is None:
            raise ProblemError("needs the adversary's prior", key="prior")
        self.priors, self.shared_prior = prior_table(priors)
        n = len(next(iter(self.priors.values())))
        self.gain = gain_matrix(gain, n)
        self.gain_name = gain if isinstance(gain, str) else "matrix"
        self.prior_name = prior_name
        self.prior_vulnerability = {k: float((self.gain @ pi).max()) for k, pi in self.priors.items()}
        self.leakage_bits = None
        if bits is not None:
            self.leakage_bits = check_epsilon(bits, "bits")
            if min(self.prior_vulnerability.values()) <= 0:
                raise ProblemError("a leakage bound in bits needs a positive prior vulnerability "
                                   "(non-negative gains with some gain on the prior)", key="bits")
            self.bounds = {k: v * _exp2(self.leakage_bits) for k, v in self.prior_vulnerability.items()}
        else:
            b = float(bound)
            if not np.isfinite(b):
                raise ProblemError(f"expected a finite number, got {bound!r}", key="bound")
            low = max(self.prior_vulnerability.values())
            if b < low - AUDIT_TOL:
                raise ProblemError(f"bound {b:g} is below the prior vulnerability {low:.6g}: no "
                                   "mechanism can reach it (outputs never lower vulnerability)",
                                   key="bound")
            self.bounds = {k: b for k in self.priors}
        self.epsilon = self.leakage_bits if bits is not None else b

    def bind(self, setting: Setting) -> GVulnerability:
        """One shared prior given to every mechanism, and every prior checked against the inputs."""
        priors, name = bound_priors(self.priors, self.shared_prior, self.prior_name, setting)
        if priors is self.priors:
            return self
        gain = self.gain_name if self.gain_name != "matrix" else self.gain
        bound = None if self.leakage_bits is not None else self.epsilon
        return GVulnerability(gain, priors, bound=bound, bits=self.leakage_bits, prior_name=name)

    def __repr__(self) -> str:
        limit = ("bits", self.leakage_bits) if self.leakage_bits is not None else ("bound", self.epsilon)
        return preview.call("GVulnerability", [
            ("gain", repr(self.gain_name) if self.gain_name != "matrix" else preview.array(self.gain)),
            (limit[0], preview.number(limit[1])), ("prior", prior_text(self.priors, self.prior_name))])

    def keys(self, available: list[str]) -> list[str]:
        return [k for k in available if k in self.priors]

    def _weighted(self, key: str) -> np.ndarray:
        return self.gain * self.priors[key][None, :]

    def _bound(self, key: str, epsilon: float) -> float:
        """v for this key when the notion's number (``bound`` or ``bits``) is ``epsilon``."""
        if self.leakage_bits is not None:
            return self.prior_vulnerability[key] * _exp2(epsilon)
        return float(epsilon)

    def with_epsilon(self, epsilon: float) -> GVulnerability:
        """This notion with ``bits`` (or ``bound``) set to ``epsilon``, and the bounds that follow."""
        other = super().with_epsilon(epsilon)
        if other.leakage_bits is not None:
            other.leakage_bits = other.epsilon
        other.bounds = {k: other._bound(k, other.epsilon) for k in other.priors}
        return other

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        out = []
        for key, var in K.items():
            post = self._weighted(key) @ var
            t = cp.Variable(var.shape[1])
            bound = self.bounds[key]
            if bound >= 0:
                bound = coefficients.coefficient(self, f"bound_{key}", lambda e, k=key: self._bound(k, e))
            out += [post <= _broadcast_row(t, post.shape[0]), cp.sum(t) <= bound]
        return out

    def level(self, key: str, k: np.ndarray) -> float:
        return float((self._weighted(key) @ k).max(axis=0).sum())

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        levels = {key: self.level(key, k) for key, k in mechs.items()}
        slack = {key: levels[key] - self.bounds[key] for key in levels}
        worst = max(slack, key=slack.get)
        requested = {"vulnerability": self.bounds[worst], "gain": self.gain_name, "prior": self.prior_name}
        achieved = {"vulnerability": levels[worst]}
        prior_v = self.prior_vulnerability[worst]
        if prior_v > 0 and levels[worst] > 0:
            achieved["leakage_bits"] = float(np.log2(levels[worst] / prior_v))
        if self.leakage_bits is not None:
            requested["leakage_bits"] = self.leakage_bits
        detail = {"prior_vulnerability": prior_v}
        if len(levels) > 1:
            detail["worst_context"] = worst
        return Audit(self.name, requested, achieved,
                     slack[worst] <= AUDIT_TOL * max(1.0, abs(self.bounds[worst])), detail)

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        # V_g(π, ·) is convex in K and equals V_g(π) on the uniform channel
        out = {}
        for key, k in mechs.items():
            v, b, v0 = self.level(key, k), self.bounds[key], self.prior_vulnerability[key]
            out[key] = k if v <= b or v <= v0 else _mix_uniform(k, (v - b) / (v - v0) + 1e-15)
        return out


def prior_table(priors: Mapping[str, Any] | Any) -> tuple[dict[str, np.ndarray] | None, bool]:
    """(priors per mechanism key, whether one prior was given for every mechanism): a mapping as
    given, one array under the shared mechanism's key, None left to :func:`bound_priors`."""
    if priors is None:
        return None, False
    if isinstance(priors, Mapping):
        if not priors:
            raise ProblemError("needs a prior", key="prior")
        return {str(k): np.asarray(v, dtype=float) for k, v in priors.items()}, False
    pi = float_array(priors, 1, "a prior (a vector of probabilities) or a mapping from mechanism key to prior",
                     "prior")
    return {DEFAULT: pi}, True


def bound_priors(priors: dict[str, np.ndarray] | None, shared: bool, name: str,
                 setting: Setting) -> tuple[dict[str, np.ndarray], str]:
    """The priors of an information notion on the problem: the default (each context's own
    distribution, else uniform) when none was given; one shared prior for every mechanism key;
    each checked to be a probability vector over the inputs. The same mapping object when
    nothing changed."""
    n = len(setting.inputs)
    if priors is None:
        if setting.contexts:
            return {k: np.asarray(v, dtype=float) for k, v in setting.contexts.items()}, "contexts"
        return {DEFAULT: setting.uniform()}, "uniform"
    for k, pi in priors.items():
        probabilities(pi, n, "prior" if shared else f"prior[{k}]")
    if shared and setting.keys != [DEFAULT]:
        return {k: priors[DEFAULT] for k in setting.keys}, name
    return priors, name


def prior_text(priors: dict[str, np.ndarray] | None, name: str) -> str | None:
    """The repr of a notion's prior: its name when it has one, else its values."""
    if priors is None:
        return None
    if name not in ("prior", "inline"):
        return repr(name)
    values = list(priors.values())
    if all(v is values[0] for v in values):
        return preview.array(values[0])
    return preview.mapping(priors)


# ---------------------------------------------------------------------------------------------
# problem-file tables: bounds in bits; with per-context mechanisms each context's matrix is
# bounded, under that context's own distribution unless a prior is named

def table_priors(table: dict, declared: Declarations) -> tuple[dict[str, np.ndarray], str]:
    """Per mechanism key, the prior the table names (a distribution name or a list of
    probabilities; default: each context's own distribution, else uniform), and its name."""
    value = table.get("prior")
    key = f"{declared.key}.prior"
    if value is None:
        if declared.contexts is not None:
            return dict(declared.contexts), "contexts"
        value = "uniform"
    if isinstance(value, list):
        if not is_number_list(value):
            raise declared.error("expected a distribution name or a list of probabilities", key)
        pi = read_distribution(value, len(declared.inputs), "prior", declared.file, key)
        return {c: pi for c in declared.keys}, "inline"
    return {c: declared.distribution(value, key) for c in declared.keys}, str(value)


def information_from_table(table: dict, declared: Declarations) -> InformationPrivacy:
    """``notion = "information"``: Shannon capacity at most ``bits``."""
    declared.allow(table, {"bits"})
    return InformationPrivacy(declared.epsilon(table, "bits"))


def mutual_information_from_table(table: dict, declared: Declarations) -> MutualInformation:
    """``notion = "mutual-information"``: I(π; K) at most ``bits`` under the ``prior``."""
    declared.allow(table, {"bits", "prior"})
    bits = declared.epsilon(table, "bits")
    priors, name = table_priors(table, declared)
    return MutualInformation(bits, priors, name)


def min_entropy_from_table(table: dict, declared: Declarations) -> MinEntropy:
    """``notion = "min-entropy"``: min-entropy capacity at most ``bits``."""
    declared.allow(table, {"bits"})
    return MinEntropy(declared.epsilon(table, "bits"))


def g_vulnerability_from_table(table: dict, declared: Declarations) -> GVulnerability:
    """``notion = "g-vulnerability"``: a ``gain`` ("identity" or a guesses x inputs matrix), a
    ``prior``, and exactly one of ``bound`` (posterior vulnerability) and ``bits`` (leakage)."""
    declared.allow(table, {"gain", "prior", "bound", "bits"})
    key = declared.key
    if ("bound" in table) == ("bits" in table):
        raise declared.error("give exactly one of 'bound' (largest posterior vulnerability) and "
                             "'bits' (largest multiplicative g-leakage)", f"{key}.bound")
    gain = table.get("gain", "identity")
    n = len(declared.inputs)
    if isinstance(gain, list):
        gain = read_matrix(gain, declared.file, f"{key}.gain")
        if gain.shape[1] != n:
            raise declared.error(f"gain must have one column per input ({n}), got {gain.shape[1]}",
                                 f"{key}.gain")
    elif gain != "identity":
        raise declared.error(f"expected \"identity\" or a matrix (guesses x inputs), got {gain!r}",
                             f"{key}.gain")
    priors, name = table_priors(table, declared)
    bound = bits = None
    if "bits" in table:
        bits = declared.epsilon(table, "bits")
    else:
        bound = read_number(table["bound"], declared.file, f"{key}.bound")
    try:
        return GVulnerability(gain, priors, bound=bound, bits=bits, prior_name=name)
    except ProblemError as exc:
        raise declared.error(exc.detail, f"{key}.{exc.key or 'bound'}")
