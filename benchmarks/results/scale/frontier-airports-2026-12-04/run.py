"""The scale suite's ``airports`` instance (the n US airports nearest Dallas/Fort Worth,
haversine, ε per 10 km) solved with a time limit; prints the status, the seconds, the proven
gap, the peak memory and the solver's record as JSON.

Usage: ``python run.py N PRIOR TOLERANCE LIMIT [EPSILON]`` (PRIOR: uniform or zipf)."""

import json
import resource
import sys
import time

from mechdesign.bench.scale import build

n, prior, tolerance, limit = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
epsilon = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
problem = build("airports", {"n": n, "prior": prior, "gap_tolerance": tolerance, "epsilon": epsilon})
start = time.perf_counter()
result = problem.solve(time_limit=limit)
print(json.dumps({"n": n, "prior": prior, "epsilon": epsilon, "gap_tolerance": tolerance,
                  "time_limit": limit, "status": str(result.status), "objective": result.objective,
                  "seconds": time.perf_counter() - start, "gap": result.solver.get("gap"),
                  "certificate_holds": result.holds,
                  "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
                  "solver": result.solver}, default=str))
