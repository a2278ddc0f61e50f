"""The d-privacy interior point over one output per orbit of a symmetry group of the problem.

When a group Γ of permutations of the points preserves the distances and the cost exactly (the
eight symmetries of a square grid with a uniform prior and the Euclidean loss or its square),
averaging an optimum over Γ gives an optimum with K[γx, γy] = K[x, y]; the interior point's
central path from a symmetric start is symmetric too. So the iterations keep the column of one
output y per orbit (the representatives R) and let it stand for its orbit: the design it stands
for has, at every output γ(y) of the orbit, the column y's entries moved by γ and averaged over
the stabiliser of y,

    K_full = Σ_{y in R} Σ_{γ in Γ} P_γ K_y e_{γ(y)}ᵀ / |Stab(y)|,    (P_γ v)[x] = v[γ⁻¹ x],

whose row sums are Σ_γ P_γ t with t = Σ_y K_y / |Stab(y)|. Each image of a private column is
private (γ is an isometry: the pair (γa, γb) has the distance of (a, b)), so is their average,
and the objective of K_full is Σ_y |orbit(y)| C_y·K_y. The Newton system is the one of the LP
over every output at a symmetric iterate: each representative's block H_y as before, and the
rows' coupling Σ_γ P_γ (Σ_y H_y⁻¹ / |Stab(y)|) P_γᵀ (the sum over every output, whose blocks
are the images P_γ H_y P_γᵀ). An iteration then factorises |R| blocks instead of |Y|: on a
square grid about an eighth.

The Lagrangian bound needs no symmetry of the iterate: with the pair duals of each output γ(y)
taken as the images of y's, the reduced cost at (x, γ(y)) is (C − GᵀΛ)[γ⁻¹x, y], so each row's
minimum over every output is the least row minimum of the representatives' reduced costs over
the row's orbit. This holds exactly because the group is required to preserve the distances
and the cost exactly (:func:`exact_symmetry`), not to a tolerance.
"""

from __future__ import annotations

import numpy as np


def exact_symmetry(symmetry, distances: np.ndarray, cost: np.ndarray) -> bool:
    """Whether every permutation of ``symmetry`` maps the distances and the cost (square,
    outputs = inputs) onto themselves exactly, to the last bit."""
    if symmetry.order == 1 or cost.shape != distances.shape:
        return False
    return all(np.array_equal(distances[np.ix_(h, h)], distances) and np.array_equal(cost[np.ix_(h, h)], cost)
               for h in symmetry.perms[1:])


class OutputOrbits:
    """One output per orbit of a :class:`~mechdesign.solvers.symmetry.Symmetry` group (see the
    module docstring): ``columns`` the representatives, ``stabiliser`` the order of each one's
    stabiliser, ``outputs`` the number of outputs they stand for."""

    def __init__(self, symmetry):
        self.perms, self.inverse = symmetry.perms, symmetry.inverse
        self.columns = symmetry.representatives
        self.stabiliser = symmetry.order / symmetry.sizes.astype(float)
        self.outputs = symmetry.perms.shape[1]

    def row_sums(self, K: np.ndarray) -> np.ndarray:
        """The row sums of the design the representatives' columns ``K`` stand for."""
        t = K @ (1.0 / self.stabiliser)
        return t[self.inverse].sum(axis=0)

    def coupling(self, total: np.ndarray) -> np.ndarray:
        """Σ_γ P_γ ``total`` P_γᵀ: the rows' coupling over every output from Σ_y H_y⁻¹ / |Stab(y)|
        over the representatives."""
        out = np.zeros_like(total)
        for h in self.inverse:
            out += total[np.ix_(h, h)]
        return out

    def average(self, v: np.ndarray) -> np.ndarray:
        """The mean of a vector over the inputs' images under the group: a symmetric vector (the
        row duals' directions are, exactly; their solves leave round-off that the ill-conditioned
        coupling magnifies near the optimum, and an asymmetric u loses its spread from the bound)."""
        return v[self.inverse].mean(axis=0)

    def design(self, K: np.ndarray) -> np.ndarray:
        """The design over every output that the representatives' columns ``K`` stand for."""
        full = np.zeros((K.shape[0], self.outputs))
        shared = K / self.stabiliser
        for h in self.perms:
            full[np.ix_(h, h[self.columns])] += shared
        return full

    def row_minima(self, reduced: np.ndarray) -> np.ndarray:
        """Per input, the least reduced cost over every output, from the representatives'
        columns (the other outputs' pair duals the images of theirs)."""
        return reduced.min(axis=1)[self.inverse].min(axis=0)
