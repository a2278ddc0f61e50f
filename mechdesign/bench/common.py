"""What every benchmark suite shares: the run context, checks, the JSON record and the summary.

A suite is a module with ``NAME``, ``DESCRIPTION`` and ``run(ctx: Context) -> Report``. It
builds its list of independent tasks, runs them through ``ctx.map`` (the executor chosen on the
command line), draws its figures into ``ctx.out`` and returns a :class:`Report`: the inputs,
the values, the facts it checked (:class:`Check`), its figures and a summary table.
:func:`write_record` turns a report into one JSON file with the command, the date, the machine,
the package versions, the executor and the times.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign.bench.executor import Executor, SerialExecutor

#: packages whose versions each record carries (None when not installed)
PACKAGES = ("mechdesign", "numpy", "scipy", "cvxpy", "highspy", "clarabel", "scs", "matplotlib",
            "qif", "POT", "dit", "dask", "distributed")


@dataclass
class Check:
    """One fact a suite asserts about its own results (e.g. a theorem's bound holds)."""

    name: str
    holds: bool
    detail: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "holds": bool(self.holds), "detail": self.detail}


@dataclass
class Report:
    """What a suite returns (see the module docstring).

    ``table`` is (title, column names, rows of cells); ``figures`` are file names in the output
    folder; ``status`` is "ok" or "skipped" (with ``message`` saying why).
    """

    inputs: dict
    results: Any
    checks: list[Check] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    table: tuple[str, Sequence[str], list[Sequence[str]]] | None = None
    status: str = "ok"
    message: str = ""

    @property
    def holds(self) -> bool:
        return all(c.holds for c in self.checks)


@dataclass
class Context:
    """How a suite runs: size, executor, output folder, per-instance time limit, progress."""

    suite: str
    out: Path
    quick: bool = False
    executor: Executor = field(default_factory=SerialExecutor)
    time_limit: float | None = None
    progress: Callable[[str, int, int], None] | None = None

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], label: str = "") -> list:
        """Run ``fn`` over ``items`` on the executor; results in input order."""
        items = list(items)
        label = label or self.suite
        note = None
        if self.progress is not None:
            self.progress(label, 0, len(items))

            def note(done, total):
                self.progress(label, done, total)
        return self.executor.map(fn, items, progress=note)

    def figure(self, name: str) -> Path:
        """Path of the PNG ``name`` of this suite in the output folder."""
        return self.out / f"{self.suite}_{name}.png"


def check(name: str, holds, detail: str = "") -> Check:
    return Check(name, bool(holds), detail)


# ---------------------------------------------------------------------------------------------
# record

def versions() -> dict:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def machine() -> dict:
    out = {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
           "cpu_count": os.cpu_count()}
    try:
        out["load_average"] = [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        pass
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    out["memory_gb"] = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return out


def record(suite: str, description: str, report: Report, *, command: str, quick: bool,
           executor: Executor, seconds: float, time_limit: float | None, started: str) -> dict:
    """The JSON object of one suite run."""
    out = {
        "suite": suite,
        "description": description,
        "status": report.status,
        "command": command,
        "date": started,
        "quick": quick,
        "seconds": seconds,
        "machine": machine(),
        "versions": versions(),
        "executor": executor.describe(),
        "time_limit_seconds": time_limit,
        "inputs": report.inputs,
        "results": report.results,
        "checks": [c.to_dict() for c in report.checks],
        "all_checks_hold": report.holds,
        "figures": list(report.figures),
    }
    if report.message:
        out["message"] = report.message
    return jsonable(out)


def jsonable(value):
    """Plain JSON types: numpy scalars and arrays become numbers and lists, ±∞ and NaN strings."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if np.isnan(v):
            return "nan"
        if np.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(value, Path):
        return str(value)
    return value


def write_record(path: Path, data: dict) -> Path:
    from mechdesign.design.result import write_json_atomic

    write_json_atomic(path, data)
    os.chmod(path, 0o644)  # results are for sharing (the atomic write's temporary file is 0600)
    return path


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


# ---------------------------------------------------------------------------------------------
# helpers for suites

def pyplot():
    """matplotlib.pyplot on the Agg backend, or a ProblemError (exit 2) when it is missing."""
    from mechdesign.cli.plots import pyplot as plots_pyplot

    return plots_pyplot("benchmark figures", key="bench")


def save(fig, path: Path) -> str:
    plt = pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path.name


def fit_exponent(sizes: Sequence[float], seconds: Sequence[float]) -> float | None:
    """Least-squares slope b of log t = a + b log n: the empirical growth exponent (None with
    fewer than two finished sizes)."""
    n = np.asarray(sizes, dtype=float)
    t = np.asarray(seconds, dtype=float)
    ok = np.isfinite(n) & np.isfinite(t) & (n > 0) & (t > 0)
    if ok.sum() < 2 or np.unique(n[ok]).size < 2:
        return None
    slope, _ = np.polyfit(np.log(n[ok]), np.log(t[ok]), 1)
    return float(slope)


def fmt(value, digits: int = 4) -> str:
    """Short cell text for summary tables."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if np.isnan(v):
            return "nan"
        if np.isinf(v):
            return "∞" if v > 0 else "-∞"
        return f"{v:.{digits}g}"
    return str(value)


def seconds_text(value) -> str:
    if value is None:
        return "-"
    v = float(value)
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"
