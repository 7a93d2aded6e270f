"""Which refusal comes first, and what it advises: a size nothing could allow is said to be so (no flag advised), an
unavailable optional leg names the flag that drops it, and only a budget that could really be raised is advised.
Output paths: the kind of file is checked before its existence (a device is never "replaced with --overwrite").

The command-line cases run :func:`margintheory.cli.main` in-process (the messages are formed in Python; the
file-descriptor behaviour of the same code paths is covered by the subprocess tests of this folder)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from margintheory.cli import main
from margintheory.core.network import PolyNetwork
from margintheory.errors import RefusedError
from margintheory.runtime import budget
from margintheory.runtime.budget import CENTURY, Estimate, memory_refusal, require


def one_line(capsys, argv: list[str], code: int = 2) -> str:
    got = main(argv)
    err = capsys.readouterr().err
    assert got == code, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- sizes ----------------------------------------------------------------------------------------------------------

def test_memory_beyond_the_machine_advises_no_flag(monkeypatch):
    monkeypatch.setattr(budget, "machine_memory", lambda: 16.0 * 2**30)
    err = memory_refusal("a job", 100 * 2**30, 2**31)
    assert err.parameter is None and "more than this machine has (16.0 GiB" in str(err)
    err = memory_refusal("a job", 8 * 2**30, 2**31)  # within the machine: raising the budget would help
    assert err.parameter == "max_memory" and "memory budget max_memory = 2.0 GiB" in str(err)
    monkeypatch.setattr(budget, "machine_memory", lambda: budget.ANY_MACHINE_MEMORY)
    assert "more than any computer has" in str(memory_refusal("a job", 2.0**70, 2**31))
    require(Estimate("a job", 100 * 2**30), 200 * 2**30, None)  # an explicit budget beyond the machine is honoured


def test_an_estimate_just_over_the_budget_is_not_printed_as_equal_to_it(monkeypatch):
    monkeypatch.setattr(budget, "machine_memory", lambda: 16.0 * 2**30)
    text = str(memory_refusal("a job", 2**31 + 2**22, 2**31))  # 2 GiB + 4 MiB: both "2.0 GiB" at one digit
    assert "needs an estimated 2.004 GiB" in text and "max_memory = 2.000 GiB" in text, text
    assert "max_memory = 2.0 GiB" in str(memory_refusal("a job", 3 * 2**30, 2**31))  # one digit when it differs


def test_machine_memory_is_positive_and_bounded():
    assert 2**20 < budget.machine_memory() <= budget.ANY_MACHINE_MEMORY


def test_centuries_are_refused_without_advice():
    with pytest.raises(RefusedError) as info:
        require(Estimate("a job", 1, 10 * CENTURY), 2**30, 900.0)
    assert info.value.parameter is None and "beyond any practical time limit" in str(info.value)


@pytest.mark.parametrize(("argv", "words", "absent"), [
    # no memory would do: say so instead of advising --max-memory (k = 100: 7^100 points; p = 10^9: 1.8e21 bytes)
    (["verify", "--p", "7", "--k", "100"], ("beyond any memory budget",), ("--max-memory", "--no-certificate")),
    (["verify", "--p", "1000000000", "--k", "2", "--exhaustive"], ("1016.5 EiB", "more than"), ("--max-memory",)),
    (["verify", "--p", "1000000001", "--k", "2", "--compact"], ("more than",), ("--max-memory",)),  # its p x p
    (["verify", "--p", "1000000000", "--k", "2", "--no-certificate"], ("more than",), ("--max-memory",)),
    # the construction at k = 13 (4.0 TiB) is refused before the certificate (k <= 11) that --no-certificate drops
    (["verify", "--p", "7", "--k", "13", "--exhaustive"], ("4.0 TiB", "more than"),
     ("--max-memory", "--no-certificate")),
    (["verify", "--p", "7", "--k", "20", "--no-certificate"], ("more than",), ("--max-memory",)),
    # a budget that can be raised is still advised as such
    (["verify", "--p", "3001", "--k", "2", "--exhaustive"], ("9.8 GiB", "raise --max-memory"), ()),
    (["verify", "--p", "7", "--k", "100000", "--exact"], ("limit",), ("--max-memory",)),
    # sizes that used to allocate first: the exact family check (frequencies of p = 10^9 + 1), a family measure
    # of k = 10^6 (hung), the single-neuron neuron vector of p = 10^9 + 1 (7.5 GiB before any check)
    (["verify", "--p", "1000000001", "--k", "2", "--exact", "--family", "smallest-known"], ("exact check",), ()),
    (["verify", "--p", "7", "--k", "1000000", "--family", "cyclic-lattice", "--no-certificate"],
     ("beyond any memory",), ("--max-memory",)),
    (["verify", "--p", "7", "--k", "40", "--family", "parity-design", "--no-certificate"], ("more than",), ()),
    (["solve", "--p", "1000000001", "--k", "2", "--single-neuron"], ("single-neuron", "more than"), ()),
    (["solve", "--p", "7", "--k", "12", "--single-neuron"], ("k <= 11 only",), ("--no-certificate",)),
])
def test_the_most_fundamental_refusal_comes_first(capsys, monkeypatch, argv, words, absent):
    monkeypatch.setattr(budget, "machine_memory", lambda: 64.0 * 2**30)  # the same messages on every machine
    line = one_line(capsys, argv)
    for w in words:
        assert w in line, line
    for w in absent:
        assert w not in line, line
    assert "out of memory" not in line


def test_an_unsupported_certificate_names_the_flag_that_drops_it(capsys, tmp_path):
    """A k = 12 network small enough to check: only the certificate leg is unavailable (k <= 11)."""
    rng = np.random.default_rng(0)
    path = tmp_path / "k12.npz"
    PolyNetwork(rng.standard_normal((1, 12, 3)), rng.standard_normal((1, 3))).save(path)
    line = one_line(capsys, ["verify", "--network", str(path), "--method", "sos"])  # (AM-GM's U has no such limit)
    assert "available for k <= 11 only, not k = 12; pass --no-certificate" in line, line
    assert "--max-memory" not in line


# -- output paths ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["device", "directory", "fifo"])
def test_certificate_path_kind_is_checked_before_its_existence(capsys, tmp_path, kind):
    path = {"device": "/dev/full", "directory": str(tmp_path)}.get(kind, str(tmp_path / "fifo"))
    if kind == "fifo":
        os.mkfifo(path)
    for extra in ([], ["--overwrite"]):
        line = one_line(capsys, ["verify", "--p", "3", "--k", "2", "--certificate", path, *extra])
        expected = {"device": "is a character device", "directory": "is a directory", "fifo": "is a FIFO"}[kind]
        assert expected in line and "--overwrite" not in line, line


@pytest.mark.parametrize(("argv", "words"), [
    (["verify", "--p", "3", "--k", "2", "--certificate", ""], "empty"),  # was silently ignored
    (["verify", "--p", "3", "--k", "2", "--certificate", "/proc/c.json"], "cannot create"),  # failed after the work
    (["verify", "--p", "3", "--k", "2", "--overwrite"], "--certificate"),
    (["solve", "--p", "3", "--k", "2", "--overwrite"], "--out"),
    (["train", "--p", "3", "--k", "2", "--width", "2", "--out", "/proc/run"], "cannot create directories"),
])
def test_output_paths_refused_before_the_work(capsys, argv, words):
    assert words in one_line(capsys, argv)


def test_an_existing_file_is_a_regular_file_not_a_directory(capsys, tmp_path):
    (tmp_path / "f").write_text("mine")
    line = one_line(capsys, ["train", "--p", "3", "--k", "2", "--width", "2", "--out", str(tmp_path / "f")])
    assert "is a regular file, not a directory" in line, line


def test_solve_out_never_replaces_a_file_unasked(capsys, tmp_path):
    path = tmp_path / "mine.npz"
    path.write_bytes(b"the user's results")
    line = one_line(capsys, ["solve", "--p", "3", "--k", "2", "--single-neuron", "--out", str(path)])
    assert "already exists" in line and "--overwrite" in line, line
    assert path.read_bytes() == b"the user's results"
    assert main(["solve", "--p", "3", "--k", "2", "--single-neuron", "--out", str(path), "--overwrite"]) == 0
    assert PolyNetwork.load(path).p == 3


def test_analyze_plot_names_taken_by_a_fifo_are_refused_before_the_work(capsys, tmp_path):
    from margintheory.core.construction import build_construction

    build_construction(3, 2).save(tmp_path / "net.npz")
    (tmp_path / "plots").mkdir()
    os.mkfifo(tmp_path / "plots" / "summary.png")  # used to be found only after the analysis, by the writer
    line = one_line(capsys, ["analyze", str(tmp_path / "net.npz"), "--p", "3", "--k", "2", "--plots",
                             str(tmp_path / "plots")])
    assert "summary.png: is a FIFO" in line, line
    assert capsys.readouterr().out == ""
