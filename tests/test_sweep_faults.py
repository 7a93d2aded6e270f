"""Faults of sweeps found in review, each pinned: the sweep's verdict is computed from its cells' verdicts (a
not-applicable or failed cell never makes it 'refuted', and a failed cell claims no exactness); float options that no
cell could use (nan, inf, out of range) are one line and exit 2 before any cell runs; a time limit is a cell's budget,
not its identity (a cell stopped by it is the same cell rerun with --retry-failed); a result file that cannot be read
is refused with its name, by the report and by a resumed sweep before it runs anything.  Every cell runs in this
process (--workers 0) and takes well under a second."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from margintheory.cli import main
from margintheory.errors import InputError
from margintheory.presentation.schema import validate_result
from margintheory.sweep.grid import grid_cells
from margintheory.sweep.report import sweep_result
from margintheory.sweep.store import COLUMNS, ResultStore

# --- the sweep's verdict from its cells ---

ERROR_TEXT = "p must be an integer >= 3, got 2"


def _row(p: int, verdict: str, exit_code: int) -> dict:
    """A store row of a verify cell with ``verdict`` (``error``: a cell that failed, with its reason)."""
    row = dict.fromkeys(COLUMNS)
    row.update(cell=f"verify-p{p}-k2-{p:012d}", command="verify", task="modular-addition", p=p, k=2,
               family="lemma-c18", verdict=verdict, exit_code=exit_code, seconds=0.25,
               parameters=json.dumps({"p": p, "k": 2, "family": "lemma-c18"}))
    if verdict == "error":
        row["error"] = ERROR_TEXT
    else:
        row["exactness"] = "proved" if verdict == "verified" else "float"
        row["ratio_to_gamma_star"] = 1.0 if verdict == "verified" else None
    return row


V, R, E = ("verified", 0), ("refuted", 1), ("error", 2)
NA0, NA1 = ("not-applicable", 0), ("not-applicable", 1)


@pytest.mark.parametrize("cells,verdict,exit_code", [
    ([V], "verified", 0), ([R], "refuted", 1), ([NA0], "not-applicable", 0), ([NA1], "not-applicable", 1),
    ([V, R], "refuted", 1),
    ([V, NA1, NA0], "verified", 0),            # cells outside the hypothesis are informational
    ([NA1, NA0], "not-applicable", 1),         # none decides: exit 1 as one verify of the NA1 cell
    ([E], "not-applicable", 2),                # nothing ran: no verdict applies, and the work is incomplete
    ([NA0, E], "not-applicable", 2),
    ([E, NA1, V, NA1], "verified", 2),         # the reviewer's store: 1 failed, 2 not applicable, 1 verified
    ([V, E, R], "refuted", 2),
])
def test_the_sweep_verdict_is_computed_from_the_cells_verdicts(cells, verdict, exit_code):
    rows = [_row(3 + 2 * i, *cell) for i, cell in enumerate(cells)]
    result = sweep_result(rows, "sweep", {})
    doc = validate_result(result)  # the result schema holds, incomplete sweeps included
    assert (doc["verdict"], doc["exit_code"]) == (verdict, exit_code)
    counts = {name: sum(c[0] == name for c in cells) for name in ("verified", "refuted", "not-applicable", "error")}
    assert {k: doc["details"][k.replace("-", "_")] for k in counts} == counts
    decided = any(c[0] in ("verified", "refuted") for c in cells)
    for row, check in zip(rows, doc["checks"], strict=True):
        assert check["measured"] == row["verdict"]
        if row["verdict"] == "error":  # decides nothing, claims no exactness it does not have, says why
            assert check["informational"] and not check["passed"] and check["exactness"] == "argued"
            assert ERROR_TEXT in check["detail"]
        else:
            assert check["exactness"] == row["exactness"]  # the cell's own, as computed
            assert check["informational"] == (row["verdict"] == "not-applicable" and decided)
    failed = [r["cell"] for r in rows if r["verdict"] == "error"]
    assert all(any(cell in note for note in doc["notes"]) for cell in failed)  # the failed cells are named
    if len(cells) == 1:  # a one-cell sweep has its cell's verdict and exit code
        assert doc["exit_code"] == rows[0]["exit_code"]
        assert doc["verdict"] == rows[0]["verdict"] or rows[0]["verdict"] == "error"


@pytest.mark.parametrize("p", [5, 6])
def test_a_one_cell_sweep_says_what_verify_says(p, tmp_path, capsys):
    """p = 6 (the hypothesis fails): not-applicable with verify's exit code, never 'refuted'; without the certificate
    leg no check decides there (the theorem's claims are reported only), so the cell claims no exactness."""
    argv = ["--p", str(p), "--k", "2", "--no-certificate", "--json"]
    single = main(["verify", *argv])
    one = json.loads(capsys.readouterr().out)
    code = main(["sweep", "verify", *argv, "--workers", "0", "--store", str(tmp_path / "s")])
    doc = json.loads(capsys.readouterr().out)
    assert (doc["verdict"], doc["exit_code"], code) == (one["verdict"], one["exit_code"], single)
    row = ResultStore(tmp_path / "s").read().to_pylist()[0]
    if p % 2:
        assert doc["checks"][0]["exactness"] == row["exactness"] is not None  # computed by the cell, not assumed
    else:
        assert row["exactness"] is None and doc["checks"][0]["exactness"] == "argued"
        assert one["verdict"] == "not-applicable" and all(c["informational"] for c in one["checks"])


def test_the_report_of_a_store_with_failed_and_not_applicable_cells(tmp_path, capsys):
    store = str(tmp_path / "s")
    assert main(["sweep", "verify", "--p", "2,4,5,6", "--k", "2", "--no-certificate", "--workers", "0",
                 "--store", store]) == 2
    capsys.readouterr()
    assert main(["sweep", "report", store, "--no-figures", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert (doc["verdict"], doc["exit_code"]) == ("verified", 2)
    assert {k: doc["details"][k] for k in ("verified", "refuted", "not_applicable", "error")} == {
        "verified": 1, "refuted": 0, "not_applicable": 2, "error": 1}
    error = next(c for c in doc["checks"] if c["measured"] == "error")
    assert error["informational"] and error["exactness"] == "argued" and "p must be" in error["detail"]
    assert main(["sweep", "report", store, "--no-figures"]) == 2  # the text report exits as the JSON says


# --- float options ---

@pytest.mark.parametrize("argv,message", [
    (["verify", "--rtol", "nan"], "--rtol must be in [0, 1), got nan"),
    (["verify", "--rtol", "inf"], "--rtol must be in [0, 1), got inf"),
    (["verify", "--rtol", "-1"], "--rtol must be in [0, 1), got -1"),
    (["train", "--width", "4", "--steps", "1", "--rtol", "nan"], "--rtol must be in [0, 1), got nan"),
    (["train", "--width", "4", "--steps", "1", "--lr", "nan"], "argument --lr: not a finite number: nan"),
    (["train", "--width", "4", "--steps", "1", "--lr", "1e-3,inf"], "argument --lr: not a finite number: inf"),
    (["train", "--width", "4", "--steps", "1", "--lr", "0"], "argument --lr: must be positive, got 0"),
    (["train", "--width", "4", "--steps", "1", "--lambda=-inf"], "argument --lambda: not a finite number: -inf"),
    (["train", "--width", "4", "--steps", "1", "--lambda", "-1"], "argument --lambda: must be >= 0, got -1"),
])
def test_a_float_option_no_cell_could_use_is_one_line_before_any_cell_runs(argv, message, tmp_path, capsys):
    store = tmp_path / "s"
    command, rest = argv[0], argv[1:]
    code = main(["sweep", command, "--p", "5", "--k", "2", *rest, "--workers", "0", "--store", str(store)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not store.exists()  # refused before the store was opened


def test_the_grid_refuses_parameters_that_cannot_name_a_cell():
    with pytest.raises(InputError, match="finite numbers"):
        grid_cells("train", {"p": [5], "lr": [float("nan")]}, {"k": 2})


# --- the time limit is a budget ---

def test_the_time_limit_is_a_budget_not_the_cells_identity(monkeypatch):
    from margintheory.cli import build_parser
    from margintheory.commands import sweep

    seen = []
    monkeypatch.setattr(sweep, "_run_grid", lambda args, cells, function: seen.append(cells) or 0)
    for limit in ("1e-9", "60"):
        args = build_parser("sweep").parse_args(["sweep", "solve", "--p", "5", "--k", "2", "--time-limit", limit])
        assert args.func(args) == 0
    first, second = seen
    assert [c.key for c in first] == [c.key for c in second]
    assert first[0].budget["time_limit"] == 1e-9 and second[0].budget["time_limit"] == 60
    assert "time_limit" not in first[0].params


def test_a_column_generation_cell_takes_solves_pricing_for_its_p(monkeypatch):
    """Without --pricing a cell carries none, so solve picks fourier for odd p and sos for even p (a grid-wide
    'fourier' made every even-p cell fail once solve refused Fourier pricing there); a given one is kept."""
    from margintheory.cli import build_parser
    from margintheory.commands import sweep

    seen = []
    monkeypatch.setattr(sweep, "_run_grid", lambda args, cells, function: seen.append(cells) or 0)
    for extra in ([], ["--pricing", "sos"]):
        args = build_parser("sweep").parse_args(["sweep", "solve", "--p", "5,6", "--k", "2", *extra])
        assert args.func(args) == 0
    default, given = seen
    assert all("pricing" not in c.params for c in default)
    assert all(c.params["pricing"] == "sos" for c in given)
    argv_of = []
    monkeypatch.setattr("margintheory.verification.solving.solve",
                        lambda problem, options: argv_of.append(options.pricing))
    sweep.solve_cell(dict(default[1].params))
    assert argv_of == [None]  # solve's own default for p = 6 applies


def test_a_cell_stopped_by_its_time_limit_is_retried_in_place(tmp_path, capsys):
    """The reviewer's sequence: refused under a tiny --time-limit, rerun with a larger one and --retry-failed, the
    cell's failed row is replaced (one file, one row): the store reports it ok, exit 0."""
    store = str(tmp_path / "s")
    argv = ["sweep", "solve", "--p", "5", "--k", "2", "--workers", "0", "--store", store]
    assert main([*argv, "--time-limit", "1e-9"]) == 2
    (failed,) = ResultStore(store).read().to_pylist()
    assert failed["verdict"] == "error" and "time limit" in failed["error"]
    assert main([*argv, "--time-limit", "60", "--retry-failed"]) == 0
    capsys.readouterr()
    assert len(list((tmp_path / "s").glob("*.parquet"))) == 1
    assert main(["sweep", "report", store, "--no-figures"]) == 0
    out = capsys.readouterr().out
    assert "1 ok" in out and "failed" not in out


# --- a result file that cannot be read ---

def _one_line(capsys, *names):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(n in err for n in names), err
    return err


@pytest.mark.parametrize("content", ["junk", "foreign", "renamed", "two rows"])
def test_the_report_names_a_file_that_is_not_a_result(content, tmp_path, capsys):
    store = tmp_path / "s"
    assert main(["sweep", "verify", "--p", "3,5", "--k", "1", "--no-certificate", "--workers", "0",
                 "--store", str(store)]) == 0
    capsys.readouterr()
    good = sorted(store.glob("*.parquet"))
    bad = store / "x.parquet"
    if content == "junk":
        bad.write_text("junk\n")
    elif content == "foreign":
        pq.write_table(pa.table({"a": [1, 2]}), bad)
    elif content == "renamed":
        shutil.copy(good[0], bad)
    else:
        pq.write_table(pa.concat_tables([pq.read_table(f) for f in good]), bad)
    assert main(["sweep", "report", str(store), "--no-figures"]) == 2
    _one_line(capsys, str(bad), "not a result file", "move it out")


@pytest.mark.parametrize("retry", [False, True])
def test_a_resumed_sweep_refuses_a_corrupt_result_before_running_anything(retry, tmp_path, capsys):
    store = tmp_path / "s"
    base = ["sweep", "verify", "--k", "1", "--no-certificate", "--workers", "0", "--store", str(store)]
    assert main([*base, "--p", "3"]) == 0
    capsys.readouterr()
    (cell,) = store.glob("*.parquet")
    cell.write_bytes(cell.read_bytes()[: cell.stat().st_size // 2])  # truncated (a disk that filled, a bad copy)
    again = [*base, "--p", "3,5"] + (["--retry-failed"] if retry else [])
    assert main(again) == 2
    _one_line(capsys, str(cell), "not a result file", "move it out")
    assert list(store.glob("*.parquet")) == [cell]  # nothing ran: p = 5 has no result yet
    cell.rename(tmp_path / "moved.parquet")  # the advice: move it out, and the sweep runs its cell again
    assert main(again) == 0
    assert len(list(store.glob("*.parquet"))) == 2
