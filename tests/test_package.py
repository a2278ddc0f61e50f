"""The package loads lazily but behaves as if it loaded everything: public names resolve, the
functions named like their modules stay functions, and the command line starts without the
heavy dependencies (cvxpy, numba, networkx, matplotlib). Its version is pyproject.toml's, and
the wheel built from the repository is enough on its own: installed into a fresh environment it
ships its licence, metadata, type marker and examples, and solves an example."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_top_level_functions_stay_functions_after_their_modules_load():
    import mechdesign
    import mechdesign.mechanisms.coupling_mechanism  # noqa: F401
    import mechdesign.privacy.audit  # noqa: F401
    from mechdesign.privacy import LDP, ldp

    assert callable(mechdesign.audit) and callable(mechdesign.coupling_mechanism)
    assert mechdesign.audit(np.array([[0.75, 0.25], [0.25, 0.75]]), LDP(np.log(3))).holds
    assert callable(ldp) and ldp(1.0).epsilon == 1.0


def test_every_public_name_resolves():
    import mechdesign
    import mechdesign.privacy as privacy

    for name in mechdesign.__all__:
        assert getattr(mechdesign, name) is not None, name
    for name in privacy.__all__:
        assert getattr(privacy, name) is not None, name


def test_the_command_line_starts_without_the_heavy_dependencies():
    code = ("import sys, mechdesign.cli.commands\n"
            "heavy = [m for m in ('cvxpy', 'numba', 'networkx', 'matplotlib', 'scipy.optimize') "
            "if m in sys.modules]\n"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_version_is_the_one_in_pyproject():
    import mechdesign

    assert mechdesign.__version__ == VERSION


def _run(argv, cwd, timeout=120):
    """Run ``argv`` with no PYTHONPATH (so nothing but the environment's own packages loads)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    out = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout, check=False)
    assert out.returncode == 0, f"{argv}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out.stdout


def _check_archives(dist: Path) -> Path:
    """The sdist and the wheel hold the licence, the type marker and every example (with the
    airports data table); the wheel's metadata names the version, licence and author."""
    [wheel] = dist.glob("*.whl")
    [sdist] = dist.glob("*.tar.gz")
    shipped = "mechdesign/examples/problems"
    examples = [f"{shipped}/{p.name}" for p in (ROOT / "problems").glob("*.toml")]
    wanted = {"mechdesign/py.typed", f"{shipped}/data/airports-tx-ok.csv", *examples}
    with zipfile.ZipFile(wheel) as zf:
        files = set(zf.namelist())
        info = f"mechdesign-{VERSION}.dist-info"
        metadata = Parser().parsestr(zf.read(f"{info}/METADATA").decode("utf-8"))
    assert len(examples) >= 5 and wanted <= files, sorted(wanted - files)
    assert not any(name.endswith("make_airports.py") for name in files)
    assert {f"{info}/LICENSE", f"{info}/licenses/LICENSE"} & files
    assert metadata["Version"] == VERSION
    assert metadata["License-Expression"] == "MIT" or "MIT" in (metadata["License"] or "")
    assert metadata["Author"] or metadata["Author-email"]
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert {"LICENSE", *wanted} <= names, sorted({"LICENSE", *wanted} - names)
    return wheel


#: what a build leaves in a working tree; a build reads its old file list back, so a copy without
#: them builds exactly what a fresh checkout would
BUILD_LEFTOVERS = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                         ".venv", ".pytest_cache", ".hypothesis", ".ruff_cache",
                                         ".benchmarks")


@pytest.mark.slow
def test_the_wheel_alone_is_enough(tmp_path):
    """Build the sdist and, from it, the wheel (``python -m build``, isolated: setuptools comes
    from the package index) from a copy of the working tree, install the wheel alone into a fresh
    environment, and from outside the repository copy the examples and solve Warner's randomized
    response at ε = 1, whose error probability is 1/(1 + e)."""
    source, dist = tmp_path / "source", tmp_path / "dist"
    # symlinks=True: mechdesign/examples/problems stays a link, as in the repository
    shutil.copytree(ROOT, source, symlinks=True, ignore=BUILD_LEFTOVERS)
    _run([sys.executable, "-m", "build", "--outdir", dist, source], cwd=tmp_path, timeout=300)
    wheel = _check_archives(dist)

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv],
         cwd=tmp_path)
    python, command = venv / "bin" / "python", venv / "bin" / "mechdesign"
    # pip comes from the system site-packages; --ignore-installed: the editable install of this
    # repository is visible there too, and must not count as "already satisfied"
    _run([python, "-m", "pip", "install", "--no-deps", "--ignore-installed", "--no-index", wheel],
         cwd=tmp_path, timeout=300)
    work = tmp_path / "work"
    work.mkdir()
    code = "import mechdesign; print(mechdesign.__file__); print(mechdesign.__version__)"
    where, version = _run([python, "-c", code], cwd=work).split()
    assert Path(where).resolve().is_relative_to(venv.resolve()) and version == VERSION

    copied = _run([command, "examples", "--to", "mine"], cwd=work).splitlines()
    assert "mine/warner-rr.toml" in copied and (work / "mine/data/airports-tx-ok.csv").is_file()
    problem = tomllib.loads((work / "mine/warner-rr.toml").read_text(encoding="utf-8"))
    assert problem["privacy"][0]["epsilon"] == 1.0
    result = json.loads(_run([command, "solve", "mine/warner-rr.toml", "--json"], cwd=work))
    assert result["status"] == "optimal"
    assert result["objective"]["value"] == pytest.approx(1 / (1 + math.e), rel=1e-9)
