"""The package loads lazily but behaves as if it loaded everything: public names resolve, the
functions named like their modules stay functions, and the command line starts without the
heavy dependencies (cvxpy, numba, networkx, matplotlib)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np


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
