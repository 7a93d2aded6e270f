"""Argument checks: one consistent rule for flags that do not apply, values checked by range, one line each."""

from __future__ import annotations

import json

import pytest

from margintheory.cli import main


def one_line_error(capsys, argv, *words):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(("argv", "words"), [
    (["train", "--p", "5", "--k", "2", "--width", "4", "--seed", "-1"], ("--seed", "non-negative")),
    (["solve", "--p", "5", "--k", "2", "--seed", "-1"], ("--seed", "non-negative")),
    (["verify", "--p", "5", "--k", "2", "--max-seconds", "-5"], ("--max-seconds", "positive")),
    (["verify", "--p", "seven", "--k", "2"], ("--p", "invalid int")),
    (["verify", "--network", "x.npz", "--fourier-tol", "-1"], ("--fourier-tol", "(0, 1)")),
    (["verify", "--network", "x.npz", "--min-share", "2"], ("--min-share", "[0, 1)")),
    (["verify", "--p", "5", "--k", "2", "--min-share", "0.1"], ("--min-share", "--network")),
    (["verify", "--p", "5", "--k", "2", "--names", "U=a,W=b"], ("--names", "--network")),  # was ignored, exit 0
    # an unknown option's value was read as the optional TASK ("argument TASK: invalid choice: 'float32'")
    (["verify", "--p", "5", "--k", "2", "--dtype", "float32"], ("unrecognized arguments: --dtype float32",)),
    (["verify", "nonsense"], ("argument TASK: invalid choice: 'nonsense'",)),
    (["verify", "--task", "group", "--group", "S3", "--names", "U=U,W=W"], ("--names", "--network")),
    (["train", "--p", "5", "--k", "2", "--width", "4", "--schedule", "doubling"], ("doubling", "milestones")),
    (["verify", "--task", "group", "--group", "S3", "--construction", "F6"], ("--construction", "group")),
    (["verify", "--task", "group", "--group", "S3", "--nu", "1"], ("--nu", "group")),
    (["verify", "--task", "group", "--group", "S3", "--p", "5"], ("--p", "--group")),
    (["verify", "--task", "parity", "--n", "5", "--k", "3", "--fourier-tol", "0.1"], ("--fourier-tol", "parity")),
    (["verify", "--task", "cogo", "--construction", "F6", "--d", "7", "--xi", "1"], ("--xi", "F4")),
    (["verify", "--task", "cogo", "--construction", "F6", "--d", "7", "--rtol", "0.1"], ("--rtol", "cogo")),
    (["verify", "--p", "5", "--k", "2", "--d", "3"], ("--d", "modular-addition")),
    (["train", "--p", "5", "--k", "2", "--width", "4", "--weight-decay", "0.1"], ("--weight-decay", "adamw")),
    (["derive", "cosine-sum", "--p", "4"], ("--p", "derive cosine-sum")),  # was ignored: printed for odd p, exit 0
    (["derive", "cosine-sum", "--k", "3"], ("--k", "derive cosine-sum")),
    (["derive", "identity", "--k", "3", "--p", "5"], ("--p", "derive identity")),
    (["train", "--p", "5", "--k", "2", "--width", "4", "--milestones", "5"], ("--milestones", "doubling")),
    (["train", "--p", "5", "--k", "2", "--width", "4", "--init-scale", "inf"], ("init scale", "finite")),
    (["train", "--p", "5", "--k", "2", "--width", "4", "--resume", "--overwrite"], ("--resume", "--overwrite")),
    (["solve", "--p", "5", "--k", "2", "--time-limit", "-5"], ("--time-limit", "positive")),
    (["nonsense"], ("invalid choice",)),
])
def test_bad_arguments_are_one_line(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, argv, *words)


def test_out_of_memory_advice_matches_the_command(capsys, monkeypatch):
    """"lower --max-memory" only from commands that have it, and only as "the machine has less than the budget"."""
    import margintheory.commands.derive as derive
    import margintheory.verification as tasks

    def boom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(derive, "build_derivation", boom)
    line = one_line_error(capsys, ["derive", "cosine-sum"], "out of memory")
    assert "--max-memory" not in line
    monkeypatch.setattr(tasks, "verify", boom)
    import margintheory.commands.verify as verify_cmd

    monkeypatch.setattr(verify_cmd.tasks, "verify", boom)
    line = one_line_error(capsys, ["verify", "--p", "5", "--k", "2"], "out of memory", "less free memory")


def test_even_p_is_not_applicable_in_solve_as_in_verify(capsys):
    assert main(["solve", "--p", "4", "--k", "2", "--single-neuron", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "not-applicable"
    main(["verify", "--p", "4", "--k", "2", "--json"])  # its exit code follows the same rule (computed checks)
    assert json.loads(capsys.readouterr().out)["verdict"] == "not-applicable"
