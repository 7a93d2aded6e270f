"""The trainers of sparse parity, finite groups and CoGO, and the ReLU networks: analytic gradients against central
finite differences, the JAX backend against numpy, bit-exact resume, the library entry point's refusals, the task
adapters' records against independent computations, and ``train TASK`` / ``analyze TASK`` on the command line.

Small sizes only (the suite's budget): parity (5, 3), S3, Z_5, p = 5."""

from __future__ import annotations

import json

import numpy as np
import pytest

from margintheory.backends.training_step import NetworkSpec
from margintheory.core.problems import CoGO, GroupComposition, ModularAddition, SparseParity
from margintheory.errors import InputError
from margintheory.training.objective import Batch, objective_and_grad
from margintheory.training.trainer import TrainConfig, train

from .test_training_objective import finite_difference

# (problem, configuration): the papers' settings at small sizes
RUNS = {
    "parity": (SparseParity(5, 3), dict(width=8, optimizer="gd", lr=0.1, schedule="constant", warmup=0,
                                        regularizer="norm-power", lam=1e-3)),
    "group": (GroupComposition("S3"), dict(width=12, optimizer="gd", lr=0.05, schedule="doubling",
                                           milestones=[20, 40], warmup=0, regularizer="norm-power", lam=1e-4)),
    "cogo": (CoGO(5), dict(width=12, lr=0.01, betas=[0.9, 0.999], schedule="constant", warmup=0, regularizer="l2",
                           lam=5e-5, train_fraction=0.9)),
    "relu": (ModularAddition(5, 2), dict(width=10, activation="relu", regularizer="l2", lam=1e-4, batch_size=16,
                                         optimizer="sgd", lr=0.05, schedule="constant", warmup=0)),
}
_DONE: dict = {}


def run(name: str, backend: str = "numpy", **extra):
    key = (name, backend, tuple(sorted(extra.items())))
    if key not in _DONE:
        problem, opts = RUNS[name]
        _DONE[key] = train(problem, TrainConfig(**{"steps": 60, "log_every": 20, "checkpoint_every": 1000, **opts,
                                                    "backend": backend, **extra}))
    return _DONE[key]


SPECS = [
    NetworkSpec("linear", 4, 0, 2, "power", 3),
    NetworkSpec("linear", 4, 0, 2, "relu", 1),
    NetworkSpec("sum", 2, 4, 4, "relu", 1),
    NetworkSpec("sum", 2, 4, 4, "power", 2, "projected-mse", 1 / 8),
]


def points(spec: NetworkSpec, rng):
    if spec.family == "linear":
        X = 1.0 - 2.0 * ((np.arange(16)[:, None] >> np.arange(4)[None, :]) & 1)
        return X, (np.prod(X[:, :3], axis=1) < 0).astype(int)
    a = np.stack(np.meshgrid(np.arange(4), np.arange(4), indexing="ij"), -1).reshape(-1, 2)
    return a, rng.integers(0, 4, size=16)  # any labels: the gradient does not care which


@pytest.mark.parametrize("reg", ["norm", "norm-power", "l2"])
@pytest.mark.parametrize("spec", SPECS, ids=["parity-x3", "parity-relu", "sum-relu", "cogo-mse"])
def test_gradient_of_every_new_network_matches_finite_differences(spec, reg):
    rng = np.random.default_rng(7)
    inputs, labels = points(spec, rng)
    batch = Batch.from_inputs(inputs, spec.symbols, labels=labels)
    U, W = rng.normal(0, 0.6, spec.u_shape(3)), rng.normal(0, 0.6, spec.w_shape(3))
    val = objective_and_grad(U, W, batch, 0.3, reg, network=spec)
    total = lambda: objective_and_grad(U, W, batch, 0.3, reg, network=spec).total  # noqa: E731
    fd_U, fd_W = finite_difference(total, U), finite_difference(total, W)
    scale = max(1.0, float(np.abs(val.grad_U).max()), float(np.abs(val.grad_W).max()))
    assert np.abs(val.grad_U - fd_U).max() <= 1e-6 * scale
    assert np.abs(val.grad_W - fd_W).max() <= 1e-6 * scale
    # the data loss is the loss of the stated formula, computed independently
    if spec.family == "linear":
        Z = inputs @ U.T
        f = (np.maximum(Z, 0) if spec.activation == "relu" else Z**spec.degree) @ W
    else:
        Z = U[:, 0, inputs[:, 0]].T + U[:, 1, inputs[:, 1]].T
        f = (np.maximum(Z, 0) if spec.activation == "relu" else Z**2) @ W
    if spec.loss == "projected-mse":
        t = f * spec.output_scale - np.eye(4)[labels]
        expect = float(np.mean(np.sum((t - t.mean(1, keepdims=True)) ** 2, axis=1)))
    else:
        expect = float(np.mean(np.log(np.exp(f).sum(1)) - f[np.arange(16), labels]))
    assert val.data_loss == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize("name", ["parity", "cogo", "relu"])  # the group's network is modular addition's (k = 2)
def test_jax_float64_run_matches_numpy(name):
    pytest.importorskip("jax")
    ref, got = run(name), run(name, "jax")
    for a, b in ((ref.network.U, got.network.U), (ref.network.W, got.network.W)):
        assert np.max(np.abs(a - b)) <= 1e-9 * max(1.0, float(np.abs(a).max()))
    fields = [f for f in ref.fields if f not in ("step", "seconds")]
    for ra, rb in zip(ref.history, got.history, strict=True):
        for f in fields:
            assert rb[f] == pytest.approx(ra[f], rel=1e-7, abs=1e-12, nan_ok=True), (name, ra["step"], f)
    assert ref.history[-1]["loss"] < ref.history[0]["loss"]  # it trained


@pytest.mark.parametrize("name,backend", [("parity", "numpy"), ("group", "numpy"), ("cogo", "numpy"),
                                          ("relu", "numpy"), ("cogo", "jax")])
def test_resume_is_bit_exact(tmp_path, name, backend):
    if backend == "jax":
        pytest.importorskip("jax")
    problem, opts = RUNS[name]
    cfg = TrainConfig(**{"steps": 60, "log_every": 20, "checkpoint_every": 1000, **opts, "backend": backend})
    whole = run(name, backend)
    part = train(problem, cfg, checkpoint=tmp_path / "ck.npz", stop_after=31)
    assert not part.finished
    rest = train(problem, cfg, checkpoint=tmp_path / "ck.npz", resume=True)
    np.testing.assert_array_equal(rest.network.U, whole.network.U)
    np.testing.assert_array_equal(rest.network.W, whole.network.W)
    strip = lambda h: [{k: v for k, v in r.items() if k != "seconds"} for r in h]  # noqa: E731
    np.testing.assert_equal(strip(rest.history), strip(whole.history))
    # another problem of the same shapes is not this run
    if name == "parity":
        with pytest.raises(InputError, match="problem"):
            train(SparseParity(5, 2), cfg, checkpoint=tmp_path / "ck.npz", resume=True)


def test_records_equal_independent_computations():
    from margintheory.engines.margins import exhaustive_margin
    from margintheory.tasks.groups.margin import irrep_power_fractions
    from margintheory.tasks.parity.checks import margins

    par = run("parity")
    last = par.history[-1]
    assert last["normalized_margin"] == pytest.approx(float(margins(par.network.normalized()).min()), rel=1e-9)
    assert last["ratio"] == pytest.approx(last["normalized_margin"] / par.gamma_star, rel=1e-12)
    U = par.network.U
    assert last["weight_on_support"] == pytest.approx(float((U[:, :3] ** 2).sum() / (U**2).sum()), rel=1e-12)
    grp = run("group")
    G = GroupComposition("S3").G
    engine = exhaustive_margin(grp.network, labels=G.product_labels())
    assert grp.history[-1]["normalized_margin"] == pytest.approx(engine.normalized_margin, rel=1e-9)
    assert grp.gamma_star == pytest.approx(2 / (3 * np.sqrt(18) * (1 + 2**2.5)), rel=1e-9)  # Thm 7.9, S3 (+1 irrep)
    from margintheory.core.representations import basis_vectors, real_irreps
    from margintheory.tasks.groups.training import irrep_power

    irreps = real_irreps(G)
    B, owner = basis_vectors(irreps)
    dims = np.array([R.dim for R in irreps], float)
    together = irrep_power_fractions(grp.network, B, owner, dims)  # u, v, w pooled: the task module's measure
    ip = irrep_power(grp.network.U, grp.network.W, irreps)
    assert np.all(ip.fractions.sum(axis=2) == pytest.approx(1.0))
    assert np.argmax(together, 1).tolist() == ip.dominant.tolist() or np.allclose(together.max(1), 1, atol=1e-3)
    relu = run("relu")
    assert np.isnan(relu.history[-1]["ratio"]) and relu.gamma_star is None  # no max-margin claim for ReLU


def test_entry_point_refusals():
    with pytest.raises(InputError, match="sgd optimizer takes mini-batches"):
        TrainConfig(width=4, optimizer="sgd")
    with pytest.raises(InputError, match="carries its own parameters"):
        train(SparseParity(4, 2), TrainConfig(p=5, k=2, width=4, steps=1))
    with pytest.raises(InputError, match="differ from the problem"):
        train(ModularAddition(7, 2), TrainConfig(p=5, k=2, width=4, steps=1))
    with pytest.raises(InputError, match="without a construction"):
        train(CoGO(7, "F6"), TrainConfig(width=4, steps=1))
    with pytest.raises(InputError, match="exceeds the 36 training points"):
        train(GroupComposition("S3"), TrainConfig(width=4, steps=1, batch_size=37))
    with pytest.raises(InputError, match="activation"):
        TrainConfig(width=4, activation="tanh")
    with pytest.raises(InputError, match="output scale applies to a projected-MSE loss"):
        train(SparseParity(4, 2), TrainConfig(width=4, steps=1, output_scale=1.0))
    with pytest.raises(InputError, match="needs a TrainConfig"):
        train(SparseParity(4, 2))  # type: ignore[call-overload]
    # the 0.1 form and the problem form are the same run
    a = train(TrainConfig(p=5, k=2, width=4, steps=3))
    b = train(ModularAddition(5, 2), TrainConfig(width=4, steps=3))
    np.testing.assert_array_equal(a.network.U, b.network.U)


def test_cli_train_and_analyze_each_task(tmp_path, capsys):
    from margintheory.cli import main

    cases = {  # figures cost about a second each: CoGO's are drawn by the modular-addition code, tested there
        "parity": (["--n", "5", "--k", "3", "--optimizer", "gd", "--lr", "0.1", "--schedule", "constant"],
                   ["parity"], ("neurons", "margin")),
        "group": (["--group", "S3"], ["group", "--group", "S3"], ("irreps", "margin")),
        "cogo": (["--d", "5", "--regularizer", "l2", "--train-fraction", "0.9", "--no-figures"], ["cogo"], ()),
    }
    for task, (train_opts, analyze_opts, stems) in cases.items():
        out = tmp_path / task
        assert main(["train", task, *train_opts, "--width", "8", "--steps", "20", "--out", str(out),
                     "--no-progress"]) == 0
        for stem in stems:
            assert (out / f"{stem}.png").stat().st_size > 0 and (out / f"{stem}.pdf").stat().st_size > 0, stem
        doc = json.loads((out / "history.json").read_text())
        assert doc["config"]["task"] == task and len(doc["history"]) == 21
        header = (out / "history.csv").read_text().splitlines()[0].split(",")
        assert header == doc["fields"] and "seconds" == header[-1]
        capsys.readouterr()
        code = main(["analyze", analyze_opts[0], str(out / "network.npz"), *analyze_opts[1:], "--json"])
        result = json.loads(capsys.readouterr().out)
        assert result["task"] == task and code in (0, 1) and result["verdict"] in ("verified", "refuted")
    assert main(["train", "parity", "--p", "5", "--width", "4", "--out", str(tmp_path / "x")]) == 2
    assert "--p is not an option of train parity" in capsys.readouterr().err


def test_analysis_of_the_constructions_and_of_relu():
    from margintheory.tasks.groups.margin import mixture_network, theorem79_weights
    from margintheory.tasks.parity.checks import build_parity_construction
    from margintheory.training.analysis import analyze

    res = analyze(SparseParity(6, 3), build_parity_construction(6, 3))
    assert res.verdict == "verified" and res.fields["weighted_fraction_characterized"] == pytest.approx(1.0)
    problem = GroupComposition("S3")
    from margintheory.core.representations import real_irreps

    irreps = real_irreps(problem.G)
    net = mixture_network(irreps, theorem79_weights(np.array([R.dim for R in irreps])))
    res = analyze(problem, net)
    assert res.verdict == "verified" and res.fields["ratio_to_theorem79"] == pytest.approx(1.0, rel=1e-9)
    assert res.fields["irrep_mass_tv_to_construction"] == pytest.approx(0.0, abs=1e-9)
    relu = analyze(ModularAddition(5, 2), run("relu").network, activation="relu")
    assert relu.verdict == "not-applicable" and 0 < relu.fields["embedding_max_power_mean"] <= 1


def test_cogo_factorization_names_every_construction_and_rejects_others():
    import cmath

    from margintheory.tasks.cogo import constructions as cc
    from margintheory.tasks.cogo.algebra import single_frequency, to_network
    from margintheory.tasks.cogo.analysis import analyze_cogo_network
    from margintheory.tasks.cogo.factorization import frequency_solutions

    def named(z):
        return [(s.order, s.construction) for s in frequency_solutions(to_network(z)[0])]

    assert named(cc.build_f6(7, cmath.exp(0.7j), "corrected").z) == [(6, "z_nu * z_syn")] * 3
    assert named(cc.build_f4(7, cmath.exp(0.3j)).z) == [(4, "z_nu=i * z_xi")] * 3
    assert named(cc.build_f46(9, 2, 1.0, "corrected").z) == [(4, "z_nu=i * z_xi"), (6, "z_nu * z_syn"),
                                                              (4, "z_nu=i * z_xi"), (4, "z_nu=i * z_xi")]
    # Eq. 11 with alpha, beta != 1, times z_{nu=i}, at every frequency of Z_7
    w, al, be = np.exp(2j * np.pi / 3), np.exp(0.4j), np.exp(-1.3j)
    syn_ab = np.array([[1, w * al, np.conj(w) * be], [1, w * np.conj(al), np.conj(w) * np.conj(be)],
                       [1, w, np.conj(w)]])
    nu_i = np.array([[1, 1j], [1, -1j], [1, 1]])
    parts = [single_frequency(7, k, nu_i) * single_frequency(7, k, syn_ab) for k in (1, 2, 3)]
    z = parts[0] + parts[1] + parts[2]
    assert named(z) == [(6, "z_nu=i * z_syn,ab")] * 3
    # a product of two factors that are not the paper's: factorable, matched to nothing
    odd = single_frequency(7, 1, np.array([[1, 2.0], [1, 0.5], [1, 3.0]])) * single_frequency(7, 1, syn_ab)
    sol = frequency_solutions(to_network(odd)[0])[0]
    assert sol.factor_error < 1e-9 and sol.construction == "other" and sol.match_error > 0.1
    # not a product: six random nodes do not factorize
    rng = np.random.default_rng(0)
    noise = single_frequency(7, 1, rng.normal(size=(3, 6)) + 1j * rng.normal(size=(3, 6)))
    sol = frequency_solutions(to_network(noise)[0])[0]
    assert sol.order == 6 and sol.construction is None and sol.factor_error > 0.1
    # a network of Tian's code's scale (loss without 1/(2d)) is analysed as the Eq. 1 network
    net = to_network(cc.build_f6(7, 1.0, "corrected").z)[0]
    res = analyze_cogo_network(net.scaled(14 ** (-1 / 3)), output_scale=1.0)
    assert res.fields["loss"] < 1e-20 and res.fields["construction_shares"]["z_nu * z_syn"] == 1.0
    assert res.verdict == "verified"
