"""A hypothesis-driven fuzzer of the command line: random commands, flags (their own and other commands'), values
(valid, out of range, malformed, paths to devices) run as real subprocesses in a scratch directory.

Whatever the arguments: exit code 0, 1 or 2; no traceback; no "out of memory" (the size checks refuse first); peak
memory under the interpreter's plus the budget;
nothing outside the output paths created, changed or removed.  Examples are few (each is a subprocess, 1-3 s).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from margintheory.core.construction import build_construction
from tests.faults.helpers import BASELINE_RSS, listing, run_cli

SMALL_P = ["-3", "0", "2", "3", "4", "5", "1000000000", "1000000001", "x", "7.5", ""]
SMALL_K = ["-1", "0", "1", "2", "100", "x"]
NUMBERS = ["-5", "-1", "0", "0.5", "2", "1e308", "nan", "inf", "-inf", "x", ""]
PATHS = ["out", "out/sub/x.npz", "/dev/full", "/dev/null", "/proc/x", "net.npz", "afile", ""]
#: paths the fuzzed commands may create or change (every output option's values above)
OUTPUTS = ("out", "train_out")

FLAGS = {
    "--p": SMALL_P, "--k": SMALL_K, "--n": ["-1", "3", "30"], "--d": ["0", "5", "1000"], "--width": ["0", "1", "4",
    "1000000000"], "--steps": ["-1", "0", "2", "1000000000"], "--seed": ["-1", "0", "3", "x"],
    "--rtol": NUMBERS, "--fourier-tol": NUMBERS, "--min-share": NUMBERS, "--max-seconds": NUMBERS,
    "--time-limit": NUMBERS, "--max-memory": ["1", "1K", "64M", "2G", "-1", "lots"], "--lr": NUMBERS,
    "--lambda": NUMBERS, "--train-fraction": NUMBERS, "--out": PATHS, "--plots": PATHS, "--network": PATHS,
    "--group": ["S3", "S9", "C5", "Z"], "--construction": ["F6", "nope"], "--task": ["parity", "group", "cogo",
    "nope"], "--tolerance": NUMBERS, "--format": ["text", "latex", "nope"],
    "--family": ["lemma-c18", "cyclic-lattice", "parity-design", "nope"], "--pricing": ["fourier", "sos", "x"],
    "--certificate": ["out/c.json", "/dev/full", "/proc/x"], "--names": ["U=a,W=b", "garbage", ""],
}
SWITCHES = ["--json", "--exact", "--force", "--single-neuron", "--min-width", "--overwrite", "--resume",
            "--no-figures", "--no-construction"]
COMMANDS = {
    "verify": [], "solve": [], "train": ["--no-figures"], "analyze": ["net.npz"],
    "derive": [], "check": ["afile"],
}
DERIVE_TOPICS = ["gamma-star", "identity", "expansion", "fourier", "cosine-sum", "nope"]


@st.composite
def command_lines(draw) -> list[str]:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    argv = [command] + COMMANDS[command]
    if command == "derive":
        argv.append(draw(st.sampled_from(DERIVE_TOPICS)))
    if command in ("verify", "solve", "train", "analyze"):  # mostly well-formed sizes, so that real work happens
        argv += ["--p", draw(st.sampled_from(["3", "5"] + SMALL_P)), "--k", draw(st.sampled_from(["2"] + SMALL_K))]
    if command == "train":
        argv += ["--width", draw(st.sampled_from(["4"] + FLAGS["--width"])),
                 "--steps", draw(st.sampled_from(["2"] + FLAGS["--steps"]))]
    if command == "solve" and draw(st.booleans()):
        argv.append("--single-neuron")
    for flag in draw(st.lists(st.sampled_from(sorted(FLAGS)), max_size=3)):
        argv += [flag, draw(st.sampled_from(FLAGS[flag]))]
    argv += draw(st.lists(st.sampled_from(SWITCHES), max_size=2, unique=True))
    return argv


def _scratch() -> Path:
    root = Path(tempfile.mkdtemp(prefix="margintheory-fuzz-"))
    build_construction(3, 2).save(root / "net.npz")
    (root / "afile").write_text("the user's file")
    return root


#: a longer campaign: MARGINTHEORY_FUZZ_EXAMPLES=300 MARGINTHEORY_FUZZ_SEED=random python -m pytest tests/faults -k fuzz
EXAMPLES = int(os.environ.get("MARGINTHEORY_FUZZ_EXAMPLES", "12"))
DERANDOMIZE = os.environ.get("MARGINTHEORY_FUZZ_SEED", "fixed") == "fixed"


@settings(max_examples=EXAMPLES, deadline=None, derandomize=DERANDOMIZE, suppress_health_check=list(HealthCheck),
          print_blob=True)
@given(argv=command_lines())
def test_fuzzed_command_lines(argv):
    root = _scratch()
    try:
        before = listing(root)
        run = run_cli(*argv, cwd=root, memory=2 * 2**30, timeout=120)
        assert not run.timed_out, f"{argv}: no answer within {run.seconds:.0f} s"
        assert run.returncode in (0, 1, 2), (argv, run.returncode, run.stderr[-2000:])
        assert "Traceback" not in run.stderr and "Traceback" not in run.stdout, (argv, run.stderr[-3000:])
        if run.returncode == 2:
            assert run.stderr.strip(), f"{argv}: exit 2 without saying why"
        # a MemoryError caught under the address-space limit means a size check let the job allocate first
        assert "out of memory" not in run.stderr, (argv, run.stderr[-500:])
        assert run.max_rss < BASELINE_RSS + 2 * 2**30, f"{argv}: {run.max_rss / 2**20:.0f} MiB"
        after = listing(root)
        touched = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
        outside = {p for p in touched if not p.startswith(OUTPUTS)}
        assert not outside, f"{argv} touched {sorted(outside)}"
    finally:
        shutil.rmtree(root, ignore_errors=True)
