"""The threads a solver may use for work that splits into independent pieces.

The metric interior point factorises one dense block per output at every iteration; the blocks are
independent, so they are split into as many contiguous ranges as there are threads and each
range is worked by compiled code that releases the interpreter's lock. The number of threads
is ``MECHDESIGN_THREADS`` when set (a positive integer), else the number of cores this process
may run on. The benchmark suites set it for their children to the cores divided by the
workers running at once, so that parallel instances do not oversubscribe the machine.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache

from mechdesign.core.errors import ProblemError

#: the environment variable that sets the number of threads
THREADS_VARIABLE = "MECHDESIGN_THREADS"


def available_cores() -> int:
    """The cores this process may run on (its affinity where the system reports it)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - systems without affinity (macOS, Windows)
        return max(os.cpu_count() or 1, 1)


#: per thread: the threads its split work may use when limited (:func:`limited`)
_limit = threading.local()


def solver_threads() -> int:
    """The number of threads for split work: the calling thread's limit (:func:`limited`), else
    ``MECHDESIGN_THREADS``, else the available cores."""
    limit = getattr(_limit, "threads", None)
    if limit is not None:
        return limit
    raw = os.environ.get(THREADS_VARIABLE, "").strip()
    if not raw:
        return available_cores()
    try:
        threads = int(raw)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ProblemError(f"the environment variable {THREADS_VARIABLE} is {raw!r}: expected a positive "
                              f"integer (the threads a solver may use), or unset for all available cores")
    return threads


@contextmanager
def limited(threads: int):
    """A context in which the calling thread's split work uses at most ``threads`` threads (two
    methods running at once share the cores)."""
    previous = getattr(_limit, "threads", None)
    _limit.threads = max(min(int(threads), solver_threads()), 1)
    try:
        yield
    finally:
        _limit.threads = previous


@lru_cache(maxsize=4)
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="mechdesign")


def share_of_cores(sharers: int) -> int:
    """The threads each of ``sharers`` workers on this machine may use: the available cores
    divided among them, at least one."""
    return max(available_cores() // max(sharers, 1), 1)


def ranges(n: int, threads: int) -> list[tuple[int, int]]:
    """[lo, hi) ranges splitting range(n) into at most ``threads`` contiguous pieces of sizes
    that differ by at most one (no empty piece)."""
    pieces = max(min(threads, n), 1)
    edges = [n * k // pieces for k in range(pieces + 1)]
    return [(edges[k], edges[k + 1]) for k in range(pieces)]


def over(work, pieces: list[tuple]) -> list:
    """``[work(*piece) for piece in pieces]``, the pieces run at once, one thread each; in this
    thread when there is one piece. ``work`` must release the interpreter's lock for the
    threads to run in parallel (compiled with ``nogil``, or LAPACK through it)."""
    if len(pieces) == 1:
        return [work(*pieces[0])]
    return list(_pool(len(pieces)).map(lambda piece: work(*piece), pieces))


def split(work, n: int, threads: int | None = None) -> list:
    """``[work(lo, hi) for each range]`` over :func:`ranges` of ``n`` into ``threads`` pieces
    (default :func:`solver_threads`), run by :func:`over`."""
    return over(work, ranges(n, solver_threads() if threads is None else threads))
