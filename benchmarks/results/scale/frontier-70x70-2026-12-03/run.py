import time, json, sys
from mechdesign.bench.scale import build
p = build("grid", {"rows": 70, "gap_tolerance": 0.02})
t = time.perf_counter()
r = p.solve(time_limit=900)
d = r.to_dict() if hasattr(r, "to_dict") else {}
print(json.dumps({"status": str(r.status), "seconds": time.perf_counter() - t, "gap": getattr(r, "gap", None),
                  "solver": getattr(r, "solver", None), "path": str(getattr(r, "path", ""))[:2000]}, default=str))
