"""Shared helpers for benchmark scripts: machine/version info and JSON output."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def versions(*packages: str) -> dict:
    out = {"python": platform.python_version()}
    for name in ("mechdesign", "cvxpy", "highspy", "numpy", "scipy", *packages):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def machine() -> dict:
    return {"platform": platform.platform(), "processor": platform.processor(),
            "cpu_count": os.cpu_count()}


def write_results(name: str, rows: list, **extra) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {"command": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]) if sys.argv else name,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(),
            "versions": versions(), **extra, "results": rows}
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path
