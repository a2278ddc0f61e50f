"""From obfuscated reports back to distributions: simulation of data collection, the
estimators (matrix inversion, iterative Bayesian update), and the comparison of a design with
its baselines."""
