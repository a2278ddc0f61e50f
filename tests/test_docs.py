"""The user guide runs: every code block in ``docs/*.md`` and ``README.md`` is executed.

Conventions (one test per block, with ids such as ``getting-started.md:3``, the block's place
among the page's fenced blocks, counted from 1):

* Each page gets a fresh temporary directory holding a copy of every shipped example
  (:func:`mechdesign.examples.copy_to`); its blocks run there, in page order.
* ```` ```python ```` blocks run in one namespace per page, in order.
* ```` ```toml ```` blocks are complete problem files: loaded with
  :func:`mechdesign.load_problem` and solved, and the status must be ``optimal`` (or STATUS when
  the block's first line is ``# status: STATUS``, for a page that shows an infeasible
  problem). The file is written to the page's directory as ``NAME.toml`` (``NAME`` its ``name``
  key), so later blocks of the page can use it. A block whose first line is ``# fragment`` is
  only parsed as TOML.
* ```` ```console ```` blocks: every line starting with ``$ `` is a shell command (a line ending
  in a backslash continues on the next); the other lines are expected output and are not
  compared. Each command must exit 0, or N when the block's first line is ``# exit N``.
* Other blocks (``text``, ``json``, ...) are not run.

A test runs the page's earlier blocks first when they have not run yet (so one block can be
selected alone); if one of them fails, the test fails and names it.

Also here: the guide builds with ``mkdocs build --strict``, and no page points outside the
repository.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
RUN_LANGUAGES = ("python", "toml", "console")
#: a command of a console block may take this long (seconds)
COMMAND_TIMEOUT = 300
#: names of internal notes a clone does not have, spelled in pieces so this file names none of them
FORBIDDEN = ("../" "sha" "red", "DES" "IGN", "MEASURE" "MENTS")
FORBIDDEN_ANY_CASE = ("paper 00",)


# ---------------------------------------------------------------------------------------------
# fenced blocks

@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str        # the page's name ("getting-started.md", "README.md")
    index: int       # its place among the page's fenced blocks, from 1
    line: int        # the line of its opening fence, from 1
    language: str    # the info string's first word ("" when there is none)
    code: str        # the content, dedented by the fence's indentation

    @property
    def id(self) -> str:
        return f"{self.page}:{self.index}"

    @property
    def first_line(self) -> str:
        lines = self.code.splitlines()
        return lines[0].strip() if lines else ""


_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def fenced_blocks(text: str, page: str = "<page>") -> list[Block]:
    """The fenced code blocks of a Markdown text, in order.

    A fence is three or more backticks or tildes, possibly indented (inside a list or an
    admonition); the block ends at a line holding only a fence of the same character at least
    as long, or at the end of the text. The language is the info string's first word, with
    the ``{.lang}`` attribute form and a trailing ``{...}`` accepted."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        opened = _OPEN.match(lines[i])
        if not opened or (opened["fence"][0] == "`" and "`" in opened["info"]):
            i += 1
            continue
        indent, fence = opened["indent"], opened["fence"]
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body, j = [], i + 1
        while j < len(lines) and not close.match(lines[j]):
            body.append(_dedent(lines[j], len(indent)))
            j += 1
        blocks.append(Block(page, len(blocks) + 1, i + 1, _language(opened["info"]),
                            "\n".join(body) + ("\n" if body else "")))
        i = j + 1
    return blocks


def _dedent(line: str, width: int) -> str:
    """``line`` without up to ``width`` leading spaces."""
    k = 0
    while k < width and k < len(line) and line[k] == " ":
        k += 1
    return line[k:]


def _language(info: str) -> str:
    words = info.strip().split()
    if not words:
        return ""
    word = words[0].strip("{}")
    return word.lstrip(".").lower()


def _page_name(path: Path) -> str:
    return path.name


def _runnable() -> list[Block]:
    out = []
    for path in PAGES:
        if path.exists():
            blocks = fenced_blocks(path.read_text(encoding="utf-8"), _page_name(path))
            out += [b for b in blocks if b.language in RUN_LANGUAGES]
    return out


# ---------------------------------------------------------------------------------------------
# running a page

def _shell_commands(code: str) -> list[str]:
    """The ``$ `` lines of a console block, backslash continuations joined."""
    commands, lines, i = [], code.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.startswith("$ "):
            continue
        command = line[2:]
        while command.rstrip().endswith("\\") and i < len(lines):
            command = command.rstrip()[:-1].rstrip() + " " + lines[i].strip()
            i += 1
        commands.append(command.strip())
    return commands


def _expected_exit(block: Block) -> int:
    found = re.fullmatch(r"#\s*exit\s+(\d+)", block.first_line)
    return int(found.group(1)) if found else 0


def _expected_status(block: Block) -> str:
    found = re.fullmatch(r"#\s*status:\s*([a-z-]+)", block.first_line)
    return found.group(1) if found else "optimal"


def _file_name(problem_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", problem_name) + ".toml"


@dataclass
class PageRun:
    """A page's directory and Python namespace, and how far its blocks have run."""

    page: str
    directory: Path
    namespace: dict = field(default_factory=dict)
    ran: set = field(default_factory=set)
    failed: dict = field(default_factory=dict)

    def run(self, block: Block, solve: bool = True) -> None:
        """Run ``block`` in the page's directory (``solve``: also solve a toml block)."""
        previous = os.getcwd()
        os.chdir(self.directory)
        try:
            RUNNERS[block.language](self, block, solve)
        finally:
            os.chdir(previous)

    def prepare(self, block: Block, blocks: list[Block]) -> None:
        """Run the page's blocks before ``block`` that have not run (without solving toml
        blocks: only their files matter to later blocks); fail naming any that fails."""
        for earlier in blocks:
            if earlier.index >= block.index:
                break
            if earlier.index in self.failed:
                pytest.fail(f"{earlier.id} (line {earlier.line}) failed, which this block needs: "
                            f"{self.failed[earlier.index]}")
            if earlier.index in self.ran:
                continue
            try:
                self.run(earlier, solve=False)
            except Exception as exc:  # noqa: BLE001  (reported as this test's failure)
                self.failed[earlier.index] = f"{type(exc).__name__}: {exc}"
                pytest.fail(f"{earlier.id} (line {earlier.line}) failed, which this block "
                            f"needs: {self.failed[earlier.index]}")
            self.ran.add(earlier.index)


def _run_python(run: PageRun, block: Block, solve: bool) -> None:
    # leading newlines keep the page's line numbers in tracebacks
    source = "\n" * block.line + block.code
    code = compile(source, f"{block.page} (block {block.index})", "exec")
    exec(code, run.namespace)  # noqa: S102


def _run_toml(run: PageRun, block: Block, solve: bool) -> None:
    data = tomllib.loads(block.code)
    if block.first_line == "# fragment":
        return
    import mechdesign

    assert isinstance(data.get("name"), str), f"{block.id}: a complete problem needs a name"
    path = run.directory / _file_name(data["name"])
    path.write_text(block.code, encoding="utf-8")
    problem = mechdesign.load_problem(path)
    if solve:
        result = problem.solve()
        expected = _expected_status(block)
        assert result.status == expected, (
            f"{block.id} (line {block.line}) solved to {result.status}, expected {expected}: "
            f"{result.message}")


def _run_console(run: PageRun, block: Block, solve: bool) -> None:
    commands = _shell_commands(block.code)
    assert commands, f"{block.id} (line {block.line}): a console block without a '$ ' command"
    expected = _expected_exit(block)
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["NO_MKDOCS_2_WARNING"] = "1"
    for command in commands:
        done = subprocess.run(command, shell=True, cwd=run.directory, env=env, check=False,
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
        assert done.returncode == expected, (
            f"{block.id} (line {block.line}): `{command}` exited {done.returncode}, expected "
            f"{expected}\n--- stdout ---\n{done.stdout[-3000:]}"
            f"\n--- stderr ---\n{done.stderr[-3000:]}")


RUNNERS = {"python": _run_python, "toml": _run_toml, "console": _run_console}


@pytest.fixture(scope="session")
def page_runs(tmp_path_factory):
    """Per page, its :class:`PageRun` (made on first use, with a copy of the examples)."""
    from mechdesign import examples

    runs: dict[str, PageRun] = {}

    def get(page: str) -> PageRun:
        if page not in runs:
            directory = tmp_path_factory.mktemp(page.replace(".", "_"))
            examples.copy_to(directory)
            runs[page] = PageRun(page, directory, {"__name__": f"docs_{page}"})
        return runs[page]

    return get


BLOCKS = _runnable()


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_block_runs(block: Block, page_runs):
    run = page_runs(block.page)
    page_blocks = [b for b in BLOCKS if b.page == block.page]
    run.prepare(block, page_blocks)
    try:
        run.run(block)
    except Exception as exc:
        run.failed[block.index] = f"{type(exc).__name__}: {exc}"
        raise
    run.ran.add(block.index)


# ---------------------------------------------------------------------------------------------
# the reader that finds the blocks, and the site as a whole

def test_fenced_blocks_are_read_as_markdown_renders_them():
    text = """intro
```python
x = 1
```
!!! note
    ```toml title="a.toml"
    # fragment
      indented = 1
    ```
````text
```
inner fence
````
~~~ {.console}
$ echo hi
~~~
``not a fence``` here
```
unclosed"""
    blocks = fenced_blocks(text, "p.md")
    assert [(b.index, b.line, b.language) for b in blocks] == [
        (1, 2, "python"), (2, 6, "toml"), (3, 10, "text"), (4, 14, "console"), (5, 18, "")]
    assert blocks[0].code == "x = 1\n"
    assert blocks[1].code == "# fragment\n  indented = 1\n"
    assert blocks[1].first_line == "# fragment"
    assert blocks[2].code == "```\ninner fence\n"
    assert blocks[4].code == "unclosed\n"
    assert blocks[3].id == "p.md:4"


def test_console_commands_and_exit_codes_are_read():
    code = "# exit 2\n$ mechdesign solve a.toml \\\n    --json\noutput line\n$ ls\n"
    block = Block("p.md", 1, 1, "console", code)
    assert _shell_commands(code) == ["mechdesign solve a.toml --json", "ls"]
    assert _expected_exit(block) == 2
    assert _expected_exit(Block("p.md", 1, 1, "console", "$ ls\n")) == 0


def test_toml_blocks_say_their_expected_status():
    shown = Block("p.md", 1, 1, "toml", "# status: infeasible\nname = 'x'\n")
    assert _expected_status(shown) == "infeasible"
    assert _expected_status(Block("p.md", 1, 1, "toml", "name = 'x'\n")) == "optimal"


@pytest.mark.slow
def test_the_guide_builds_strictly(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
               str(tmp_path / "site")]
    done = subprocess.run(command, cwd=ROOT, env=env, check=False, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    assert (tmp_path / "site" / "index.html").exists()


def test_the_guide_points_nowhere_outside_the_repository():
    files = [p for p in (ROOT / "docs").rglob("*") if p.is_file()] + [ROOT / "README.md"]
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # images and other binary files
            continue
        for word in FORBIDDEN:
            # not inside a longer upper-case name (the threads' variable MECH…_THREADS)
            if re.search(rf"(?<![A-Z]){re.escape(word)}", text):
                found.append(f"{path.relative_to(ROOT)}: {word!r}")
        for word in FORBIDDEN_ANY_CASE:
            if word in text.lower():
                found.append(f"{path.relative_to(ROOT)}: {word!r}")
    assert not found, "\n".join(found)
