"""The package's rooms form floors: a module imports only from its own room or rooms below it,
and no module is over 600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mechdesign"
#: room -> floor; a room may import rooms on lower floors (and its own)
FLOORS = {"core": 0, "examples": 0, "transport": 1, "information": 1, "accounting": 1, "privacy": 2, "solvers": 3,
          "design": 4, "mechanisms": 5, "estimation": 6, "cli": 7, "bench": 7}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if len(rel.parts) > 1:
            yield rel.parts[0], path


def _imported_rooms(path: Path):
    """(room, line) of every import of the package in ``path``; a relative import is reported
    as the room "relative" (the package imports absolutely, so the floors can be read off)."""
    import mechdesign

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            yield "relative", node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module == "mechdesign":
            # the top-level names load their own rooms (mechdesign._EXPORTS: name -> module)
            names = ["mechdesign." + mechdesign._EXPORTS.get(a.name, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "mechdesign" and len(parts) > 1:
                yield parts[1], node.lineno


def test_every_room_is_on_a_floor():
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms == set(FLOORS)


@pytest.mark.parametrize("room,path", list(_modules()), ids=lambda x: str(x) if isinstance(x, str) else x.name)
def test_no_import_reaches_a_higher_room(room, path):
    upward = [(other, line) for other, line in _imported_rooms(path)
              if other == "relative" or (other in FLOORS and FLOORS[other] > FLOORS[room])]
    assert not upward, f"{path.relative_to(PACKAGE)} imports higher rooms: {upward}"


def test_no_module_over_600_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long
