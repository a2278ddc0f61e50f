import warnings

import pytest

warnings.filterwarnings("ignore", module="cvxpy")


@pytest.fixture
def run_cli(capsys):
    """Run the command line in-process; returns (exit code, stdout, stderr)."""
    from mechdesign.cli.commands import main

    def run(*args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run
