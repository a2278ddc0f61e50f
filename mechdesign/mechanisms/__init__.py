"""Mechanisms built by formula:

* the classic baselines: ``randomized_response`` (k-ary RR), ``metric_mechanisms`` (truncated
  geometric, exponential), ``planar`` (planar Laplace and geometric on a grid),
  ``unary_encoding`` (RAPPOR, OUE), ``profile_mechanisms`` (One Bit Cluster, Smooth One Bit,
  Smooth Categorical) and ``trivial_mechanisms`` (uniform, identity);
* ``composition`` — sequential compositions of mechanisms;
* ``channels`` — the privacy channels of information-flow analyses, calibrated to a capacity;
* ``coupling_mechanism`` — coupling mechanisms.
"""
