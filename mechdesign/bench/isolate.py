"""Run one benchmark instance in its own fresh Python process, with a time limit and its peak
memory measured.

:func:`run_isolated` is an ordinary task for any :class:`~mechdesign.bench.executor.Executor` (a pool
worker or a Dask worker starts the child with :mod:`subprocess`, so it works where
multiprocessing children are not allowed). The child (``python -m mechdesign.bench.isolate IN
OUT``) imports the target function, records its resident set size after the imports, resets
the kernel's peak-RSS mark where Linux allows it (``/proc/self/clear_refs``), runs the
function once and reports

* ``seconds``: wall time of the call,
* ``peak_rss_mb``: peak resident set size of the process during the call (VmHWM on Linux,
  otherwise ``resource.getrusage``'s ``ru_maxrss``, which also counts the imports),
* ``baseline_rss_mb`` and ``peak_increase_mb`` = peak − baseline: what the instance itself took,
* ``value``: what the function returned (plain data).

A child that runs past ``timeout`` seconds is killed (its whole process group) and recorded as
``{"status": "timeout", "message": "timed out after T s"}``; a crash is ``status = "error"``
with the tail of its stderr. Children run with one BLAS/OpenMP thread unless the environment
says otherwise, so instances on a shared machine do not oversubscribe the cores.
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _status_kb(field: str) -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return float(line.split()[1])
    except OSError:
        return None
    return None


def _rusage_mb() -> float | None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KiB on Linux


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def child(inp: str, out: str) -> int:
    """Entry point of the child process (see the module docstring)."""
    with open(inp, "rb") as fh:
        target, params = pickle.load(fh)
    module, name = target.split(":")
    fn = getattr(importlib.import_module(module), name)
    rss = _status_kb("VmRSS")
    baseline = rss / 1024 if rss is not None else _rusage_mb()
    reset = _reset_peak()
    start = time.perf_counter()
    try:
        value = fn(params)
        status, message = "ok", ""
    except Exception as exc:  # noqa: BLE001 — reported in the record
        value = None
        status = "error"
        message = f"{type(exc).__name__}: {exc}\n" + traceback.format_exc(limit=4)
    seconds = time.perf_counter() - start
    hwm = _status_kb("VmHWM") if reset else None
    peak = hwm / 1024 if hwm is not None else _rusage_mb()
    result = {"status": status, "value": value, "seconds": seconds, "peak_rss_mb": peak,
              "baseline_rss_mb": baseline,
              "peak_increase_mb": None if peak is None or baseline is None else max(peak - baseline, 0.0),
              "memory_method": "VmHWM after clear_refs" if hwm is not None else "ru_maxrss"}
    if message:
        result["message"] = message
    with open(out, "wb") as fh:
        pickle.dump(result, fh)
    return 0


def run_isolated(spec: dict) -> dict:
    """Run ``spec["target"]`` ("package.module:function") on ``spec["params"]`` in a fresh process.

    ``spec["timeout"]`` (seconds, optional) kills the child when exceeded. Returns the child's
    record (see the module docstring) with ``wall_seconds`` (including interpreter start-up).
    """
    target, params, timeout = spec["target"], spec.get("params", {}), spec.get("timeout")
    env = os.environ.copy()
    for var in THREAD_VARS:
        env.setdefault(var, "1")
    with tempfile.TemporaryDirectory(prefix="mechdesign-bench-") as tmp:
        inp, out = Path(tmp) / "in.pkl", Path(tmp) / "out.pkl"
        with open(inp, "wb") as fh:
            pickle.dump((target, params), fh)
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "mechdesign.bench.isolate", str(inp), str(out)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.communicate()
            return {"status": "timeout", "message": f"timed out after {timeout:g} s",
                    "timeout_seconds": timeout, "wall_seconds": time.perf_counter() - start}
        wall = time.perf_counter() - start
        if proc.returncode != 0 or not out.exists():
            tail = err.decode(errors="replace").strip().splitlines()[-6:]
            return {"status": "error", "returncode": proc.returncode, "wall_seconds": wall,
                    "message": "the child process failed: " + (" | ".join(tail) or "no output")}
        with open(out, "rb") as fh:
            result = pickle.load(fh)
    result["wall_seconds"] = wall
    return result


def _kill(proc: subprocess.Popen) -> None:
    """Kill the child we started and anything it started (its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()


if __name__ == "__main__":
    sys.exit(child(sys.argv[1], sys.argv[2]))
