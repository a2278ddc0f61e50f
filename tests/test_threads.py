"""The threads a solver may use: how the outputs are split and how the count is read."""

import pytest

from mechdesign.core.errors import ProblemError
from mechdesign.core.threads import available_cores, over, ranges, solver_threads, split


@pytest.mark.parametrize("n, threads", [(1, 1), (7, 2), (7, 3), (2, 5), (300, 2), (10, 10)])
def test_the_ranges_cover_every_index_once_in_at_most_the_threads_pieces_of_near_equal_size(n, threads):
    pieces = ranges(n, threads)
    assert [i for lo, hi in pieces for i in range(lo, hi)] == list(range(n))
    sizes = [hi - lo for lo, hi in pieces]
    assert len(pieces) == min(n, threads) and min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def test_split_returns_each_range_s_result_in_order():
    assert split(lambda lo, hi: list(range(lo, hi)), 10, threads=3) == [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]


def test_the_thread_count_comes_from_the_environment_or_the_cores(monkeypatch):
    monkeypatch.delenv("MECHDESIGN_THREADS", raising=False)
    assert solver_threads() == available_cores() >= 1
    monkeypatch.setenv("MECHDESIGN_THREADS", "3")
    assert solver_threads() == 3
    for bad in ("0", "-2", "two", "1.5"):
        monkeypatch.setenv("MECHDESIGN_THREADS", bad)
        with pytest.raises(ProblemError, match="MECHDESIGN_THREADS.*positive integer"):
            solver_threads()


def test_over_runs_each_piece_with_its_own_arguments_and_keeps_their_order():
    pieces = [(0, 3, "a"), (3, 5, "b"), (5, 9, "c")]
    assert over(lambda lo, hi, tag: tag * (hi - lo), pieces) == ["aaa", "bb", "cccc"]
    assert over(lambda lo, hi: hi - lo, [(2, 7)]) == [5]


@pytest.mark.parametrize("cores,sharers,share", [(8, 2, 4), (8, 3, 2), (2, 4, 1), (6, 1, 6), (4, 0, 4)])
def test_the_share_of_the_cores_divides_them_among_the_workers_and_is_never_zero(cores, sharers, share, monkeypatch):
    from mechdesign.core import threads

    monkeypatch.setattr(threads, "available_cores", lambda: cores)
    assert threads.share_of_cores(sharers) == share


def test_a_limit_holds_in_its_own_thread_only_nests_and_is_restored(monkeypatch):
    import threading

    from mechdesign.core.threads import limited

    monkeypatch.setenv("MECHDESIGN_THREADS", "4")
    seen = {}
    with limited(2):
        assert solver_threads() == 2
        worker = threading.Thread(target=lambda: seen.setdefault("other", solver_threads()))
        worker.start()
        worker.join()
        with limited(1):
            assert solver_threads() == 1
            assert split(lambda lo, hi: (lo, hi), 6) == [(0, 6)]  # one piece: the split obeys it
        assert solver_threads() == 2
        with limited(16):  # never more than the limit it is nested in
            assert solver_threads() == 2
    assert seen["other"] == 4 and solver_threads() == 4
