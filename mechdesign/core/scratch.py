"""Arrays for an iteration's temporaries, reused from one iteration to the next.

glibc's malloc maps every array above its largest mmap threshold (32 MiB) afresh and unmaps it
when it is freed (:mod:`~mechdesign.core.heap` keeps freed memory only below it), so the kernel
maps and zeroes each page of such an array again on first touch. An interior point's pair rows
pass that size on a 2,000-point line (8 million rows, 64 MB an array) and make a dozen such
temporaries a step: a pass that fills two of them took 24.6 ms on fresh arrays and 15.1 ms on
reused ones. :class:`Scratch` hands out views of buffers it keeps, and hands a buffer out again
only once nothing refers to it any more: every view of a buffer, and every view of a view,
holds a reference to it, so the buffer is free exactly when its reference count is back to the
count of an idle one (CPython frees and counts deterministically). The buffers hold the most
that was in use at once, never more; but they stay resident between the moments of their use,
so a process's peak can rise by what other arrays held then (a 2,000-point line: 2.8 GB at
its peak instead of 2.6).
"""

from __future__ import annotations

import sys

import numpy as np

#: a buffer grows to at least this multiple of its old size when a larger array is asked of it
#: (a working set that grows by a few rows a step then reallocates rarely)
GROWTH = 1.25


class Scratch:
    """Float arrays of any length, as views of kept buffers (see the module docstring). A view
    must not outlive the need for its numbers: it is handed out again once it and every view
    of it are gone."""

    def __init__(self):
        self._buffers: list[np.ndarray] = []
        probe = [np.empty(0)]
        self._idle = sys.getrefcount(probe[0])  # (held by the list alone, counted as below)

    def empty(self, size: int) -> np.ndarray:
        """An uninitialised float array of ``size`` entries (C-contiguous)."""
        buffers = self._buffers
        free = [k for k in range(len(buffers)) if sys.getrefcount(buffers[k]) == self._idle]
        fitting = [k for k in free if buffers[k].size >= size]
        if fitting:
            k = min(fitting, key=lambda k: buffers[k].size)
        elif free:  # the largest free buffer grows: fewer buffers, each reused longer
            k = max(free, key=lambda k: buffers[k].size)
            buffers[k] = np.empty(max(size, int(GROWTH * buffers[k].size)))
        else:
            buffers.append(np.empty(size))
            k = len(buffers) - 1
        return buffers[k][:size]

    @property
    def held(self) -> int:
        """The bytes held by the buffers."""
        return sum(buffer.nbytes for buffer in self._buffers)
