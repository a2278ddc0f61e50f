"""The compiled work of the d-privacy interior point's tridiagonal blocks (a line's: see
:mod:`~mechdesign.solvers.metric_chain`): their factorisation, the solves with them, and the
sum of their inverses, compiled with numba (imported on first use).

Every array is laid out (inputs, outputs), the outputs innermost, as the blocks are built:
each pass runs down (or up) the rows with one independent recursion per output, so that the
outputs' recursions are computed side by side in vector registers and every access is
contiguous. (Laid out output by output, each block's recursion waits on its previous row's
square root and quotient: on 1,000 points the factorisation took 11 ms a step, and the inverse
sum's factors 15 ms, of an iteration of 0.27 s.)
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: the columns of the chain's inverse sum that share one pass over a row's ratios
CHAIN_BAND = 16
#: the chain's inverse sum is worked in square tiles of this many rows and columns: the tiles on
#: the diagonal by running products (:func:`_chain_diagonal_tiles`), every tile below them as one
#: matrix product (a multiple of :data:`CHAIN_BAND`)
CHAIN_TILE = 128
#: the diagonal shift of a block whose pivot round-off made non-positive, and the factor by
#: which it grows over at most :data:`SHIFT_ATTEMPTS` attempts
FIRST_SHIFT, SHIFT_GROWTH, SHIFT_ATTEMPTS = 1e-14, 100.0, 7


@njit(cache=True)
def chain_cholesky(off: np.ndarray, diag: np.ndarray, low: np.ndarray) -> bool:
    """The Cholesky factors of the tridiagonal blocks with unit diagonal and off-diagonal
    ``off`` (g − 1, m): diag (g, m) and low (g − 1, m) such that T_y = L_y L_yᵀ for every
    output y (column y). A block whose pivot round-off has made non-positive is factorised
    again with a diagonal shift of :data:`FIRST_SHIFT`, growing :data:`SHIFT_GROWTH`-fold per
    attempt; False when one still fails."""
    g, m = diag.shape
    failed = np.zeros(m, dtype=np.bool_)
    for y in range(m):
        diag[0, y] = 1.0
    for i in range(g - 1):
        for y in range(m):
            ratio = off[i, y] / diag[i, y]
            low[i, y] = ratio
            pivot = 1.0 - ratio * ratio
            failed[y] |= not pivot > 0.0
            diag[i + 1, y] = np.sqrt(pivot if pivot > 0.0 else 1.0)  # (a failed column is redone)
    for y in range(m):
        if failed[y] and not _shifted_column(off, diag, low, y):
            return False
    return True


@njit(cache=True)
def _shifted_column(off: np.ndarray, diag: np.ndarray, low: np.ndarray, y: int) -> bool:
    """Block y of :func:`chain_cholesky` factorised with a growing diagonal shift."""
    g = diag.shape[0]
    shift = FIRST_SHIFT
    for _ in range(SHIFT_ATTEMPTS):
        ok = True
        diag[0, y] = np.sqrt(1.0 + shift)
        for i in range(g - 1):
            low[i, y] = off[i, y] / diag[i, y]
            pivot = 1.0 + shift - low[i, y] * low[i, y]
            if not pivot > 0.0:
                ok = False
                break
            diag[i + 1, y] = np.sqrt(pivot)
        if ok:
            return True
        shift *= SHIFT_GROWTH
    return False


@njit(cache=True)
def chain_solve_coefficients(diag: np.ndarray, low: np.ndarray, scale: np.ndarray):
    """The coefficients of :func:`chain_solves` for the blocks D_y L_y L_yᵀ D_y factorised by
    :func:`chain_cholesky` (diag (g, m), low (g − 1, m)) with the scaling D_y = diag(scale[:, y])
    (g, m): (b, a, c), each (g, m), with b = s/d, a[i] = l[i − 1]/d[i] (a[0] = 0) and
    c[i] = l[i] b[i]/s[i + 1] (c[g − 1] = 0), so that the solves multiply and never divide."""
    g, m = diag.shape
    b, a, c = np.empty((g, m)), np.zeros((g, m)), np.zeros((g, m))
    for i in range(g):
        for y in range(m):
            b[i, y] = scale[i, y] / diag[i, y]
    for i in range(1, g):
        for y in range(m):
            a[i, y] = low[i - 1, y] / diag[i, y]
            c[i - 1, y] = low[i - 1, y] * b[i - 1, y] / scale[i, y]
    return b, a, c


@njit(cache=True, nogil=True)
def chain_solves(b: np.ndarray, a: np.ndarray, c: np.ndarray, v: np.ndarray, out: np.ndarray,
                 add: bool = False) -> None:
    """out[:, y] <- D_y (L_y L_yᵀ)⁻¹ D_y v[:, y] for every output y (``add``: out[:, y] += …),
    from the coefficients (b, a, c) of :func:`chain_solve_coefficients`. A ``v`` of one column,
    (g, 1), is the right-hand side of every output. With w = L⁻¹ D v (forward) and o = D L⁻ᵀ w
    (back),

        w[i] = b[i] v[i] − a[i] w[i − 1],   o[i] = b[i] w[i] − c[i] o[i + 1],

    run down and up the rows with the outputs innermost (the back substitution keeps its row
    of o in ``previous`` when it adds; the forward one writes into ``out`` unless it adds)."""
    g, m = b.shape
    wide = 1 if v.shape[1] > 1 else 0  # (one column: the same right-hand side for every output)
    work = np.empty_like(out) if add else out
    for y in range(m):
        work[0, y] = b[0, y] * v[0, y * wide]
    for i in range(1, g):
        for y in range(m):
            work[i, y] = b[i, y] * v[i, y * wide] - a[i, y] * work[i - 1, y]
    previous = np.empty(m)
    for y in range(m):
        o = b[g - 1, y] * work[g - 1, y]
        previous[y] = o
        out[g - 1, y] = (out[g - 1, y] if add else 0.0) + o
    for i in range(g - 2, -1, -1):
        for y in range(m):
            o = b[i, y] * work[i, y] - c[i, y] * previous[y]
            previous[y] = o
            out[i, y] = (out[i, y] if add else 0.0) + o


def chain_inverse_sum(b: np.ndarray, a: np.ndarray, total: np.ndarray, threads: int | None = None,
                      tile: int = CHAIN_TILE, single: bool = False) -> None:
    """total <- total + Σ_y D_y (L_y L_yᵀ)⁻¹ D_y in its lower triangle (the upper one is left as
    it was), for the bidiagonal factors L_y of :func:`chain_cholesky` (diag d, low l) and
    D_y = diag(s_y), from their solves' coefficients b = s/d and a (a[i + 1] = l[i]/d[i + 1])
    of :func:`chain_solve_coefficients`: the exact inverse of the factorised blocks, so that
    the coupling and the solves agree however near singular a block is.

    Column j of L⁻¹ is 1/d_j at row j and runs down as a product, L⁻¹[k + 1, j] = ρ_k L⁻¹[k, j]
    with ρ_k = −l_k/d_{k+1}. So X = L⁻ᵀ L⁻¹ has, for i >= j,

        X[i, j] = σ_i/(d_i d_j) · Π_{k=j}^{i−1} ρ_k,   σ_i = 1 + ρ_i² σ_{i+1}   (σ_last = 1),

    sums of positive terms only (no cancellation). The rows and columns are cut into tiles of
    ``tile``. Within a tile on the diagonal each column runs down the rows as m running
    products, one multiply-add per output and entry (:func:`_chain_diagonal_tiles`). Below the diagonal
    the product splits at the tiles' edges: for i in tile I = [i₀, i₁) and j in tile J = [j₀,
    j₁) with J before I,

        D X D[i, j] = (s_i σ_i/d_i Π_{k=i₀}^{i−1} ρ_k)
                      · Π_{k=j₁}^{i₀−1} ρ_k · (s_j/d_j Π_{k=j}^{j₁−1} ρ_k),

    products only (never a quotient, which a ρ of 0 would make infinite), so the tile's sum
    over the outputs is one matrix product, (the first factors, each output's column times the
    middle product) times the last factors' transpose: O(g² m) arithmetic as BLAS does it,
    against the running products' memory-bound passes. A tile column stops once every
    output's middle product has vanished. The tile columns are independent: ``threads``
    threads (default :func:`~mechdesign.core.threads.solver_threads`) take every
    ``threads``-th one. With ``single`` the factors below the diagonal tiles are rounded to
    single precision and their products taken there, subnormals flushed to zero, and added into
    ``total`` in double (about seven digits an entry; the diagonal tiles are as without)."""
    from mechdesign.core.threads import over, solver_threads

    rows, ratio = _chain_factors(b, a)
    g = b.shape[0]
    tile = max(CHAIN_BAND, tile - tile % CHAIN_BAND)
    tiles = -(-g // tile)
    count = min(solver_threads() if threads is None else threads, tiles)
    over(lambda first: _chain_diagonal_tiles(b, rows, ratio, total, tile, first, count),
         [(t,) for t in range(count)])
    if tiles > 1:
        # the tiles' factors, written in the precision their products take (the same numbers
        # as computed in double and rounded after)
        kind = np.float32 if single else np.float64
        first, last, through = np.empty(b.shape, kind), np.empty(b.shape, kind), np.empty((tiles, b.shape[1]), kind)
        _chain_tile_factors(b, rows, ratio, tile, first, last, through)
        if single:
            from mechdesign.core.subnormals import flushed_subnormals

            def below(column: int) -> None:
                with flushed_subnormals(True):  # (the modes are each thread's own)
                    _chain_tiles_below(last, first, through, total, tile, column, count)
        else:
            def below(column: int) -> None:
                _chain_tiles_below(last, first, through, total, tile, column, count)
        over(below, [(t,) for t in range(count)])


@njit(cache=True)
def _chain_factors(b: np.ndarray, a: np.ndarray):
    """(s_i σ_i/d_i, ρ_i) as (g, m) arrays, outputs innermost (ρ is 0 on the last row): a row's
    factor and its ratio, from the solves' coefficients (a column's product at its diagonal,
    s_j/d_j, is b itself, and ρ_i = −l_i/d_{i+1} is −a[i + 1])."""
    g, m = b.shape
    rows = np.empty((g, m))
    ratio = np.zeros((g, m))
    sigma = np.ones(m)
    for y in range(m):
        rows[g - 1, y] = b[g - 1, y]
    for i in range(g - 2, -1, -1):
        for y in range(m):
            r = -a[i + 1, y]
            ratio[i, y] = r
            sigma[y] = 1.0 + r * r * sigma[y]
            rows[i, y] = b[i, y] * sigma[y]
    return rows, ratio


@njit(cache=True, nogil=True)
def _flushed(v: float) -> float:
    return v if abs(v) > 1e-290 else 0.0  # (never subnormal: slow)


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _chain_diagonal_tiles(start: np.ndarray, rows: np.ndarray, ratio: np.ndarray, total: np.ndarray, tile: int,
                          first: int, stride: int) -> None:
    """The diagonal tiles first, first + stride, … of the chain's inverse sum (see
    :func:`chain_inverse_sum`), added into ``total``'s lower triangle, by running products in
    bands of :data:`CHAIN_BAND` columns."""
    g, m = start.shape
    width = CHAIN_BAND
    running = np.empty((width, m))
    for t in range(first, -(-g // tile), stride):
        end = min(g, (t + 1) * tile)
        for j0 in range(t * tile, end, width):
            jb = min(width, end - j0)
            for b in range(jb):
                running[b, :] = start[j0 + b, :]
            for i in range(j0, end):
                row, step = rows[i], ratio[i]
                for b in range(min(jb, i - j0 + 1)):  # the columns begun by row i
                    column = running[b]
                    acc = 0.0
                    for y in range(m):
                        v = column[y]
                        acc += row[y] * v
                        column[y] = _flushed(v * step[y])
                    total[i, j0 + b] += acc


@njit(cache=True)
def _chain_tile_factors(start: np.ndarray, rows: np.ndarray, ratio: np.ndarray, tile: int, first: np.ndarray,
                        last: np.ndarray, through: np.ndarray) -> None:
    """The first factors (s_i σ_i/d_i Π_{k=i₀}^{i−1} ρ_k) of :func:`chain_inverse_sum` into
    ``first``, the last (s_j/d_j Π_{k=j}^{j₁−1} ρ_k) into ``last`` and each tile's product
    through it, Π_{k=i₀}^{i₁−1} ρ_k, into ``through`` (tiles, m), each computed in double and
    rounded to the precision of the arrays it is written to. Each product runs down (or up) a
    tile's rows with one running product per output."""
    g, m = start.shape
    p = np.empty(m)
    for t in range(-(-g // tile)):
        lo, hi = t * tile, min(g, (t + 1) * tile)
        p[:] = 1.0
        for i in range(lo, hi):
            for y in range(m):
                first[i, y] = rows[i, y] * p[y]
                p[y] = _flushed(p[y] * ratio[i, y])
        for y in range(m):
            through[t, y] = p[y]
        p[:] = 1.0
        for j in range(hi - 1, lo - 1, -1):
            for y in range(m):
                p[y] = _flushed(p[y] * ratio[j, y])
                last[j, y] = start[j, y] * p[y]


@njit(cache=True, nogil=True)
def _chain_tiles_below(last: np.ndarray, first_factors: np.ndarray, through: np.ndarray, total: np.ndarray,
                       tile: int, first: int, stride: int) -> None:
    """The tiles below the diagonal in tile columns first, first + stride, … (see
    :func:`chain_inverse_sum`), added into ``total``, one matrix product per tile."""
    g, m = last.shape
    tiles = through.shape[0]
    middle = np.empty(m, dtype=last.dtype)
    scaled = np.empty((tile, m), dtype=last.dtype)
    for J in range(first, tiles - 1, stride):
        j0, j1 = J * tile, min(g, (J + 1) * tile)
        right = last[j0:j1].T
        middle[:] = 1.0
        for I in range(J + 1, tiles):
            i0, i1 = I * tile, min(g, (I + 1) * tile)
            for r in range(i1 - i0):
                for y in range(m):
                    scaled[r, y] = first_factors[i0 + r, y] * middle[y]
            total[i0:i1, j0:j1] += np.dot(scaled[: i1 - i0], right)
            alive = False
            for y in range(m):
                v = _flushed(middle[y] * through[I, y])
                middle[y] = v
                alive = alive or v != 0.0
            if not alive:
                break


@njit(cache=True, inline="always")
def _charged(r: float, v: float, up: float, down: float) -> tuple[float, float]:
    """One step of :func:`chain_deficits`' choice (1) from x + 1, carrying ``v``, to x of reduced
    cost ``r``: (the carry at x, the deficit left at x + 1 where no pair charges it on)."""
    if v < 0.0:
        return (r + up * v, 0.0) if up > 0.0 else (r, v)
    return r + (v / down if down > 0.0 else 0.0), 0.0


@njit(cache=True)
def chain_deficits(cost: np.ndarray, minima: np.ndarray, up: np.ndarray, down: np.ndarray, out: np.ndarray) -> None:
    """Deficits of columns whose reduced costs are r = ``cost`` (g, k) less ``minima`` (g,) in
    every column, for the Lagrangian bound: out (g, k) <= 0 such that multipliers Λ >= 0 of the
    chain's pair rows exist with r − GᵀΛ >= out, and out = 0 exactly when no private column
    has a negative reduced cost (the column prices out otherwise). ``up[x]`` bounds
    K[x + 1] <= up[x]·K[x] and ``down[x]`` K[x] <= down[x]·K[x + 1] (0 where the pair is
    missing).

    Two choices of multipliers, going up the rows, and per column the one that loses less
    (the smaller sum of deficits): (1) a deficit at x + 1 is charged to x through the pair that
    bounds K[x + 1] (times its coefficient) and a surplus handed on through the other, so that
    every reduced cost but a chain's first is covered and the first's shortfall is the least
    r·k over the private columns k with k there 1 (exact pricing); (2) the same, but a deficit
    takes from x only what x's surplus covers and the rest stays where it is (charged on, a
    deficit grows by each coefficient it passes: near the optimum a column that prices out by
    round-off can show a deficit of 1e217 in (1) and of 1e-12 in (2)). Choice (2) is written to
    ``out`` as it goes, choice (1) only for the columns where it loses less, in a second pass."""
    g, k = cost.shape
    carry, kept = np.empty(k), np.empty(k)
    lost, lost_local = np.zeros(k), np.zeros(k)  # (each choice's sum of deficits)
    for y in range(k):
        carry[y] = kept[y] = cost[g - 1, y] - minima[g - 1]
        out[g - 1, y] = 0.0
    for x in range(g - 2, -1, -1):
        m = minima[x]
        for y in range(k):
            r = cost[x, y] - m
            out[x, y] = 0.0
            carry[y], deficit = _charged(r, carry[y], up[x], down[x])
            lost[y] += deficit
            v = kept[y]
            if v < 0.0:
                taken = min(-v, r / up[x]) if up[x] > 0.0 and r > 0.0 else 0.0
                out[x + 1, y] = v + taken
                lost_local[y] += v + taken
                kept[y] = r - up[x] * taken
            else:
                kept[y] = r + (v / down[x] if down[x] > 0.0 else 0.0)
    redo = False
    for y in range(k):
        out[0, y] = min(kept[y], 0.0)
        lost_local[y] += out[0, y]
        lost[y] += min(carry[y], 0.0)
        redo |= lost[y] > lost_local[y]
    if redo:  # choice (1) where it loses less: the pass again, writing its deficits
        for y in range(k):
            carry[y] = cost[g - 1, y] - minima[g - 1]
        for x in range(g - 2, -1, -1):
            m = minima[x]
            for y in range(k):
                if lost[y] > lost_local[y]:
                    carry[y], out[x + 1, y] = _charged(cost[x, y] - m, carry[y], up[x], down[x])
        for y in range(k):
            if lost[y] > lost_local[y]:
                out[0, y] = min(carry[y], 0.0)
