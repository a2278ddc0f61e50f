"""One BLAS thread for code made of many small dense factorisations and products.

The interior points factorise one block per output each iteration (hundreds of LAPACK calls on
matrices of tens to hundreds of rows). Threaded OpenBLAS gains nothing at those sizes and its
threads' hand-offs cost more than the work: on a 2-core machine a 10 × 10 grid's interior point
took 7.4 s with two BLAS threads and 3.5 s with one. The benchmark suites already run their
children with one thread; this gives a solve from the command line or from Python the same.
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import lru_cache


@lru_cache(maxsize=1)
def _controller():
    """threadpoolctl's view of the BLAS libraries loaded (built once: scanning them takes
    about a millisecond, limiting through it some microseconds); None without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - a dependency; BLAS then keeps its own thread count
        return None
    return ThreadpoolController()


def one_blas_thread():
    """A context in which BLAS runs on one thread (restored on exit)."""
    controller = _controller()
    if controller is None:  # pragma: no cover
        return nullcontext()
    return controller.limit(limits=1, user_api="blas")
