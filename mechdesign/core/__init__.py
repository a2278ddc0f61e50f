"""The ground floor: domains, metrics, mechanisms, objectives, divergences, the error type,
time limits and size estimates. Everything else builds on these; they import nothing above."""
