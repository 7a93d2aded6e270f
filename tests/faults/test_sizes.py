"""Sizes are refused before work starts: one line naming the estimate and the flag, in seconds, in little memory."""

from __future__ import annotations

import numpy as np
import pytest

from margintheory.core.network import PolyNetwork
from margintheory.errors import RefusedError
from margintheory.runtime import budget
from margintheory.runtime.budget import Estimate, format_bytes, require
from tests.faults.helpers import BASELINE_RSS, assert_one_line_error, run_cli

#: a memory refusal: "more than the memory budget ...; raise --max-memory" or, beyond this machine's memory (which
#: depends on the machine the tests run on), "more than this machine has" without advice
MEMORY = "more than"
TIME = "--max-seconds"


@pytest.mark.parametrize(("args", "flag"), [
    (("verify", "--p", "1000000001", "--k", "2", "--compact"),
     "more than"),  # used to build the construction first: 20 GB
    # (an even p of that size is the closed form gamma_even: tests/test_even_p_theorem.py)
    (("verify", "--p", "7", "--k", "100"), "memory"),  # used to reach 15.7 GB, then a MemoryError
    (("verify", "--p", "101", "--k", "6", "--exhaustive"), "more than"),  # used to take 12 s to refuse
    (("verify", "--p", "3001", "--k", "2", "--exhaustive"), "more than"),  # used to allocate 2.75 GB first
    (("verify", "--p", "7", "--k", "1000000000"), "memory"),  # p^k itself is never formed
    (("verify", "--p", "31", "--k", "4", "--max-seconds", "0.5", "--exhaustive"), TIME),
    (("verify", "--p", "7", "--k", "20", "--no-certificate"), "more than"),  # the compact check: 2^39 atoms
    (("verify", "--p", "7", "--k", "3", "--max-memory", "100K"), "raise --max-memory"),
    (("verify", "--p", "7", "--k", "100000", "--exact"), "limit"),
    (("verify", "--task", "parity", "--n", "20", "--k", "18"), TIME),
    (("solve", "--p", "3", "--k", "4", "--pricing", "sos"), MEMORY),  # used to be killed by the OOM killer
    (("solve", "--p", "31", "--k", "4"), MEMORY),  # the final network: up to 244 orbits of p^k neurons
    (("solve", "--p", "3", "--k", "10", "--single-neuron"), MEMORY),
    (("solve", "--p", "5", "--k", "3", "--pricing", "sos", "--time-limit", "0.001"), "--time-limit"),
    (("derive", "fourier", "--p", "2", "--k", "14"), "limit"),  # passed the size check, then ran for hours
    (("train", "--p", "97", "--k", "5", "--width", "10", "--out", "never"), MEMORY),
    (("train", "--p", "31", "--k", "3", "--width", "1000", "--steps", "100000000", "--out", "never"), TIME),
])
def test_refused_up_front(args, flag, tmp_path):
    run = run_cli(*args, cwd=tmp_path, memory=2 * 2**30, timeout=60)
    line = assert_one_line_error(run, contains=flag)
    assert any(w in line for w in ("estimated", "needs", "limit", "beyond any")), line
    assert run.max_rss < BASELINE_RSS, f"refusing took {run.max_rss / 2**20:.0f} MiB"
    assert not (tmp_path / "never").exists(), "a refused run must not create its output directory"


def test_memory_stays_within_the_budget_when_the_work_runs(tmp_path):
    """A job that fits runs within --max-memory (plus the interpreter) under an address-space limit."""
    budget = 256 * 2**20
    run = run_cli("verify", "--p", "23", "--k", "3", "--max-memory", str(budget), "--json", cwd=tmp_path,
                  memory=budget)
    assert run.returncode == 0, run.stderr
    assert run.max_rss < BASELINE_RSS + budget


def test_estimate_is_checked_before_allocation_in_process(monkeypatch):
    monkeypatch.setattr(budget, "machine_memory", lambda: 2.0**50)
    with pytest.raises(RefusedError) as info:
        require(Estimate("a job", 2**40, 1.0), 2**30, None)
    assert info.value.parameter == "max_memory" and info.value.estimate == 2**40 and info.value.limit == 2**30
    assert format_bytes(2**40) in str(info.value)
    with pytest.raises(RefusedError) as info:
        require(Estimate("a job", 1, 1e6), 2**30, 10.0, time_parameter="time_limit")
    assert info.value.parameter == "time_limit"
    require(Estimate("a job", 2**30, 10.0), 2**30, 10.0)  # exactly at the budget is allowed


def test_library_refuses_a_network_check_beyond_budget():
    from margintheory.tasks.modular_addition.checks import verify_network

    net = PolyNetwork(np.ones((3, 2, 5)), np.ones((3, 5)))
    with pytest.raises(RefusedError):
        verify_network(net, max_memory=10_000)
