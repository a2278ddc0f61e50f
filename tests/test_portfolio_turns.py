"""The turns' protocol for a method whose one step cannot be interrupted: it waits until the
others have used as long as its step is estimated to take, is never started when the others
finish within that time or when the step would outlast the time limit, and starts at once when
it is the only method left."""

import time

import numpy as np
import pytest

from mechdesign.core.limits import Limits
from mechdesign.solvers import portfolio
from mechdesign.solvers.highs_model import SolverDeclined


class _Timed:
    """A method whose every step takes ``step`` seconds; its bound reaches its value after
    ``closes_after`` steps (never when None); it declines after ``declines_after`` steps."""

    def __init__(self, name, step, closes_after=None, declines_after=None):
        self.name, self.step, self.closes_after, self.declines_after = name, step, closes_after, declines_after
        self.value, self.bound, self.latest_bound, self.rounds, self.columns = 1.0, 0.0, 0.0, 0, 3

    def advance(self, limits=None):
        if self.declines_after is not None and self.rounds >= self.declines_after:
            raise SolverDeclined("it can go no further")
        time.sleep(self.step)
        self.rounds += 1
        self.latest_bound = self.bound = 1.0 if self.rounds == self.closes_after else 0.5
        return True

    def design(self):
        return np.eye(3)


def _turns(fast, slow, latency):
    started = {}

    def start(name, method):
        def starter():
            started[name] = sum(turns.seconds.values())
            return method
        return starter

    turns = portfolio.Turns({"fast": start("fast", fast), "slow": start("slow", slow)}, latency={"slow": latency})
    return turns, started


def test_a_method_with_a_long_step_is_never_started_when_the_other_finishes_within_it():
    turns, started = _turns(_Timed("fast", 0.02, closes_after=10), _Timed("slow", 5.0, closes_after=1), lambda: 5.0)
    path: list[str] = []
    found = portfolio.interleave(turns, 1e-9, None, path)
    assert "slow" not in started  # without the wait it would have taken its first 5-s step
    assert found.objective == found.bound == 1.0
    assert not any("slow" in entry.split(";")[0] for entry in path)


def test_it_starts_once_the_others_have_used_its_step():
    turns, started = _turns(_Timed("fast", 0.02), _Timed("slow", 0.01, closes_after=1), lambda: 0.6)
    path: list[str] = []
    portfolio.interleave(turns, 1e-9, None, path)
    assert started["slow"] >= 0.6
    assert turns.seconds["fast"] >= 0.6
    assert any("slow waited for the others' first 0.6 s" in entry for entry in path)


def test_it_starts_at_once_when_the_other_declines():
    turns, started = _turns(_Timed("fast", 0.02, declines_after=2), _Timed("slow", 0.01, closes_after=3), lambda: 50.0)
    found = portfolio.interleave(turns, 1e-9, None, [])
    assert started["slow"] < 1.0  # the two declined steps of the other, not 50 s
    assert found.objective == found.bound == 1.0


def test_it_is_not_started_when_one_step_would_outlast_the_time_limit():
    turns, started = _turns(_Timed("fast", 0.02), _Timed("slow", 0.01, closes_after=1), lambda: 30.0)
    path: list[str] = []
    found = portfolio.interleave(turns, 1e-9, Limits(0.5), path)
    assert "slow" not in started and found.stopped
    assert any("slow not started: one step would take about 30 s" in entry for entry in path)


def test_an_estimate_that_declines_retires_the_method_with_its_reason():
    def no_room():
        raise SolverDeclined("its arrays would not fit")

    turns, started = _turns(_Timed("fast", 0.02, declines_after=3), _Timed("slow", 0.01), no_room)
    path: list[str] = []
    with pytest.raises(SolverDeclined, match="slow declined at the start: its arrays would not fit"):
        portfolio.interleave(turns, 1e-9, None, path)
    assert "slow" not in started


def test_the_estimate_is_made_once():
    calls = []

    def estimate():
        calls.append(1)
        return 0.3

    turns, _ = _turns(_Timed("fast", 0.02), _Timed("slow", 0.01, closes_after=2), estimate)
    portfolio.interleave(turns, 1e-9, None, [])
    assert calls == [1]


def test_the_trailing_turn_is_never_shorter_than_one_of_the_leaders_steps():
    turns, _ = _turns(_Timed("fast", 0.01), _Timed("slow", 0.01), lambda: 0.0)
    for name in ("fast", "slow"):
        turns.started[name] = turns.starters[name]()
    turns.rate = {"fast": 0.0, "slow": 2.0}  # slow leads, fast has shown nothing: an eighth
    assert turns.lengths(["fast", "slow"], 8.0, 1e-9)["fast"] == pytest.approx(1.0)
    turns.longest["slow"] = 5.0  # but one of slow's steps takes 5 s
    assert turns.lengths(["fast", "slow"], 8.0, 1e-9) == {"fast": 5.0, "slow": 8.0}
    assert turns.lengths(["fast", "slow"], 2.0, 1e-9)["fast"] == 2.0  # (never more than a full turn)


def test_the_longest_step_is_measured():
    turns, _ = _turns(_Timed("fast", 0.05, closes_after=3), _Timed("slow", 0.01), lambda: 99.0)
    portfolio.interleave(turns, 1e-9, None, [])
    assert 0.05 <= turns.longest["fast"] < 1.0 and turns.longest["slow"] == 0.0


def test_a_method_left_alone_gets_one_turn_to_the_end():
    # once the other has declined there is no one to share the time with: the turn that
    # follows lasts until the method finishes (or the solve's limit), not a doubling slice
    windows = []

    class Recording(_Timed):
        def advance(self, limits=None):
            windows.append(limits.time_limit)
            return super().advance(limits)

    turns = portfolio.Turns({"fast": lambda: _Timed("fast", 0.0, declines_after=0),
                             "slow": lambda: Recording("slow", 0.001, closes_after=400)})
    found = portfolio.interleave(turns, 1e-9, Limits(60.0), [])
    assert found.bound == 1.0 and turns.started["slow"].rounds == 400
    # the first turn was handed out before the other declined; then one turn to the end (in
    # slices, the next would have been half a second)
    assert set(windows) == {portfolio.FIRST_TURN, np.inf} and windows[-1] == np.inf


class _Halving(_Timed):
    """A method whose own gap halves at every step of ``step`` seconds (its rate of closing is
    then exactly ln 2 a step, so its prediction is right) and closes after ``closes_after``."""

    steady = True

    def advance(self, limits=None):
        time.sleep(self.step)
        self.rounds += 1
        self.latest_bound = self.bound = 1.0 if self.rounds >= self.closes_after else 1.0 - 0.5 ** self.rounds
        return True


def test_a_method_predicted_to_close_within_the_others_next_turn_keeps_its_turn(monkeypatch):
    # the other shows no progress and gets the floor's share: a half here, so that its next turn
    # (0.5 s in the third round) is longer than what the halving method has left after its
    # turns of 0.25 s and 0.5 s (at most 39 of its 40 steps of 20 ms done, whatever the load)
    monkeypatch.setattr(portfolio, "TRAILING_FLOOR", 0.5)
    turns = portfolio.Turns({"other": lambda: _Timed("other", 0.01), "halving": lambda: _Halving("halving", 0.02, 40)})
    found = portfolio.interleave(turns, 2.0 ** -45, None, [])
    assert found.bound == 1.0 and turns.started["halving"].rounds == 40
    # the other had its first turn (0.25 s) and its half of the second (0.25 s), each finishing
    # its last 10-ms step, but not the 0.5 s of the third
    assert turns.seconds["other"] < 0.25 + 0.25 + 0.1


def test_the_turn_goes_on_only_when_the_close_is_predicted_within_the_others_next_turn():
    turns = portfolio.Turns({"other": lambda: _Timed("other", 0.01), "halving": lambda: _Halving("halving", 0.01, 99)})
    for name in turns.starters:
        turns.started[name] = turns.starters[name]()
    turns.started["halving"].latest_bound = 1.0 - 2.0 ** -30  # gap 2^-30, aim 2^-40: ten steps
    turns.rate = {"other": 0.0, "halving": np.log(2) / 0.01}  # of 10 ms: predicted 0.1 s
    # the other, with no progress, would get an eighth of the next round
    assert turns.finishing("halving", ["other", "halving"], 1.0, 2.0 ** -40) == pytest.approx(0.125)
    assert turns.finishing("halving", ["other", "halving"], 0.5, 2.0 ** -40) == 0.0  # 0.0625 s < 0.1 s
    assert turns.finishing("halving", ["halving"], 1.0, 2.0 ** -40) == 0.0  # alone: no one to wait for
    turns.extended.add("halving")  # a turn that went on once and did not close: not again
    assert turns.finishing("halving", ["other", "halving"], 1.0, 2.0 ** -40) == 0.0
    turns.extended.clear()
    turns.started["halving"].steady = False  # a method whose gap closes in jumps (column generation)
    assert turns.finishing("halving", ["other", "halving"], 1.0, 2.0 ** -40) == 0.0
