"""Extreme values end in one clear line, never a traceback: a width below any positive-margin network, training
hyper-parameters whose start overflows (refused before any update), learning rates that make the run diverge
("diverged at step N", exit 1, the last checkpoint kept), step counts beyond any time limit, and a changed learning
rate on resume (refused: the resumed run would not be the run the checkpoint belongs to)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.errors import DivergedError, InputError, SolverError
from margintheory.solvers.width import greedy_prune, prune_to_width
from margintheory.training.checkpoint import load_checkpoint
from margintheory.training.trainer import TrainConfig, train


def _cfg(**kw) -> TrainConfig:
    base = dict(p=5, k=2, width=4, steps=20, log_every=1, checkpoint_every=5)
    base.update(kw)
    return TrainConfig(**base)


def test_a_width_below_any_positive_margin_is_one_error():
    """``solve --max-width 1`` used to end in a traceback (an empty reduction) when pruning left no neuron: three
    neurons of the construction with a positive margin together, none of which can be dropped (no single neuron has
    a positive margin); and three without a positive margin at all."""
    net = build_construction(3, 2)
    with pytest.raises(SolverError, match="no network of width <= 1 with a positive margin was found: .* stops at 3"):
        prune_to_width(PolyNetwork(net.U[[0, 2, 5]], net.W[[0, 2, 5]]), 1)
    with pytest.raises(SolverError, match="the 3 neurons have no positive margin together"):
        prune_to_width(PolyNetwork(net.U[[0, 1, 6]], net.W[[0, 1, 6]]), 1)


def test_greedy_elimination_keeps_a_column_it_cannot_drop():
    """Each column alone has margin 0 (the LP's optimum is s = 0), both together 1/2: none can be dropped."""
    cols, s, _ = greedy_prune(np.eye(2), max_width=1)
    assert sorted(cols.tolist()) == [0, 1] and np.all(s > 0)


@pytest.mark.parametrize("kw,match", [(dict(init_scale=1e200), "objective at initialization is nan"),
                                      (dict(lam=1e308), "objective at initialization is inf")])
def test_a_start_that_overflows_is_refused_before_any_update(tmp_path, kw, match):
    ck = tmp_path / "ck.npz"
    with pytest.raises(InputError, match=match):
        train(_cfg(**kw), checkpoint=ck)
    assert not ck.exists()


def test_a_huge_learning_rate_diverges_at_a_named_step_with_exit_code_1(tmp_path):
    with pytest.raises(DivergedError, match=r"diverged at step 2 .*no checkpoint was written") as err:
        train(_cfg(lr=1e300), checkpoint=tmp_path / "ck.npz")
    assert err.value.exit_code == 1


def test_divergence_keeps_the_last_checkpoint(tmp_path):
    """Gradient descent whose learning rate doubles at every step after step 10 diverges; the checkpoint written
    last before that (every 5 steps) is left as it was, finite and readable."""
    ck = tmp_path / "ck.npz"
    cfg = _cfg(steps=300, optimizer="gd", lr=0.01, schedule="doubling", milestones=list(range(10, 300)), warmup=0)
    with pytest.raises(DivergedError) as err:
        train(cfg, checkpoint=ck)
    step = int(re.search(r"diverged at step (\d+)", str(err.value)).group(1))
    kept = (step - 1) // 5 * 5
    assert step > 10 and f"ck.npz (step {kept}) is kept" in str(err.value)
    state = load_checkpoint(ck)
    assert state.step == kept and np.all(np.isfinite(state.U)) and np.all(np.isfinite(state.W))


def test_the_command_reports_divergence_in_one_line_with_exit_1(tmp_path, capsys):
    from margintheory.cli import main

    def run(*extra: str) -> tuple[int, str]:
        code = main(["train", "--p", "5", "--k", "2", "--width", "4", "--no-figures", "--no-progress", "--overwrite",
                     "--out", str(tmp_path / "run"), *extra])
        return code, capsys.readouterr().err.strip()

    for extra, expected, words in ((["--steps", "5", "--lr", "1e300"], 1, "diverged at step 2"),
                                   (["--steps", "5", "--init-scale", "1e200"], 2, "objective at initialization"),
                                   (["--steps", str(10**27)], 2, "beyond any practical time limit")):
        code, err = run(*extra)
        assert code == expected and words in err and len(err.splitlines()) == 1 and "Traceback" not in err, err


def test_resuming_with_another_learning_rate_is_refused(tmp_path):
    ck = tmp_path / "ck.npz"
    train(_cfg(steps=5), checkpoint=ck)
    before = ck.read_bytes()
    with pytest.raises(InputError, match=r"different settings \(lr: checkpoint 0\.005 vs now 0\.01\)"):
        train(_cfg(steps=10, lr=0.01), checkpoint=ck, resume=True)
    assert ck.read_bytes() == before
    assert train(_cfg(steps=10), checkpoint=ck, resume=True).history[-1]["step"] == 10
