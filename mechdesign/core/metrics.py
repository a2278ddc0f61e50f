"""Ground metrics over domains, and the exact reductions of metric-privacy pairs."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from mechdesign.core import preview
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError, float_array

if TYPE_CHECKING:  # networkx is imported where graph metrics use it
    import networkx as nx

METRIC_KINDS = ("discrete", "absolute", "euclidean", "manhattan", "haversine", "graph", "matrix")
EARTH_RADIUS_KM = 6371.0088


@dataclass(eq=False)
class Metric:
    """A ground metric d over a domain (and, where coordinates allow, between two domains).

    Parameters
    ----------
    kind : str
        One of ``discrete``, ``absolute``, ``euclidean``, ``manhattan``, ``haversine``,
        ``graph`` (shortest path over weighted ``edges``) or ``matrix`` (explicit distances).
    edges : list of (label, label, weight), for ``graph``
    matrix : array, for ``matrix`` (over the input domain)

    Examples
    --------
    >>> Metric("absolute").distances(Domain.from_labels([0, 1, 3]))[0].tolist()
    [0.0, 1.0, 3.0]
    >>> Metric.coerce([[0, 2], [2, 0]])
    Metric('matrix', matrix=[[0, 2], [2, 0]])
    """

    kind: str
    edges: Sequence | None = None
    matrix: np.ndarray | None = None
    #: distances and reduced pairs per domain, keyed by the Domain objects themselves (weakly:
    #: an id() key could be reused by a new domain once the old one is collected)
    _cache: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary, repr=False)
    _pairs: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary, repr=False)
    #: a matrix's shortest-path closure (:meth:`privacy_distances`), once computed
    _closure: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        if not isinstance(self.kind, str):
            raise ProblemError(
                f"Metric(kind) takes a kind name, got {type(self.kind).__name__}; for a matrix of "
                "distances use Metric.coerce(matrix) or Metric('matrix', matrix=...)",
                key="metric.kind",
            )
        if self.kind not in METRIC_KINDS:
            raise ProblemError(
                f"unknown metric kind '{self.kind}'; expected one of {', '.join(METRIC_KINDS)}",
                key="metric.kind",
            )
        if self.kind == "graph" and not self.edges:
            raise ProblemError("a graph metric needs 'edges' = [[a, b, weight], ...]", key="metric.edges")
        if self.kind == "matrix":
            if self.matrix is None:
                raise ProblemError("a matrix metric needs 'matrix'", key="metric.matrix")
            m = np.asarray(self.matrix, dtype=float)
            if m.ndim != 2 or m.shape[0] != m.shape[1]:
                raise ProblemError(f"metric matrix must be square, got shape {m.shape}", key="metric.matrix")
            if not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(np.diag(m) != 0):
                raise ProblemError(
                    "metric matrix must be finite, non-negative, with a zero diagonal", key="metric.matrix"
                )
            if not np.allclose(m, m.T):
                raise ProblemError("metric matrix must be symmetric", key="metric.matrix")
            self.matrix = m

    @classmethod
    def coerce(cls, value: Metric | str | Any) -> Metric:
        """A Metric from a Metric, a kind name (``"absolute"``, ``"euclidean"``, ...; a graph
        needs its edges, so ``Metric("graph", edges=...)``) or a square matrix of distances
        (kind ``matrix``); ProblemError naming ``metric`` otherwise."""
        if isinstance(value, Metric):
            return value
        if isinstance(value, str):
            return cls(value)
        matrix = float_array(value, 2, f"a Metric, a metric kind ({', '.join(METRIC_KINDS)}) or a square matrix "
                             "of distances", "metric")
        return cls("matrix", matrix=matrix)

    def __repr__(self) -> str:
        extra = ""
        if self.edges is not None:
            extra = f", {len(self.edges)} edge{'s' if len(self.edges) != 1 else ''}"
        if self.matrix is not None:
            extra += f", matrix={preview.array(self.matrix)}"
        return f"Metric({self.kind!r}{extra})"

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"], state["_pairs"] = None, None  # caches are per process
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._cache, self._pairs = weakref.WeakKeyDictionary(), weakref.WeakKeyDictionary()

    # distances ------------------------------------------------------------------------------
    def distances(self, a: Domain, b: Domain | None = None) -> np.ndarray:
        """Distance matrix between the values of ``a`` and of ``b`` (default: ``a``)."""
        b = a if b is None else b
        row = self._cache.setdefault(a, weakref.WeakKeyDictionary())
        if b not in row:
            row[b] = self._distances(a, b)
        return row[b]

    def _distances(self, a: Domain, b: Domain) -> np.ndarray:
        if self.kind == "discrete":
            return (np.asarray(a.labels)[:, None] != np.asarray(b.labels)[None, :]).astype(float)
        if self.kind == "matrix":
            if not (a.same_as(b) and len(a) == self.matrix.shape[0]):
                raise ProblemError(
                    f"metric matrix is {self.matrix.shape[0]} x {self.matrix.shape[0]} but is used "
                    f"between domains of sizes {len(a)} and {len(b)}",
                    key="metric.matrix",
                )
            return self.matrix
        if self.kind == "graph":
            return self._graph_distances(a, b)
        pa, pb = _points(a, self.kind), _points(b, self.kind)
        if pa.shape[1] != pb.shape[1]:
            raise ProblemError("inputs and outputs have points of different dimensions", key="metric")
        if self.kind == "absolute":
            if pa.shape[1] != 1:
                raise ProblemError(
                    "the 'absolute' metric needs numbers on a line (size, numeric labels or 1-D points)",
                    key="metric.kind",
                )
            return np.abs(pa[:, 0][:, None] - pb[:, 0][None, :])
        if self.kind == "euclidean":
            diff = pa[:, None, :] - pb[None, :, :]
            return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
        if self.kind == "manhattan":
            return np.abs(pa[:, None, :] - pb[None, :, :]).sum(axis=2)
        if self.kind == "haversine":
            check_lat_lon(pa, "inputs.points")
            if b is not a:
                check_lat_lon(pb, "outputs.points")
            return haversine_km(pa, pb)
        raise AssertionError(self.kind)

    def graph(self, domain: Domain) -> nx.Graph:
        import networkx as nx  # only graph metrics need it

        g = nx.Graph()
        g.add_nodes_from(domain.labels)
        for i, edge in enumerate(self.edges):
            if not isinstance(edge, (list, tuple)) or len(edge) not in (2, 3):
                raise ProblemError(
                    f"edge {i} must be [a, b] or [a, b, weight], got {edge!r}", key="metric.edges"
                )
            u, v = str(edge[0]), str(edge[1])
            w = float(edge[2]) if len(edge) == 3 else 1.0
            if not (np.isfinite(w) and w > 0):
                raise ProblemError(f"edge {i} weight must be a positive number, got {edge[2]!r}",
                                   key="metric.edges")
            for node in (u, v):
                if node not in domain:
                    raise ProblemError(f"edge {i} names unknown label '{node}'", key="metric.edges")
            if g.has_edge(u, v):
                w = min(w, g[u][v]["weight"])
            g.add_edge(u, v, weight=w)
        return g

    def _graph_distances(self, a: Domain, b: Domain) -> np.ndarray:
        nodes = list(dict.fromkeys(a.labels + b.labels))
        union = Domain(tuple(nodes))
        g = self.graph(union)
        import networkx as nx

        d = nx.floyd_warshall_numpy(g, nodelist=nodes, weight="weight")
        ia = [nodes.index(x) for x in a.labels]
        ib = [nodes.index(y) for y in b.labels]
        d = np.asarray(d)[np.ix_(ia, ib)]
        return d

    # metric privacy reduction ----------------------------------------------------------------
    def privacy_distances(self, domain: Domain) -> np.ndarray:
        """The distances that ε·d-privacy's constraints imply over ``domain``: d itself, except
        for a ``matrix``, which need not satisfy the triangle inequality. Its constraints chain
        (K[x, y] <= e^{εd(x, z)} K[z, y] <= e^{ε(d(x, z) + d(z, x'))} K[x', y]), so they are those
        of its shortest-path closure, a metric; the solvers reduce and price with it (with the
        matrix, a pair whose distance a path undercuts is loose, an LP badly scaled at large ε,
        and the reductions that assume a metric lose their exactness)."""
        d = self.distances(domain)
        if self.kind != "matrix":
            return d
        if self._closure is None:
            self._closure = shortest_path_closure(d)
        return self._closure

    def privacy_pairs(self, domain: Domain) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pairs (i, j, d_ij), i != j, whose ratio constraints imply all others (exact).

        For a graph metric these are the graph's edges whose weight equals the shortest-path
        distance; on a line (``absolute``, or ``euclidean`` / ``manhattan`` on 1-D points) the
        neighbours in sorted order; otherwise every pair with no third value strictly between:
        z lies between x and x' when d(x,z) + d(z,x') = d(x,x') with d(x,z) > 0 and d(z,x') > 0,
        and then K[x,y] <= e^{εd(x,z)} K[z,y] <= e^{εd(x,x')} K[x',y] follows from two strictly
        shorter pairs (induction on the distance). A value coinciding with an endpoint is never
        between: coincident values (d = 0, a pseudo-metric) keep their pair, whose coefficient
        e^0 = 1 both ways ties their rows. Both orders (i, j) and (j, i) are returned.
        """
        if domain in self._pairs:
            return self._pairs[domain]
        d = self.privacy_distances(domain)
        if self.kind == "graph":
            g = self.graph(domain)
            idx = {label: k for k, label in enumerate(domain.labels)}
            pairs = [(idx[u], idx[v]) for u, v in g.edges() if u != v]
            i = np.array([p[0] for p in pairs], dtype=int)
            j = np.array([p[1] for p in pairs], dtype=int)
            keep = np.isclose(d[i, j], np.array([g[u][v]["weight"] for u, v in g.edges() if u != v]))
            i, j = i[keep], j[keep]
            import networkx as nx

            if not nx.is_connected(g):
                raise ProblemError(
                    "the metric graph is not connected: some values are infinitely far apart",
                    key="metric.edges",
                )
        elif on_a_line(self.kind, domain.points):
            # neighbours in sorted order; equal points are neighbours at distance 0, whose
            # constraints (coefficient 1 both ways) make their rows equal
            order = np.argsort(domain.points[:, 0], kind="stable")
            i, j = order[:-1], order[1:]
        elif self.kind == "euclidean" and _is_full_lattice(domain.points):
            i, j = _lattice_pairs_without_intermediate(domain.points)
        else:
            i, j = _pairs_without_intermediate(d)
        i, j = np.concatenate([i, j]), np.concatenate([j, i])
        result = (i, j, d[i, j])
        self._pairs[domain] = result
        return result


def _points(domain: Domain, kind: str) -> np.ndarray:
    if domain.points is None:
        raise ProblemError(
            f"the '{kind}' metric needs coordinates: give 'size', 'points', 'grid' or numeric labels",
            key="metric.kind",
        )
    return domain.points


def haversine_km(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Great-circle distance in km between [lat, lon] points (degrees)."""
    if pa.shape[1] != 2:
        raise ProblemError("the 'haversine' metric needs [lat, lon] points", key="metric.kind")
    lat1, lon1 = np.radians(pa[:, 0])[:, None], np.radians(pa[:, 1])[:, None]
    lat2, lon2 = np.radians(pb[:, 0])[None, :], np.radians(pb[:, 1])[None, :]
    h = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


def _is_full_lattice(points: np.ndarray | None) -> bool:
    """True when the points are every node of an evenly spaced rectangular 2-D grid."""
    if points is None or points.ndim != 2 or points.shape[1] != 2 or len(points) < 4:
        return False
    xs, ys = np.unique(points[:, 0]), np.unique(points[:, 1])
    if xs.size * ys.size != len(points) or xs.size < 2 or ys.size < 2:
        return False
    dx, dy = np.diff(xs), np.diff(ys)
    if not (np.allclose(dx, dx[0]) and np.allclose(dy, dy[0]) and np.isclose(dx[0], dy[0])):
        return False
    return len({(float(a), float(b)) for a, b in points}) == len(points)


def _lattice_pairs_without_intermediate(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """On a full square lattice a grid node lies strictly between nodes (dx, dy) apart, in
    lattice steps, exactly when gcd(|dx|, |dy|) > 1: O(n²) instead of O(n³)."""
    step = np.diff(np.unique(points[:, 0]))[0]
    ij = np.rint((points - points.min(axis=0)) / step).astype(np.int64)
    n = len(points)
    i, j = np.triu_indices(n, k=1)
    dx = np.abs(ij[i, 0] - ij[j, 0])
    dy = np.abs(ij[i, 1] - ij[j, 1])
    keep = np.gcd(dx, dy) == 1
    return i[keep], j[keep]


def floyd_warshall(lengths: np.ndarray) -> np.ndarray:
    """The shortest path between every two values over a square matrix of non-negative edge
    lengths, every entry an edge (a zero one too), as a new array (Floyd–Warshall: one
    vectorised pass over the matrix per intermediate value)."""
    closed = np.array(lengths, dtype=float)
    for z in range(closed.shape[0]):
        np.minimum(closed, closed[:, z:z + 1] + closed[z:z + 1, :], out=closed)
    return closed


def shortest_path_closure(d: np.ndarray) -> np.ndarray:
    """The shortest-path closure of a symmetric non-negative matrix d (:func:`floyd_warshall`),
    taken only where a path undercuts d by more than round-off (10⁻¹² of the largest distance):
    elsewhere d itself, so that a metric comes back unchanged, bit for bit."""
    closed = floyd_warshall(d)
    return np.where(closed < d - 1e-12 * float(d.max(initial=0.0)), closed, d)


def _pairs_without_intermediate(d: np.ndarray, rtol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Unordered pairs (i < j) with no k strictly between them.

    k lies between i and j when d(i,k) + d(k,j) <= d(i,j) + t, d(i,k) > t and d(k,j) > t, with
    t = rtol·max d the round-off allowance. The last two conditions make both parts strictly
    shorter than d(i,j) (d(i,k) <= d(i,j) + t − d(k,j) < d(i,j)), so the implications form no
    cycle: without them, two coincident values (or values 1e-13 apart) would each count as
    lying between the other and a third value, and both pairs to that value would be dropped.
    """
    n = d.shape[0]
    keep_i, keep_j = [], []
    t = rtol * float(d.max(initial=0.0))
    far = d > t  # far[i, k]: k can be an intermediate point on a path from i
    for i in range(n - 1):
        # between[k, j]: k lies between i and j (k != i, j)
        rest = d[i, :, None] + d[:, i + 1:]  # (n, n-i-1): d(i,k) + d(k,j)
        between = (rest <= d[i, None, i + 1:] + t) & far[i, :, None] & far[:, i + 1:]
        implied = between.any(axis=0)
        js = np.arange(i + 1, n)[~implied]
        keep_i.append(np.full(js.size, i))
        keep_j.append(js)
    if not keep_i:
        return np.zeros(0, int), np.zeros(0, int)
    return np.concatenate(keep_i), np.concatenate(keep_j)


def on_a_line(kind: str, points: np.ndarray | None) -> bool:
    """Whether the metric is |x − x'| on 1-D points (``euclidean`` and ``manhattan`` reduce to
    ``absolute`` in one dimension)."""
    one_d = points is not None and points.shape[1] == 1
    return one_d and kind in ("absolute", "euclidean", "manhattan")


def check_lat_lon(points: np.ndarray, key: str) -> None:
    """Raise a ProblemError unless every point is [latitude, longitude] in degrees, latitude in
    [−90, 90] and longitude in [−180, 180]."""
    lat, lon = points[:, 0], points[:, 1]
    bad = np.flatnonzero((np.abs(lat) > 90.0) | (np.abs(lon) > 180.0))
    if bad.size == 0:
        return
    k = int(bad[0])
    message = (f"the 'haversine' metric needs [latitude, longitude] points in degrees, latitude in "
               f"[-90, 90] and longitude in [-180, 180]; point {k} is [{lat[k]:g}, {lon[k]:g}]")
    if 90.0 < abs(lat[k]) <= 180.0:
        message += (" (its first coordinate is a valid longitude: give [latitude, longitude], "
                    "not [longitude, latitude])")
    raise ProblemError(message, key=key)
