"""The flow LPs of the cone's box minimum solved with HiGHS's defaults and with the options the
library uses (primal simplex, no presolve, the dual simplex after a stall), over ε, the share of
negative reduced costs, and the number of points: seconds and the sum of the bounds.

    python flow_lp_options.py > flow-lp-options.jsonl
"""

import json
import time

import numpy as np

from mechdesign.solvers import cone_flow
from mechdesign.solvers.cone_transfer import TransferBound
from mechdesign.solvers.ray_master import box_lagrangian_bound

DEFAULTS = {}
LIBRARY = {"presolve": "off", "simplex_strategy": cone_flow.PRIMAL_SIMPLEX}


def timed(options, cases, i, j, coef):
    real = cone_flow.quiet_model

    def model(**given):  # the library's model with these options instead of its own
        given.pop("presolve", None), given.pop("simplex_strategy", None)
        if not options:
            given.pop("simplex_iteration_limit", None)
        return real(**given, **options)

    cone_flow.quiet_model = model
    try:
        start = time.perf_counter()
        total = sum(box_lagrangian_bound(a, i, j, coef, cone_flow.flow_multipliers(a, i, j, coef)) for a in cases)
        return time.perf_counter() - start, total
    finally:
        cone_flow.quiet_model = real


def main():
    for n in (300, 1000):
        rng = np.random.default_rng(n)
        points = rng.uniform(0, 10, size=(n, 2))
        d = np.linalg.norm(points[:, None] - points[None], axis=2)
        for epsilon in (0.1, 0.5, 2.0, 8.0):
            x, y = np.nonzero(~np.eye(n, dtype=bool))
            pairs = TransferBound(n, x, y, np.exp(epsilon * d[x, y]))  # (each point's nearest)
            i, j, coef = pairs.i, pairs.j, pairs.coef
            for shift in (-0.5, 0.3, 1.5):  # (mostly negative, mixed, mostly positive)
                cases = [rng.normal(shift, 1.0, size=n) for _ in range(10)]
                row = {"n": n, "epsilon": epsilon, "shift": shift, "pairs": int(i.size)}
                for name, options in (("defaults", DEFAULTS), ("library", LIBRARY)):
                    seconds, total = timed(options, cases, i, j, coef)
                    row[name] = [round(seconds, 3), total]
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
