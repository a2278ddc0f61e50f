"""The one-BLAS-thread context of the interior points: one thread inside, the previous count
restored after."""

import numpy as np  # noqa: F401 - BLAS loaded before the controller looks
import scipy.linalg  # noqa: F401
from threadpoolctl import threadpool_info

from mechdesign.core.blas_threads import one_blas_thread


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_thread_inside_and_the_count_restored_after():
    before = _blas_threads()
    assert before  # numpy's and scipy's OpenBLAS
    with one_blas_thread():
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before
