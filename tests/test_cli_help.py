"""``--version`` and ``--help``: the version of the package, and help texts that stand alone."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import mechdesign

COMMANDS = ["solve", "audit", "compare", "sweep", "amplify", "bench", "examples"]
# what a help text must not point at: files, documents or issues outside the repository
# (the names of internal notes are spelled in pieces, so this file does not name them itself)
OUTSIDE = re.compile(r"(?i:paper ?\d|papers'|\.\./|sha" r"red/|issue|https?://)|#\d|\bDES" r"IGN\b|MEASURE" r"MENTS")


def test_version_prints_the_packages_version():
    proc = subprocess.run([sys.executable, "-m", "mechdesign", "--version"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0
    assert proc.stdout == f"mechdesign {mechdesign.__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+", mechdesign.__version__)


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_texts_point_at_nothing_outside_the_repository(command, capsys):
    from mechdesign.cli.commands import main

    assert main(["--help"] if command is None else [command, "--help"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: mechdesign")
    assert not OUTSIDE.search(text), OUTSIDE.search(text)


def test_every_command_is_registered(capsys):
    from mechdesign.cli.commands import main

    main(["--help"])
    usage = capsys.readouterr().out
    assert "{" + ",".join(COMMANDS) + "}" in usage
