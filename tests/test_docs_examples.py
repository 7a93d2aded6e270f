"""The outputs that README.md and docs/*.md show are what the commands print now.

Every ```text block of those pages that starts with ``$ margintheory ...`` is run here as a user runs it (``bash
-c``, the ``margintheory`` command, a new empty directory, ``COLUMNS=100``; a sweep's ``--workers 2`` starts its
LocalCluster of worker processes) and compared with what it shows: the exit status, the text (verdicts, claims,
PASS/FAIL) and every number, integers and fractions exactly and floats to a relative 1e-9, except times, memory,
dates and absolute paths; ``...`` stands for left-out lines.  The rules, and the tool that rewrites the shown
outputs, are in tools/refresh_docs.py (``python tools/refresh_docs.py --check`` runs every block).

The blocks of SLOW (a training run, a paper-sized reproduction: 10-30 s of CPU each) run only
with ``MARGINTHEORY_DOCS_ALL=1`` (and in ``tools/refresh_docs.py --check``); the others run in the suite, one test
per block so that pytest-xdist spreads them.  The comparison itself is tested on made-up outputs first: each wrong
shown output it must reject.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("refresh_docs", ROOT / "tools" / "refresh_docs.py")
refresh = importlib.util.module_from_spec(_spec)
sys.modules["refresh_docs"] = refresh
_spec.loader.exec_module(refresh)

BLOCKS = refresh.collect_blocks()

# the blocks run only with MARGINTHEORY_DOCS_ALL=1, by the start of their first command, with the reason
SLOW = {
    "margintheory train --p 17 --k 2 --width 64": "3000 training steps, then analyze with figures (~15-35 s)",
    "margintheory reproduce morwani-figD.2": "50 000 GD steps at the paper's size, with figures (~10-60 s)",
}
# the blocks the pages mark <!-- not-executed: REASON --> (none at present): (page, first command)
NOT_EXECUTED: set[tuple[str, str]] = set()
RUN_ALL = os.environ.get("MARGINTHEORY_DOCS_ALL") == "1"


def _slow_reason(block) -> str | None:
    return next((why for start, why in SLOW.items() if block.commands[0].command.startswith(start)), None)


def _id(block) -> str:
    words = block.commands[0].command.split()
    return f"{block.name}-{'-'.join(words[1:3])}"


# ---------------------------------------------------------------------------------------------------------------------
# the pages: every example is a block the test runs (or one marked, with a reason)


def test_the_pages_have_examples_and_none_escapes_the_format():
    assert {b.path.name for b in BLOCKS} >= {"README.md", "failures.md"}
    assert sum(b.path.name == "README.md" for b in BLOCKS) >= 8
    for path in refresh.documents():
        fence = None
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                fence = None if fence is not None else (n, line.strip(), [])
            elif fence is not None:
                fence[2].append(line)
                # a shell example anywhere but at the start of a ```text block would not be run: refused here
                if line.startswith("$ ") and not (fence[1] == "```text" and fence[2][0].startswith("$ ")):
                    pytest.fail(f"{path.name}:{n}: a '$ ' line outside an example block ({fence[1]} at {fence[0]})")


def test_blocks_not_executed_are_listed_and_say_why():
    marked = {(b.path.name, b.commands[0].command): b.not_executed for b in BLOCKS if b.not_executed is not None}
    assert set(marked) == NOT_EXECUTED, "update NOT_EXECUTED with the pages' <!-- not-executed: ... --> blocks"
    assert all(reason.strip() for reason in marked.values()), marked
    for start in SLOW:  # every SLOW entry still names a block (a renamed example must not silently leave the list)
        assert any(b.commands[0].command.startswith(start) for b in BLOCKS), start


def test_a_marked_block_without_a_reason_is_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("<!-- not-executed:  -->\n```text\n$ margintheory verify --p 7 --k 3\n```\n"
                                        "<!-- example: COLUMNS=80 rel=1e-6 -->\n\n```text\n$ margintheory derive x\n"
                                        "ok\n```\n", encoding="utf-8")
    blocks = refresh.collect_blocks(tmp_path)
    assert [b.not_executed for b in blocks] == ["", None]
    assert (blocks[1].columns, blocks[1].rel, blocks[0].columns, blocks[0].rel) == (80, 1e-6, 100, 1e-9)


# ---------------------------------------------------------------------------------------------------------------------
# the comparison, on made-up outputs: what it must accept and what it must reject

SHOWN = """\
$ margintheory verify --p 7 --k 3
           construction of Lemma C.18 (p=7, k=3)
┏━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━┓
┃ claim             ┃ expected     ┃ measured     ┃ verdict  ┃
┡━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━┩
│ width (C.18)      │ 96           │ 96           │ PASS     │
│ margin = gamma*   │ 0.0044642857 │ 0.0044642857 │ PASS     │
│ mean wrong logit  │ -1/2         │ -1/2         │ PASS     │
...
width: 96; seconds: 0.767
gamma_star_exact: 1/224
interval: [0.00446428571428571, 0.00446428571435805] (gap 1.62e-11)
...
verdict: verified
[exit status 0]"""

PRINTED = """\
           construction of Lemma C.18 (p=7, k=3)
┏━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━┓
┃ claim             ┃ expected     ┃ measured     ┃ verdict  ┃
┡━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━┩
│ width (C.18)      │ 96           │ 96           │ PASS     │
│ margin = gamma*   │ 0.0044642857 │ 0.0044642857 │ PASS     │
│ mean wrong logit  │ -1/2         │ -1/2         │ PASS     │
│ single frequency  │ 96           │ 96           │ PASS (i) │
└───────────────────┴──────────────┴──────────────┴──────────┘
normalized margin (proved): 0.00446428571429
width: 96; seconds: 1.931
gamma_star_exact: 1/224
interval: [0.00446428571428572, 0.00446428571435805] (gap 1.62e-11)
note: written to /tmp/pytest-of-x/run3/out.json on 2026-12-08
verdict: verified"""


def _block(text: str):
    lines = text.splitlines()
    return refresh.Block(Path("made-up.md"), 1, len(lines) + 1, lines, refresh.parse_commands(lines, "made-up"))


def _regenerated(shown: str, printed: str, status: int = 0) -> list[str]:
    block = _block(shown)
    return refresh.regenerate_block(block, [refresh.Run(printed.splitlines(), status, 0.0)])


def _agrees(shown: str, printed: str, status: int = 0) -> bool:
    return _regenerated(shown, printed, status) == shown.splitlines()


def test_the_shown_output_agrees_with_its_run():
    # rows and lines left out at '...', a time that differs, the last digits of a float beyond 1e-9
    assert _agrees(SHOWN, PRINTED)


@pytest.mark.parametrize("old, new", [
    ("│ 0.0044642857 │ PASS", "│ 0.0044642858 │ PASS"),             # a float shown with 8 digits: one digit off
    ("width: 96; seconds", "width: 97; seconds"),                  # an integer
    ("gamma_star_exact: 1/224", "gamma_star_exact: 2/448"),        # a fraction, compared as written
    ("│ -1/2         │ -1/2 ", "│ -1/2         │ 1/2  "),          # a sign
    ("verdict: verified", "verdict: refuted"),                     # the verdict
    ("│ width (C.18)      │ 96           │ 96           │ PASS     │",
     "│ width (C.18)      │ 96           │ 96           │ FAIL     │"),
    ("(gap 1.62e-11)", "(gap 1.62e-12)"),                          # an exponent
    ("[exit status 0]", "[exit status 1]"),                        # the exit status
    ("gamma_star_exact: 1/224\n", ""),                             # a printed line missing inside a stretch
    ("gamma_star_exact: 1/224\n", "gamma_star_exact: 1/224\nmax width: 96\n"),  # a line the run does not print
    ("│ mean wrong logit  │ -1/2         │ -1/2         │ PASS     │\n...\n",
     "│ mean wrong logit  │ -1/2         │ -1/2         │ PASS     │\n"),   # a row printed inside a shown stretch
    ("...\nverdict: verified", "verdict: verified"),               # the lines before the verdict, shown as absent
    ("width: 96; seconds: 0.767\ngamma_star_exact: 1/224", "gamma_star_exact: 1/224\nwidth: 96; seconds: 0.767"),
])
def test_a_wrong_shown_output_is_rejected(old, new):
    assert old in SHOWN
    assert not _agrees(SHOWN.replace(old, new), PRINTED)


def test_floats_agree_to_a_relative_1e9_and_integers_exactly():
    assert _agrees(SHOWN.replace("0.00446428571435805]", "0.00446428571835805]"), PRINTED)   # relative 9.0e-10
    assert not _agrees(SHOWN.replace("0.00446428571435805]", "0.00446428572435805]"), PRINTED)  # 2.2e-9
    assert refresh.numbers_agree("1e-09", "1e-9", 1e-9, 0) and refresh.numbers_agree("1", "1.0", 1e-9, 0)
    assert not refresh.numbers_agree("100000000000", "100000000001", 1e-9, 0)      # integers: exactly


def test_the_exit_status_is_required_even_when_not_shown():
    assert _agrees("$ margintheory derive x\nok", "ok", 0)
    assert not _agrees("$ margintheory derive x\nok", "ok", 2)
    assert not _agrees("$ margintheory derive x\nok\n[exit status 2]", "ok", 0)
    # a command shown without output: only its exit status
    assert _agrees("$ margintheory sweep report s    # the table", "anything\nat all", 0)
    assert not _agrees("$ margintheory sweep report s    # the table", "error", 2)


@pytest.mark.parametrize("shown, printed, same", [
    ("in 12.6 s (CPU 3.0 s)", "in 98.1 s (CPU 7.25 s)", True),          # times
    ("needs 9.8 GiB of memory, 120 MiB peak", "needs 10.1 GiB of memory, 99 MiB peak", True),
    ("seconds: 9.14", "seconds: 12", True),
    ("on 2026-11-28 at 10:41", "on 2026-12-08 at 00:50", True),         # dates and clock times
    ("wrote /tmp/a1/k3.npz", "wrote /tmp/zz9/k3.npz", True),            # absolute paths
    ("16 neurons in 3 steps", "17 neurons in 3 steps", False),          # a count is not a time
    ("wrote k3.npz", "wrote k4.npz", False),                            # a relative path is text
    ("2 worker processes x 1 thread", "2 worker processes x 2 thread", False),
    ("0.5 s", "0.5 ms", False),                                          # the unit itself is text
])
def test_masking_is_narrow(shown, printed, same):
    assert _agrees(f"$ margintheory x\n{shown}", printed) is same


SWEEP = """\
verify cells   k      p  verdicts  margin/γ*  rel.err    width         s
────────────────────────────────────────────────────────────────────────
lemma-c18      2  3..13  6 ok              1  0.0e+00    8..48       4.8
parity-design  2  3..13  6 n/a             -        -        -  0.000486"""


def test_a_time_column_is_masked_and_the_others_compared():
    printed = SWEEP.replace("       4.8", "      51.2").replace("  0.000486", "  0.000512")
    assert _agrees(f"$ margintheory sweep verify\n{SWEEP}", printed)
    assert not _agrees(f"$ margintheory sweep verify\n{SWEEP}", printed.replace("8..48", "8..52"))
    assert not _agrees(f"$ margintheory sweep verify\n{SWEEP}", printed.replace("6 ok", "5 ok"))


def test_regeneration_keeps_the_elisions_and_the_dated_figures():
    new_row = "│ new claim         │ 1            │ 2            │ FAIL     │"
    printed = PRINTED.replace("│ PASS (i) │\n", f"│ PASS (i) │\n{new_row}\n"
                              ).replace("gamma_star_exact: 1/224", "gamma_star_exact: 1/225"
                                        ).replace("seconds: 1.931", "seconds: 2.5").replace("width: 96;", "width: 98;")
    shown = SHOWN.replace("│ mean wrong logit  │ -1/2         │ -1/2         │ PASS     │\n...\n",
                          "│ mean wrong logit  │ -1/2         │ -1/2         │ PASS     │\n│ single frequency  │ 96  "
                          "         │ 96           │ PASS (i) │\n└───────────────────┴──────────────┴──────────────┴"
                          "──────────┘\n...\n")
    new = _regenerated(shown, printed)
    assert new.count("...") == 2 and new[-1] == "[exit status 0]"
    assert new_row in new                                                            # added inside the stretch
    assert "gamma_star_exact: 1/225" in new and "width: 98; seconds: 0.767" in new     # the shown time is kept
    assert _regenerated("\n".join(new), printed) == new                               # and it now agrees


def test_a_rewrapped_line_keeps_its_dated_time():
    summary = "24 cells: 24 run now, 0 already in the store; {} s on LocalCluster: 2 worker{}processes x 1 thread"
    shown = f"$ margintheory sweep verify\n...\n{summary.format('76.0', chr(10))}"
    printed = f"table\n{summary.format('68.7', ' ')}"
    assert _regenerated(shown, printed)[2:] == [summary.format("76.0", " ")]


def test_a_changed_stretch_takes_the_new_layout_and_an_unchanged_one_is_kept():
    shown = "$ margintheory x\n│ a   │ 1 │\n│ bb  │ 2 │\n...\nwidth: 9; seconds: 1.5"
    assert _agrees(shown, "│ a │ 1 │\n│ bb │ 2 │\nmore\nwidth: 9; seconds: 7")     # spacing alone: kept as shown
    new = _regenerated(shown, "│ a    │ 1 │\n│ ccc  │ 4 │\n│ bb   │ 3 │\n│ dd   │ 5 │\nwidth: 9; seconds: 7")
    # a row inside the stretch is shown, one after its last line falls in the '...'
    assert new == ["$ margintheory x", "│ a    │ 1 │", "│ ccc  │ 4 │", "│ bb   │ 3 │", "...", "width: 9; seconds: 1.5"]


def test_an_output_shown_as_nothing_must_be_nothing():
    assert _agrees("$ margintheory x > out.txt\n[exit status 0]", "", 0)
    assert not _agrees("$ margintheory x > out.txt\n[exit status 0]", "a warning", 0)


def test_an_output_without_elision_is_replaced_whole():
    new = _regenerated("$ margintheory x\nold line 1\nold line 2", "new 1\nnew 2\nnew 3", 1)
    assert new == ["$ margintheory x", "new 1", "new 2", "new 3", "[exit status 1]"]


# ---------------------------------------------------------------------------------------------------------------------
def test_a_narrower_table_with_other_times_and_a_long_line_after_it_agrees():
    """A sweep's table is as wide as its longest time: a run whose times are shorter prints every column one character
    to the left; the summary line right under the table is no row of it (longer than the rule), so its numbers are
    compared, not masked by the time column's position (a fresh clone's CI run failed on exactly this)."""
    shown = ["                       sweep verify: tour_sweep",
             "                                  margin /  relative",
             "verify cells   k     p  verdicts    gamma*     error   width         s",
             "─" * 70,
             "lemma-c18      2  3..7  3 ok             1   0.0e+00   8..24      5.28",
             "parity-design  2  3..7  3 n/a            -         -       -  0.000268",
             "12 cells: 12 run now, 0 already in the store; 3.7 s on LocalCluster: 2 worker processes x 1 thread"]
    printed = [shown[0][1:], shown[1], shown[2].replace("width         s", "width        s"), "─" * 69,
               "lemma-c18      2  3..7  3 ok             1   0.0e+00   8..24     2.61",
               "parity-design  2  3..7  3 n/a            -         -       -  9.8e-05",
               shown[6].replace("3.7 s", "2.6 s")]
    assert refresh.regenerate_output(shown, printed, 1e-9, 0.0) == shown
    # a changed count in that line is still a difference
    other = printed[:-1] + [printed[-1].replace("LocalCluster: 2 worker", "LocalCluster: 3 worker")]
    assert refresh.regenerate_output(shown, other, 1e-9, 0.0) != shown


# the pages' blocks, run


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.not_executed is None], ids=_id)
def test_the_page_shows_what_the_command_prints(block, tmp_path):
    reason = _slow_reason(block)
    if reason and not RUN_ALL:
        pytest.skip(f"slow ({reason}): MARGINTHEORY_DOCS_ALL=1 or tools/refresh_docs.py --check runs it")
    runs = refresh.run_block(block, tmp_path)
    new = refresh.regenerate_block(block, runs)
    assert new == block.lines, (f"{block.name} shows an output the commands no longer print (tolerance: relative "
                                f"{block.rel:g}, absolute {block.abs:g}; times, memory, dates, paths masked); "
                                "python tools/refresh_docs.py rewrites it:\n" + refresh.difference(block, new))
