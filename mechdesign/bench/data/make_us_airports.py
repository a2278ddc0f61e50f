"""Regenerate ``us-airports-near-dfw.csv``: real locations for the scale suite's frontier.

Source: the airports table shipped inside the PyPI package ``airportsdata`` (version
20260905, MIT licence; file ``airportsdata/airports.csv``, read offline; ``pip install
airportsdata==20260905`` to run this script — it is not a dependency of mechdesign). Of the
airports in the United States, the 5,000 nearest Dallas/Fort Worth International (ICAO KDFW) by
great-circle distance are kept, nearest first (ties by ICAO code), so that the first n rows of
the file are the n nearest: 1,500 of them lie within 457 km, all 5,000 within 1,218 km; no two
share a location.

Writes ``us-airports-near-dfw.csv`` beside this file: icao, lat, lon (degrees, as published).

Usage: ``python mechdesign/bench/data/make_us_airports.py`` (deterministic).
"""

from __future__ import annotations

import csv
import math
from importlib import resources
from pathlib import Path

HERE = Path(__file__).resolve().parent
CENTRE = "KDFW"
COUNT = 5000
EARTH_RADIUS_KM = 6371.0088


def great_circle_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    (la1, lo1), (la2, lo2) = (tuple(map(math.radians, p)) for p in (a, b))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(h))


def main() -> None:
    text = resources.files("airportsdata").joinpath("airports.csv").read_text("utf-8")
    rows = [r for r in csv.DictReader(text.splitlines()) if r["country"] == "US"]
    centre = next(r for r in rows if r["icao"] == CENTRE)
    at = (float(centre["lat"]), float(centre["lon"]))
    rows.sort(key=lambda r: (great_circle_km(at, (float(r["lat"]), float(r["lon"]))), r["icao"]))
    kept = rows[:COUNT]
    assert len({(r["lat"], r["lon"]) for r in kept}) == COUNT, "two airports share a location"
    with open(HERE / "us-airports-near-dfw.csv", "w", newline="") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(["icao", "lat", "lon"])
        out.writerows([r["icao"], r["lat"], r["lon"]] for r in kept)


if __name__ == "__main__":
    main()
