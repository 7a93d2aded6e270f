"""Run the command examples of README.md and docs/*.md and check, or regenerate in place, the outputs they show.

An example is a fenced ```` ```text ```` block whose first line starts with ``$ ``.  Each ``$ COMMAND`` line is run
by ``bash -c COMMAND`` as a user runs it (the ``margintheory`` command and ``python`` of this interpreter, with this
checkout first on ``PYTHONPATH``), every command of a block in one new empty directory, in order, with
``COLUMNS=100`` (or the ``COLUMNS`` the block states, below) and standard output and error together.  The lines
after a command, up to the next ``$`` line, are what it prints:

* ``...`` stands for lines left out (one or more).  The shown lines between two ``...`` must be consecutive lines of
  the output, in order; without a leading ``...`` the output starts with the first shown line, without a trailing one
  it ends with the last.
* ``[exit status N]`` (last) is the shell's ``$?``; without it the command must exit 0.
* A command followed directly by another ``$`` line or by the end of the block shows no output: only its exit
  status is checked (0).

A shown line agrees with a printed line when both have the same text once each number is taken out (runs of
spaces, and runs of one box-drawing character, count as one, so a wider table column is not a difference), and the
same numbers: integers and fractions ``a/b`` exactly, other numbers to a relative ``1e-9`` (``rel=`` and ``abs=``
of the block's options widen it).  Not compared (masked), narrowly: a number followed by a unit of time or memory
(``12.6 s``, ``9.8 GiB``: ``s ms us min h B kB MB GB KiB MiB GiB TiB EiB``), the value of a ``seconds:``/``time:``
key, a number in a plain-table column headed ``s``, ``seconds`` or ``time``, a date ``YYYY-MM-DD`` or clock time
``HH:MM``, and an absolute path (``/tmp/...``).

Options, in an HTML comment just above the block: ``<!-- example: COLUMNS=80 rel=1e-6 abs=1e-12 -->``.  A block that
cannot be run here (a paper-sized run, a GPU) is marked ``<!-- not-executed: REASON -->`` and is listed by
``--list``; tests/test_docs_examples.py requires the reason and the list.

``python tools/refresh_docs.py`` rewrites the shown outputs that differ from a fresh run, stretch by stretch (the lines
between two ``...``): a stretch whose every line agrees is kept as written, its times and dates included (they stay the
figures of the dated run the page describes); one that differs takes the new run's lines (a table with its new column
widths, rows added inside the stretch included), keeping the shown time/memory/date tokens where the changed lines
have as many.  The ``...`` stay where they are: a stretch is placed by its first and last lines (a table row by its
first cell, a ``key:`` line by its key, another line by its text without numbers), so lines the run adds after a
stretch's last line fall in the following ``...``; an output shown without ``...`` is one stretch, the whole output.
``--check`` changes nothing and exits 1 if any file would change (printing the differences); ``--list`` prints the
blocks; ``--only TEXT`` runs the blocks whose commands or ``FILE:LINE`` contain TEXT; ``--jobs N`` runs N blocks at a
time.  Exit status 0 when everything agrees or was rewritten, 1 on a difference in ``--check`` mode or
a block that could not be placed, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_COLUMNS = 100
DEFAULT_REL = 1e-9
DEFAULT_ABS = 0.0
COMMAND_TIMEOUT_S = 900
ELLIPSIS = "..."
EXIT = re.compile(r"^\[exit status (\d+)\]$")

# ---------------------------------------------------------------------------------------------------------------------
# the documents and their blocks


def documents(root: Path = ROOT) -> list[Path]:
    """README.md, then docs/*.md in name order."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


@dataclass
class Command:
    """One ``$`` line of a block and the output shown after it."""

    line: str                   # the ``$`` line as written
    shown: list[str]            # the shown output lines, without the exit-status line
    exit_status: int | None     # from ``[exit status N]``; None when the line is absent (0 is required)
    output_shown: bool          # False: nothing follows the ``$`` line (only the exit status is checked)

    @property
    def command(self) -> str:
        """The command, as ``bash -c`` runs it."""
        return self.line[2:].strip()


@dataclass
class Block:
    """A ```text block of a document whose first line is a ``$`` command."""

    path: Path
    first: int                  # index of the first line inside the fence
    last: int                   # index of the closing fence
    lines: list[str]
    commands: list[Command]
    not_executed: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path.name}:{self.first + 1}"

    @property
    def columns(self) -> int:
        return int(self.options.get("COLUMNS", DEFAULT_COLUMNS))

    @property
    def rel(self) -> float:
        return float(self.options.get("rel", DEFAULT_REL))

    @property
    def abs(self) -> float:
        return float(self.options.get("abs", DEFAULT_ABS))

    def describe(self) -> str:
        return f"{self.name}: {' ; '.join(c.command for c in self.commands)}"


class DocFormatError(ValueError):
    """A block that does not follow the format described in this module's docstring."""


def parse_commands(lines: list[str], where: str) -> list[Command]:
    """Split a block's lines into commands and their shown outputs."""
    if not lines or not lines[0].startswith("$ "):
        raise DocFormatError(f"{where}: the block does not start with a '$ ' line")
    commands: list[Command] = []
    for line in lines:
        if line.startswith("$ "):
            commands.append(Command(line, [], None, False))
            continue
        cmd = commands[-1]
        if cmd.exit_status is not None:
            raise DocFormatError(f"{where}: a line after '[exit status N]': {line!r}")
        cmd.output_shown = True
        m = EXIT.match(line.strip())
        if m:
            cmd.exit_status = int(m.group(1))
        else:
            cmd.shown.append(line)
    return commands


COMMENT = re.compile(r"^<!--\s*(example|not-executed)\s*:(.*?)-->\s*$")


def parse_document(path: Path) -> list[Block]:
    """Every example block of one document (with its options and its ``not-executed`` reason, if any)."""
    text = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(text):
        if text[i].strip() == "```text":
            j = i + 1
            while j < len(text) and text[j].strip() != "```":
                j += 1
            if j >= len(text):
                raise DocFormatError(f"{path.name}:{i + 1}: unclosed ```text block")
            body = text[i + 1:j]
            if body and body[0].startswith("$ "):
                block = Block(path, i + 1, j, body, parse_commands(body, f"{path.name}:{i + 2}"))
                k = i - 1
                while k >= 0 and (not text[k].strip() or COMMENT.match(text[k].strip())):
                    m = COMMENT.match(text[k].strip())
                    if m and m.group(1) == "not-executed":
                        block.not_executed = m.group(2).strip()
                    elif m:
                        for item in m.group(2).split():
                            key, sep, value = item.partition("=")
                            if not sep:
                                raise DocFormatError(f"{path.name}:{k + 1}: option {item!r} is not KEY=VALUE")
                            block.options[key] = value
                    k -= 1
                blocks.append(block)
            i = j + 1
        else:
            i += 1
    return blocks


def collect_blocks(root: Path = ROOT) -> list[Block]:
    return [b for path in documents(root) for b in parse_document(path)]


# ---------------------------------------------------------------------------------------------------------------------
# running


@dataclass
class Run:
    lines: list[str]
    exit_status: int
    seconds: float


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _bin_dir(where: Path) -> Path:
    """``margintheory`` and ``python`` of this interpreter, first on PATH (a checkout need not be installed)."""
    bindir = where / ".bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "margintheory"
    # what pip writes for the console script (a guarded __main__: dask's spawned workers re-import it)
    script.write_text(f"#!{sys.executable}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n"
                      "from margintheory.cli import main\nif __name__ == '__main__':\n"
                      "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                      "    sys.exit(main())\n", encoding="utf-8")
    script.chmod(0o755)
    python = bindir / "python"
    if not python.exists():
        python.symlink_to(sys.executable)
    return bindir


def environment(columns: int, bindir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in {"FORCE_COLOR", "CLICOLOR_FORCE", "TERM", "LINES", "MARGINTHEORY_TRACEBACK"}
           and not k.startswith(("PYTEST_", "COV_"))}
    env["COLUMNS"] = str(columns)
    env["NO_COLOR"] = "1"
    env["PYTHONUNBUFFERED"] = "1"   # standard output and error interleaved as on a terminal
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["PATH"] = os.pathsep.join([str(bindir), env.get("PATH", "")])
    return env


def run_block(block: Block, workdir: Path | None = None) -> list[Run]:
    """Run the block's commands, in order, in ``workdir`` (a new empty temporary directory if None)."""
    own = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="docs-example-")) if own else workdir
    tools = Path(tempfile.mkdtemp(prefix="docs-example-bin-"))
    try:
        env = environment(block.columns, _bin_dir(tools))
        runs = []
        for cmd in block.commands:
            t0 = time.perf_counter()
            proc = subprocess.run(["bash", "-c", cmd.command], cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT_S)
            text = ANSI.sub("", proc.stdout.decode("utf-8", errors="replace"))
            runs.append(Run(_trim([line.rstrip() for line in text.splitlines()]), proc.returncode,
                            time.perf_counter() - t0))
        return runs
    finally:
        shutil.rmtree(tools, ignore_errors=True)
        if own:
            shutil.rmtree(workdir, ignore_errors=True)


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines


# ---------------------------------------------------------------------------------------------------------------------
# comparing one shown line with one printed line

NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?:/\d+(?![\d.]))?")
UNIT_AFTER = re.compile(r"^ ?(?:s|ms|us|µs|min|h|B|kB|KB|MB|GB|KiB|MiB|GiB|TiB|EiB)(?![\w/])")
TIME_KEY_BEFORE = re.compile(r"(?:\bseconds|\btime|\bwall_s|\bcpu_s)[\"']?\s*[:=]\s*$")
DATE_OR_PATH = re.compile(r"\b\d{4}-\d\d-\d\d\b|\b\d\d:\d\d(?::\d\d(?:\.\d+)?)?\b|(?<![\w)\]./~])(?:~|\.{0,2})?"
                          r"/[\w.+-]+(?:/[\w.+-]*)*")
TIME_HEADERS = {"s", "seconds", "time", "wall"}
BOX = re.compile(r"([\u2500-\u257f])\1+")
MASK = "\x00"


@dataclass(frozen=True)
class Reading:
    """A line read as its text without numbers (the skeleton), its compared numbers and its masked tokens."""

    skeleton: str
    numbers: tuple[str, ...]
    masked: tuple[str, ...]
    masked_spans: tuple[tuple[int, int], ...] = ()


def time_columns(lines: list[str]) -> dict[int, list[tuple[int, int]]]:
    """For each line under a plain-table header with a time column (the header line followed by a rule of ``─``),
    the header spans ``(start, end)`` of every column, marking which are times by a negative start."""
    spans: dict[int, list[tuple[int, int]]] = {}
    i = 0
    while i + 1 < len(lines):
        rule = lines[i + 1].strip()
        header = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", lines[i])]
        if rule and set(rule) <= {"─", "━", "-"} and len(rule) > 3 and any(h[2] in TIME_HEADERS for h in header):
            cols = [(-s if name in TIME_HEADERS else s, e) for s, e, name in header]
            j = i + 2
            width = len(lines[i + 1].rstrip())  # a row is no wider than the rule: a longer line ends the table
            while (j < len(lines) and lines[j].strip() and not set(lines[j].strip()) <= {"─", "━", "-"}
                   and len(lines[j].rstrip()) <= width):
                spans[j] = cols
                j += 1
            i = j
        else:
            i += 1
    return spans


def read_line(line: str, columns: list[tuple[int, int]] | None = None) -> Reading:
    numbers: list[str] = []
    masked: list[str] = []
    spans: list[tuple[int, int]] = []
    pieces: list[str] = []
    pos = 0
    hidden = [(m.start(), m.end()) for m in DATE_OR_PATH.finditer(line)]
    tokens = sorted([(s, e, True) for s, e in hidden]
                    + [(m.start(), m.end(), False) for m in NUMBER.finditer(line)
                       if not any(s <= m.start() < e for s, e in hidden)])
    for start, end, always in tokens:
        token = line[start:end]
        if start < pos:
            continue
        mask = always or bool(UNIT_AFTER.match(line[end:])) or bool(TIME_KEY_BEFORE.search(line[:start]))
        if columns and not mask:
            column = next((c for c in columns if c[1] >= end), None)
            mask = column is not None and column[0] < 0
        pieces.append(line[pos:start])
        pieces.append(MASK if mask else "#")
        (masked if mask else numbers).append(token)
        if mask:
            spans.append((start, end))
        pos = end
    pieces.append(line[pos:])
    skeleton = BOX.sub(r"\1", " ".join("".join(pieces).split()))
    return Reading(skeleton, tuple(numbers), tuple(masked), tuple(spans))


def _is_float(token: str) -> bool:
    return "/" not in token and not re.fullmatch(r"[-+]?\d+", token)


def numbers_agree(shown: str, printed: str, rel: float, abs_tol: float) -> bool:
    """Integers and fractions exactly as written; otherwise ``|a - b| <= max(rel max(|a|, |b|), abs)`` (an integer
    shown where a float is printed, or the reverse, is compared as floats: ``1`` and ``1.0``)."""
    if not _is_float(shown) and not _is_float(printed):
        return shown.lstrip("+") == printed.lstrip("+")
    if "/" in shown or "/" in printed:
        return False
    a, b = float(shown), float(printed)
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_tol)


def lines_agree(shown: Reading, printed: Reading, rel: float, abs_tol: float) -> bool:
    return (shown.skeleton == printed.skeleton and len(shown.numbers) == len(printed.numbers)
            and all(numbers_agree(a, b, rel, abs_tol) for a, b in zip(shown.numbers, printed.numbers, strict=True)))


def readings(lines: list[str]) -> list[Reading]:
    cols = time_columns(lines)
    return [read_line(line, cols.get(i)) for i, line in enumerate(lines)]


# ---------------------------------------------------------------------------------------------------------------------
# placing the shown stretches in the printed output and regenerating them

TABLE_ROW = re.compile(r"^\s*[│┃|]")
KEY = re.compile(r"^([A-Za-z_][\w .*()/=<>'\[\],+-]{0,60}?):(?:\s|$)")


def key_of(line: str, reading: Reading) -> str:
    """What places a shown line: a table row's first cell, a ``key:`` line's key, otherwise its skeleton."""
    if TABLE_ROW.match(line):
        cells = re.split(r"[│┃|]", line.strip())
        first = " ".join(cells[1].split()) if len(cells) > 2 else ""
        return f"row:{first}" if first else f"cont:{reading.skeleton}"
    m = KEY.match(line)
    if m:
        return f"key:{m.group(1)}"
    return f"text:{reading.skeleton}"


class PlacementError(ValueError):
    """A shown stretch that cannot be found in the printed output."""


def _segments(shown: list[str]) -> tuple[list[list[str]], bool, bool]:
    segments: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == ELLIPSIS:
            segments.append([])
        else:
            segments[-1].append(line)
    lead = bool(shown) and shown[0].strip() == ELLIPSIS
    trail = bool(shown) and shown[-1].strip() == ELLIPSIS
    return [s for s in segments if s], lead, trail


def _continuations(printed: list[str], keys: list[str], end: int) -> int:
    while end < len(printed) and keys[end].startswith("cont:"):
        end += 1
    return end


def _similar(line: str, printed: list[str], pos: int) -> int | None:
    """The first printed line at or after ``pos`` most like ``line`` (text without numbers), if like enough."""
    target = read_line(line).skeleton
    scored = [(difflib.SequenceMatcher(None, target, read_line(printed[j]).skeleton).ratio(), -j)
              for j in range(pos, len(printed))]
    best = max(scored, default=(0.0, 0))
    return -best[1] if best[0] >= 0.6 else None


def place(segment: list[str], printed: list[str], keys: list[str], pos: int, at_start: bool,
          at_end: bool) -> tuple[int, int]:
    """The stretch ``printed[start:end]`` that a shown stretch stands for, at or after ``pos``: placed by the key of
    its first line (else of its next lines), ended by the key of its last line (else of the ones before it); a
    stretch whose keys are all gone is placed by resemblance, or at the end of the output when it ends the output."""
    seg_keys = [key_of(line, r) for line, r in zip(segment, readings(segment), strict=True)]
    anchors = [i for i, k in enumerate(seg_keys) if not k.startswith("cont:")] or [0]
    starts: list[int] = [pos] if at_start else []
    for t in [] if at_start else anchors:
        starts = [j - t for j in range(pos + t, len(printed)) if keys[j] == seg_keys[t]]
        if starts:
            break
    if not starts:
        similar = _similar(segment[0], printed, pos)
        if similar is None and at_end:
            similar = max(pos, len(printed) - len(segment))
        if similar is None:
            raise PlacementError(f"not found in the output: {segment[0]!r}")
        starts = [similar]
    best: tuple[float, int, int] | None = None
    for start in starts:
        end = len(printed) if at_end else None
        for t in [] if at_end else reversed(anchors):
            found = ([j for j in range(start + t, len(printed)) if keys[j] == seg_keys[t]]
                     or [j for j in range(start, len(printed)) if keys[j] == seg_keys[t]])
            if found:
                end = _continuations(printed, keys, min(found[0] + len(segment) - t, len(printed)))
                break
        if end is None:
            end = min(start + len(segment), len(printed))
        ratio = difflib.SequenceMatcher(None, seg_keys, keys[start:end], autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, start, end)
        if ratio == 1.0:
            break
    assert best is not None
    return best[1], best[2]


def _with_masked(line: str, reading: Reading, tokens: list[str]) -> str:
    """``line`` with its time/memory/date tokens replaced, in order, by ``tokens`` (consumed; a right-aligned token
    keeps its right edge; none replaced when ``tokens`` is empty)."""
    out: list[str] = []
    pos = 0
    for start, end in reading.masked_spans:
        if not tokens:
            break
        new = tokens.pop(0)
        before = line[pos:start]
        if before.endswith("  ") and len(new) != end - start:
            pad = len(before) - len(before.rstrip(" "))
            before = before.rstrip(" ") + " " * max(1, pad + (end - start) - len(new))
        out += [before, new]
        pos = end
    out.append(line[pos:])
    return "".join(out)


def _regenerate_stretch(seg: list[str], new: list[str], s_read: list[Reading], n_read: list[Reading], rel: float,
                        abs_tol: float) -> list[str]:
    """A shown stretch as the printed lines ``new``: kept as shown when every line agrees with its printed line;
    otherwise the printed lines (a table then has the new run's column widths throughout), with the shown
    time/memory/date tokens in place of the new run's wherever a group of changed lines has as many of them."""
    if len(seg) == len(new) and all(lines_agree(a, b, rel, abs_tol) for a, b in zip(s_read, n_read, strict=True)):
        return list(seg)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, [r.skeleton for r in s_read], [r.skeleton for r in n_read], autojunk=False)
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        kept = [t for r in s_read[i1:i2] for t in r.masked]
        if len(kept) != sum(len(r.masked) for r in n_read[j1:j2]):
            kept = []
        out += [_with_masked(new[j], n_read[j], kept) for j in range(j1, j2)]
    return out


def regenerate_output(shown: list[str], printed: list[str], rel: float, abs_tol: float) -> list[str]:
    """The shown output rewritten to agree with ``printed``, keeping its ``...`` and every line that agrees."""
    p_read = readings(printed)
    p_keys = [key_of(line, r) for line, r in zip(printed, p_read, strict=True)]
    segments, lead, trail = _segments(shown)
    if not shown:       # only the exit status shown: nothing printed
        return list(printed)
    if not segments:
        return list(shown)
    if not lead and not trail and len(segments) == 1 and not any(s.strip() == ELLIPSIS for s in shown):
        placed = [(0, len(printed))]
    else:
        placed, pos = [], 0
        for n, seg in enumerate(segments):
            start, end = place(seg, printed, p_keys, pos, n == 0 and not lead, n == len(segments) - 1 and not trail)
            placed.append((start, end))
            pos = end
    out: list[str] = [ELLIPSIS] if lead else []
    for n, (seg, (start, end)) in enumerate(zip(segments, placed, strict=True)):
        if n:
            out.append(ELLIPSIS)
        out += _regenerate_stretch(seg, printed[start:end], readings(seg), p_read[start:end], rel, abs_tol)
    if trail:
        out.append(ELLIPSIS)
    return out


def regenerate_block(block: Block, runs: list[Run]) -> list[str]:
    """The block's lines rewritten to agree with ``runs`` (the same lines when everything agrees)."""
    lines: list[str] = []
    for cmd, run in zip(block.commands, runs, strict=True):
        lines.append(cmd.line)
        if not cmd.output_shown:
            if run.exit_status != 0:
                lines.append(f"[exit status {run.exit_status}]")
            continue
        lines += regenerate_output(cmd.shown, run.lines, block.rel, block.abs)
        if cmd.exit_status is not None or run.exit_status != 0:
            lines.append(f"[exit status {run.exit_status}]")
    return lines


def difference(block: Block, new: list[str]) -> str:
    return "\n".join(difflib.unified_diff(block.lines, new, f"{block.name} (shown)", f"{block.name} (run now)",
                                          lineterm="", n=2))


# ---------------------------------------------------------------------------------------------------------------------
# the command line


def _process(block: Block) -> tuple[Block, list[str] | None, str, float]:
    t0 = time.perf_counter()
    try:
        runs = run_block(block)
        return block, regenerate_block(block, runs), "", time.perf_counter() - t0
    except (PlacementError, subprocess.TimeoutExpired) as exc:
        return block, None, str(exc), time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a shown output differs")
    ap.add_argument("--list", action="store_true", help="list the example blocks and exit")
    ap.add_argument("--only", metavar="TEXT", help="only the blocks whose commands or file name contain TEXT")
    ap.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="blocks run at a time (default 1)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be >= 1")
    try:
        blocks = collect_blocks()
    except DocFormatError as exc:
        print(f"refresh_docs: error: {exc}", file=sys.stderr)
        return 1
    if args.only:
        blocks = [b for b in blocks if args.only in b.describe()]
    if args.list:
        for b in blocks:
            print(f"{b.describe()}" + (f"  [not executed: {b.not_executed}]" if b.not_executed else ""))
        return 0
    t0 = time.perf_counter()
    todo = [b for b in blocks if b.not_executed is None]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(_process, todo))
    changed: dict[Path, list[tuple[Block, list[str]]]] = {}
    failures = 0
    for block, new, error, seconds in results:
        if new is None:
            failures += 1
            print(f"{block.name}: cannot place the shown output ({error}); edit the block by hand  [{seconds:.1f} s]")
        elif new != block.lines:
            changed.setdefault(block.path, []).append((block, new))
            print(difference(block, new))
            print(f"{block.name}: {'differs' if args.check else 'rewritten'}  [{seconds:.1f} s]")
        else:
            print(f"{block.name}: agrees  [{seconds:.1f} s]")
    for b in blocks:
        if b.not_executed:
            print(f"{b.name}: not executed: {b.not_executed}")
    if not args.check:
        for path, edits in changed.items():
            text = path.read_text(encoding="utf-8").splitlines(keepends=True)
            for block, new in sorted(edits, key=lambda e: -e[0].first):
                text[block.first:block.last] = [line + "\n" for line in new]
            path.write_text("".join(text), encoding="utf-8")
    differ = sum(map(len, changed.values()))
    print(f"{len(todo)} blocks run in {time.perf_counter() - t0:.1f} s: {len(todo) - failures - differ} agree, "
          f"{differ} {'differ' if args.check else 'rewritten'}, {failures} not placed")
    return 1 if failures or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
