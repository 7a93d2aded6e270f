"""Static typing: mypy (strict Optional) on the package, and the bugs it found, pinned by behaviour."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from margintheory.core.theory import validate_pk
from margintheory.errors import InputError
from margintheory.solvers.width import greedy_prune
from margintheory.symbolic.fourier_reduction import validate_fourier_pk
from margintheory.training.figures import _num

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_clean(tmp_path):
    """``mypy`` with the ``[tool.mypy]`` configuration of pyproject.toml (strict Optional) reports nothing."""
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir",
         str(tmp_path / "mypy-cache"), "--no-error-summary", "--hide-error-context"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, f"mypy found errors:\n{proc.stdout}{proc.stderr}"


def test_greedy_prune_needs_a_target_or_a_width():
    # with neither, the loop compared the LP value with None (TypeError) as soon as two columns remained
    A = np.array([[1.0, 0.5, 0.2], [0.3, 1.0, 0.4]])
    with pytest.raises(InputError, match="target margin or a maximum width"):
        greedy_prune(A)
    cols, s, _ = greedy_prune(A, max_width=1)
    assert len(cols) == 1 and s.shape == (1,)


@pytest.mark.parametrize("p, k", [(7, 3), (sp.Integer(7), sp.Integer(3))])
def test_validate_pk_accepts_integers(p, k):
    assert validate_pk(p, k) == (int(p), int(k))
    assert all(type(v) is int for v in validate_pk(p, k))


@pytest.mark.parametrize("p, k", [(True, 3), (7.0, 3), ("7", 3), (7, 0), (2, 1), (sp.Rational(7, 2), 3)])
def test_validate_pk_rejects_non_integers_and_small_values(p, k):
    with pytest.raises(InputError):
        validate_pk(p, k)


def test_validate_fourier_pk_returns_ints():
    assert validate_fourier_pk(3, 2) == (3, 2)
    with pytest.raises(InputError):
        validate_fourier_pk(3, True)


def test_history_values_as_floats():
    assert math.isnan(_num(None))
    assert _num("inf") == math.inf and _num(np.float32(0.5)) == 0.5 and _num(3) == 3.0
    with pytest.raises(TypeError):
        _num([1.0])


def test_train_config_betas_must_be_a_pair():
    # a wrong number of betas used to escape as "not enough values to unpack" from the optimizer
    from margintheory.training.trainer import TrainConfig

    with pytest.raises(InputError, match="betas must be two numbers"):
        TrainConfig(p=5, k=2, width=4, betas=[0.9])
    assert TrainConfig(p=5, k=2, width=4, betas=[0.5, 0.75]).betas_pair() == (0.5, 0.75)


def test_validate_nk_returns_ints():
    from margintheory.core.theory import validate_nk

    assert validate_nk(np.int64(6), 3) == (6, 3) and type(validate_nk(np.int64(6), 3)[0]) is int
    with pytest.raises(InputError):
        validate_nk(6, True)
