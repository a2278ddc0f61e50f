"""Shared helpers for benchmark scripts: machine/version info and JSON output."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from mechdesign.bench.common import machine, versions

RESULTS = Path(__file__).resolve().parent / "results"


def write_results(name: str, rows: list, **extra) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {"command": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]) if sys.argv else name,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(),
            "versions": versions(), **extra, "results": rows}
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path
