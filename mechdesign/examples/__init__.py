"""The example problems shipped with mechdesign: list them, read them, copy them.

An example's name is its file's stem (``warner-rr`` is ``warner-rr.toml``)::

    from mechdesign import examples

    examples.names()                 # ['airports-coupling', ..., 'warner-rr']
    examples.description("warner-rr")
    problem = mechdesign.load_problem(examples.path("warner-rr"))
    examples.copy_to("my-problems", ["geo-grid", "airports-distp"])

The files are the repository's ``problems/`` folder: in the source tree
``mechdesign/examples/problems`` links to it, and sdists and wheels hold copies, so ``pip install
mechdesign`` alone is enough. They are found through :mod:`importlib.resources`, wherever the
package is installed.

A problem built from a data table travels with it: ``data/FAMILY-*.csv`` belongs to the problems
named ``FAMILY-*`` (``data/airports-tx-ok.csv``, the airport counts per cell that
``airports-distp`` and ``airports-coupling`` were generated from). :func:`copy_to` keeps the
layout, so the copies sit next to their ``data/`` folder as the originals do.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from mechdesign.core.errors import ProblemError

#: the folder of the data tables, inside the problems folder
DATA = "data"


def _folder() -> Path:
    """The folder holding the example problem files (and their ``data/`` folder)."""
    return Path(str(resources.files(__name__) / "problems"))


def names() -> list[str]:
    """The examples' names, sorted: the stems of the shipped ``*.toml`` files."""
    return sorted(p.stem for p in _folder().glob("*.toml"))


def path(name: str) -> Path:
    """The problem file of the example ``name`` (a :class:`ProblemError` listing the known names
    when there is none)."""
    known = names()
    if name not in known:
        raise ProblemError(f"no example named {name!r}; the examples are: {', '.join(known)}")
    return _folder() / f"{name}.toml"


def description(name: str) -> str:
    """The example's one-line description: its ``description`` key, else its ``name`` key, else
    the example's name."""
    file = path(name)
    try:
        table = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProblemError(f"cannot read the example: {exc}", file=str(file)) from exc
    return str(table.get("description") or table.get("name") or name)


def data_files(name: str) -> list[str]:
    """The data tables the example ``name`` comes with, as paths relative to the problems
    folder (``data/airports-tx-ok.csv``): the ``data/*.csv`` files whose name starts with the
    example's first word and a hyphen."""
    path(name)  # an unknown name is an error here too
    family = name.split("-", 1)[0] + "-"
    return sorted(f"{DATA}/{p.name}" for p in (_folder() / DATA).glob("*.csv")
                  if p.name.startswith(family))


def copy_to(directory: str | Path, names: list[str] | None = None, *,
            overwrite: bool = False) -> list[Path]:
    """Copy examples (all when ``names`` is None; a string is one name) and the data tables
    they come with into ``directory``, creating it; returns the paths of the copies, problem
    files first.

    A file already there with different content is an error naming it (nothing is written)
    unless ``overwrite``; one with the same content is left as it is and listed. Files are created
    with the user's umask."""
    wanted = _every_name() if names is None else [names] if isinstance(names, str) else list(names)
    relative = [path(n).name for n in wanted]  # every name is checked before anything is written
    for name in wanted:
        relative += data_files(name)
    relative = list(dict.fromkeys(relative))  # once each, in order
    target = _prepared(Path(directory))
    sources = {rel: _folder() / rel for rel in relative}
    contents = {rel: source.read_bytes() for rel, source in sources.items()}
    for rel, content in contents.items():
        _check_free(target / rel, content, overwrite)
    written = []
    for rel, content in contents.items():
        copy = target / rel
        try:
            copy.parent.mkdir(parents=True, exist_ok=True)
            if overwrite or not copy.exists():  # else it is already the same (_check_free)
                copy.write_bytes(content)
        except OSError as exc:
            raise ProblemError(f"cannot write the copy: {exc.strerror or exc}",
                               file=str(copy)) from exc
        written.append(copy)
    return written


def _every_name() -> list[str]:
    """:func:`names` (which :func:`copy_to`'s parameter of the same name hides)."""
    return names()


def _prepared(directory: Path) -> Path:
    """``directory``, created if missing (a ProblemError when it cannot be)."""
    if directory.exists() and not directory.is_dir():
        raise ProblemError("expected a directory to copy the examples into, found a file",
                           file=str(directory))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProblemError(f"cannot create the directory: {exc.strerror or exc}",
                           file=str(directory)) from exc
    return directory


def _check_free(copy: Path, content: bytes, overwrite: bool) -> None:
    """Refuse to replace ``copy`` when it holds something else (unless ``overwrite``)."""
    if copy.is_dir():
        raise ProblemError("expected a file for the copy, found a directory", file=str(copy))
    if overwrite:
        return
    try:
        different = copy.exists() and copy.read_bytes() != content
    except OSError as exc:
        raise ProblemError(f"cannot read the file already there: {exc.strerror or exc}",
                           file=str(copy)) from exc
    if different:
        raise ProblemError("a different file is already there; not overwriting it (pass "
                           "overwrite=True, or --force on the command line, to replace it)",
                           file=str(copy))
