"""Hypothesis strategies that draw the data of a property test itself: probability vectors,
loss and stochastic matrices, points on small lattices.

Drawing the structure (rather than one seed for NumPy's generator) lets Hypothesis shrink a
failure to a small readable case: zero losses, a uniform prior, points at the lattice's
corner. Numbers are finite and never subnormal; a non-negative weight is either exactly 0 or
at least ``SMALLEST``, since magnitudes like 1e-300 lie far below any solver's tolerance and
only test the floating-point format."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

SMALLEST = 1e-6
FLOOR = 1e-3


def reals(low: float, high: float) -> st.SearchStrategy[float]:
    """Finite floats in [low, high], no subnormals."""
    return st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def without_tiny(values: np.ndarray) -> np.ndarray:
    """``values`` with every magnitude below ``SMALLEST`` set to exactly 0."""
    return np.where(np.abs(values) >= SMALLEST, values, 0.0)


def weights(shape, high: float = 1.0) -> st.SearchStrategy[np.ndarray]:
    """An array of non-negative numbers up to ``high``, each exactly 0 or at least
    ``SMALLEST``. Large arrays come as Hypothesis draws them: a common background value with
    freshly drawn entries scattered over it."""
    return arrays(np.float64, shape, elements=reals(0.0, high)).map(without_tiny)


def normalised_rows(w: np.ndarray) -> np.ndarray:
    """Each row of non-negative weights divided by its sum; an all-zero row stands for the
    uniform distribution, so every row is a distribution."""
    total = w.sum(axis=-1, keepdims=True)
    uniform = np.full_like(w, 1.0 / w.shape[-1])
    return np.where(total > 0, w / np.where(total > 0, total, 1.0), uniform)


@st.composite
def probability_vectors(draw, n: int, positive: bool = False) -> np.ndarray:
    """A distribution on n points, every weight drawn on its own, zeros allowed (an all-zero
    draw is the uniform one). With ``positive=True`` every point has mass, no weight below
    ``FLOOR`` times the largest, as with a Dirichlet draw."""
    low = FLOOR if positive else 0.0
    w = np.array(draw(st.lists(reals(low, 1.0), min_size=n, max_size=n)))
    return normalised_rows(without_tiny(w))


@st.composite
def stochastic_matrices(draw, n: int, m: int) -> np.ndarray:
    """An n x m channel: every row a probability vector on m outputs (rows with a single 1,
    as a nearly sparse Dirichlet row would have, included)."""
    return normalised_rows(draw(weights((n, m))))


@st.composite
def profile_lists(draw, counts: tuple[int, int], sizes: tuple[int, int]) -> list[np.ndarray]:
    """Between ``counts[0]`` and ``counts[1]`` distributions (profiles), all on one set of
    ``sizes[0]`` to ``sizes[1]`` values, each drawn on its own."""
    k = draw(st.integers(*sizes))
    return draw(st.lists(probability_vectors(k), min_size=counts[0], max_size=counts[1]))


def loss_matrices(n: int, m: int, high: float = 1.0, positive: bool = False,
                  distinct: bool = False) -> st.SearchStrategy[np.ndarray]:
    """An n x m matrix of losses in [0, high], zeros allowed. With ``positive=True`` every
    entry is at least ``SMALLEST``; with ``distinct=True`` the entries are also pairwise
    different, as draws from a continuous distribution are. Zeros and ties make an LP
    degenerate (a zero optimum, a face of optima rather than one vertex)."""
    if distinct:
        return arrays(np.float64, (n, m), elements=reals(SMALLEST, high), unique=True)
    if positive:
        return arrays(np.float64, (n, m), elements=reals(SMALLEST, high))
    return weights((n, m), high)


def vectors(n: int, low: float, high: float) -> st.SearchStrategy[np.ndarray]:
    """n reals in [low, high], each exactly 0 or at least ``SMALLEST`` in magnitude."""
    return arrays(np.float64, n, elements=reals(low, high)).map(without_tiny)


def lattice_points(n: int, dim: int, side: int, step: float = 1.0,
                   distinct: bool = True) -> st.SearchStrategy[np.ndarray]:
    """n points (an (n, dim) array) on the lattice {0, step, ..., (side-1)·step}^dim, each
    drawn as one lattice index (so a point shrinks towards the origin). With
    ``distinct=False`` points may coincide, which on a small lattice they often do."""
    indices = st.lists(st.integers(0, side**dim - 1), min_size=n, max_size=n, unique=distinct)
    return indices.map(
        lambda idx: np.column_stack(np.unravel_index(idx, (side,) * dim)).astype(float) * step)
