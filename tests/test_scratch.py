"""The reused temporaries: a buffer is handed out again only once nothing refers to it."""

import numpy as np

from mechdesign.core.scratch import GROWTH, Scratch


def test_a_buffer_in_use_is_never_handed_out_again():
    scratch = Scratch()
    first = scratch.empty(1000)
    second = scratch.empty(1000)
    assert not np.shares_memory(first, second)
    first[:] = 1.0
    second[:] = 2.0
    assert np.all(first == 1.0)


def test_a_view_of_a_view_keeps_its_buffer_busy():
    scratch = Scratch()
    handed = scratch.empty(1000)
    part = handed.reshape(10, 100)[3:5]
    del handed
    again = scratch.empty(1000)
    assert not np.shares_memory(part, again)


def test_a_released_buffer_is_reused_and_memory_stays_at_the_peak():
    scratch = Scratch()
    for _ in range(20):  # three at once, twenty times over
        arrays = [scratch.empty(500) for _ in range(3)]
        for k, array in enumerate(arrays):
            array[:] = k
        assert [float(array[0]) for array in arrays] == [0.0, 1.0, 2.0]
        del arrays, array
    assert scratch.held == 3 * 500 * 8


def test_a_larger_request_grows_a_free_buffer():
    scratch = Scratch()
    small = scratch.empty(100)
    address = small.__array_interface__["data"][0]
    del small
    same = scratch.empty(80)  # fits: the same buffer
    assert same.__array_interface__["data"][0] == address and same.size == 80
    del same
    larger = scratch.empty(110)  # does not fit: that buffer grows by GROWTH at least
    assert larger.size == 110 and scratch.held == max(110, int(GROWTH * 100)) * 8
    assert larger.flags.c_contiguous
