"""Information measures of a channel: capacity, leakage (mutual information, min-entropy,
g-vulnerability) and the individual channel capacity of a query."""
