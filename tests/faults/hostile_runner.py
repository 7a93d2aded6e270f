"""Run ``margintheory verify --network FILE`` on every file of a directory in ONE process (``cli.main``, in order of
name), under an address-space limit, and print one JSON line per file: exit code, stderr, seconds, and the process's
peak resident memory so far.  Used by ``test_hostile_files.py`` (starting the command once per file would take ~3 s
each); a crash (segfault) of the interpreter ends the output early, which the test reports with the file it was on.

    python -m tests.faults.hostile_runner DIR ARGS_JSON
"""

from __future__ import annotations

import contextlib
import io
import json
import resource
import sys
import time
import traceback
from pathlib import Path


def _rss() -> int:
    """This process's peak resident size: ``VmHWM`` of its own memory map (``ru_maxrss`` would carry the peak of the
    test worker that started it across ``exec``, hiding any growth below that)."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))


def run_one(path: Path, extra: list[str]) -> dict:
    from margintheory.cli import main

    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["verify", "--network", str(path), *extra])
        except BaseException:  # noqa: BLE001 - anything escaping main is what the test looks for
            code, err = -1, io.StringIO(err.getvalue() + traceback.format_exc())
    return {"file": path.name, "code": code, "stderr": err.getvalue(), "stdout": out.getvalue(),
            "seconds": time.perf_counter() - t0, "max_rss": _rss()}


def main(directory: str, args_json: str) -> None:
    extra_args = json.loads(args_json)
    warm = Path(directory) / "warm-up.npz"
    warm.write_bytes(b"not an archive")
    run_one(warm, [])  # imports the command and its libraries: not part of any file's time
    base = _rss()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as fh:
        vm = int(fh.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + (2 << 30), hard))  # a runaway fails here, not on the machine
    print(json.dumps({"baseline_rss": base}), flush=True)
    for path in sorted(Path(directory).glob("*.pt")):
        print(json.dumps({"start": path.name}), flush=True)
        print(json.dumps(run_one(path, extra_args.get(path.name, []))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
