"""Freed memory kept for reuse while a solve runs (glibc's malloc; elsewhere nothing changes).

An interior point's iteration makes dozens of arrays the size of the design (32 MB each on a
2,000-point line) and frees them again. glibc gives freed memory at the top of its heap back
to the system once more than its trim threshold is free, and maps arrays above its mmap
threshold afresh, so that the kernel maps and zeroes every page of a new array again on first
touch: on a 2,000-point line that was a third of each iteration (1.09 s a step, against 0.71 s
with the freed memory kept). While a solve runs (:func:`freed_memory_kept`), the trim threshold
is :data:`KEPT_TRIM` and arrays up to glibc's largest mmap threshold come from the heap; after
the last solve ends, the trim threshold is the one glibc adapts to after freeing such arrays
(twice that mmap threshold), so the kept memory goes back to the system at the next free.

Threads take their memory from heaps of their own, which glibc unmaps whenever one empties, so
kept memory helps a thread only when the threads share the process's main heap: a solve sets
glibc's number of heaps to one, and that lasts for the process (glibc fixes its limit the first
time a thread asks for a heap). A method racing on its own thread took 0.90 s a step on a
2,000-point line with heaps of its own, 0.75 s sharing the main one. Allocations made with
the interpreter's lock held, as nearly all of Python's are, never contend for it. Setting
``MECHDESIGN_KEEP_FREED_MEMORY=0`` before the first solve leaves malloc as it is.
"""

from __future__ import annotations

import ctypes
import os
import threading
from contextlib import contextmanager
from functools import lru_cache

#: mallopt's parameters (glibc's malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8
#: glibc's largest mmap threshold on 64-bit systems (DEFAULT_MMAP_THRESHOLD_MAX): its own
#: threshold rises to it after arrays that large are freed
MMAP_THRESHOLD = 32 * 1024 * 1024
#: the free memory at the top of the heap that is kept while a solve runs
KEPT_TRIM = 1 << 30
#: the trim threshold after the solves: glibc's own once its mmap threshold has risen to
#: :data:`MMAP_THRESHOLD`
RESTORED_TRIM = 2 * MMAP_THRESHOLD

#: the environment variable that, set to 0 before the first solve, leaves malloc as it is
OPT_OUT = "MECHDESIGN_KEEP_FREED_MEMORY"

_lock = threading.Lock()
_running = 0  # the solves inside freed_memory_kept, over every thread


@lru_cache(maxsize=1)
def _mallopt():
    """glibc's mallopt, or None where the C library has none (macOS, Windows) or the
    environment opts out (:data:`OPT_OUT` is 0)."""
    if os.environ.get(OPT_OUT, "1").strip() == "0":
        return None
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError, TypeError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt


@contextmanager
def freed_memory_kept():
    """A context in which freed memory stays in the process for reuse (see the module's
    docstring); nested and concurrent solves share it, and the last to leave restores the
    trim threshold."""
    global _running
    mallopt = _mallopt()
    if mallopt is None:
        yield
        return
    with _lock:
        _running += 1
        if _running == 1:
            mallopt(M_ARENA_MAX, 1)
            mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
            mallopt(M_TRIM_THRESHOLD, KEPT_TRIM)
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                mallopt(M_TRIM_THRESHOLD, RESTORED_TRIM)
