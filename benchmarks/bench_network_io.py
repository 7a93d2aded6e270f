"""Reading network files through margintheory.network_io against the plain readers, measured in the same run.

The checked reader parses headers first, refuses what exceeds the memory budget, never unpickles and reads
PyTorch files without torch; this measures what that costs.  Baselines: ``numpy.load`` for ``.npz``,
``safetensors.numpy.load_file`` for ``.safetensors`` (both followed by the same ``PolyNetwork`` construction),
and for the PyTorch zip layout a raw ``zipfile`` read of the storages; when torch is installed (optional extra
``torch``), also a file written by ``torch.save`` against ``torch.load(weights_only=True)``.
Ratios against the baseline measured in the same run are what counts; wall times on a shared machine are noisy.

    python benchmarks/bench_network_io.py            # m=2048, k=3, p=1021 float32: ~33 MB of weights
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import safetensors.numpy as stnp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from margintheory.core.network import PolyNetwork  # noqa: E402
from tests import network_files as nf  # noqa: E402

M, K, P = 2048, 3, 1021
REPEATS = 5


def best_of(fn) -> tuple[float, int]:
    times, peak = [], 0
    for _ in range(REPEATS):
        tracemalloc.start()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return min(times), peak


def main() -> None:
    rng = np.random.default_rng(0)
    U = rng.normal(size=(M, K, P)).astype(np.float32)
    W = rng.normal(size=(M, P)).astype(np.float32)
    d = Path(tempfile.mkdtemp(prefix="bench-netio-"))
    np.savez(d / "net.npz", U=U, W=W)
    np.savez_compressed(d / "netz.npz", U=U, W=W)
    stnp.save_file({"U": U, "W": W}, d / "net.safetensors")
    pkl, storages = nf.state_dict_pickle({"U": U.astype(np.float64), "W": W.astype(np.float64)})
    (d / "net.pt").write_bytes(nf.torch_zip_bytes(pkl, storages))

    def np_baseline(path: Path) -> PolyNetwork:
        with np.load(path, allow_pickle=False) as z:
            return PolyNetwork(z["U"], z["W"])

    def zip_baseline(path: Path) -> PolyNetwork:
        with zipfile.ZipFile(path) as z:
            u = np.frombuffer(z.read("archive/data/0"), "<f8").reshape(M, K, P)
            w = np.frombuffer(z.read("archive/data/1"), "<f8").reshape(M, P)
        return PolyNetwork(u, w)

    cases = [
        (".npz (stored)", d / "net.npz", np_baseline),
        (".npz (deflated)", d / "netz.npz", np_baseline),
        (".safetensors", d / "net.safetensors", lambda p: PolyNetwork(**stnp.load_file(p))),
        ("PyTorch zip (float64)", d / "net.pt", zip_baseline),
    ]
    cases += _torch_case(d, U, W)
    print(f"network m={M}, k={K}, p={P}; best of {REPEATS}; peak = tracemalloc peak of one load")
    print("| file | size MB | network_io s | baseline s | ratio | network_io peak MB | baseline peak MB |")
    print("|---|---|---|---|---|---|---|")
    for label, path, baseline in cases:
        ours, ours_peak = best_of(lambda path=path: PolyNetwork.load(path))
        base, base_peak = best_of(lambda path=path, baseline=baseline: baseline(path))
        a, b = PolyNetwork.load(path), baseline(path)
        assert np.array_equal(a.U, b.U) and np.array_equal(a.W, b.W)
        base_mb = "n/a (untraced)" if label.startswith("torch.save") else f"{base_peak / 2**20:.0f}"  # C++ allocations
        print(f"| {label} | {path.stat().st_size / 2**20:.1f} | {ours:.3f} | {base:.3f} | {ours / base:.2f} | "
              f"{ours_peak / 2**20:.0f} | {base_mb} |")
    bomb = d / "bomb.npz"
    bomb.write_bytes(nf.zip_bomb_npz(2**25, {"U.npy": (2, 4), "W.npy": (4,)}))
    start = time.perf_counter()
    try:
        PolyNetwork.load(bomb)
    except Exception as exc:  # noqa: BLE001 - report what the refusal says
        print(f"\nzip bomb ({bomb.stat().st_size / 2**20:.1f} MB on disk, 3 GiB declared, max_memory 2 GiB): "
              f"refused in {time.perf_counter() - start:.3f} s: {type(exc).__name__}")


def _torch_case(d: Path, U: np.ndarray, W: np.ndarray) -> list:
    """A ``torch.save`` state dict read back by ``torch.load(weights_only=True)``, when torch is installed."""
    try:
        import torch
    except ImportError:
        return []
    torch.save({"U": torch.from_numpy(U), "W": torch.from_numpy(W)}, d / "torch.pt")

    def torch_baseline(path: Path) -> PolyNetwork:
        sd = torch.load(path, weights_only=True)
        return PolyNetwork(sd["U"].numpy(), sd["W"].numpy())

    return [(f"torch.save (float32), baseline torch.load {torch.__version__}", d / "torch.pt", torch_baseline)]


if __name__ == "__main__":
    main()
