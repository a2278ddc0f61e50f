"""One interface for running lists of independent tasks: locally or on a Dask cluster.

Benchmark suites and sweeps are lists of independent solves. An :class:`Executor` maps a
module-level function over a list of inputs and returns the outputs in input order, whatever
the order in which they finish:

* :class:`SerialExecutor` — in this process, one after the other (``workers = 1``);
* :class:`LocalExecutor` — a local process pool (the default; ``workers`` processes);
* :class:`DaskExecutor` — Dask distributed: an existing scheduler (``scheduler="tcp://host:8786"``)
  or a :class:`distributed.LocalCluster` started for the run (``local=True``), so a user who
  outgrows one machine points the same command at their cluster. Dask is an optional extra
  (``pip install 'mechdesign[dask]'``); without it these raise a
  :class:`~mechdesign.core.errors.ProblemError` (exit code 2 on the command line).

Tasks must be picklable module-level functions of one argument, and pure: the same input gives
the same output on any worker, so the executors are interchangeable
(``tests/test_executor.py`` checks the Dask path against the local pool).

>>> with make_executor(workers=1) as ex:
...     ex.map(abs, [-1, 2, -3])
[1, 2, 3]
"""

from __future__ import annotations

import functools
import logging
import multiprocessing as mp
import os
import socket
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from mechdesign.core.errors import ProblemError
from mechdesign.core.threads import THREADS_VARIABLE, share_of_cores

#: ``progress(done, total)`` after each finished task
Progress = Callable[[int, int], None]

#: seconds to wait for a Dask scheduler before giving up (exit 2 on the command line)
CONNECT_TIMEOUT = 10.0

DASK_MISSING = ("Dask is not installed: --scheduler and --dask-local need the optional extra "
                "(pip install 'mechdesign[dask]')")


class Executor:
    """Runs ``fn`` over a list of inputs; outputs in input order (see the module docstring)."""

    kind: str = "executor"
    workers: int = 1

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Progress | None = None) -> list:
        raise NotImplementedError

    def describe(self) -> dict:
        """What ran the tasks (recorded in benchmark JSON)."""
        return {"kind": self.kind, "workers": self.workers}

    def close(self) -> None:
        """Release workers and connections (idempotent)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class SerialExecutor(Executor):
    """Every task in this process, in order."""

    kind = "serial"

    def map(self, fn, items, progress=None):
        items = list(items)
        out = []
        for i, item in enumerate(items):
            out.append(fn(item))
            if progress is not None:
                progress(i + 1, len(items))
        return out


def _limit_threads(solver_threads: int = 1) -> None:
    """Pool initializer: one BLAS/OpenMP thread per worker process (workers share the cores;
    threaded BLAS on an oversubscribed machine was measured many times slower), and the
    solvers' own threads (``MECHDESIGN_THREADS``, unless set) the worker's share of the cores."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault(THREADS_VARIABLE, str(solver_threads))
    try:
        from threadpoolctl import threadpool_limits

        global _LIMITS
        _LIMITS = threadpool_limits(limits=1)
    except Exception:  # noqa: BLE001, S110 — threadpoolctl missing or a library it cannot handle
        pass


_LIMITS = None


def _context():
    """forkserver where available (no fork of a threaded parent), else spawn."""
    methods = mp.get_all_start_methods()
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


class LocalExecutor(Executor):
    """A local process pool of ``workers`` processes (default: the number of CPUs)."""

    kind = "local"

    def __init__(self, workers: int | None = None):
        self.workers = int(workers or os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            share = share_of_cores(self.workers)
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=_context(),
                                             initializer=_limit_threads, initargs=(share,))
        return self._pool

    def map(self, fn, items, progress=None):
        items = list(items)
        if not items:
            return []
        pool = self._get_pool()
        futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
        out: list = [None] * len(items)
        done = 0
        try:
            for fut in as_completed(futures):
                out[futures[fut]] = fut.result()
                done += 1
                if progress is not None:
                    progress(done, len(items))
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
        return out

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _with_solver_threads(fn, on_host: dict[str, int], client: tuple[str, int], item):
    """``fn(item)`` on a Dask worker, with the solvers' threads (``MECHDESIGN_THREADS``, unless
    set) the worker's share of its host's cores: the cores divided by the threads of all the
    workers on that host. Workers that are threads of the client's own process are left alone."""
    if (socket.gethostname(), os.getpid()) != client:
        from distributed import get_worker
        from distributed.comm import get_address_host

        sharers = on_host.get(get_address_host(get_worker().address), 1)
        os.environ.setdefault(THREADS_VARIABLE, str(share_of_cores(sharers)))
    return fn(item)


class DaskExecutor(Executor):
    """Dask distributed: connect to ``scheduler`` or start a LocalCluster (``local=True``).

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler, e.g. ``"tcp://10.0.0.5:8786"``.
    local : bool
        Start a LocalCluster of ``workers`` workers (one thread each) for this run.
    workers : int, optional
        LocalCluster size (default: the number of CPUs); ignored with ``scheduler``.
    processes : bool
        LocalCluster workers as processes (default) or as threads of this process (starts
        faster; tests use it).
    """

    kind = "dask"

    def __init__(self, scheduler: str | None = None, local: bool = False, workers: int | None = None,
                 processes: bool = True, timeout: float | None = None):
        if bool(scheduler) == bool(local):
            raise ProblemError("give either a scheduler address or local=True", key="--scheduler")
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ProblemError(DASK_MISSING, key="--scheduler" if scheduler else "--dask-local")
        for name in ("distributed", "distributed.worker", "distributed.scheduler", "distributed.nanny",
                     "distributed.core", "distributed.http.proxy"):
            logging.getLogger(name).setLevel(logging.ERROR)
        self.cluster = None
        self.scheduler = scheduler
        self.processes = bool(processes) if local else None
        if local:
            n = int(workers or os.cpu_count() or 1)
            self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=processes,
                                        dashboard_address=None)
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(scheduler, timeout=timeout or CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise ProblemError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}",
                                   key="--scheduler")
        info = self.client.scheduler_info()
        self.workers = max(1, len(info.get("workers", {})))

    def describe(self):
        out = super().describe()
        out["scheduler"] = self.scheduler or "LocalCluster"
        if self.processes is not None:
            out["processes"] = self.processes
        return out

    def map(self, fn, items, progress=None):
        from distributed import as_completed as dask_completed
        from distributed.comm import get_address_host

        items = list(items)
        if not items:
            return []
        on_host: dict[str, int] = {}  # the threads of all workers on each host
        for address, worker in self.client.scheduler_info().get("workers", {}).items():
            host = get_address_host(address)
            on_host[host] = on_host.get(host, 0) + int(worker.get("nthreads", 1))
        task = functools.partial(_with_solver_threads, fn, on_host, (socket.gethostname(), os.getpid()))
        futures = self.client.map(task, items, pure=False)
        if progress is not None:
            for done, _ in enumerate(dask_completed(futures), start=1):
                progress(done, len(items))
        return self.client.gather(futures)

    def close(self):
        client, cluster = getattr(self, "client", None), getattr(self, "cluster", None)
        self.client = self.cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def make_executor(workers: int | None = None, scheduler: str | None = None, dask_local: bool = False,
                  processes: bool = True) -> Executor:
    """The executor the command line's ``--workers``, ``--scheduler`` and ``--dask-local`` ask for.

    ``workers = 1`` (and no Dask option) runs in this process; otherwise a local process pool of
    ``workers`` processes (default: the number of CPUs). ``scheduler`` connects to a Dask
    scheduler, ``dask_local`` starts a Dask LocalCluster of ``workers`` workers.
    """
    if workers is not None and (isinstance(workers, bool) or int(workers) < 1):
        raise ProblemError(f"expected a positive number of workers, got {workers!r}", key="--workers")
    if scheduler and dask_local:
        raise ProblemError("use either --scheduler ADDRESS or --dask-local, not both", key="--scheduler")
    if scheduler or dask_local:
        return DaskExecutor(scheduler=scheduler, local=dask_local, workers=workers, processes=processes)
    if workers == 1:
        return SerialExecutor()
    return LocalExecutor(workers)
