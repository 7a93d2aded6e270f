"""The exhaustive margin engine: agreement with direct evaluation, invariances, error bound, refusals."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from margintheory.backends.kernels import (
    HAVE_NUMBA,
    margin_statistics,
    margin_statistics_numpy,
    power_of_sums,
    power_of_sums_numpy,
)
from margintheory.core import theory
from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import (
    class_weighted_margins,
    estimate_cost,
    exhaustive_margin,
    input_grid,
    logit_error_bound,
    logits,
    sum_labels,
)
from margintheory.errors import InputError, RefusedError
from margintheory.testing import networks, odd_moduli, seeds


def direct_margins(net):
    L = logits(net)
    y = sum_labels(net.p, net.k)
    rows = np.arange(len(y))
    correct = L[rows, y].copy()
    L[rows, y] = -np.inf
    return correct - L.max(axis=1)


def test_input_grid_order():
    g = input_grid(3, 2)
    assert g.tolist() == [[a, b] for a in range(3) for b in range(3)]


@given(networks(), st.integers(1, 7), st.integers(1, 3), st.booleans())
def test_chunked_matches_unchunked_and_direct(net, chunk, workers, use_numba):
    full = exhaustive_margin(net, workers=1)
    chunked = exhaustive_margin(net, chunk_prefixes=chunk, workers=workers, use_numba=use_numba)
    ref = direct_margins(net)
    tol = 8 * full.logit_error_bound
    assert np.max(np.abs(chunked.margins - full.margins)) <= tol
    assert np.max(np.abs(chunked.wrong_spread - full.wrong_spread)) <= tol
    assert np.max(np.abs(full.margins - ref)) <= tol
    assert np.allclose(chunked.label_logit_sums, full.label_logit_sums, atol=net.p**net.k * tol)


@given(networks(), st.floats(0.05, 20.0), st.randoms(use_true_random=False))
def test_normalized_margin_invariant_under_scaling_and_permutation(net, alpha, rnd):
    base = exhaustive_margin(net)
    perm = list(range(net.m))
    rnd.shuffle(perm)
    for other in (net.scaled(alpha), net.permuted(np.array(perm))):
        res = exhaustive_margin(other)
        tol = res.normalized_tolerance + base.normalized_tolerance
        assert abs(res.normalized_margin - base.normalized_margin) <= tol


@given(odd_moduli(3, 7), st.integers(1, 3), seeds())
def test_random_networks_never_exceed_gamma_star(p, k, seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 3 * theory.construction_width(p, k)))
    net = PolyNetwork(rng.normal(size=(m, k, p)), rng.normal(size=(m, p)))
    res = exhaustive_margin(net)
    assert res.normalized_margin <= theory.gamma_star(p, k) + res.normalized_tolerance


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed; only the numpy kernel exists")
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 6), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_numba_kernel_matches_numpy(nb, p, m, k, seed):
    rng = np.random.default_rng(seed)
    S, T = rng.normal(size=(nb, m)), rng.normal(size=(p, m))
    a = power_of_sums(S, T, k, np.empty((nb * p, m)), use_numba=True)
    b = power_of_sums_numpy(S, T, k, np.empty((nb * p, m)))
    assert np.allclose(a, b, rtol=1e-13, atol=0)
    assert np.allclose(b.reshape(nb, p, m), (S[:, None, :] + T[None, :, :]) ** k, rtol=1e-13, atol=0)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed; only the numpy kernel exists")
@given(st.integers(1, 40), st.integers(2, 9), st.integers(0, 2**32 - 1))
def test_numba_margin_statistics_match_numpy(rows, p, seed):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(rows, p))
    y = rng.integers(0, p, size=rows)
    out = [(np.empty(rows), np.empty(rows), np.zeros((p, p))) for _ in range(2)]
    margin_statistics(L.copy(), y, *out[0], use_numba=True)
    margin_statistics_numpy(L.copy(), y, *out[1])
    for a, b in zip(out[0], out[1], strict=True):
        assert np.allclose(a, b, rtol=1e-13, atol=1e-13)
    correct = L[np.arange(rows), y]
    assert np.all(out[0][0] <= correct - L.min(axis=1) + 1e-12)


def test_error_bound_holds_against_exact_rational_logits():
    rng = np.random.default_rng(7)
    net = PolyNetwork(rng.normal(size=(4, 3, 3)), rng.normal(size=(4, 3)))
    bound = logit_error_bound(net)
    X = input_grid(3, 3)
    L = logits(net)
    U = [[[Fraction(float(v)) for v in row] for row in neuron] for neuron in net.U]
    W = [[Fraction(float(v)) for v in row] for row in net.W]
    worst = 0.0
    for r, a in enumerate(X):
        for c in range(3):
            exact = sum((sum(U[i][j][a[j]] for j in range(3))) ** 3 * W[i][c] for i in range(4))
            worst = max(worst, abs(float(exact - Fraction(float(L[r, c])))))
    assert worst <= bound
    assert bound < 1e-12


def test_class_weighted_margin_dominates_margin():
    rng = np.random.default_rng(3)
    net = PolyNetwork(rng.normal(size=(5, 2, 5)), rng.normal(size=(5, 5)))
    L = logits(net)
    y = sum_labels(5, 2)
    g = direct_margins(net)
    assert np.all(class_weighted_margins(L, y) >= g - 1e-12)
    tau = rng.random(L.shape)
    tau[np.arange(len(y)), y] = 0
    tau /= tau.sum(axis=1, keepdims=True)
    assert np.all(class_weighted_margins(L, y, tau) >= g - 1e-12)


def test_refuses_over_budget_and_over_time():
    with pytest.raises(RefusedError, match="memory budget") as info:
        exhaustive_margin(PolyNetwork(np.ones((2, 2, 5)), np.ones((2, 5))), max_memory=1000)
    assert info.value.parameter == "max_memory" and info.value.limit == 1000 and info.value.estimate > 1000
    assert "--" not in str(info.value)
    est = estimate_cost(97, 5, 8, 2**40)
    assert est.seconds > 60
    from margintheory.engines.margins import check_feasible

    with pytest.raises(RefusedError, match="time limit") as info:
        check_feasible(est, 2**40, 60.0)
    assert info.value.parameter == "max_seconds" and info.value.estimate == est.seconds and "--" not in str(info.value)


def test_bad_labels_rejected():
    net = PolyNetwork(np.ones((1, 2, 3)), np.ones((1, 3)))
    with pytest.raises(InputError):
        exhaustive_margin(net, labels=np.zeros(4, dtype=int))
    res = exhaustive_margin(net, labels=np.zeros(9, dtype=int))
    assert res.margins.shape == (9,)


def test_memory_budget_limits_chunk():
    small = estimate_cost(23, 5, 5632, 256 * 2**20)
    assert small.prefixes_per_chunk >= 1
    assert estimate_cost(23, 5, 5632, 64 * 2**20).prefixes_per_chunk == 0  # fixed arrays alone exceed 64 MiB
    big = estimate_cost(23, 5, 5632, 2 * 2**30)
    assert small.total_bytes <= 256 * 2**20
    assert big.total_bytes <= 2 * 2**30


@pytest.mark.parametrize("where", ["between submissions", "while waiting"])
def test_an_interrupt_stops_the_workers_after_their_chunk_in_hand(monkeypatch, where):
    """Ctrl-C in the main thread (here a KeyboardInterrupt raised at the two places it can land: between two
    submissions to the pool, and while waiting for a result) stops every worker after the chunk in hand; before, a
    signal between submissions left the started worker to finish its whole share of the pass (37 s of a 25 s pass
    on a loaded machine at (47,4))."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from margintheory.engines import margins
    from margintheory.runtime import workers

    rng = np.random.default_rng(0)
    net = PolyNetwork(rng.normal(size=(4, 3, 13)), rng.normal(size=(4, 13)))  # 169 prefixes, one chunk each
    done, lock, started = [0], threading.Lock(), threading.Event()
    real_statistics = margins.chunk_statistics

    def slow_statistics(*args, **kwargs):  # 169 chunks x 20 ms: 1.7 s per worker for the whole pass
        started.set()
        real_statistics(*args, **kwargs)
        with lock:
            done[0] += 1
        threading.Event().wait(0.02)

    monkeypatch.setattr(margins, "chunk_statistics", slow_statistics)
    real_submit = ThreadPoolExecutor.submit

    def submit_then_interrupt(self, *args, **kwargs):
        real_submit(self, *args, **kwargs)
        started.wait(5)  # the first worker is running a chunk
        raise KeyboardInterrupt

    def wait_interrupted(jobs, timeout=None, return_when=None):
        started.wait(5)
        raise KeyboardInterrupt

    if where == "between submissions":
        monkeypatch.setattr(ThreadPoolExecutor, "submit", submit_then_interrupt)
    else:
        monkeypatch.setattr(workers, "wait", wait_interrupted)
    with pytest.raises(KeyboardInterrupt):
        exhaustive_margin(net, chunk_prefixes=1, workers=2)
    # each worker finishes the chunk in hand and may start one more before it sees the event; the slack (10 of the
    # 169 chunks, 85 in the share of the worker already running) covers a loaded machine's scheduling delays
    assert 1 <= done[0] <= 10, done[0]


def test_a_failing_worker_ends_the_pass_at_once_whichever_it_is(monkeypatch):
    """An error in the second worker (its first chunk) ends the pass with that error while the first worker is still
    running: the first stops after its chunk in hand.  Waiting for the workers in submission order would have
    raised it only after the first worker's whole share (85 chunks x 20 ms here)."""
    import threading

    from margintheory.engines import margins

    rng = np.random.default_rng(1)
    net = PolyNetwork(rng.normal(size=(4, 3, 13)), rng.normal(size=(4, 13)))
    done, lock = [0], threading.Lock()
    real_statistics = margins.chunk_statistics

    def statistics_failing_at_chunk_1(S, T, W, k, y, row_margins, *rest, **kwargs):
        first_row = (row_margins.__array_interface__["data"][0] - row_margins.base.__array_interface__["data"][0]) // 8
        if first_row // 13 == 1:  # prefix 1: the second worker's first chunk
            raise RuntimeError("worker failed")
        real_statistics(S, T, W, k, y, row_margins, *rest, **kwargs)
        with lock:
            done[0] += 1
        threading.Event().wait(0.02)

    monkeypatch.setattr(margins, "chunk_statistics", statistics_failing_at_chunk_1)
    with pytest.raises(RuntimeError, match="worker failed"):
        exhaustive_margin(net, chunk_prefixes=1, workers=2)
    assert done[0] <= 10, done[0]  # slack for a loaded machine: the whole share is 85


def test_the_time_estimate_calibration_benchmark_runs():
    """``benchmarks/bench_margin_engine.py --calibration --quick`` (the tool behind the engine's time-estimate
    constants) measures and prints estimate / measured for each row."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_margin_engine.py"
    out = subprocess.run([sys.executable, str(script), "--calibration", "--quick", "--repeats", "1", "--workers", "2"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) == 2, out
    for row in rows:
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert cells[4] == "2" and float(cells[5]) > 0 and float(cells[6]) > 0 and float(cells[7]) > 0


def test_the_time_estimate_divides_by_the_workers_and_charges_narrow_products_more():
    """The CPU pass is estimated per worker thread (the workers split the prefixes evenly), plus one start; a
    product with few output columns (small ``p``) runs below the core's rate, so at equal flops it is estimated
    longer; a GPU's estimate does not depend on the host's workers."""
    from margintheory.backends.select import Backend

    one, two = (estimate_cost(47, 3, 736, workers=w, backend=Backend("numpy", "cpu")).seconds for w in (1, 2))
    assert two < one and (one - 1e-3) == pytest.approx(2 * (two - 1e-3), rel=1e-12)
    # equal flops 2 p^k m p: (7, 4) with m = 343 k against (49, 2) with m = 49 k (p^k = 2401); the narrow case
    # also has 7x the elements, which at one flop rate for every p made it only 1.4x longer
    narrow = estimate_cost(7, 4, 7 * 49_000, backend=Backend("numpy", "cpu")).seconds
    wide = estimate_cost(49, 2, 49_000, backend=Backend("numpy", "cpu")).seconds
    assert narrow > 1.5 * wide
    gpu = [estimate_cost(47, 4, 2944, workers=w, backend=Backend("jax", "gpu")).seconds for w in (1, 16)]
    assert gpu[0] == gpu[1]
