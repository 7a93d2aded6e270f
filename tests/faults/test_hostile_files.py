"""Hostile PyTorch files (tests/faults/hostile_files.py, made at run time) end in exit 2 with one line on stderr,
within 5 s and 300 MB each, through the real command.

All files run in one child process that calls ``cli.main`` per file (``hostile_runner``); the kinds that used to
crash CPython also run as the installed ``margintheory`` command, at the same time, so that the exit status of a
crash (139) would show as it does to a user.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.faults.helpers import assert_one_line_error, run_cli
from tests.faults.hostile_files import EXPECTED, EXTRA_ARGS, hostile_files

ROOT = Path(__file__).resolve().parents[2]
SECONDS = 5.0
MEMORY = 300 * 2**20


def _file_name(kind: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", kind).strip("_") + ".pt"


def test_every_hostile_file_is_refused_quickly_in_one_line(tmp_path):
    files = hostile_files()
    assert len(files) >= 90
    names = {_file_name(kind): kind for kind in files}
    assert len(names) == len(files)
    for name, kind in names.items():
        (tmp_path / name).write_bytes(files[kind])
    crash_kind = "deep tuple as dict key (SETITEMS) (zip)"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = json.dumps({_file_name(k): v for k, v in EXTRA_ARGS.items()})
    child = subprocess.Popen([sys.executable, "-m", "tests.faults.hostile_runner", str(tmp_path), args], cwd=ROOT,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    single = run_cli("verify", "--network", str(tmp_path / _file_name(crash_kind)), cwd=tmp_path, timeout=60)
    out, err = child.communicate(timeout=600)
    lines = [json.loads(line) for line in out.splitlines()]
    started = [r["start"] for r in lines if "start" in r]
    last = names.get(started[-1]) if started else "?"
    assert child.returncode == 0, f"the runner died ({child.returncode}) on {last}: {err[-2000:]}"
    base = lines[0]["baseline_rss"]
    results = [r for r in lines if "code" in r]
    assert len(results) == len(files)
    bad = []
    for r in results:
        kind, stderr = names[r["file"]], r["stderr"].strip()
        if (r["code"] != 2 or "\n" in stderr or not stderr.startswith("margintheory verify: error:")
                or "Traceback" in stderr or r["seconds"] > SECONDS or EXPECTED.get(kind, "") not in stderr):
            bad.append(f"{kind}: exit {r['code']} in {r['seconds']:.1f} s: {stderr[-300:]}")
    assert not bad, "\n".join(bad)
    peak = max(r["max_rss"] for r in results) - base
    assert peak <= MEMORY, f"peak resident memory grew by {peak / 2**20:.0f} MiB"
    assert_one_line_error(single, contains="nested deeper than 64 levels")
