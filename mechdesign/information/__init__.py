"""Information measures of a channel K[x, y] = Pr[y | x]:

* ``channel`` — a channel and a prior as the measures take them, and the row divergences;
* ``capacity`` — the certified Shannon capacity (Blahut–Arimoto warm start), with its Newton and
  log-barrier phases in ``capacity_newton``;
* ``leakage`` — mutual information, min-entropy, g-vulnerability and g-leakage, max-information;
* ``query_capacity`` — the individual channel capacity of a query over a small dataset.
"""
