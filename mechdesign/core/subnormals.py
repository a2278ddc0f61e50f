"""Subnormal numbers flushed to zero in the calling thread, for single-precision kernels.

A float32 below 1.2e-38 is subnormal, and x86 processors compute with subnormals through a
slow microcode path. The single-precision Cholesky factors and inverses of the d-privacy
interior point's scaled blocks (unit diagonal, off-diagonal entries over many orders of
magnitude) hold a few of them: on 300 haversine locations (Zipf prior, ε = 1) 0.2 % of the
factors' entries, and one step's factorisations took 3.0 s on one thread against 0.79 s in
double precision. With the processor's flush-to-zero and denormals-are-zero modes set they
took 0.45 s, with the same sum of inverses to the last bit shown. A value that small beside
a unit diagonal is far below single precision's resolution (6e-8), so flushing it changes
nothing a step relies on.

The modes live in the thread's MXCSR register. They are set through the C library's
``fegetenv``/``fesetenv`` on Linux on x86-64 (glibc keeps MXCSR in the last word of its
32-byte ``fenv_t``) and restored on exit; elsewhere :func:`flushed_subnormals` changes
nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
import sys
from contextlib import contextmanager
from functools import lru_cache

#: MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6) bits
FLUSH_BITS = 0x8040
#: glibc's x86-64 fenv_t: eight 32-bit words, MXCSR the last
_ENV_WORDS, _MXCSR_WORD = 8, 7


@lru_cache(maxsize=1)
def _libm():
    """The C maths library's fegetenv/fesetenv, or None where the layout above is not known."""
    if sys.platform != "linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    name = ctypes.util.find_library("m")
    if name is None:  # pragma: no cover - every glibc system has libm
        return None
    try:
        libm = ctypes.CDLL(name)
    except OSError:  # pragma: no cover
        return None
    if not (hasattr(libm, "fegetenv") and hasattr(libm, "fesetenv")):  # pragma: no cover
        return None
    env = (ctypes.c_uint32 * _ENV_WORDS)()
    if libm.fegetenv(ctypes.byref(env)) != 0 or env[_MXCSR_WORD] >> 16:  # (MXCSR's upper half is reserved: 0)
        return None  # pragma: no cover - not the layout expected
    before = int(env[_MXCSR_WORD])
    took = _mxcsr(libm, before | FLUSH_BITS) & FLUSH_BITS == FLUSH_BITS  # (the modes read back as set)
    _mxcsr(libm, before)
    return libm if took else None


def _mxcsr(libm, bits: int | None = None) -> int:
    """The thread's MXCSR; with ``bits``, set to them first."""
    env = (ctypes.c_uint32 * _ENV_WORDS)()
    libm.fegetenv(ctypes.byref(env))
    if bits is not None:
        env[_MXCSR_WORD] = bits
        libm.fesetenv(ctypes.byref(env))
    return int(env[_MXCSR_WORD])


def can_flush() -> bool:
    """Whether :func:`flushed_subnormals` can set the modes on this machine."""
    return _libm() is not None


@contextmanager
def flushed_subnormals(enabled: bool = True):
    """A context in which this thread's floating-point arithmetic flushes subnormal results and
    operands to zero (see the module docstring); the thread's modes are restored on exit. A
    no-op when ``enabled`` is false or the modes cannot be set here."""
    libm = _libm() if enabled else None
    if libm is None:
        yield
        return
    before = _mxcsr(libm)
    _mxcsr(libm, before | FLUSH_BITS)
    try:
        yield
    finally:  # (only the two modes: flags raised inside are kept)
        _mxcsr(libm, (_mxcsr(libm) & ~FLUSH_BITS) | (before & FLUSH_BITS))
