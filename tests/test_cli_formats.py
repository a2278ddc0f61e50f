"""``--out PATH`` in json, csv and npy (``--format``, or PATH's suffix): each reads back to exactly
the floats of the JSON result, one file per context where there are several."""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest

ONE = """
name = "one"
[inputs]
labels = ["a", "b, c", "d"]
[distributions]
p = [0.5, 0.3, 0.2]
[[privacy]]
notion = "ldp"
epsilon = 0.7
[objective]
kind = "error-probability"
prior = "p"
"""

CONTEXTS = """
name = "profiles"
[inputs]
labels = ["c1", "c2", "c3", "c4"]
[distributions]
P1 = [0.2, 0.3, 0.4, 0.1]
P2 = [0.3, 0.3, 0.3, 0.1]
P3 = [0.4, 0.4, 0.1, 0.1]
[mechanism]
contexts = ["P1", "P2", "P3"]
[[privacy]]
notion = "profile"
epsilon = 0.5
edges = [["P1", "P2"], ["P2", "P3"]]
[objective]
kind = "max-off-diagonal"
"""


@pytest.fixture
def one(tmp_path, run_cli):
    path = tmp_path / "one.toml"
    path.write_text(ONE)
    code, out, _ = run_cli("solve", path, "--json")
    assert code == 0
    return path, json.loads(out)


@pytest.fixture
def contexts(tmp_path, run_cli):
    path = tmp_path / "profiles.toml"
    path.write_text(CONTEXTS)
    code, out, _ = run_cli("solve", path, "--json")
    assert code == 0
    return path, json.loads(out)


def read_csv_matrix(path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    return header[1:], [r[0] for r in body], np.array([[float(v) for v in r[1:]] for r in body])


def test_csv_is_the_matrix_with_labels_and_every_digit(one, run_cli, tmp_path):
    path, data = one
    target = tmp_path / "k.csv"
    code, out, _ = run_cli("solve", path, "--out", target)
    assert code == 0 and f"wrote {target}" in out
    outputs, inputs, matrix = read_csv_matrix(target)
    mech = data["mechanisms"]["default"]
    assert outputs == mech["outputs"] and inputs == mech["inputs"]  # "b, c" quoted, read back whole
    assert np.array_equal(matrix, np.array(mech["matrix"]))


def test_npy_is_numpy_save_of_the_matrix(one, run_cli, tmp_path):
    path, data = one
    target = tmp_path / "k.npy"
    assert run_cli("solve", path, "--out", target)[0] == 0
    assert np.array_equal(np.load(target), np.array(data["mechanisms"]["default"]["matrix"]))


def test_format_overrides_the_suffix_and_json_is_the_default(one, run_cli, tmp_path):
    path, data = one
    assert run_cli("solve", path, "--out", tmp_path / "k.txt", "--format", "csv")[0] == 0
    assert np.array_equal(read_csv_matrix(tmp_path / "k.txt")[2], np.array(data["mechanisms"]["default"]["matrix"]))
    assert run_cli("solve", path, "--out", tmp_path / "k.result")[0] == 0
    written = json.loads((tmp_path / "k.result").read_text())
    assert written["mechanisms"] == data["mechanisms"]
    assert run_cli("solve", path, "--out", tmp_path / "k.bin", "--format", "npy")[0] == 0
    assert np.array_equal(np.load(tmp_path / "k.bin"), np.array(data["mechanisms"]["default"]["matrix"]))


def test_several_contexts_give_one_csv_each_and_one_npz(contexts, run_cli, tmp_path):
    path, data = contexts
    code, out, _ = run_cli("solve", path, "--out", tmp_path / "k.csv")
    assert code == 0
    for name, mech in data["mechanisms"].items():
        file = tmp_path / f"k.{name}.csv"
        assert f"wrote {file}" in out
        outputs, inputs, matrix = read_csv_matrix(file)
        assert outputs == mech["outputs"] and inputs == mech["inputs"]
        assert np.array_equal(matrix, np.array(mech["matrix"]))
    assert not (tmp_path / "k.csv").exists()
    code, out, _ = run_cli("solve", path, "--out", tmp_path / "k.npy")
    assert code == 0 and f"wrote {tmp_path / 'k.npz'}" in out
    with np.load(tmp_path / "k.npz") as arrays:
        assert sorted(arrays.files) == sorted(data["mechanisms"])
        for name, mech in data["mechanisms"].items():
            assert np.array_equal(arrays[name], np.array(mech["matrix"]))


def test_sweep_and_compare_write_their_tables_as_csv(one, run_cli, tmp_path):
    path, _ = one
    code, out, _ = run_cli("sweep", path, "--epsilon", "0.5:1:3", "--baselines", "krr", "--json",
                           "--out", tmp_path / "s.csv")
    assert code == 0
    data = json.loads(out)
    with open(tmp_path / "s.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["epsilon"]) for r in rows] == data["epsilons"]
    assert [float(r["objective"]) for r in rows] == [p["objective"] for p in data["points"]]
    assert [float(r["krr"]) for r in rows] == [c["objective"] for c in data["baselines"]["krr"]]
    assert {r["status"] for r in rows} == {"optimal"}

    code, out, _ = run_cli("compare", path, "--baselines", "krr,uniform", "--users", "500",
                           "--trials", "2", "--json", "--out", tmp_path / "c.csv")
    assert code == 0
    data = json.loads(out)
    with open(tmp_path / "c.csv", newline="") as fh:
        rows = {r["mechanism"]: r for r in csv.DictReader(fh)}
    for row in data["rows"]:
        got = rows[row["name"]]
        assert float(got["objective"]) == row["objective"]
        assert got["reveals_nothing"] == str(row["reveals_nothing"]).lower()
        stats = row["estimation"]["estimators"]
        assert float(got["ibu_emd_mean"]) == stats["ibu"]["emd"]["mean"]
        assert float(got["inv_tv_std"]) == stats["inv"]["tv"]["std"]
    assert rows["uniform"]["reveals_nothing"] == "true"


@pytest.mark.parametrize("command", [["sweep", "--epsilon", "0.5:1:2"], ["compare"]])
def test_a_format_the_command_cannot_write_exits_2_before_the_work(one, run_cli, tmp_path, command):
    path, _ = one
    code, out, err = run_cli(command[0], path, *command[1:], "--out", tmp_path / "x.npy")
    assert code == 2 and out == "" and "key '--out'" in err and "json, csv" in err
    code, out, err = run_cli(command[0], path, *command[1:], "--format", "npy", "--out", tmp_path / "x")
    assert code == 2 and "--format" in err
    assert list(tmp_path.glob("x*")) == []


def test_format_without_out_exits_2(one, run_cli):
    code, out, err = run_cli("solve", one[0], "--format", "csv")
    assert code == 2 and out == "" and "--format needs --out" in err


@pytest.mark.parametrize("suffix", ["csv", "npy"])
def test_csv_and_npy_files_get_the_users_umask(contexts, run_cli, tmp_path, suffix):
    path, _ = contexts
    old = os.umask(0o027)
    try:
        assert run_cli("solve", path, "--out", tmp_path / f"k.{suffix}")[0] == 0
    finally:
        os.umask(old)
    written = [p for p in tmp_path.iterdir() if p.name.startswith("k.")]
    assert written and all(p.stat().st_mode & 0o777 == 0o640 for p in written)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
