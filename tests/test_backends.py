"""The backend boundary: the JAX engine against the numpy reference and exact arithmetic, multi-device sharding,
backend selection and its errors, the command-line flags, and that numpy runs never import jax.

Sizes are fixed and small so that each kernel shape is compiled once for the whole file (jit compilation is the
cost of these tests, not the arithmetic)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
from fractions import Fraction
from pathlib import Path

import jax  # in the test extra: CI runs every test below, none is skipped
import numpy as np
import pytest

from margintheory.backends import select
from margintheory.backends.select import Backend, choose, using
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import estimate_cost, exhaustive_margin, input_grid, logit_error_bound
from margintheory.errors import InputError


def _has_gpu() -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


HAVE_GPU = _has_gpu()


def random_net(seed: int, m: int = 7, k: int = 3, p: int = 5) -> PolyNetwork:
    rng = np.random.default_rng(seed)
    return PolyNetwork(rng.normal(size=(m, k, p)), rng.normal(size=(m, p)))


def assert_same_pass(a, b):
    """Two passes over the same network agree within the a-priori float64 bound (both obey it)."""
    tol = 4 * a.logit_error_bound
    assert np.max(np.abs(a.margins - b.margins)) <= tol
    assert np.max(np.abs(a.wrong_spread - b.wrong_spread)) <= tol
    assert np.max(np.abs(a.label_logit_sums - b.label_logit_sums)) <= a.margins.size * tol
    assert abs(a.normalized_margin - b.normalized_margin) <= a.normalized_tolerance + b.normalized_tolerance
    assert np.array_equal(a.on_margin, b.on_margin) or abs(a.h - b.h) <= tol


@pytest.mark.parametrize("seed", [0, 1])
def test_jax_engine_matches_numpy_with_padding_and_given_labels(seed):
    """One chunk of all 25 prefixes; then chunks of 2 (13 chunks, the last one padded) with given labels."""
    net = random_net(seed)
    ref = exhaustive_margin(net)
    full = exhaustive_margin(net, backend="jax")
    assert full.backend == "jax (cpu)" and ref.backend == "numpy (cpu)" and full.chunk_prefixes == 25
    assert_same_pass(ref, full)
    labels = np.random.default_rng(seed).integers(0, 5, size=5**3)
    with_labels = exhaustive_margin(net, labels=labels, backend="jax", chunk_prefixes=2)
    assert_same_pass(exhaustive_margin(net, labels=labels), with_labels)


@pytest.mark.parametrize("one_hot_sums", [False, True], ids=["segment-sums", "one-hot-sums"])
@pytest.mark.parametrize("given_labels", [False, True])
def test_jax_calls_of_several_sub_chunks_match_numpy(given_labels, one_hot_sums):
    """25 prefixes in calls of 3 sub-chunks of 2 (5 calls of 6 prefixes: the last call holds one real prefix and
    two sub-chunks of padding, which must neither add rows nor reach the label sums); both ways of forming the
    label sums (the CPU's segment sum, the GPU's one-hot GEMM) run here."""
    from margintheory.backends import jax_engine

    net = random_net(4)
    labels = np.random.default_rng(4).integers(0, 5, size=5**3) if given_labels else None
    ref = exhaustive_margin(net, labels=labels)
    stats = jax_engine.margins_over_prefixes(Backend("jax", "cpu"), net.U, net.W, labels, max_bytes=2**30, nb=2,
                                             nsub=3, one_hot_sums=one_hot_sums)
    assert (stats.chunk_prefixes, stats.sub_chunks) == (2, 3)
    tol = 4 * ref.logit_error_bound
    assert np.max(np.abs(stats.margins - ref.margins)) <= tol
    assert np.max(np.abs(stats.spread - ref.wrong_spread)) <= tol
    assert np.max(np.abs(stats.label_sums - ref.label_logit_sums)) <= ref.margins.size * tol


@pytest.mark.parametrize("workers", [2, 3])
def test_jax_worker_threads_give_the_one_thread_pass(workers):
    """Several threads dispatching the calls (every ``workers``-th each, 5 calls: uneven shares) give the margins
    and spreads of one thread bit for bit (each row is computed by the same kernel), and label sums that differ only
    by the order in which the workers' sums are added."""
    from margintheory.backends import jax_engine

    net = random_net(4)
    cpu = Backend("jax", "cpu")
    one = jax_engine.margins_over_prefixes(cpu, net.U, net.W, None, max_bytes=2**30, nb=2, nsub=3)
    many = jax_engine.margins_over_prefixes(cpu, net.U, net.W, None, max_bytes=2**30, nb=2, nsub=3, workers=workers)
    assert (one.workers, many.workers) == (1, workers)
    np.testing.assert_array_equal(many.margins, one.margins)
    np.testing.assert_array_equal(many.spread, one.spread)
    scale = np.max(np.abs(one.label_sums))
    assert np.max(np.abs(many.label_sums - one.label_sums)) <= 64 * np.finfo(float).eps * scale
    done = []
    jax_engine.margins_over_prefixes(cpu, net.U, net.W, None, max_bytes=2**30, nb=2, nsub=3, workers=workers,
                                     report=lambda finished, total: done.append((finished, total)))
    assert sorted(done) == done and done[-1] == (25, 25) and len(done) == 5  # one report per call


def test_a_failing_jax_worker_stops_the_others():
    """An error in one worker (here the progress callback's) ends the pass with that error, and the other worker
    stops after the call in hand instead of running its whole share (84 calls each)."""
    from margintheory.backends import jax_engine

    net = random_net(5, p=13)
    reports = []

    def report(finished, total):
        reports.append(finished)
        if len(reports) == 1:
            raise RuntimeError("callback failed")
        time.sleep(0.005)  # the other worker's share takes 0.4 s: the cancel, not the share's end, must stop it

    with pytest.raises(RuntimeError, match="callback failed"):
        jax_engine.margins_over_prefixes(Backend("jax", "cpu"), net.U, net.W, None, max_bytes=2**30, nb=1, nsub=1,
                                         workers=2, report=report)
    assert len(reports) < 40, len(reports)


def test_an_interrupt_stops_the_jax_workers(monkeypatch):
    """Ctrl-C while the caller waits for the workers (a KeyboardInterrupt raised there) stops both after the call in
    hand."""
    import threading

    from margintheory.backends import jax_engine
    from margintheory.runtime import workers

    net = random_net(5, p=13)
    reports, started = [], threading.Event()

    def report(finished, total):
        reports.append(finished)
        started.set()
        time.sleep(0.005)

    def wait_interrupted(jobs, timeout=None, return_when=None):
        started.wait(5)
        raise KeyboardInterrupt

    monkeypatch.setattr(workers, "wait", wait_interrupted)
    with pytest.raises(KeyboardInterrupt):
        jax_engine.margins_over_prefixes(Backend("jax", "cpu"), net.U, net.W, None, max_bytes=2**30, nb=1, nsub=1,
                                         workers=2, report=report)
    assert 1 <= len(reports) < 40, len(reports)


def test_cpu_sub_chunk_follows_the_last_level_cache(tmp_path):
    """The sub-chunk is a quarter of the highest-level data/unified cache read from sysfs (an instruction cache
    and lower levels are ignored), within 1..8 MiB, 2 MiB when sysfs cannot be read."""
    from margintheory.backends import jax_engine

    for index, (level, kind, size) in enumerate([(1, "Data", "32K"), (1, "Instruction", "64M"), (2, "Unified", "512K"),
                                                  (3, "Unified", "32768K")]):
        entry = tmp_path / f"index{index}"
        entry.mkdir()
        for name, value in (("level", str(level)), ("type", kind), ("size", size)):
            (entry / name).write_text(value + "\n")
    assert jax_engine.last_level_cache_bytes(str(tmp_path)) == 32 * 2**20
    assert jax_engine.last_level_cache_bytes(str(tmp_path / "missing")) is None
    (tmp_path / "index3" / "size").write_text("garbage\n")
    assert jax_engine.last_level_cache_bytes(str(tmp_path)) is None
    sizes = [jax_engine.cpu_chunk_bytes(c) for c in (None, 2**20, 8 * 2**20, 32 * 2**20, 2**30)]
    assert sizes == [2 * 2**20, 2**20, 2 * 2**20, 8 * 2**20, 8 * 2**20]
    # with two workers each sub-chunk gets half: a quarter of the cache shared by the two in flight
    sizes = [jax_engine.cpu_chunk_bytes(c, workers=2) for c in (None, 2**20, 8 * 2**20, 32 * 2**20, 2**30)]
    assert sizes == [2**20, 2**20, 2**20, 4 * 2**20, 8 * 2**20]


def test_cpu_call_layout_fits_its_budget():
    """A call's sub-chunk is cache-sized, a call covers many of them, and a tight budget shrinks the call."""
    from margintheory.backends import jax_engine

    cpu = Backend("jax", "cpu")
    p, k, m = 47, 3, 736
    nb = jax_engine.chunk_prefixes(cpu, p, k, m, 2**40)
    assert nb * 8 * p * m <= jax_engine.CPU_CHUNK_BYTES < (nb + 1) * 8 * p * m
    nsub = jax_engine.sub_chunks_per_call(cpu, p, k, m, nb, 2**40)
    assert 1 < nsub and nsub * nb * 8 * p * m <= jax_engine.CPU_CALL_BYTES
    tight = jax_engine.call_bytes(p, m, nb, 2)
    small = jax_engine.sub_chunks_per_call(cpu, p, k, m, nb, tight)
    assert 1 <= small <= 2 and jax_engine.call_bytes(p, m, nb, small) <= tight
    est = estimate_cost(p, k, m, backend=cpu)
    assert est.chunk_bytes == jax_engine.call_bytes(p, m, est.prefixes_per_chunk, nsub)
    # two workers: sub-chunks of half the size, two calls in flight, and the estimate counts both
    nb2 = jax_engine.chunk_prefixes(cpu, p, k, m, 2**40, workers=2)
    assert nb2 * 8 * p * m <= jax_engine.cpu_chunk_bytes(jax_engine.LAST_LEVEL_CACHE, 2) < (nb2 + 1) * 8 * p * m
    nsub2 = jax_engine.sub_chunks_per_call(cpu, p, k, m, nb2, 2**40, workers=2)
    est2 = estimate_cost(p, k, m, workers=2, backend=cpu)
    assert est2.chunk_bytes == jax_engine.call_bytes(p, m, est2.prefixes_per_chunk, nsub2, 2)
    assert jax_engine.call_bytes(p, m, nb2, nsub2, 2) == 2 * jax_engine.call_bytes(p, m, nb2, nsub2)
    budget = jax_engine.call_bytes(p, m, nb2, 2, 2)  # a tight budget is shared by the two workers' calls
    assert jax_engine.call_bytes(p, m, nb2, jax_engine.sub_chunks_per_call(cpu, p, k, m, nb2, budget, 2), 2) <= budget


def test_a_wrong_kernel_is_caught():
    """The comparison above can fail: a pass with one logit off by 1e-9 (far above the bound) is rejected."""
    net = random_net(0)
    ref, other = exhaustive_margin(net), exhaustive_margin(net, backend="jax")
    other.margins[17] += 1e-9
    with pytest.raises(AssertionError):
        assert_same_pass(ref, other)


def test_jax_margins_obey_the_error_bound_against_exact_arithmetic():
    p, k, m = 5, 3, 7
    net = PolyNetwork(random_net(7).U * 3, random_net(7).W)
    res = exhaustive_margin(net, backend="jax")
    bound = logit_error_bound(net)
    U = [[[Fraction(float(v)) for v in row] for row in neuron] for neuron in net.U]
    W = [[Fraction(float(v)) for v in row] for row in net.W]
    worst = 0.0
    for r, a in enumerate(input_grid(p, k)):
        logit = [sum(sum(U[i][j][a[j]] for j in range(k)) ** k * W[i][c] for i in range(m)) for c in range(p)]
        y = int(sum(a)) % p
        exact = logit[y] - max(v for c, v in enumerate(logit) if c != y)
        worst = max(worst, abs(float(exact - Fraction(float(res.margins[r])))))
    assert worst <= 2 * bound and res.logit_error_bound == bound
    assert 0 < bound < 1e-9


def test_backend_choice_and_its_errors():
    assert select.current() == Backend("numpy", "cpu")
    assert choose(None, "gpu") == Backend("jax", "gpu") and choose("jax") == Backend("jax", "cpu")
    with pytest.raises(InputError, match="CPU only"):
        Backend("numpy", "gpu")
    with pytest.raises(InputError, match="unknown backend"):
        Backend("torch")
    with using("jax"):
        assert select.current() == Backend("jax", "cpu")
        assert exhaustive_margin(random_net(0)).backend == "jax (cpu)"  # the layers between never name it
        with using(None):
            assert select.current() == Backend("jax", "cpu")
    assert select.current() == Backend("numpy", "cpu")
    assert not jax.config.jax_enable_x64 and jax.numpy.zeros(1).dtype == np.float32  # float64 did not leak out
    if HAVE_GPU:  # pragma: no cover - CI has no GPU
        with using(Backend("jax", "gpu")):
            assert select.current().device == "gpu"
    else:
        with pytest.raises(InputError, match="no GPU is visible to jax"):
            with using(Backend("jax", "gpu")):
                pass


def test_cli_backend_flags(capsys, tmp_path, monkeypatch):
    from margintheory.cli import main

    monkeypatch.chdir(tmp_path)
    # the construction's lower end is compact (no engine runs) unless --exhaustive; a backend asked for is then
    # reported as unused rather than silently ignored
    assert main(["verify", "--p", "5", "--k", "3", "--no-certificate", "--json", "--backend", "jax"]) == 0
    compact = json.loads(capsys.readouterr().out)
    assert compact["details"]["lower_method"] == "fourier"
    assert compact["details"]["engine_backend"].startswith("none")
    assert any("--backend jax not used" in n for n in compact["notes"])
    assert main(["verify", "--p", "5", "--k", "3", "--no-certificate", "--json", "--exhaustive"]) == 0
    numpy_run = json.loads(capsys.readouterr().out)
    assert main(["verify", "--p", "5", "--k", "3", "--no-certificate", "--json", "--backend", "jax",
                 "--exhaustive"]) == 0
    jax_run = json.loads(capsys.readouterr().out)
    assert numpy_run["details"]["engine_backend"] == "numpy (cpu)"
    assert jax_run["details"]["engine_backend"] == "jax (cpu)"
    assert jax_run["verdict"] == numpy_run["verdict"] == "verified"
    assert jax_run["normalized_margin"] == pytest.approx(numpy_run["normalized_margin"], rel=1e-12)
    build_construction(5, 3).save(tmp_path / "c.npz")  # the same kernel shape: compiled once for both commands
    assert main(["analyze", str(tmp_path / "c.npz"), "--p", "5", "--k", "3", "--backend", "jax", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["details"]["engine_backend"].startswith("none")
    assert main(["analyze", str(tmp_path / "c.npz"), "--p", "5", "--k", "3", "--backend", "jax", "--json",
                 "--exhaustive"]) == 0
    assert json.loads(capsys.readouterr().out)["details"]["engine_backend"] == "jax (cpu)"
    refused = [["verify", "--p", "5", "--k", "3", "--backend", "numpy", "--device", "gpu"],
               ["verify", "--task", "parity", "--n", "5", "--k", "3", "--backend", "jax"],
               ["verify", "--p", "5", "--k", "2", "--exact", "--backend", "jax"]]
    if not HAVE_GPU:
        refused += [["verify", "--p", "5", "--k", "3", "--device", "gpu"],
                    ["train", "--p", "5", "--k", "2", "--width", "4", "--device", "gpu", "--out", "unused"],
                    ["analyze", "unused.npz", "--p", "5", "--k", "2", "--device", "gpu"]]
    for argv in refused:
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        assert captured.err.count("\n") == 1 and "Traceback" not in captured.err, argv
    assert not os.path.exists("unused")


def _run_python(code: str, **env: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def fresh_process() -> dict:
    """One new interpreter with two CPU devices forced by XLA: first a numpy-backend verify (command line) and a
    training run, noting which of jax / optax they imported; then a pass on the jax backend over both devices."""
    out = _run_python("""
        import json, sys
        import numpy as np
        from margintheory.cli import main
        assert main(["verify", "--p", "5", "--k", "2", "--no-certificate"]) == 0
        from margintheory.training.trainer import TrainConfig, train
        train(TrainConfig(p=5, k=2, width=4, steps=3))
        imported = sorted(name for name in ("jax", "jaxlib", "optax") if name in sys.modules)
        from margintheory.engines.margins import exhaustive_margin
        from margintheory.core.network import PolyNetwork
        rng = np.random.default_rng(3)
        net = PolyNetwork(rng.normal(size=(7, 3, 5)), rng.normal(size=(7, 5)))
        ref = exhaustive_margin(net)
        res = exhaustive_margin(net, backend="jax", chunk_prefixes=3)
        from margintheory.backends import jax_engine
        from margintheory.backends.select import Backend
        calls = jax_engine.margins_over_prefixes(Backend("jax", "cpu"), net.U, net.W, None, max_bytes=2**30, nb=3,
                                                 nsub=2)
        print(json.dumps({"imported": imported, "backend": res.backend, "nb": res.chunk_prefixes,
                          "err": float(np.abs(res.margins - ref.margins).max()), "bound": ref.logit_error_bound,
                          "sums": float(np.abs(res.label_logit_sums - ref.label_logit_sums).max()),
                          "calls": [calls.chunk_prefixes, calls.sub_chunks, calls.devices],
                          "calls err": float(np.abs(calls.margins - ref.margins).max()),
                          "calls sums": float(np.abs(calls.label_sums - ref.label_logit_sums).max())}))
    """, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    return json.loads(out.strip().splitlines()[-1])


def test_numpy_backend_never_imports_jax(fresh_process):
    assert fresh_process["imported"] == []


def test_two_devices_shard_the_chunks(fresh_process):
    """Each chunk's prefixes are split over both devices (25 prefixes in chunks of 4: the last one padded); the
    margins are numpy's."""
    got = fresh_process
    assert got["backend"] == "jax (cpu, 2 devices)" and got["nb"] == 4  # 3 rounded up to a multiple of 2
    assert got["err"] <= 4 * got["bound"] and got["sums"] <= 125 * 4 * got["bound"]


def test_two_devices_shard_every_sub_chunk_of_a_call(fresh_process):
    """Calls of two sub-chunks of 4 prefixes (25 prefixes: 4 calls, the last padded), each sub-chunk split over
    both devices inside the scan; the margins and label sums are numpy's."""
    got = fresh_process
    assert got["calls"] == [4, 2, 2]
    assert got["calls err"] <= 4 * got["bound"] and got["calls sums"] <= 125 * 4 * got["bound"]


def test_construction_on_jax_reaches_gamma_star():
    from margintheory.core.theory import gamma_star

    res = exhaustive_margin(build_construction(5, 3).normalized(), backend="jax")
    assert abs(res.normalized_margin - gamma_star(5, 3)) <= res.normalized_tolerance
    assert res.max_wrong_spread <= 4 * res.logit_error_bound


def _device_check():
    """``benchmarks/device_check.py`` (not a package module: loaded from its file)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "device_check.py"
    spec = importlib.util.spec_from_file_location("device_check", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["device_check"] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_the_device_check_passes_on_the_cpu(tmp_path):
    """The GPU correctness script (run on a lent GPU machine, where CI cannot) is the same code on the CPU: all of
    its comparisons pass here, and its JSON lists them with their errors and tolerances."""
    out = tmp_path / "rows.json"
    assert _device_check().main(["--device", "cpu", "--quick", "--no-cli", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 58 and all(r["ok"] for r in rows)
    assert {r["check"].split(":")[0] for r in rows if "rejected" in r["check"]} == {
        "engine (5,3)", "engine (7,3)", "engine (5,4)"}


def test_the_device_check_rejects_a_wrong_kernel(monkeypatch):
    """A kernel whose margins are off by 1e-7 in one row (far above the a-priori bound) fails the device check."""
    from margintheory.backends import jax_engine

    real = jax_engine.margins_over_prefixes

    def off(*args, **kwargs):
        stats = real(*args, **kwargs)
        stats.margins[3] += 1e-7
        return stats

    monkeypatch.setattr(jax_engine, "margins_over_prefixes", off)
    rows = _device_check().engine_rows("cpu", quick=True)
    failed = [r.check for r in rows if not r.ok]
    assert failed and all("margins, spreads" in c for c in failed)


def test_the_backends_benchmark_runs_and_writes_its_rows(tmp_path):
    """``benchmarks/bench_backends.py`` at toy sizes (it measures nothing here; it must not rot between GPU
    sessions): one engine row per backend with its bare-GEMM baseline and agreement, a skipped row reported as such,
    per-step trainer times, the JSON written."""
    out = tmp_path / "bench.json"
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, str(root / "benchmarks" / "bench_backends.py"), "--engine", "5x3", "7x3",
                          "--cpu-max-points", "200", "--train", "5x2x4", "--steps", "3", "--repeats", "1",
                          "--json", str(out)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    doc = json.loads(out.read_text())
    ran = [r for r in doc["engine"] if "seconds" in r]
    assert {r["backend"] for r in ran} == {"numpy", "jax-cpu"} and all(r["case"] == "(5,3)" for r in ran)
    assert all(r["agree"] and r["gemm seconds"] > 0 and r["flops"] == 2 * 125 * r["m"] * 5 for r in ran)
    assert all(0 <= r["gamma* error"] <= r["tolerance"] < 1e-12 for r in ran)
    assert [r["skipped"] for r in doc["engine"] if "skipped" in r] == ["over --cpu-max-points 200"] * 2
    assert set(doc["train"]["per step"]) == {"numpy 1 thread", "numpy", "jax-cpu float64", "jax-cpu float32"}
    assert doc["train"]["loss rel. diff (float64, same steps as numpy)"]["jax-cpu float64"] < 1e-6


class _FakeGpu:
    """A stand-in for a JAX GPU device: only what the sizing functions read (its allocator's limit)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def memory_stats(self) -> dict:
        return {"bytes_limit": self.limit}


def test_gpu_sizing_follows_the_devices_memory(monkeypatch):
    """The GPU branches of the chunk and block sizing (never reached on CI's CPU) with fake devices: the engine's
    sub-chunk is an eighth of one GPU's allocator limit, at most 1 GiB per GPU, a multiple of the GPU count, one
    per call; the trainer's block a quarter of the limit; a missing limit falls back to the documented defaults."""
    from margintheory.backends import jax_engine, jax_training

    gpu = Backend("jax", "gpu")
    p, k, m = 101, 4, 6400
    per = jax_engine.bytes_per_prefix(p, m)
    for count, limit in ((1, 60 * 2**30), (1, 4 * 2**30), (2, 60 * 2**30)):
        monkeypatch.setattr(jax_engine, "devices", lambda backend, c=count, lim=limit: [_FakeGpu(lim)] * c)
        nb = jax_engine.chunk_prefixes(gpu, p, k, m, math.inf)
        share = min(jax_engine.GPU_CHUNK_BYTES, jax_engine.GPU_MEMORY_FRACTION * limit) * count
        assert nb % count == 0 and 0.9 * share <= nb * per <= share * 1.02  # as large as the share allows
        assert jax_engine.sub_chunks_per_call(gpu, p, k, m, nb, math.inf) == 1
    monkeypatch.setattr(jax_engine, "devices", lambda backend: [_FakeGpu(60 * 2**30)])
    assert jax_engine.chunk_prefixes(gpu, p, k, m, 64 * per) <= 64  # a caller's byte bound still holds
    monkeypatch.setattr(jax_training, "devices", lambda backend: [_FakeGpu(40 * 2**30)])
    rows, blocks = jax_training._blocks(912673, 1536, 97, gpu, 4)
    per_row = 4 * (6 * 1536 + 4 * 97) + 16
    assert rows * blocks >= 912673 and rows * per_row <= jax_training.GPU_MEMORY_FRACTION * 40 * 2**30
    assert blocks == math.ceil(912673 * per_row / (jax_training.GPU_MEMORY_FRACTION * 40 * 2**30))

    class NoStats(_FakeGpu):
        def memory_stats(self) -> None:
            return None

    monkeypatch.setattr(jax_training, "devices", lambda backend: [NoStats(0)])
    rows, _ = jax_training._blocks(912673, 1536, 97, gpu, 4)
    assert rows * per_row <= jax_training.GPU_MEMORY_FRACTION * 4 * 2**30


@pytest.mark.parametrize("platforms", ["bogus", "cuda"])
def test_a_jax_platforms_setting_jax_cannot_start_is_one_line(platforms, tmp_path):
    """JAX_PLATFORMS naming a platform that is not installed made jax raise (RuntimeError, or AssertionError for
    cuda) past the device check: a traceback and exit 1 (read as 'refuted').  A fresh process: jax starts its
    platforms once per process."""
    env = dict(os.environ, JAX_PLATFORMS=platforms)
    proc = subprocess.run([sys.executable, "-m", "margintheory.cli", "train", "--p", "3", "--k", "2", "--width", "2",
                           "--steps", "1", "--backend", "jax", "--no-figures", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and f"JAX_PLATFORMS='{platforms}'" in proc.stderr
    assert not (tmp_path / "run").exists()
