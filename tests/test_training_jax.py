"""The trainer on the JAX backend: the numpy trainer's trajectory to 1e-6 after 200 steps (float64), bit-exact
resume, float32 training with float64 records, optax schedules equal to the numpy schedule, the CLI flags.

All runs share two step specifications (float64 and float32) so that each step function is compiled once."""

from __future__ import annotations

import json

import numpy as np
import pytest

from margintheory.engines.margins import exhaustive_margin
from margintheory.errors import InputError
from margintheory.training.checkpoint import load_checkpoint
from margintheory.training.optim import Schedule
from margintheory.training.trainer import TrainConfig, train

BASE = dict(p=5, k=2, width=16, steps=200, log_every=50, checkpoint_every=1000)
RUNS = {
    "adam": dict(),  # the papers' defaults: Adam (0.9, 0.98), warm-up 10, cosine, lambda ||theta||_{2,k+1}
    "adamw": dict(optimizer="adamw", weight_decay=1e-2, regularizer="none", batch_size=16, train_fraction=0.8),
    "gd": dict(optimizer="gd", lr=0.05, schedule="doubling", milestones=[60, 120], regularizer="norm-power"),
}
_DONE: dict[tuple[str, str], object] = {}


@pytest.fixture(autouse=True, scope="module")
def small_blocks():
    """Blocks of 13 rows for float64 (the 25 points in two blocks, the second padded: the accumulating loop), one
    block for a 16-point mini-batch and for float32 (the loop-free path)."""
    from margintheory.backends import jax_training

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jax_training, "CPU_BLOCK_BYTES", 20 * 944)
        yield


def test_block_layout():
    from margintheory.backends.jax_training import _blocks
    from margintheory.backends.select import Backend

    cpu = Backend("jax", "cpu")
    assert _blocks(25, 16, 5, cpu, 8) == (13, 2) and _blocks(16, 16, 5, cpu, 8) == (16, 1)
    assert _blocks(25, 16, 5, cpu, 4) == (25, 1)


def run(name: str, backend: str, **extra):
    """Each (configuration, backend) trained once per session."""
    key = (name, backend + repr(sorted(extra.items())))
    if key not in _DONE:
        _DONE[key] = train(TrainConfig(**BASE, **RUNS[name], backend=backend, **extra))
    return _DONE[key]


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300))


@pytest.mark.parametrize("name", list(RUNS))
def test_float64_jax_run_matches_the_numpy_trainer_after_200_steps(name):
    ref, got = run(name, "numpy"), run(name, "jax")
    assert rel(ref.network.U, got.network.U) <= 1e-6 and rel(ref.network.W, got.network.W) <= 1e-6
    assert [r["step"] for r in got.history] == [r["step"] for r in ref.history] == [0, 50, 100, 150, 200]
    for a, b in zip(ref.history, got.history, strict=True):
        for field in ("lr", "loss", "data_loss", "norm", "normalized_margin", "mean_max_power"):
            assert b[field] == pytest.approx(a[field], rel=1e-6), (a["step"], field)
        assert (a["train_acc"], a["frequencies_covered"]) == (b["train_acc"], b["frequencies_covered"])
    assert got.history[-1]["normalized_margin"] != ref.history[0]["normalized_margin"]  # it did train


def test_a_different_trajectory_is_caught():
    """The 1e-6 comparison can fail: a numpy run whose learning rate differs by 1e-4 (relative) is rejected."""
    other = train(TrainConfig(**BASE, lr=5e-3 * (1 + 1e-4)))
    assert rel(run("adam", "numpy").network.U, other.network.U) > 1e-6


def test_jax_resume_is_bit_exact(tmp_path):
    cfg = TrainConfig(**BASE, **RUNS["adamw"], backend="jax")
    whole = run("adamw", "jax")
    part = train(cfg, checkpoint=tmp_path / "ck.npz", stop_after=73)
    assert not part.finished and load_checkpoint(tmp_path / "ck.npz").step == 73
    rest = train(cfg, checkpoint=tmp_path / "ck.npz", resume=True)
    np.testing.assert_array_equal(rest.network.U, whole.network.U)
    np.testing.assert_array_equal(rest.network.W, whole.network.W)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in rest.history]
    np.testing.assert_equal(strip, [{k: v for k, v in r.items() if k != "seconds"} for r in whole.history])
    numpy_cfg = TrainConfig(**BASE, **RUNS["adamw"])
    with pytest.raises(InputError, match="backend: checkpoint 'jax' vs now 'numpy'"):
        train(numpy_cfg, checkpoint=tmp_path / "ck.npz", resume=True)


@pytest.mark.parametrize("stop", [50, 73])
def test_a_run_whose_steps_measure_the_rows_resumes_bit_exact(tmp_path, stop):
    """Float64 full batch (the "adam" run): a step taken after a history row was computed ahead by the row's
    evaluation.  A run stopped at a row (50: the step after it is then computed afresh on resuming) or between rows
    (73) and resumed repeats the uninterrupted run bit for bit."""
    cfg = TrainConfig(**BASE, **RUNS["adam"], backend="jax")
    assert cfg.step_spec().evaluate_in_step
    whole = run("adam", "jax")
    train(cfg, checkpoint=tmp_path / "ck.npz", stop_after=stop)
    rest = train(cfg, checkpoint=tmp_path / "ck.npz", resume=True)
    np.testing.assert_array_equal(rest.network.U, whole.network.U)
    np.testing.assert_array_equal(rest.network.W, whole.network.W)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in rest.history]
    np.testing.assert_equal(strip, [{k: v for k, v in r.items() if k != "seconds"} for r in whole.history])


def test_measuring_steps_with_a_test_split_match_the_numpy_trainer():
    """A history row every step with a test split: each step runs over every point (the test points weighted 0 in
    the loss) and its forward pass gives the row: the loss, both accuracies and the margin equal the numpy
    trainer's, which evaluates separately (a row measured after the update instead of before would be a step off)."""
    config = dict(BASE, steps=40, log_every=1, train_fraction=0.6)
    ref, got = (train(TrainConfig(**config, backend=b)) for b in ("numpy", "jax"))
    assert TrainConfig(**config, backend="jax").step_spec().evaluate_in_step
    assert len(got.history) == len(ref.history) == 41
    for a, b in zip(ref.history, got.history, strict=True):
        for field in ("loss", "data_loss", "normalized_margin"):
            assert b[field] == pytest.approx(a[field], rel=1e-6), (a["step"], field)
        assert (a["train_acc"], a["test_acc"]) == (b["train_acc"], b["test_acc"]), a["step"]
    assert got.history[-1]["test_acc"] != got.history[0]["test_acc"] or got.history[-1]["loss"] < got.history[0]["loss"]


@pytest.mark.parametrize("change,measures", [
    (dict(), True),  # float64, full batch, no test points
    (dict(dtype="float32", backend="jax"), False),  # the row must be float64
    (dict(batch_size=16), False),  # a mini-batch step does not see every point
    (dict(train_fraction=0.8), False),  # a row every 50 steps: the other steps would pay for the test points
    (dict(train_fraction=0.8, log_every=1), True),
    (dict(batch_size=25), True),  # a batch of every training point is the full batch
])
def test_which_steps_measure_the_history_row(change, measures):
    assert TrainConfig(**{**BASE, **change}).step_spec().evaluate_in_step is measures


@pytest.mark.parametrize("change", [dict(log_every=2), dict(log_every=1, train_fraction=0.6)])
def test_a_measuring_step_gives_the_separate_evaluation_and_is_not_computed_twice(change):
    """The measures a step returns are those of the parameters before its update (the separate float64 evaluation
    of them, to rounding), and the step that follows a row is the one the row computed: one step call per update
    plus one for the final row, and no separate evaluation."""
    import jax

    from margintheory.backends import jax_training
    from margintheory.training.trainer import _Run, fresh_state, resolve

    cfg, task = resolve(TrainConfig(**{**BASE, "steps": 6, **change}, backend="jax"), None)
    stepper = _Run(cfg, task, fresh_state(cfg, task)).stepper
    assert isinstance(stepper, jax_training.JaxStepper) and stepper.spec.evaluate_in_step
    separate = jax_training._evaluate_function(stepper.spec.network)
    calls = {"step": 0, "evaluate": 0}
    real_step = stepper._step

    def counted_step(*args):
        calls["step"] += 1
        return real_step(*args)

    def no_evaluate(*args):
        calls["evaluate"] += 1
        return separate(*args)

    stepper._step, stepper._evaluate = counted_step, no_evaluate
    for t in range(6):
        if t % 2 == 0:
            params = stepper.params
            ev = stepper.evaluate()
            with jax.enable_x64(True):
                loss, right_train, right_test, h = (float(v) for v in separate(params, *stepper.all_points))
            assert ev.data_loss == pytest.approx(loss / stepper.n_train, rel=1e-12)
            assert ev.h == pytest.approx(h, rel=1e-12) and ev.train_acc == right_train / stepper.n_train
            if stepper.n_test:
                assert ev.test_acc == right_test / stepper.n_test
        stepper.step(None, 0.0)
    stepper.evaluate()
    assert calls == {"step": 7, "evaluate": 0}


def test_float32_training_records_float64_margins(tmp_path):
    res = train(TrainConfig(**BASE, backend="jax", dtype="float32"), checkpoint=tmp_path / "ck.npz")
    state = load_checkpoint(tmp_path / "ck.npz")
    assert state.U.dtype == np.float32 and all(v.dtype in (np.float32, np.int32) for v in state.moments.values())
    last = res.history[-1]
    # the recorded margin is the float64 engine's margin of the (float32) weights
    assert last["normalized_margin"] == pytest.approx(exhaustive_margin(res.network).normalized_margin, rel=1e-12)
    f64 = run("adam", "jax").history[-1]
    assert last["normalized_margin"] == pytest.approx(f64["normalized_margin"], rel=1e-3)
    assert last["normalized_margin"] != f64["normalized_margin"]  # float32 steps really are float32
    with pytest.raises(InputError, match="float32 training needs the jax backend"):
        TrainConfig(**BASE, dtype="float32")


@pytest.mark.parametrize("kind,warmup,milestones", [
    ("constant", 0, ()), ("cosine", 10, ()), ("cosine", 0, ()), ("doubling", 5, (3, 20, 20, 40)),
])
def test_optax_schedules_equal_the_numpy_schedule(kind, warmup, milestones):
    import jax
    import jax.numpy as jnp

    from margintheory.backends.jax_training import learning_rate_schedule
    from margintheory.backends.training_step import NetworkSpec, TrainSpec

    spec = TrainSpec(NetworkSpec("sum", 2, 5, 5), 4, 0.0, "none", "adam", (0.9, 0.98), 0.0, 3e-3, 60, kind, warmup,
                     0.1, milestones)
    ref = Schedule(3e-3, 60, kind, warmup, 0.1, milestones)
    steps = np.arange(1, 71)
    with jax.enable_x64(True):
        got = np.asarray(jax.jit(learning_rate_schedule(spec))(jnp.asarray(steps)))
    np.testing.assert_allclose(got, [ref(int(s)) for s in steps], rtol=1e-14, atol=0)


def test_cli_trains_on_jax(tmp_path, capsys):
    from margintheory.cli import main

    out = tmp_path / "run"
    argv = ["train", "--p", "5", "--k", "2", "--width", "16", "--steps", "200", "--log-every", "50",
            "--checkpoint-every", "1000", "--backend", "jax", "--dtype", "float32", "--out", str(out), "--no-figures",
            "--no-progress"]
    assert main(argv) == 0
    assert "jax float32 on the cpu" in capsys.readouterr().out
    doc = json.loads((out / "history.json").read_text())
    assert doc["config"]["backend"] == "jax" and doc["config"]["dtype"] == "float32"
    assert doc["history"][-1]["normalized_margin"] == run("adam", "jax", dtype="float32").history[-1][
        "normalized_margin"]


@pytest.mark.parametrize("kind", ["norm", "norm-power", "l2", "none"])
def test_jax_regularizers_and_cross_entropy_equal_the_numpy_reference(kind):
    import jax

    from margintheory.backends.jax_training import cross_entropy_terms, regularizer
    from margintheory.training.metrics import margin_from_logits
    from margintheory.training.objective import cross_entropy_sum, regularizer_value_and_grad

    rng = np.random.default_rng(5)
    U, W = rng.normal(size=(6, 3, 5)), rng.normal(size=(6, 5))
    U[2] = 0.0  # a neuron at zero: the gradient there is finite and zero
    W[2] = 0.0
    value, gU, gW = regularizer_value_and_grad(U, W, kind)
    with jax.enable_x64(True):
        L_hom = 4  # the homogeneity k + 1
        got, grad = jax.jit(jax.value_and_grad(regularizer), static_argnums=(1, 2))({"U": U, "W": W}, kind, L_hom)
        L = rng.normal(size=(40, 5)) * 30  # large logits: some rows misclassified, some by far
        y = rng.integers(0, 5, size=40)
        per_row, margin = (np.asarray(v) for v in jax.jit(cross_entropy_terms)(L, y))  # host arrays from here on
    assert float(got) == pytest.approx(value, rel=1e-13, abs=1e-300)
    np.testing.assert_allclose(np.asarray(grad["U"]), gU, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(grad["W"]), gW, rtol=1e-12, atol=1e-15)
    total, _ = cross_entropy_sum(L.copy(), y)
    assert float(np.sum(per_row)) == pytest.approx(total, rel=1e-13)
    np.testing.assert_array_equal(np.asarray(margin), margin_from_logits(L, y))



def test_one_hot_embedding_gradient_trains_as_the_scatter_add_does(tmp_path, monkeypatch):
    """The GPUs' way of forming the embeddings' gradient (one-hot products, a fixed summation order), run on the CPU:
    the same 200-step trajectory as the numpy trainer (1e-6), a different computation from the scatter-add path
    (not bit-identical), and a stopped run resumed bit for bit."""
    from margintheory.backends import jax_training

    ref, scatter = run("adamw", "numpy"), run("adamw", "jax")  # (before the switch: the scatter-add's run)
    monkeypatch.setitem(jax_training.ONE_HOT_EMBEDDING_GRADIENT, "cpu", True)
    cfg = TrainConfig(**BASE, **RUNS["adamw"], backend="jax")
    got = train(cfg)
    assert rel(ref.network.U, got.network.U) <= 1e-6 and rel(ref.network.W, got.network.W) <= 1e-6
    assert not np.array_equal(got.network.U, scatter.network.U)
    train(cfg, checkpoint=tmp_path / "ck.npz", stop_after=73)
    rest = train(cfg, checkpoint=tmp_path / "ck.npz", resume=True)
    np.testing.assert_array_equal(rest.network.U, got.network.U)
    np.testing.assert_array_equal(rest.network.W, got.network.W)


def test_one_hot_embedding_rows_gradient_equals_the_gather_gradient():
    import jax
    import jax.numpy as jnp

    from margintheory.backends.jax_training import embedding_rows

    rng = np.random.default_rng(3)
    with jax.enable_x64(True):
        table = jnp.asarray(rng.normal(size=(7, 5)))
        index = jnp.asarray(rng.integers(0, 7, size=40))
        g = jnp.asarray(rng.normal(size=(40, 5)))

        def through(rows):
            return jax.grad(lambda t: jnp.sum(rows(t, index) * g))(table)

        want = np.asarray(through(lambda t, i: t[i]))
        got = np.asarray(through(embedding_rows))
        assert np.array_equal(np.asarray(embedding_rows(table, index)), np.asarray(table[index]))
    assert want.dtype == np.float64 and np.abs(want).max() > 1
    assert np.allclose(got, want, rtol=0, atol=1e-12)
