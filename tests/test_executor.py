"""The executor interface: in-process, local process pool and Dask give the same results."""

import os
import sys

import pytest

from mechdesign.bench import profile_privacy, run_suite
from mechdesign.bench.executor import LocalExecutor, SerialExecutor, make_executor
from mechdesign.core.errors import ProblemError


def without_times(x):
    """Results with every timing field removed (times differ from run to run, values must not)."""
    if isinstance(x, dict):
        return {k: without_times(v) for k, v in x.items() if "seconds" not in k}
    if isinstance(x, list):
        return [without_times(v) for v in x]
    return x


TASKS = [{"epsilon": e} for e in (0.3, 1.0, 2.5)]


def test_local_pool_returns_the_serial_results_in_input_order():
    serial = SerialExecutor().map(profile_privacy.categorical_task, TASKS)
    with LocalExecutor(2) as pool:
        seen = []
        local = pool.map(profile_privacy.categorical_task, TASKS, progress=lambda d, t: seen.append((d, t)))
    assert [r["epsilon"] for r in local] == [0.3, 1.0, 2.5]
    assert without_times(local) == without_times(serial)
    assert seen[-1] == (3, 3)


def test_dask_local_cluster_of_two_workers_returns_the_local_pool_results(tmp_path):
    pytest.importorskip("distributed")
    from mechdesign.bench.executor import DaskExecutor

    with LocalExecutor(2) as pool:
        local, _ = run_suite("profile-privacy", tmp_path / "local", quick=True, executor=pool)
    with DaskExecutor(local=True, workers=2, processes=False) as dask:
        assert dask.workers == 2
        distributed, _ = run_suite("profile-privacy", tmp_path / "dask", quick=True, executor=dask)
    assert distributed["executor"]["kind"] == "dask" and local["executor"]["kind"] == "local"
    assert without_times(distributed["results"]) == without_times(local["results"])
    assert distributed["all_checks_hold"]


@pytest.mark.slow
def test_dask_worker_processes_get_their_share_of_the_cores_for_the_solvers_threads(monkeypatch):
    pytest.importorskip("distributed")
    from mechdesign.bench.executor import DaskExecutor
    from mechdesign.core.threads import THREADS_VARIABLE, available_cores, solver_threads

    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    with DaskExecutor(local=True, workers=2, processes=True) as dask:
        seen = dask.map(lambda _: (os.getpid(), solver_threads()), range(4))
    assert all(pid != os.getpid() for pid, _ in seen)
    assert {threads for _, threads in seen} == {max(available_cores() // 2, 1)}
    # threads of this process as workers leave this process's setting alone
    with DaskExecutor(local=True, workers=2, processes=False) as dask:
        dask.map(lambda _: solver_threads(), range(2))
    assert THREADS_VARIABLE not in os.environ


def test_make_executor_picks_serial_pool_or_dask():
    assert isinstance(make_executor(workers=1), SerialExecutor)
    with make_executor(workers=3) as ex:
        assert isinstance(ex, LocalExecutor) and ex.workers == 3
    with pytest.raises(ProblemError, match="either --scheduler"):
        make_executor(scheduler="tcp://127.0.0.1:1", dask_local=True)


@pytest.mark.parametrize("flag", [["--dask-local"], ["--scheduler", "tcp://127.0.0.1:8786"]])
def test_dask_flags_without_dask_exit_2_with_the_install_hint(run_cli, monkeypatch, tmp_path, flag):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    code, _out, err = run_cli("bench", "profile-privacy", "--quick", "--out", tmp_path, *flag)
    assert code == 2
    assert "pip install 'mechdesign[dask]'" in err and flag[0] in err
    assert not (tmp_path / "profile-privacy.json").exists()


def test_unreachable_scheduler_exits_2_naming_the_address(run_cli, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr("mechdesign.bench.executor.CONNECT_TIMEOUT", 1.0)
    code, _out, err = run_cli("bench", "profile-privacy", "--quick", "--out", tmp_path,
                             "--scheduler", "tcp://127.0.0.1:9")
    assert code == 2
    assert "tcp://127.0.0.1:9" in err and "--scheduler" in err


def test_scheduler_and_dask_local_together_exit_2(run_cli, tmp_path):
    code, _out, err = run_cli("bench", "profile-privacy", "--out", tmp_path, "--scheduler", "tcp://x:1", "--dask-local")
    assert code == 2
    assert "not allowed with" in err


def test_non_positive_workers_exit_2(run_cli, tmp_path):
    code, _out, err = run_cli("bench", "profile-privacy", "--out", tmp_path, "--workers", "0")
    assert code == 2
    assert "--workers" in err
