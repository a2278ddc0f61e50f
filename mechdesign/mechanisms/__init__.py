"""Mechanisms built by formula: the classic baselines, compositions, the privacy channels of
information-flow analyses, and coupling mechanisms."""
