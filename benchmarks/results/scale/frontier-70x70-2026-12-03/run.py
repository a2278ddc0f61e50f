"""The 70 × 70 grid of the scale suite (ε = 1, uniform prior) at a 2 % tolerance, solved with a
900 s limit; prints the status, the seconds, the proven gap and the solver's record as JSON."""

import json
import time

from mechdesign.bench.scale import build

problem = build("grid", {"rows": 70, "gap_tolerance": 0.02})
start = time.perf_counter()
result = problem.solve(time_limit=900)
print(json.dumps({"status": str(result.status), "seconds": time.perf_counter() - start,
                  "gap": result.solver.get("gap"), "solver": result.solver}, default=str))
