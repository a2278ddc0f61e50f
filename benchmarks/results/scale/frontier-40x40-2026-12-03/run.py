"""The 40 × 40 grid of the scale suite (ε = 1, uniform prior, the default tolerance 1e-6),
solved with a time limit (seconds, the first argument; default 1500); prints the status, the
seconds, the proven gap, the peak memory and the solver's record as JSON."""

import json
import resource
import sys
import time

from mechdesign.bench.scale import build

limit = float(sys.argv[1]) if len(sys.argv) > 1 else 1500.0
problem = build("grid", {"rows": 40})
start = time.perf_counter()
result = problem.solve(time_limit=limit)
print(json.dumps({"status": str(result.status), "seconds": time.perf_counter() - start,
                  "objective": result.objective, "gap": result.solver.get("gap"),
                  "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
                  "solver": result.solver}, default=str))
