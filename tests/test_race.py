"""Two methods at once, one thread each: they overlap in time, the race ends when the shared
gap closes (the other method stops at its next look), the second never starts when the first
closes within its delay, a decline leaves the other running, a failure stops the race and is
raised, the time limit ends it with the best design, and the choice between the race and the
turns follows the threads the solver may use."""

import signal
import threading
import time

import numpy as np
import pytest

from mechdesign.core.limits import Limits
from mechdesign.solvers import portfolio, race
from mechdesign.solvers.highs_model import SolverDeclined


class _Timed:
    """A method whose every step sleeps ``step`` seconds (releasing the interpreter's lock, as
    the real methods' compiled work does) and records when it ran; its bound reaches its value
    after ``closes_after`` steps (never when None); it declines after ``declines_after`` steps,
    raises ``fails`` after its first."""

    def __init__(self, name, step, closes_after=None, declines_after=None, fails=None):
        self.name, self.step, self.closes_after, self.declines_after = name, step, closes_after, declines_after
        self.fails = fails
        self.value, self.bound, self.latest_bound, self.rounds, self.columns = 1.0, 0.0, 0.0, 0, 3
        self.spans: list[tuple[float, float]] = []
        self.threads: set[int] = set()

    def advance(self, limits=None):
        if self.declines_after is not None and self.rounds >= self.declines_after:
            raise SolverDeclined(f"{self.name} can go no further")
        if self.fails is not None and self.rounds >= 1:
            raise self.fails
        start = time.perf_counter()
        time.sleep(self.step)
        self.spans.append((start, time.perf_counter()))
        self.threads.add(threading.get_ident())
        self.rounds += 1
        self.latest_bound = self.bound = 1.0 if self.rounds == self.closes_after else 0.5
        return True

    def design(self):
        return np.eye(3)


def _turns(**methods):
    started = {}

    def starter(name, method):
        def start():
            started[name] = time.perf_counter()
            return method
        return start

    return portfolio.Turns({name: starter(name, method) for name, method in methods.items()}), started


def test_the_methods_run_at_once_in_threads_of_their_own():
    first, second = _Timed("first", 0.02, closes_after=40), _Timed("second", 0.02)
    turns, _ = _turns(first=first, second=second)
    path: list[str] = []
    found = race.race(turns, 1e-9, None, path)
    assert found.objective == found.bound == 1.0 and not found.stopped
    assert second.rounds > 0
    # some step of the second ran while the first was stepping, on another thread
    assert any(s < f_end and f_start < e for s, e in second.spans for f_start, f_end in first.spans)
    # the first ran alone in the caller's thread until the second's start, then in a thread of its own
    assert first.threads.isdisjoint(second.threads) and threading.get_ident() not in second.threads
    assert first.threads - {threading.get_ident()}
    assert "(at once, one thread each); design from first, bound from first" in path[-1]


def test_a_problem_closed_before_the_second_starts_starts_no_thread(monkeypatch):
    monkeypatch.setattr(race, "SECOND_START", 1.0)

    def no_thread(*args, **kwargs):
        raise AssertionError("a thread was started")

    monkeypatch.setattr(race.threading, "Thread", no_thread)
    first = _Timed("first", 0.001, closes_after=3)
    turns, _ = _turns(first=first, second=_Timed("second", 0.001))
    path: list[str] = []
    found = race.race(turns, 1e-9, None, path)
    assert found.objective == found.bound == 1.0 and first.threads == {threading.get_ident()}
    assert "at once" not in path[-1] and "design from first" in path[-1]


def test_a_method_with_a_step_estimate_first_runs_in_the_race_from_the_start(monkeypatch):
    # such a method may wait for the other in the race (its one step is long), so it is not run
    # alone first
    monkeypatch.setattr(race, "SECOND_START", 1.0)
    first = _Timed("first", 0.001, closes_after=3)
    turns = portfolio.Turns({"first": lambda: first, "second": lambda: _Timed("second", 0.001)},
                            latency={"first": lambda: 0.0})
    race.race(turns, 1e-9, None, [])
    assert threading.get_ident() not in first.threads


def test_the_other_method_stops_at_its_next_look_once_the_gap_closes():
    first, second = _Timed("first", 0.02, closes_after=20), _Timed("second", 0.05)
    turns, _ = _turns(first=first, second=second)
    race.race(turns, 1e-9, None, [])
    closed_at = first.spans[-1][1]
    # at most the one step it may have begun while the close was being noticed
    assert sum(start > closed_at for start, _ in second.spans) <= 1


def test_the_second_method_never_starts_when_the_first_closes_within_its_delay(monkeypatch):
    monkeypatch.setattr(race, "SECOND_START", 1.0)
    turns, started = _turns(first=_Timed("first", 0.001, closes_after=3), second=_Timed("second", 0.001))
    race.race(turns, 1e-9, None, [])
    assert "second" not in started  # its arrays are never allocated


def test_a_decline_leaves_the_other_running_and_is_recorded():
    turns, _ = _turns(first=_Timed("first", 0.01, declines_after=2), second=_Timed("second", 0.01, closes_after=40))
    path: list[str] = []
    found = race.race(turns, 1e-9, None, path)
    assert found.objective == found.bound == 1.0
    assert path[0] == "first declined after 2 rounds: first can go no further"
    assert "design from second" in path[-1] or "bound from second" in path[-1]


def test_both_declining_is_a_decline_with_both_reasons():
    turns, _ = _turns(first=_Timed("first", 0.01, declines_after=2), second=_Timed("second", 0.01, declines_after=3))
    with pytest.raises(SolverDeclined, match="first can go no further.*second can go no further"
                                             "|second can go no further.*first can go no further"):
        race.race(turns, 1e-9, None, [])


def test_a_decline_within_the_accepted_gap_ends_the_race():
    # the first's own gap (1 − 0.5) is within an accepted 0.6: its decline ends the race,
    # the second (which would never close) is stopped
    turns, _ = _turns(first=_Timed("first", 0.01, declines_after=2), second=_Timed("second", 0.01))
    path: list[str] = []
    found = race.race(turns, 1e-9, None, path, accept=0.6)
    assert not found.stopped and found.objective == 1.0 and found.bound == 0.5
    assert "first declined with the shared gap within the tolerance" in path


def test_a_failure_stops_the_race_and_is_raised_in_the_caller():
    second = _Timed("second", 0.01)
    turns, _ = _turns(first=_Timed("first", 0.01, fails=RuntimeError("broken")), second=second)
    with pytest.raises(RuntimeError, match="broken"):
        race.race(turns, 1e-9, None, [])
    rounds = second.rounds
    time.sleep(0.05)
    assert second.rounds == rounds  # its thread has ended: nothing runs on after the raise


def test_the_time_limit_ends_the_race_with_the_best_design(monkeypatch):
    monkeypatch.setattr(race, "SECOND_START", 0.01)
    turns, _ = _turns(first=_Timed("first", 0.01), second=_Timed("second", 0.01))
    limits = Limits(0.6)
    found = race.race(turns, 1e-9, limits, [])  # neither closes: without the limit, no end
    assert found.stopped and found.objective == 1.0 and found.bound == 0.5
    assert limits.elapsed() < 0.6 + 2.0  # a step and a look beyond the limit (on a busy machine)
    assert {entry["solver"] for entry in limits.history} == {"portfolio (first)", "portfolio (second)"}


def test_a_method_whose_one_step_outlasts_the_limit_is_not_started():
    turns, started = _turns(first=_Timed("first", 0.01), second=_Timed("second", 0.01, closes_after=1))
    turns.latency["second"] = lambda: 30.0
    path: list[str] = []
    found = race.race(turns, 1e-9, Limits(0.5), path)
    assert "second" not in started and found.stopped
    assert any("second not started: one step would take about 30 s" in entry for entry in path)


@pytest.mark.parametrize("threads,raced", [("1", False), ("2", True), ("3", True)])
def test_the_methods_race_only_when_each_can_have_a_thread(monkeypatch, threads, raced):
    monkeypatch.setenv("MECHDESIGN_THREADS", threads)
    monkeypatch.setattr(race, "SECOND_START", 0.0)  # (no time alone: a race starts its threads at once)
    turns, _ = _turns(first=_Timed("first", 0.001, closes_after=2), second=_Timed("second", 0.001))
    path: list[str] = []
    race.compete(turns, 1e-9, None, path)
    assert turns.raced is raced
    assert ("(at once, one thread each)" in path[-1]) is raced


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="signals to one thread are POSIX only")
def test_an_interrupt_in_the_callers_thread_stops_both_methods():
    waiting = threading.get_ident()  # the thread that waits for the race

    class Interrupting(_Timed):
        def advance(self, limits=None):
            if self.rounds == 3:
                signal.pthread_kill(waiting, signal.SIGINT)  # Ctrl-C
            return super().advance(limits)

    # the second closes after 300 steps (6 s): the race ends even if the signal went astray
    first, second = Interrupting("first", 0.02), _Timed("second", 0.02, closes_after=300)
    turns, _ = _turns(first=first, second=second)
    # Python's own handler, whatever an earlier test (a Dask cluster) left in its place
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            race.race(turns, 1e-9, None, [])
    finally:
        signal.signal(signal.SIGINT, previous)
    rounds = first.rounds, second.rounds
    time.sleep(0.1)
    assert (first.rounds, second.rounds) == rounds  # neither runs on after the interrupt


def test_the_race_s_end_interrupts_a_highs_run_in_progress(monkeypatch):
    import highspy
    import scipy.sparse as sp

    from mechdesign.solvers.highs_model import STOPPED, give_time, quiet_model, resumable_run

    class LongLP(_Timed):
        """A dense LP of 400 rows and 1,200 columns: seconds of simplex, run in one advance."""

        def __init__(self):
            super().__init__("lp", 0.0)
            rng = np.random.default_rng(0)
            n = 400
            self.h = quiet_model()
            matrix = sp.csc_matrix(rng.random((n, 3 * n)))
            self.h.addVars(3 * n, np.zeros(3 * n), np.full(3 * n, highspy.kHighsInf))
            self.h.changeColsCost(3 * n, np.arange(3 * n), rng.random(3 * n))
            csr = sp.csr_matrix(matrix)
            self.h.addRows(n, np.ones(n), np.ones(n), csr.nnz, csr.indptr[:-1], csr.indices, csr.data)
            self.statuses = []

        def advance(self, limits=None):
            give_time(self.h, limits)
            self.statuses.append(resumable_run(self.h))
            return False

    monkeypatch.setattr(race, "SECOND_START", 0.05)
    lp = LongLP()
    turns, _ = _turns(lp=lp, quick=_Timed("quick", 0.01, closes_after=1))
    race.race(turns, 1e-9, None, [])
    # stopped in its run in the race (alone first, it stopped at the end of its time alone)
    assert lp.statuses in ([highspy.HighsModelStatus.kInterrupt],
                           [highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kInterrupt])
    assert lp.statuses[0] in STOPPED


def test_each_racing_method_splits_its_work_over_its_share_of_the_threads(monkeypatch):
    from mechdesign.core.threads import solver_threads

    class Counting(_Timed):
        def advance(self, limits=None):
            self.threads_seen = solver_threads()
            return super().advance(limits)

    monkeypatch.setenv("MECHDESIGN_THREADS", "5")
    first, second = Counting("first", 0.01, closes_after=40), Counting("second", 0.01)
    turns, _ = _turns(first=first, second=second)
    race.race(turns, 1e-9, None, [])
    assert first.threads_seen == second.threads_seen == 2  # five threads shared by two
    assert solver_threads() == 5  # the caller's own count is untouched


def test_a_method_with_a_long_step_waits_and_never_starts_when_the_other_closes_within_it():
    turns, started = _turns(fast=_Timed("fast", 0.02, closes_after=10), slow=_Timed("slow", 5.0, closes_after=1))
    turns.latency["slow"] = lambda: 5.0
    path: list[str] = []
    found = race.race(turns, 1e-9, None, path)
    assert "slow" not in started  # without the wait the race would have waited for its 5-s step
    assert found.objective == found.bound == 1.0


def test_a_waiting_method_starts_at_once_when_the_other_declines():
    turns, started = _turns(fast=_Timed("fast", 0.02, declines_after=2), slow=_Timed("slow", 0.01, closes_after=3))
    turns.latency["slow"] = lambda: 50.0
    begun = time.perf_counter()
    found = race.race(turns, 1e-9, None, [])
    assert started["slow"] - begun < 5.0  # after the other's two declined steps, not 50 s
    assert found.objective == found.bound == 1.0


def test_a_waiting_method_starts_once_the_race_is_as_old_as_its_step():
    turns, started = _turns(fast=_Timed("fast", 0.02), slow=_Timed("slow", 0.01, closes_after=1))
    turns.latency["slow"] = lambda: 0.6
    begun = time.perf_counter()
    found = race.race(turns, 1e-9, None, [])
    assert started["slow"] - begun >= 0.6
    assert found.objective == found.bound == 1.0


def test_the_result_does_not_wait_for_an_interruptible_method_to_take_the_end():
    # a method inside a long run that takes the end's interrupt late (a HiGHS master between its
    # checks) and that changes nothing once interrupted: the result is given when the other
    # closes the gap, its seconds so far in the path, and it ends in the background
    class Slow(_Timed):
        interruptible = True

    slow, quick = Slow("slow", 1.5), _Timed("quick", 0.02, closes_after=30)  # closes after the slow starts
    turns, _ = _turns(quick=quick, slow=slow)
    path: list[str] = []
    begun = time.perf_counter()
    race.race(turns, 1e-9, None, path)
    given = time.perf_counter() - begun
    assert given < 1.0 and slow.spans == []  # its first step, begun at the start, still running
    assert "slow: 0 rounds in" in path[-1]
    used = float(path[-1].split("slow: 0 rounds in ")[1].split(" s")[0])
    assert 0.8 * given < used + race.SECOND_START <= given + 0.1
    assert race.finish_lingering(timeout=5.0) and len(slow.spans) == 1


def test_a_method_that_is_not_interruptible_is_waited_for():
    slow, quick = _Timed("slow", 1.0), _Timed("quick", 0.02, closes_after=30)
    turns, _ = _turns(quick=quick, slow=slow)
    begun = time.perf_counter()
    race.race(turns, 1e-9, None, [])
    assert time.perf_counter() - begun >= race.SECOND_START + 1.0 and len(slow.spans) == 1


def test_a_gap_closed_by_a_method_waited_for_wins_over_the_time_limit(monkeypatch):
    # the interruptible method reaches the time limit first; the other's step in progress then
    # closes the gap: the race waited for that step, and the result is the closed one
    class Quick(_Timed):
        interruptible = True

    monkeypatch.setattr(race, "SECOND_START", 0.05)
    quick, slow = Quick("quick", 0.02), _Timed("slow", 0.8, closes_after=1)
    turns, _ = _turns(quick=quick, slow=slow)
    found = race.race(turns, 1e-9, Limits(0.4), [])
    assert len(slow.spans) == 1 and not found.stopped and found.bound == 1.0
    assert race.finish_lingering(timeout=5.0)
