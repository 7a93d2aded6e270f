"""Fuzzer of network files: valid .npz / .safetensors / PyTorch files, damaged at random (truncated, bytes
overwritten or inserted, wrong dtypes and shapes, huge headers and length fields, compressed bombs).

Every damaged file must give a network or one :class:`MarginTheoryError` (one line on stderr, exit code 2 through
the CLI) - never another exception or a traceback - within a bounded amount of memory.
"""

from __future__ import annotations

import io
import struct
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.errors import MarginTheoryError
from tests import network_files as nf

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BUDGET = 64 * 2**20  # --max-memory of the fuzzed loads
SLACK = 24 * 2**20  # interpreter-side overhead allowed on top of the budget


def _valid_files() -> dict[str, tuple[str, bytes]]:
    net = build_construction(5, 2)
    npz, npz_stored = io.BytesIO(), io.BytesIO()
    np.savez_compressed(npz, U=net.U, W=net.W, format_version=np.array(1), meta__frequency=net.metadata["frequency"])
    np.savez(npz_stored, U=net.U.astype(np.float32), W=net.W.astype(np.float32))
    import safetensors.numpy as stnp

    st_bytes = stnp.save({"U": net.U, "W": net.W}, metadata={"format_version": "1"})
    pkl, storages = nf.state_dict_pickle({"U": net.U, "W": net.W}, legacy=True)
    return {
        "npz-deflated": (".npz", npz.getvalue()),
        "npz-stored": (".npz", npz_stored.getvalue()),
        "safetensors": (".safetensors", st_bytes),
        "torch-zip": (".pt", (FIXTURES / "torch_zip_UW.pt").read_bytes()),
        "torch-legacy-checkpoint": (".pt", (FIXTURES / "torch_legacy_checkpoint.pt").read_bytes()),
        "torch-legacy-handmade": (".pth", nf.torch_legacy_bytes(pkl, storages)),
    }


VALID = _valid_files()
DTYPES = ["<f8", "<f4", "<f2", ">f8", "<i8", "|b1", "<c16", "|O", "<U3", "|S2", "[('a', '<f8')]", "<M8[s]", "zz"]


@st.composite
def damaged_files(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(VALID)))
    suffix, data = VALID[name]
    kind = draw(st.sampled_from(["truncate", "overwrite", "insert", "npy-header", "length-field", "bomb",
                                 "suffix"]))
    if kind == "truncate":
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif kind == "overwrite":
        buf = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            pos = draw(st.integers(0, len(buf) - 1))
            buf[pos] = draw(st.integers(0, 255))
        data = bytes(buf)
    elif kind == "insert":
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.binary(min_size=1, max_size=64)) + data[pos:]
    elif kind == "npy-header":  # an npz whose U has any dtype / shape text, with or without enough data
        shape = tuple(draw(st.lists(st.one_of(st.integers(0, 20), st.integers(0, 10**15)), max_size=4)))
        header = {"descr": draw(st.sampled_from(DTYPES)), "fortran_order": draw(st.booleans()), "shape": shape}
        body = nf.npy_bytes(header, draw(st.binary(max_size=256)), version=draw(st.sampled_from([1, 2])))
        suffix, data = ".npz", nf.npz_bytes({"U.npy": body, "W.npy": nf.array_npy(np.zeros((2, 5)))},
                                            compress=draw(st.booleans()))
    elif kind == "length-field":  # safetensors header length, or a safetensors header with absurd entries
        if draw(st.booleans()):
            suffix, data = ".safetensors", struct.pack("<Q", draw(st.integers(0, 2**64 - 1))) + data[8:]
        else:
            shape = draw(st.lists(st.integers(0, 10**12), max_size=4))
            end = draw(st.integers(0, 2**63))
            entry = {"dtype": draw(st.sampled_from(["F64", "F32", "BF16", "I8", "X9"])), "shape": shape,
                     "data_offsets": [0, end]}
            suffix, data = ".safetensors", nf.safetensors_bytes({"U": entry, "W": entry}, b"\0" * 64)
    elif kind == "bomb":
        rows = draw(st.sampled_from([2**15, 2**19, 2**25]))  # 3 MiB, 48 MiB, 3 GiB declared
        suffix, data = ".npz", nf.zip_bomb_npz(rows, {"U.npy": (2, 4), "W.npy": (4,)})
    else:  # a valid file under a wrong suffix
        suffix = draw(st.sampled_from([s for s in (".npz", ".safetensors", ".pt", ".dat") if s != suffix]))
    return suffix, data


@pytest.mark.filterwarnings("error")  # a numpy warning would be printed to the user: none may occur
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(damaged_files())
def test_damaged_files_give_one_clear_error_in_bounded_memory(tmp_path, case):
    suffix, data = case
    path = tmp_path / f"net{suffix}"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        try:
            net = PolyNetwork.load(path, max_memory=BUDGET)
        except MarginTheoryError as exc:
            message = str(exc)
            assert "\n" not in message and message.startswith(str(path)), message
        else:
            assert np.isfinite(net.U).all() and net.W.shape == (net.m, net.p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < BUDGET + SLACK, f"peak {peak} bytes"


@pytest.mark.filterwarnings("error")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(damaged_files())
def test_damaged_files_through_the_cli_exit_0_1_or_2_without_traceback(tmp_path, capsys, case):
    from margintheory.cli import main

    suffix, data = case
    path = tmp_path / f"net{suffix}"
    path.write_bytes(data)
    code = main(["verify", "--network", str(path), "--max-memory", str(BUDGET)])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2)
    assert "Traceback" not in err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("margintheory verify: error:"), err


@pytest.mark.parametrize("name", sorted(VALID))
def test_undamaged_seeds_load(tmp_path, name):
    suffix, data = VALID[name]
    (tmp_path / f"n{suffix}").write_bytes(data)
    net = PolyNetwork.load(tmp_path / f"n{suffix}")
    assert (net.m, net.k, net.p) == (16, 2, 5)
