"""The d-privacy interior point alone on envelope instances, to a tolerance of 5e-7: one JSON
line per instance (steps, seconds, value, bound, rows in the working set at the end, the error
if the method declined).

    python joins.py FAMILY SIZE EPSILONS PRIORS LOSSES

EPSILONS, PRIORS and LOSSES are comma-separated. ``FLOOR`` in the environment sets the least
product of a joining row, as a share of the mean (``metric_joins.JOIN_FLOOR``); ``MODE`` is
recorded as given (the code measured is the one on ``PYTHONPATH``). ``GROWTH`` sets the most
rows joining at one step as a share of the set (``metric_joins.JOIN_GROWTH``; ``inf``: no cap),
``SHARE`` the share of the gap the joining rows' excess may take while the gap slows
(``metric_joins.JOIN_EXCESS_SHARE``), ``TOL`` the tolerance (default 5e-7).
"""

import json
import os
import sys
import time

import numpy as np

import mechdesign.solvers.metric_interior as interior
from mechdesign.bench.envelope import build
from mechdesign.core.heap import freed_memory_kept
from mechdesign.solvers.lazy_pairs import repairer

if os.environ.get("FLOOR"):
    import mechdesign.solvers.metric_joins as joins

    joins.JOIN_FLOOR = float(os.environ["FLOOR"])
if os.environ.get("GROWTH"):
    import mechdesign.solvers.metric_joins as joins

    joins.JOIN_GROWTH = float(os.environ["GROWTH"])
if os.environ.get("SHARE"):
    import mechdesign.solvers.metric_joins as joins

    joins.JOIN_EXCESS_SHARE = float(os.environ["SHARE"])


TOL = float(os.environ.get("TOL", "5e-7"))


def main():
    family, size = sys.argv[1], int(sys.argv[2])
    for epsilon in [float(e) for e in sys.argv[3].split(",")]:
        for prior in sys.argv[4].split(","):
            for loss in sys.argv[5].split(","):
                problem = build({"family": family, "size": size, "epsilon": epsilon, "prior": prior, "loss": loss})
                notion, objective = problem.privacy[0], problem.objective
                cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
                with freed_memory_kept():
                    start, error, run = time.perf_counter(), "", None
                    try:
                        run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), epsilon, tol=TOL,
                                                           repair=repairer(notion))
                        while not run.done and run.rounds < 600:
                            run.advance()
                    except Exception as exc:  # (a declined method: recorded)
                        error = str(exc)[:90]
                    seconds = time.perf_counter() - start
                print(json.dumps({"f": family, "n": size, "eps": epsilon, "prior": prior, "loss": loss,
                                  "mode": os.environ.get("MODE"), "floor": os.environ.get("FLOOR"),
                                  "steps": run and run.rounds, "s": round(seconds, 2), "value": run and run.value,
                                  "bound": run and run.bound, "rows": run and int(run.it.rows.size), "err": error}),
                      flush=True)


if __name__ == "__main__":
    main()
