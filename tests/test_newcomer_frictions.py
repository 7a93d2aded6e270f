"""What a new user tripped over when trying the package from a fresh clone, each pinned by a test that fails on the
behaviour they met:

* a sweep grid over families and ``k`` in which a ``(family, k)`` pair does not exist (the parity design below
  ``k = 3``) records that cell as ``not-applicable``, not as a failure that makes the whole grid exit 2;
* a ``sweep train`` cell and the ``analyze`` command it runs give the same verdict on the same network (the cell
  used to judge at the float64 error bound, ``analyze`` at its default ``--rtol 1e-6``);
* a LocalCluster never prints dask's "Port 8787 is already in use" warning when another dask holds that port;
* the sweep report's table never breaks a family name (or a verdict count) in the middle;
* class-weight files: the sum tolerance follows the stored dtype (a float32 file sums to ``0.99999998``), an array
  that is neither ``q`` nor ``tau`` is refused by name, a ``.npy`` file gets a message saying what to do instead of
  "unknown network file type";
* ``analyze`` writes ``(1 - 2.47e-11) x gamma*``, not ``1 - 2.47e-11 x gamma*``.
"""

from __future__ import annotations

import json
import socket
import warnings

import numpy as np
import pytest

from margintheory import gamma_star
from margintheory.cli import main
from margintheory.core.phase_measures import FAMILIES, family_absent_reason, family_measure
from margintheory.engines.margins import input_grid
from margintheory.sweep.store import ResultStore

# --- a grid over families and k ---


def test_family_absent_reason_agrees_with_the_constructions():
    """The table of smallest ``k`` per family against the constructions themselves: a family exists at ``k``
    exactly when its measure can be built."""
    for family in FAMILIES:
        for k in range(1, 5):
            try:
                family_measure(family, k)
                built = True
            except ValueError:
                built = False
            assert (family_absent_reason(family, k) is None) == built, (family, k)
    with pytest.raises(ValueError, match="unknown family"):
        family_absent_reason("nope", 3)


def test_a_grid_over_families_and_k_records_a_missing_pair_as_not_applicable(tmp_path, capsys):
    store = tmp_path / "s"
    argv = ["sweep", "verify", "--p", "7", "--k", "2,3", "--family", "parity-design,cyclic-lattice",
            "--no-certificate", "--workers", "0", "--store", str(store), "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "verified" and doc["exit_code"] == 0
    rows = {(r["family"], r["k"]): r for r in ResultStore(store).read().to_pylist()}
    assert len(rows) == 4
    absent = rows[("parity-design", 2)]
    assert (absent["verdict"], absent["exit_code"], absent["error"]) == ("not-applicable", 0, None)
    result = json.loads(absent["result"])
    assert "parity-design family needs k >= 3" in result["notes"][0]
    assert result["gamma_star"] == pytest.approx(gamma_star(7, 2), rel=1e-15)  # still given, from the closed form
    assert all(rows[key]["verdict"] == "verified" for key in rows if key != ("parity-design", 2))
    # a single command asking for that family at that k is still bad input (exit 2, one line)
    assert main(["verify", "--p", "7", "--k", "2", "--family", "parity-design", "--no-certificate"]) == 2
    assert "parity design needs k >= 3" in capsys.readouterr().err


# --- sweep train vs analyze ---


def test_a_sweep_train_cell_and_analyze_give_the_same_verdict(tmp_path, capsys):
    """The same run (p = 5, k = 2, width 32, 3000 Adam steps, seed 0: 1 - 2.7e-11 of gamma*) is judged the same
    by the sweep cell and by ``analyze`` on the ``train`` command's network at the default tolerance; the network
    sits between the two tolerances (``analyze --rtol 0``, the float64 error bound, refutes it), so a cell judged
    at the float64 bound, as before, fails this test."""
    run = ["--p", "5", "--k", "2", "--width", "32", "--steps", "3000"]
    assert main(["train", *run, "--out", str(tmp_path / "run"), "--checkpoint-every", "3000", "--no-figures"]) == 0
    capsys.readouterr()
    network = str(tmp_path / "run" / "network.npz")
    analyzed = {}
    for rtol in ("default", "0"):
        code = main(["analyze", network, "--p", "5", "--k", "2", "--json"] + ([] if rtol == "default" else
                                                                             ["--rtol", rtol]))
        analyzed[rtol] = json.loads(capsys.readouterr().out)
        assert code == analyzed[rtol]["exit_code"]
    assert (analyzed["default"]["verdict"], analyzed["0"]["verdict"]) == ("verified", "refuted")
    main(["sweep", "train", *run, "--workers", "0", "--store", str(tmp_path / "s"), "--json"])
    capsys.readouterr()
    (row,) = ResultStore(tmp_path / "s").read().to_pylist()
    assert row["ratio_to_gamma_star"] == pytest.approx(analyzed["default"]["ratio_to_gamma_star"], rel=1e-13, abs=0)
    assert row["verdict"] == "verified"
    # analyze's note: the ratio as a factor of gamma*, parenthesised
    ratio = analyzed["default"]["ratio_to_gamma_star"]
    note = next(n for n in analyzed["default"]["notes"] if n.startswith("normalized margin ="))
    assert note.startswith(f"normalized margin = (1 - {1 - ratio:.2e}) x gamma* (claims"), note


def test_ratio_text_reads_as_a_factor_of_gamma_star():
    from margintheory.training.analysis import ratio_text

    assert ratio_text(1 - 2.47e-11) == "(1 - 2.47e-11) x gamma*"
    assert ratio_text(1 + 3e-9) == "(1 + 3.00e-09) x gamma*"
    assert ratio_text(1.0) == "gamma*" and ratio_text(0.5) == "0.500000 x gamma*"


# --- dask's dashboard port ---


def test_a_local_cluster_prints_no_port_warning_when_8787_is_taken():
    from margintheory.execution.executors import open_executor

    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8787))
        holder.listen(1)
    except OSError:  # someone else holds it: the condition under test holds anyway
        pass
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with open_executor(workers=1) as executor:
                assert executor.run_all(abs, [((-3,), {})]) == [3]
    finally:
        holder.close()
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if "already in use" in m], messages


# --- the sweep report's table ---


def test_the_sweep_report_never_breaks_a_name_or_a_count():
    from rich.console import Console

    from margintheory.sweep.report import summary_table

    rows = []
    for family in ("cyclic-lattice", "parity-design", "smallest-known", "lemma-c18"):
        for p, verdict in [(3, "verified"), (199, "refuted"), (5, "not-applicable"), (7, "error")]:
            rows.append({"command": "verify", "k": 3, "family": family, "method": None, "p": p, "verdict": verdict,
                         "width": 811008 if p == 199 else 16, "ratio_to_gamma_star": 0.987654321 if p == 3 else 1.0,
                         "relative_error": 1.2e-2, "seconds": 123.4, "parameters": "{}"})
    rows.append({**rows[0], "command": "solve", "family": None, "method": "column-generation", "p": 100003})
    for subset in (rows[:16], rows):  # one command (the title names it) and several (each row names its command)
        console = Console(width=80, record=True)
        console.print(summary_table(subset, "sweep verify: store", 80))
        lines = console.export_text().splitlines()
        assert max(len(line) for line in lines) <= 80
        words = {w for line in lines for w in line.split()}
        names = {r["family"] or r["method"] for r in subset}
        assert names <= words, names - words
        assert "…" not in "".join(lines)
        for count in ("1 ok", "1 refuted", "1 n/a", "1 failed"):
            assert any(count in line for line in lines), count


# --- class-weight files ---


def _uniform(p: int, k: int, dtype) -> dict[str, np.ndarray]:
    n, y = p**k, input_grid(p, k).sum(axis=1) % p
    tau = np.full((n, p), 1.0 / (p - 1))
    tau[np.arange(n), y] = 0.0
    return {"q": np.full(n, 1.0 / n, dtype=dtype), "tau": tau.astype(dtype)}


def test_the_sum_tolerance_follows_the_dtype():
    from margintheory.solvers.class_weighted import SUM_TOL, class_weights, sum_tolerance

    assert sum_tolerance(np.float64, 25) == SUM_TOL and sum_tolerance(np.int64, 25) == SUM_TOL
    eps32 = float(np.finfo(np.float32).eps)
    assert sum_tolerance(np.float32, 25) == pytest.approx(6 * eps32)
    assert sum_tolerance("bfloat16", 4) == pytest.approx(3 * 2.0**-7)
    arrays = _uniform(5, 2, np.float32)
    assert abs(float(arrays["q"].astype(np.float64).sum()) - 1) > SUM_TOL  # float32 rounding: 0.99999998
    assert class_weights(5, 2, **arrays).translation_invariant
    bad = {**arrays, "q": arrays["q"] * np.float32(1.001)}
    with pytest.raises(Exception, match="sum to 1"):  # the wider tolerance is still a tolerance
        class_weights(5, 2, **bad)
    with pytest.raises(Exception, match="sum to 1"):  # float32 values stored as float64 are judged as float64
        class_weights(5, 2, q=arrays["q"].astype(np.float64), tau=arrays["tau"].astype(np.float64))
    # a bfloat16 file's arrays arrive widened to float32: the stored dtype decides
    q16 = np.full(25, 0.0400390625, dtype=np.float32)  # 1/25 rounded to bfloat16: the sum is 1.0009765625
    with pytest.raises(Exception, match="sum to 1"):
        class_weights(5, 2, q=q16, tau=arrays["tau"])
    assert class_weights(5, 2, q=q16, tau=arrays["tau"], stored={"q": "bfloat16"}).translation_invariant


def test_a_float32_weights_file_is_accepted(tmp_path, capsys):
    path = tmp_path / "w32.npz"
    np.savez(path, **_uniform(5, 2, np.float32))
    code = main(["solve", "--p", "5", "--k", "2", "--single-neuron", "--weights", str(path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    weights = doc["details"]["weights"]
    assert code == 0 and doc["verdict"] == "verified" and weights["translation_invariant"]
    assert weights["dtypes"] == {"q": "float32", "tau": "float32"}


def test_an_unknown_array_in_a_weights_file_is_refused_by_name(tmp_path, capsys):
    path = tmp_path / "w.npz"
    np.savez(path, **_uniform(5, 2, np.float64), tau_smoothed=np.zeros(3))
    assert main(["solve", "--p", "5", "--k", "2", "--single-neuron", "--weights", str(path)]) == 2
    err = capsys.readouterr().err
    assert "unknown array(s) 'tau_smoothed'" in err and err.count("\n") == 1, err


def test_a_npy_weights_file_says_what_to_do(tmp_path, capsys):
    path = tmp_path / "q.npy"
    np.save(path, _uniform(5, 2, np.float64)["q"])
    for name in (path, tmp_path / "q.bin.noext"):
        if name != path:
            name.write_bytes(path.read_bytes())  # recognised by its magic bytes too
        assert main(["solve", "--p", "5", "--k", "2", "--single-neuron", "--weights", str(name)]) == 2
        err = capsys.readouterr().err
        assert "a .npy file holds one array" in err and "numpy.savez" in err and err.count("\n") == 1, err
        assert "unknown network file type" not in err
