"""Start-up and small solves through the command line, end to end, in fresh processes.

Targets: ``mechdesign --help`` within 0.5 s; d-privacy on a 60-point line and on a 6 × 6 grid
within 1 s each (process start, imports, loading, solving, certifying and printing). Each command
runs ``--repeat`` times (default 5) after one warm-up run (the operating system's file cache);
the median and the slowest are recorded.

    python benchmarks/bench_startup.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import write_results

PROBLEMS = Path(__file__).resolve().parent.parent / "problems"
TARGETS = {"help": 0.5, "line-60": 1.0, "line-100-eps0.5": 1.0, "grid-6x6": 1.0}


def problem_files(folder: Path) -> dict[str, Path]:
    """The small problems, derived from the shipped line and grid examples."""
    line = (PROBLEMS / "dprivacy-line.toml").read_text()
    grid = (PROBLEMS / "geo-grid.toml").read_text()
    files = {"line-60": line.replace("size = 20", "size = 60"),
             "line-100-eps0.5": line.replace("size = 20", "size = 100").replace("epsilon = 1.0", "epsilon = 0.5"),
             "grid-6x6": grid.replace("rows = 5, cols = 5", "rows = 6, cols = 6")}
    out = {}
    for name, text in files.items():
        out[name] = folder / f"{name}.toml"
        out[name].write_text(text)
    return out


def timed(command: list[str], repeat: int) -> list[float]:
    subprocess.run(command, capture_output=True, check=True)  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "mechdesign"]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        files = problem_files(Path(folder))
        commands = {"help": cli + ["--help"], **{name: cli + ["solve", str(path), "--json"] for name, path in files.items()}}
        for name, command in commands.items():
            times = timed(command, args.repeat)
            row = {"case": name, "median_seconds": statistics.median(times), "slowest_seconds": max(times),
                   "target_seconds": TARGETS[name], "met": statistics.median(times) <= TARGETS[name]}
            rows.append(row)
            print(f"{name}: median {row['median_seconds']:.2f} s, slowest {row['slowest_seconds']:.2f} s "
                  f"(target {TARGETS[name]:g} s: {'met' if row['met'] else 'NOT met'})")
    path = write_results("startup", rows, repeat=args.repeat)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
