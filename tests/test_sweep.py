"""Sweeps on dask.distributed: the grid, the Parquet store (round trip through pandas, pyarrow and DuckDB; skipped
finished cells are not rewritten; exactly once under concurrent sweeps and dead owners), the split exhaustive check
(equal to the single pass), and the command line.  One in-process LocalCluster serves the module; the cells are
tiny.  The subprocess tests (a killed client, a killed worker, a real ``dask scheduler`` / ``dask worker``) are in
tests/test_sweep_cluster.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

from margintheory import ModularAddition, verify
from margintheory.cli import main
from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import exhaustive_margin, prefix_range_margin, reduce_prefix_margins
from margintheory.engines.split_margin import SplitMarginEngine, prefix_ranges, split_exhaustive_margin
from margintheory.errors import InputError
from margintheory.execution.executors import InProcessExecutor, open_executor
from margintheory.sweep.grid import Cell, grid_cells, prime_values
from margintheory.sweep.runner import run_sweep
from margintheory.sweep.store import SCHEMA, ResultStore
from margintheory.tasks.modular_addition.checks import margin_engine
from tests.sweep_cells import fail_once_cell, quick_cell


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c:
        yield c


def _random_net(p, k, m, seed):
    rng = np.random.default_rng(seed)
    return PolyNetwork(rng.normal(size=(m, k, p)), rng.normal(size=(m, p)))


# --- the split exhaustive check ---

@pytest.mark.parametrize("p,k,m,seed", [(5, 1, 3, 0), (7, 2, 9, 1), (5, 3, 6, 2), (3, 4, 5, 3), (11, 3, 17, 4)])
def test_prefix_ranges_min_reduce_to_the_single_pass(p, k, m, seed):
    """Any cut of the prefixes: the same minimum (bit for bit: the same kernels per row), maximum, spread, tolerance,
    logit sums within the float bound, and the same count above any threshold."""
    net = _random_net(p, k, m, seed)
    full = exhaustive_margin(net)
    n = p ** (k - 1)
    rng = np.random.default_rng(seed)
    cuts = sorted({0, n, *rng.integers(0, n + 1, 3).tolist()})
    threshold = float(np.quantile(full.margins, 0.3))
    parts = [prefix_range_margin(net, a, b, threshold=threshold) for a, b in zip(cuts, cuts[1:], strict=False)]
    total = reduce_prefix_margins(parts[::-1])
    assert (total.start, total.stop, total.points) == (0, n, p**k)
    assert total.h == full.h and total.max_margin == full.margins.max()
    assert total.max_wrong_spread == full.max_wrong_spread
    assert total.points_above == full.points_above(threshold) > 0
    assert np.abs(total.label_logit_sums - full.label_logit_sums).max() <= p**k * 8 * full.logit_error_bound
    split = split_exhaustive_margin(net, InProcessExecutor(), ranges=3)
    assert (split.h, split.normalized_margin, split.normalized_tolerance) == (
        full.h, full.normalized_margin, full.normalized_tolerance)
    assert split.fraction_on_margin == full.fraction_on_margin and split.points_above(threshold) == full.points_above(
        threshold)


def test_a_missing_or_repeated_range_is_refused():
    net = _random_net(5, 3, 4, 0)
    a, b, c = (prefix_range_margin(net, *r) for r in [(0, 10), (10, 20), (20, 25)])
    with pytest.raises(InputError, match="do not tile"):
        reduce_prefix_margins([a, c])
    with pytest.raises(InputError, match="do not tile"):
        reduce_prefix_margins([a, b, b, c])
    with pytest.raises(InputError, match="inside"):
        prefix_range_margin(net, 20, 26)
    assert prefix_ranges(25, 4) == [(0, 6), (6, 12), (12, 18), (18, 25)] and prefix_ranges(2, 5) == [(0, 1), (1, 2)]


def _same_checks(a, b):
    assert [c.name for c in a.checks] == [c.name for c in b.checks]
    for x, y in zip(a.checks, b.checks, strict=True):
        assert x.passed == y.passed, x.name
        if isinstance(x.measured, float):
            assert x.measured == pytest.approx(y.measured, rel=1e-12, abs=1e-15), x.name
        else:
            assert x.measured == y.measured, x.name


def test_the_check_split_over_a_cluster_has_the_single_process_verdict(cluster):
    """A refuted network (some points off the margin: the second, counting pass runs) and the construction."""
    with open_executor(scheduler=cluster.scheduler_address) as executor:
        for net in (_random_net(7, 3, 20, 5), None):
            base = verify(ModularAddition(7, 3), network=net, certificate=False)
            with margin_engine(SplitMarginEngine(executor, ranges=5)):
                split = verify(ModularAddition(7, 3), network=net, certificate=False)
            _same_checks(base, split)
            assert split.verdict == ("refuted" if net is not None else "verified")
    off = next(c for c in base.checks if c.name.startswith("all on margin"))
    assert off.passed  # the construction: every point on the margin


# --- grid, store, runner ---

def test_grid_keys_are_deterministic_and_budget_free():
    cells = grid_cells("verify", {"k": [2, 3], "p": [5, 7, 5]}, {"certificate": False}, {"max_memory": 10})
    assert [c.label for c in cells] == ["p=5 k=2", "p=7 k=2", "p=5 k=3", "p=7 k=3"]
    again = grid_cells("verify", {"k": [2, 3], "p": [5, 7]}, {"certificate": False}, {"max_memory": 99})
    assert [c.key for c in cells] == [c.key for c in again]
    assert Cell("verify", {"p": 5, "k": 2, "certificate": True}).key != cells[0].key
    assert prime_values(range(1, 20)) == [2, 3, 5, 7, 11, 13, 17, 19]
    with pytest.raises(InputError, match="empty"):
        grid_cells("verify", {"k": [2], "p": []})


def test_the_first_writer_of_a_cell_wins(tmp_path):
    from margintheory.runtime.atomic import atomic_create_bytes
    from margintheory.sweep.cells import error_row, run_cell

    assert atomic_create_bytes(tmp_path / "f", b"first") and not atomic_create_bytes(tmp_path / "f", b"second")
    assert (tmp_path / "f").read_bytes() == b"first" and [p.name for p in tmp_path.iterdir()] == ["f"]
    store = ResultStore(tmp_path / "s")
    cell = grid_cells("verify", {"p": [5]}, {"k": 1})[0]
    assert store.write(run_cell(quick_cell, cell)) and not store.write(error_row(cell, "late", 1.0))
    assert store.read([cell.key]).to_pylist()[0]["verdict"] == "verified"
    assert store.write(error_row(cell, "replaced on request", 1.0), replace=True)
    assert store.read([cell.key]).to_pylist()[0]["error"] == "replaced on request"
    with pytest.raises(InputError, match="columns"):
        store.write({"cell": cell.key})


def _snapshot(store):
    return {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in store.path.glob("*.parquet")}


def test_sweep_on_a_cluster_round_trips_through_pandas_pyarrow_and_duckdb(cluster, tmp_path):
    """Real verify cells (one bad: p = 2) on the in-process cluster; the store read back three ways; a rerun skips
    every cell without rewriting a file; --retry-failed reruns only the failed one."""
    import duckdb
    import pandas as pd

    store = ResultStore(tmp_path / "s")
    cells = grid_cells("verify", {"k": [1, 2], "p": [2, 3, 5]}, {"certificate": False})
    with open_executor(scheduler=cluster.scheduler_address) as executor:
        summary = run_sweep(cells, store, executor)
    assert summary.counts.total == 6 and summary.counts.failed == 2 and summary.counts.skipped == 0
    df = pd.read_parquet(store.path)
    assert list(df.columns) == SCHEMA.names and len(df) == 6 and sorted(df["cell"]) == sorted(c.key for c in cells)
    bad = df[df["p"] == 2]
    assert set(bad["verdict"]) == {"error"} and set(bad["exit_code"]) == {2}
    assert all("p must be an integer >= 3" in e and "\n" not in e for e in bad["error"])
    good = df[df["p"] > 2]
    assert set(good["verdict"]) == {"verified"} and np.allclose(good["ratio_to_gamma_star"], 1.0, rtol=1e-12)
    # the construction's margin is computed in the cyclotomic field by the compact (Fourier) lower end at these sizes
    assert set(good["exactness"]) == {"proved"} and (good["width"] == 2 ** (2 * good["k"] - 1) * (good["p"] - 1) // 2
                                                    ).all()
    assert json.loads(good["result"].iloc[0])["task"] == "modular-addition"
    for f in store.path.glob("*.parquet"):
        assert pq.read_schema(f).remove_metadata() == SCHEMA  # schema-stable: every file, error rows included
    n = duckdb.sql(f"select count(*) from read_parquet('{store.path}/*.parquet') where verdict = 'verified'")
    assert n.fetchall() == [(4,)]
    before = _snapshot(store)
    with open_executor(workers=0) as executor:
        again = run_sweep(cells, store, executor)
        assert again.counts.skipped == 6 and _snapshot(store) == before
        retried = run_sweep(cells, store, executor, retry_failed=True)
    after = _snapshot(store)
    assert retried.counts.skipped == 4 and retried.counts.failed == 2
    changed = {name for name in before if after[name] != before[name]}
    assert changed == {f"{c.key}.parquet" for c in cells if c.params["p"] == 2}
    assert not list((store.path / "_claims").iterdir()) and not list((store.path / "_owners").iterdir())


def test_an_unexpected_error_is_retried_by_the_scheduler_and_written_once(cluster, tmp_path):
    marker = tmp_path / "m"
    marker.mkdir()
    cells = grid_cells("verify", {"p": [3, 5, 7]}, {"k": 1, "unlucky": 5, "marker": str(marker)})
    store = ResultStore(tmp_path / "s")
    with open_executor(scheduler=cluster.scheduler_address, retries=1) as executor:
        summary = run_sweep(cells, store, executor, fail_once_cell)
    assert summary.counts.failed == 0 and [r["verdict"] for r in summary.table.to_pylist()] == ["verified"] * 3
    assert len(list(marker.glob("ran-5-*"))) == 1  # the failed attempt raised before running
    with open_executor(scheduler=cluster.scheduler_address, retries=0) as executor:
        (marker / "first-5").unlink()
        failed = run_sweep(grid_cells("verify", {"p": [5]}, {"k": 2, "unlucky": 5, "marker": str(marker)}), store,
                           executor, fail_once_cell)
    row = failed.table.to_pylist()[0]
    assert row["verdict"] == "error" and row["error"].startswith("RuntimeError: transient failure (on dask scheduler")


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_two_sweeps_on_one_store_share_the_cells_and_a_dead_owner_is_taken_over(tmp_path):
    """Two sweeps at once (threads of this process, distinct owners) run every cell exactly once between them; a
    claim left by a dead process is taken over (or cleared, on a finished cell); a claim of a live owner is waited
    for."""
    marker = tmp_path / "m"
    marker.mkdir()  # (p = 3 is left out: the warm-up runs a cell function once on p = 3)
    cells = grid_cells("verify", {"p": list(range(5, 25, 2))}, {"k": 1, "sleep": 0.02, "marker": str(marker)})
    store = ResultStore(tmp_path / "s")
    dead = {"token": "dead", "host": os.uname().nodename, "pid": _dead_pid(), "start": None}
    (store.path / "_claims" / f"{cells[0].key}.json").write_text(json.dumps(dead))
    live = {"token": "live", "host": os.uname().nodename, "pid": os.getpid(), "start": None}
    (store.path / "_claims" / f"{cells[1].key}.json").write_text(json.dumps(live))
    from margintheory.sweep.cells import run_cell

    store.write(run_cell(quick_cell, cells[2]))  # killed between writing its result and releasing its claim:
    (store.path / "_claims" / f"{cells[2].key}.json").write_text(json.dumps(dead))  # the claim is cleared

    def finish_the_live_one():  # the other sweep: writes its cell after a while, then releases its claim
        time.sleep(0.6)
        store.write(run_cell(quick_cell, cells[1]))
        (store.path / "_claims" / f"{cells[1].key}.json").unlink()

    results = []
    threads = [threading.Thread(target=lambda: results.append(run_sweep(cells, store, InProcessExecutor(),
                                                                        quick_cell)), daemon=True)
               for _ in range(2)] + [threading.Thread(target=finish_the_live_one, daemon=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 2 and all(r.table.num_rows == len(cells) for r in results)
    ran = sorted(p for f in marker.glob("ran-*") if (p := int(f.name.split("-")[1])) != 3)
    assert ran == sorted(c.params["p"] for c in cells)  # each cell ran once (the live owner's cell by it)
    assert len(list(store.path.glob("*.parquet"))) == len(cells) and not list((store.path / "_claims").iterdir())


# --- command line ---

def test_sweep_command_on_a_cluster_json_and_report(cluster, tmp_path, capsys, monkeypatch):
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", "80")
    store = tmp_path / "s"
    argv = ["sweep", "verify", "--p", "3:7", "--odd", "--k", "1", "--no-certificate", "--store", str(store),
            "--scheduler", cluster.scheduler_address]
    assert main(argv + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["task"] == "sweep" and doc["verdict"] == "verified" and len(doc["checks"]) == 3
    assert doc["parameters"]["grid"]["p"] == [3, 5, 7]
    assert main(["sweep", "report", str(store)]) == 0
    out = capsys.readouterr().out
    assert "lemma-c18" in out and "verify cells" in out and "3 ok" in out
    assert max(cell_len(line) for line in out.splitlines()) <= 80
    for stem in ("ratio_vs_p", "width_vs_k", "seconds_vs_points"):
        for ext in ("png", "pdf"):
            assert (store / "_report" / f"{stem}.{ext}").stat().st_size > 1000
    assert main(["sweep", "verify", "--p", "2,3", "--k", "1", "--no-certificate", "--store", str(store),
                 "--workers", "0"]) == 2
    captured = capsys.readouterr()
    assert "1 of 2 cells failed" in captured.err and captured.err.count("\n") == 1
    assert "failed: verify-p2-k1" in captured.out
    # the store now holds a failed cell: the JSON says so with the process's own exit code, and so does the report
    assert main(["sweep", "verify", "--p", "2,3", "--k", "1", "--no-certificate", "--store", str(store),
                 "--workers", "0", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    # the cell that ran verified and the failed one decides nothing: verified, incomplete (exit 2), named in the notes
    assert (doc["verdict"], doc["exit_code"]) == ("verified", 2)
    assert any("cells failed" in n and "verify-p2-k1" in n for n in doc["notes"])
    assert main(["sweep", "report", str(store), "--no-figures"]) == 2
    capsys.readouterr()
    assert main(["sweep", "report", str(store), "--no-figures", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["exit_code"] == 2


@pytest.mark.parametrize("argv,message", [
    (["sweep", "verify", "--p", "3:x", "--k", "2"], "not a list of integers"),
    # refused from the range's length, before a list of 10^12 values is built (it used to exhaust the memory)
    (["sweep", "verify", "--p", "3:1000000000000", "--k", "2", "--primes"], "names 999999999998 values"),
    (["sweep", "verify", "--p", "3:1000000", "--primes", "--k", "2,3,4", "--workers", "0"], "235491 cells"),
    (["sweep", "verify", "--p", "4,6", "--odd", "--k", "2", "--workers", "0"], "grid is empty"),
    (["sweep", "verify", "--p", "3", "--k", "2", "--workers", "1", "--scheduler", "tcp://127.0.0.1:1"], "one of"),
    (["sweep", "verify", "--p", "3", "--k", "2", "--family", "nope"], "unknown family"),
    (["sweep", "report", "/nonexistent/store"], "not a results store (no such directory)"),
    (["sweep", "report", "/dev/null"], "not a results store (not a directory)"),
    (["verify", "--p", "5", "--k", "2", "--exact", "--workers", "2"], "--exact"),
    (["verify", "--task", "parity", "--n", "4", "--k", "2", "--workers", "2"], "not an option of --task parity"),
])
def test_bad_sweep_input_is_one_line_and_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_verify_network_split_over_the_cluster_equals_the_single_process_run(cluster, tmp_path, capsys):
    path = tmp_path / "net.npz"
    _random_net(11, 2, 12, 7).save(path)
    argv = ["verify", "--network", str(path), "--no-certificate", "--json"]
    assert main(argv) == 1
    single = json.loads(capsys.readouterr().out)
    assert main(argv + ["--scheduler", cluster.scheduler_address]) == 1
    split = json.loads(capsys.readouterr().out)
    assert [c["passed"] for c in single["checks"]] == [c["passed"] for c in split["checks"]]
    assert split["normalized_margin"] == single["normalized_margin"]
    assert any("prefix ranges" in n for n in split["notes"])


def test_solve_and_train_sweeps_record_each_cell_with_its_parameters(tmp_path, capsys):
    """The solve cell runs the solve command's computation (its parser's defaults); the train cell trains and
    analyses; their parameters land in their columns."""
    store = tmp_path / "s"
    assert main(["sweep", "solve", "--p", "3", "--k", "2", "--method", "single-neuron", "--seeds", "1",
                 "--workers", "0", "--store", str(store), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["checks"]) == 1 and doc["verdict"] == "verified"
    code = main(["sweep", "train", "--p", "5", "--k", "2", "--width", "8", "--steps", "5", "--lr", "0.01",
                 "--workers", "0", "--store", str(store), "--json"])
    assert code == 1 and json.loads(capsys.readouterr().out)["checks"][0]["measured"] == "refuted"  # 5 steps
    rows = {r["command"]: r for r in ResultStore(store).read().to_pylist()}
    assert rows["solve"]["method"] == "single-neuron" and rows["solve"]["width"] == 1
    assert abs(rows["solve"]["ratio_to_gamma_star"] - 1) < 1e-6 and rows["solve"]["seed"] == 1
    train = rows["train"]
    assert (train["width"], train["steps"], train["lr"], train["lam"], train["seed"]) == (8, 5, 0.01, 1e-3, 0)
    assert json.loads(train["result"])["details"]["train_accuracy"] <= 1.0


def test_prime_values_sieve_and_trial_division_agree():
    """A long list is sieved, a short one divided by trial: both give the primes in the list's own order."""
    values = list(range(3000, -6, -1))
    by_trial = [v for v in values if v >= 2 and all(v % d for d in range(2, int(v**0.5) + 1))]
    assert prime_values(values) == by_trial and len(by_trial) == 430
    assert prime_values(values[:40]) == by_trial[: len(prime_values(values[:40]))]
    assert prime_values([1000000007, 1000000008, 2]) == [1000000007, 2]
