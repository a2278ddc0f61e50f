"""Freed memory kept for reuse while a solve runs (glibc's malloc)."""

import ctypes
import resource

import numpy as np
import pytest

from mechdesign.core import heap


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _arrays_made_and_freed() -> None:
    # arrays of 24 MB, the size of a design on 1,700 points, made and freed as an iteration does
    first, second = np.ones(3_000_000), np.ones(3_000_000)
    del first
    third = np.ones(3_000_000)
    del second, third


@pytest.mark.skipif(heap._mallopt() is None, reason="a C library without mallopt")
def test_arrays_made_again_inside_a_solve_reuse_memory_without_page_faults():
    # outside, glibc maps such arrays afresh (about 1,200 page faults for three on a host with
    # transparent huge pages, 18,000 without); inside, the freed memory is reused untouched
    with heap.freed_memory_kept():
        _arrays_made_and_freed()  # the heap grows to hold them once
        before = _faults()
        for _ in range(3):
            _arrays_made_and_freed()
        assert _faults() - before < 50


def test_nested_and_concurrent_solves_set_the_thresholds_once_and_restore_them_once(monkeypatch):
    calls = []
    monkeypatch.setattr(heap, "_mallopt", lambda: lambda option, value: calls.append((option, value)) or 1)
    with heap.freed_memory_kept():
        with heap.freed_memory_kept():
            pass
        assert calls == [(heap.M_ARENA_MAX, 1), (heap.M_MMAP_THRESHOLD, heap.MMAP_THRESHOLD),
                         (heap.M_TRIM_THRESHOLD, heap.KEPT_TRIM)]
    assert calls[3:] == [(heap.M_TRIM_THRESHOLD, heap.RESTORED_TRIM)]
    with pytest.raises(ValueError), heap.freed_memory_kept():  # restored when the solve raises too
        raise ValueError
    assert calls[-1] == (heap.M_TRIM_THRESHOLD, heap.RESTORED_TRIM) and len(calls) == 8
    assert heap._running == 0


def test_the_environment_can_leave_malloc_as_it_is(monkeypatch):
    heap._mallopt.cache_clear()
    try:
        monkeypatch.setenv(heap.OPT_OUT, "0")
        assert heap._mallopt() is None
        heap._mallopt.cache_clear()
        monkeypatch.setenv(heap.OPT_OUT, "1")
        try:
            has_mallopt = hasattr(ctypes.CDLL(None), "mallopt")
        except (OSError, TypeError):
            has_mallopt = False
        assert (heap._mallopt() is not None) == has_mallopt  # kept wherever the C library has mallopt
    finally:
        heap._mallopt.cache_clear()
