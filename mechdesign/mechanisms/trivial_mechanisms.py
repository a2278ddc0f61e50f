"""The two trivial mechanisms, the ends of the privacy–utility range: the uniform mechanism
(no information, 0-LDP) and the identity (all information, no privacy)."""

from __future__ import annotations

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.mechanism import Mechanism
from mechdesign.privacy.ldp import LDP

__all__ = ["identity", "uniform"]


def uniform(inputs: int | Domain, outputs: int | Domain | None = None) -> Mechanism:
    """The non-informative mechanism: every output equally likely whatever the input. 0-LDP."""
    inputs = Domain.coerce(inputs)
    outputs = inputs if outputs is None else Domain.coerce(outputs)
    k = np.full((len(inputs), len(outputs)), 1.0 / len(outputs))
    return Mechanism(k, inputs, outputs, claims=[LDP(0.0)], name="uniform", validate=False)


def identity(k: int | Domain) -> Mechanism:
    """Report the true value: no privacy (as LDP its level is infinite); claims nothing."""
    domain = Domain.coerce(k)
    return Mechanism(np.eye(len(domain)), domain, domain, claims=(), name="identity", validate=False)
