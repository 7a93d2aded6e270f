"""Network files that are not regular files are refused at once (the readers are margintheory.network_io's; these
cases run the real command under a timeout: /dev/zero used to be read to exhaustion, a FIFO to hang forever)."""

from __future__ import annotations

import os

import pytest

from tests.faults.helpers import assert_one_line_error, run_cli


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/urandom", "directory"])
def test_non_regular_network_files_are_refused_quickly(kind, tmp_path):
    if kind == "fifo":
        path = tmp_path / "net.npz"
        os.mkfifo(path)
    elif kind == "directory":
        path = tmp_path / "net.npz"
        path.mkdir()
    else:
        path = kind
    run = run_cli("verify", "--network", str(path), cwd=tmp_path, timeout=30)
    assert_one_line_error(run, contains="not a regular file")
