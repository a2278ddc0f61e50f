"""Sequential compositions of mechanisms (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, §IV-A, Fig. 3, Appendix D-E).

* :func:`compose_shared` — A1 ⊙ A0 (Def. 19): one input x goes to A0, then to A1 together
  with A0's output: (A1 ⊙ A0)(x) = A1(A0(x), x).
* :func:`compose_independent` — A1 • A0 (Def. 20): two independent inputs, x0 to A0 and x1 to A1
  together with A0's output: (A1 • A0)(x0, x1) = A1(A0(x0), x1).

The second mechanism may be adaptive: ``second`` is either one (|X|, |Y1|) matrix (used whatever
y0 is) or an array of shape (|Y0|, |X|, |Y1|) whose slice ``second[y0]`` is the mechanism A1(y0).
The composed mechanism reveals both outputs (y0, y1) by default — what the proofs of Prop. 3-6
bound — or only y1 with ``reveal="last"`` (a post-processing, so every divergence bound still
holds by the data-processing inequality, Prop. 7).

KL composes additively (Tables II and III): (ε0, D_KL)-DistP and (ε1, D_KL)-DistP give
(ε0 + ε1, D_KL)-DistP for ⊙ over a lifted relation Φ# (Prop. 3) and for • over Ψ ◇ Ψ, the pairs
of product distributions (Prop. 5); likewise for W1-XDistP (Prop. 4 and 6).

>>> import numpy as np
>>> rr = np.array([[0.75, 0.25], [0.25, 0.75]])
>>> compose_shared(rr, rr).matrix.shape                     # outputs (y0, y1)
(2, 4)
>>> compose_independent(rr, rr).matrix.shape                # inputs (x0, x1)
(4, 4)
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism, check_distribution, check_stochastic

REVEALS = ("both", "last")


def _matrix(m, what: str) -> tuple[np.ndarray, Domain | None, Domain | None]:
    if isinstance(m, Mechanism):
        return m.matrix, m.inputs, m.outputs
    return check_stochastic(m, what=what), None, None


def _second(second, n_inputs: int, n_mid: int) -> tuple[np.ndarray, Domain | None]:
    """A1 as an array (|Y0|, |X|, |Y1|) (a non-adaptive A1 is repeated for every y0)."""
    if isinstance(second, Mechanism):
        k, outputs = second.matrix, second.outputs
    else:
        k, outputs = np.asarray(second, dtype=float), None
    if k.ndim == 2:
        k = check_stochastic(k, what="second mechanism")
        k = np.broadcast_to(k, (n_mid,) + k.shape)
    elif k.ndim == 3:
        if not np.all(np.isfinite(k)) or np.any(k < 0) or np.any(np.abs(k.sum(axis=2) - 1) > 1e-9):
            raise ProblemError("every slice second[y0] must be a row-stochastic matrix")
    else:
        raise ProblemError(f"the second mechanism must be (|X|, |Y1|) or (|Y0|, |X|, |Y1|), got shape {k.shape}")
    if k.shape[0] != n_mid or k.shape[1] != n_inputs:
        raise ProblemError(f"the second mechanism needs shape ({n_mid}, {n_inputs}, |Y1|) "
                           f"(one mechanism per output of the first), got {k.shape}")
    return k, outputs


def _labels(domain: Domain | None, n: int) -> list[str]:
    return list(domain.labels) if domain is not None else [str(i) for i in range(n)]


def _pair_domain(a: list[str], b: list[str]) -> Domain:
    return Domain(tuple(f"({x}, {y})" for x in a for y in b))


def _operands(first, second, reveal: str):
    """The two mechanisms of a composition as arrays, A0 (|X|, |Y0|) and A1 (|Y0|, |X|, |Y1|),
    with A0's input and output domains and A1's output domain (None where unlabelled)."""
    if reveal not in REVEALS:
        raise ProblemError(f"reveal must be one of {', '.join(REVEALS)}, got {reveal!r}")
    a0, inputs, mid = _matrix(first, "first mechanism")
    a1, out1 = _second(second, *a0.shape)
    return a0, a1, inputs, mid, out1


def compose_shared(first, second, reveal: str = "both") -> Mechanism:
    """A1 ⊙ A0: sequential composition with a shared input (Kawamoto and Murakami 2019, Def. 19).

    (A1 ⊙ A0)(x)[(y0, y1)] = A0(x)[y0] · A1(y0, x)[y1]; with ``reveal="last"`` the output is y1
    alone, Σ_{y0} A0(x)[y0] A1(y0, x)[y1].

    Parameters
    ----------
    first : (|X|, |Y0|) row-stochastic matrix or Mechanism
    second : (|X|, |Y1|) matrix, Mechanism, or (|Y0|, |X|, |Y1|) array (adaptive A1(y0))
    reveal : "both" or "last"

    Returns
    -------
    Mechanism over X with outputs Y0 × Y1 (row-major, y1 fastest) or Y1.
    """
    a0, a1, inputs, mid, out1 = _operands(first, second, reveal)
    n, m0 = a0.shape
    m1 = a1.shape[2]
    joint = a0[:, :, None] * np.transpose(a1, (1, 0, 2))  # (x, y0, y1)
    x_labels = _labels(inputs, n)
    y1_labels = _labels(out1, m1)
    if reveal == "last":
        return Mechanism(joint.sum(axis=1), x_labels, y1_labels, name="A1 ⊙ A0")
    return Mechanism(joint.reshape(n, m0 * m1), x_labels,
                     _pair_domain(_labels(mid, m0), y1_labels), name="A1 ⊙ A0")


def compose_independent(first, second, reveal: str = "both") -> Mechanism:
    """A1 • A0: sequential composition with independent inputs (Kawamoto and Murakami 2019, Def. 20).

    (A1 • A0)((x0, x1))[(y0, y1)] = A0(x0)[y0] · A1(y0, x1)[y1]; inputs are pairs (x0, x1) in
    row-major order (x1 fastest), matching :func:`product_distribution`.
    """
    a0, a1, inputs, mid, out1 = _operands(first, second, reveal)
    n, m0 = a0.shape
    m1 = a1.shape[2]
    # joint[x0, x1, y0, y1] = a0[x0, y0] a1[y0, x1, y1]
    joint = a0[:, None, :, None] * np.transpose(a1, (1, 0, 2))[None, :, :, :]
    x_labels = _labels(inputs, n)
    pair_inputs = _pair_domain(x_labels, x_labels)
    y1_labels = _labels(out1, m1)
    if reveal == "last":
        return Mechanism(joint.sum(axis=2).reshape(n * n, m1), pair_inputs, y1_labels, name="A1 • A0")
    return Mechanism(joint.reshape(n * n, m0 * m1), pair_inputs,
                     _pair_domain(_labels(mid, m0), y1_labels), name="A1 • A0")


def product_distribution(lam0, lam1) -> np.ndarray:
    """λ0 × λ1 over pairs (x0, x1), row-major (x1 fastest): the inputs of A1 • A0 and the
    distributions of the relation Ψ0 ◇ Ψ1 (Kawamoto and Murakami 2019, Appendix E)."""
    a = check_distribution(lam0, what="first distribution")
    b = check_distribution(lam1, what="second distribution")
    return np.outer(a, b).ravel()
