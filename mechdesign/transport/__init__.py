"""Optimal transport: couplings and the distances built on them (W1, W∞, total variation),
with the exact network simplex they run on."""
