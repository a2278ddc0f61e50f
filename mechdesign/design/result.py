"""The labelled result of a solve: status, objective, mechanisms, certificate, solver record."""

from __future__ import annotations

import errno
import json
import os
import signal
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from mechdesign.core import preview
from mechdesign.core.audit_record import Audit, jsonable
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Result:
    """What a solve returns: status, objective, mechanisms, certificate and solver statistics.

    ``status`` is ``optimal`` only when every certificate line holds on the returned matrices,
    the objective and the lower bound are finite and the relative gap is within tolerance (a
    bound that is not proven is said so in ``message``); ``time-limit`` when the limit was
    reached first (the best design so far, certified, with its proven gap); ``infeasible``
    only with a Farkas certificate checked on the data; ``failed`` otherwise (after a solver
    failure the certified data-independent design is returned, marked so).

    ``solver`` records, besides names and times: ``bound`` (a lower bound on the optimum, an upper
    bound for a maximised objective; None when none could be proven), ``bound_proven`` (True
    when the bound holds in exact arithmetic on the program's data, derived from the solver's
    duals or a special solver's proof; False when it is a solver's own
    claim, named in ``bound_kind`` — a conic solver's dual objective where the proven bound,
    then given as ``proven_bound``, is not within tolerance), ``gap`` (|objective − bound| /
    |objective|, absent without a bound), ``special_solvers`` (per special solver in order:
    whether it applied, why not, and what it did), ``relaxed`` (the general route's program
    left constraints to the repair step), ``privacy`` (present only when there is no privacy
    notion) and, after a solver failure, ``fallback``.

    ``extra`` holds what the objective reports besides its value (:meth:`Objective.report`): a
    robust expected loss records ``extra["robust"]`` — the set, ``worst_prior`` (a prior of the set
    attaining the objective), ``worst_loss``, ``nominal_prior`` and ``nominal_loss`` (the design's
    expected loss under the nominal prior); the command line adds ``defaults`` and ``baselines``.
    """

    problem: str
    status: str
    objective_kind: str
    objective: float | None
    mechanisms: dict[str, Mechanism] = field(default_factory=dict)
    certificate: list[Audit] = field(default_factory=list)
    solver: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def mechanism(self) -> Mechanism:
        """The single mechanism (or the first context's)."""
        return next(iter(self.mechanisms.values()))

    @property
    def holds(self) -> bool:
        return all(a.holds for a in self.certificate)

    def matrices(self) -> dict[str, np.ndarray]:
        """The mechanisms' matrices, by mechanism key."""
        return {k: m.matrix for k, m in self.mechanisms.items()}

    def __repr__(self) -> str:
        value = None if self.objective is None else format(float(self.objective), ".10g")
        lines = ", ".join(f"{a.notion}: {'holds' if a.holds else 'fails'}" for a in self.certificate)
        return preview.call("Result", [
            ("problem", repr(self.problem)), ("status", repr(self.status)),
            ("objective", value), ("objective_kind", repr(self.objective_kind)),
            ("mechanisms", "[" + preview.labels(list(self.mechanisms)) + "]"),
            ("certificate", f"[{lines}]")])

    def to_dict(self) -> dict:
        out = {
            "problem": self.problem,
            "status": self.status,
            "objective": {"kind": self.objective_kind, "value": self.objective},
            "mechanisms": {k: m.to_dict() for k, m in self.mechanisms.items()},
            "certificate": [a.to_dict() for a in self.certificate],
            "solver": jsonable(self.solver),
        }
        if self.message:
            out["message"] = self.message
        out.update(jsonable(self.extra))
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def write(self, path: str | os.PathLike) -> None:
        """Write the JSON object to ``path`` atomically (temporary file, then rename)."""
        write_json_atomic(path, self.to_dict())


def check_output_path(path: str | os.PathLike, key: str = "--out") -> str:
    """Refuse, before any work, an output path that cannot be written (ProblemError naming ``key``).

    Refused: a directory (``/`` included), a path whose parent directory does not exist (it is
    not created) or is not a directory, and a directory where no file can be created (read-only
    or immutable, no permission), found by creating and removing a temporary file there.
    """
    path = os.fspath(path)
    if not path:
        raise ProblemError("expected a file path, got an empty string", key=key)
    if os.path.isdir(path):
        raise ProblemError(f"'{path}' is a directory; expected a file path", key=key)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        what = "is not a directory" if os.path.exists(directory) else "does not exist"
        raise ProblemError(f"cannot write '{path}': the directory '{directory}' {what}", key=key)
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".probe")
    except OSError as exc:
        raise ProblemError(f"cannot write '{path}': {exc.strerror or exc}", key=key)
    os.close(fd)
    _unlink_quietly(probe)
    return path


def write_json_atomic(path: str | os.PathLike, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (see :func:`write_file_atomic`)."""
    def dump(fh) -> None:
        json.dump(data, fh, indent=2)
        fh.write("\n")

    write_file_atomic(path, dump)


def write_file_atomic(path: str | os.PathLike, write: Callable[[IO], None], binary: bool = False) -> None:
    """Write a file atomically: ``write(fh)`` fills a temporary file in the same directory
    (opened as UTF-8 text, or binary with ``binary``), which is renamed over ``path`` once
    complete, so readers see the old file or the whole new one.

    The file gets the mode a plain ``open`` would give (0o666 without the umask's bits). The
    parent directory must exist. While the temporary file exists, SIGTERM removes it and exits
    with status 143 (128 + 15); any error removes it too and is raised (OSError for the file
    system).
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=os.path.splitext(path)[1] or ".out")
    previous = _install_sigterm(tmp)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    finally:
        _restore_sigterm(previous)


def sigterm_remover(tmp: str) -> Callable[[int, Any], None]:
    """The SIGTERM handler used while ``tmp`` is being written: remove it, exit 128 + signum."""
    def handler(signum: int, frame: Any) -> None:
        _unlink_quietly(tmp)
        raise SystemExit(128 + signum)
    return handler


def _install_sigterm(tmp: str):
    if threading.current_thread() is not threading.main_thread():
        return _NOT_INSTALLED  # signal handlers belong to the main thread
    return signal.signal(signal.SIGTERM, sigterm_remover(tmp))


def _restore_sigterm(previous) -> None:
    if previous is not _NOT_INSTALLED:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


_NOT_INSTALLED = object()


def _umask() -> int:
    """The process's umask (read from /proc where possible: setting it is not thread-safe)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:  # already gone, or the directory changed under us: nothing left to clean
        pass
