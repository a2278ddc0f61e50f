"""Optimal transport: couplings of two distributions and the distances built on them.

:mod:`~mechdesign.transport.coupling` holds the public functions (``coupling``,
``coupling_certificate``, ``wasserstein``, ``distance``, ``total_variation``). They rest on
the North-West corner rule for Monge costs and the line (``north_west_corner``), the exact
network simplex compiled with numba (``network_simplex`` and its ``_tree`` / ``_pricing``
kernels, certified in ``certified_simplex``), column generation over HiGHS
(``highs_column_generation``), the W∞ threshold search (``bottleneck``) and optimality
certificates checked over all pairs (``certificate``).
"""
