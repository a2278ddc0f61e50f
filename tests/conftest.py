import warnings
from pathlib import Path

import pytest

warnings.filterwarnings("ignore", module="cvxpy")

# The shipped problem files, found from this file rather than the current folder, so that the
# tests pass wherever pytest is started.
PROBLEMS = Path(__file__).resolve().parent.parent / "problems"


@pytest.fixture
def run_cli(capsys):
    """Run the command line in-process; returns (exit code, stdout, stderr)."""
    from mechdesign.cli.commands import main

    def run(*args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run
