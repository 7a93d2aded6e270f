"""Benchmark of the computed upper ends ``U`` of sparse parity and finite groups and of ``verify``'s interval
``[L, U]`` (not run by CI).

    python benchmarks/bench_upper_ends.py [--full]

Each case runs in a fresh interpreter (peak memory = the child's max RSS, interpreter and libraries included).
Parity: the proof of ``U`` alone, the whole ``verify`` of the construction, and the baseline measured in the same run,
the previous code path (the float margins of the construction on all ``2^n`` inputs, no reduction to the relevant
coordinates; at ``(20, 10)`` only with ``--full``: minutes).  Groups: ``U`` (the class LP, its dual rounded and checked
exactly with the exact characters), the gap ``(U - L)/L`` with ``L`` the LP network's margin from the characters, the
baseline (the HiGHS solve alone, whose float value the package used before), and with ``--full`` the whole ``verify``
(``S_6``'s exhaustive pass takes minutes).  The device is named in the first line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

PARITY = [(10, 4), (16, 8), (20, 10)]
GROUPS = ["S3", "S4", "S5", "S6"]


def child_parity(n: int, k: int, mode: str) -> dict:
    import sympy  # noqa: F401  (imported by verify anyway; kept out of the timings)

    from margintheory import SparseParity, verify
    from margintheory.tasks.parity import checks as parity
    from margintheory.tasks.parity import maxmin

    t0 = time.perf_counter()
    if mode == "upper":
        ub = maxmin.parity_upper_bound(n, k)
        out = {"U": ub.upper_float}
    elif mode == "verify":
        res = verify(SparseParity(n, k), max_seconds=None)
        out = {"verdict": res.verdict, "gap": res.certificate["relative_gap"]}
    else:  # baseline: the construction's float margins on all 2^n inputs
        net = parity.build_parity_construction(n, k)
        X = parity.parity_inputs(n)
        L = parity.parity_logits(net, X)
        y = parity.parity_labels(X, net.S)
        out = {"margin": float(min((L[:, 0] - L[:, 1]) * y))}
    out["seconds"] = time.perf_counter() - t0
    return out


def child_group(name: str, mode: str) -> dict:
    import numpy as np

    from margintheory.core.groups import parse_group
    from margintheory.core.representations import character_table, real_irreps
    from margintheory.tasks.groups import margin as gm
    from margintheory.tasks.groups.task import verify_group
    from margintheory.tasks.groups.upper_bound import real_group_upper_bound

    G = parse_group(name)
    irreps = real_irreps(G)
    X = character_table(G, irreps)
    dims = np.array([R.dim for R in irreps])
    t0 = time.perf_counter()
    if mode == "baseline":
        lp = gm.solve_class_lp(X, G.order, dims)
        out = {"lp": lp.primal}
    elif mode == "upper":
        lp = gm.solve_class_lp(X, G.order, dims)
        ub = real_group_upper_bound(G, irreps, lp.pi)
        L = float(gm.class_margins(lp.mu, X, G.order, dims).min())
        out = {"U": ub.upper_float, "L_characters": L, "gap": ub.upper_float / L - 1}
    else:
        res = verify_group(G, max_seconds=None)
        out = {"verdict": res.verdict, "gap": res.certificate["relative_gap"]}
    out["seconds"] = time.perf_counter() - t0
    return out


def run_child(*args: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="also the slow baselines and S_6's whole verify")
    ap.add_argument("--child", nargs="+")
    a = ap.parse_args()
    if a.child:
        kind, *rest = a.child
        out = child_parity(int(rest[0]), int(rest[1]), rest[2]) if kind == "parity" else child_group(rest[0], rest[1])
        out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(out))
        return
    print(f"device: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}")
    print("| parity (n, k) | U s | verify s | verify peak MiB | gap | baseline s (all 2^n inputs) "
          "| ratio verify/base |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for n, k in PARITY:
        u, v = run_child("parity", str(n), str(k), "upper"), run_child("parity", str(n), str(k), "verify")
        base = run_child("parity", str(n), str(k), "baseline") if a.full or n <= 16 else None
        b = f"{base['seconds']:.2f} | {v['seconds'] / base['seconds']:.3g}" if base else "(--full) | -"
        print(f"| ({n}, {k}) | {u['seconds']:.4f} | {v['seconds']:.2f} | {v['peak_mib']:.0f} | {v['gap']:.1e} "
              f"| {b} |")
    print("\n| group | U s (LP + exact check) | U peak MiB | gap (U - L)/L, L from characters "
          "| baseline s (HiGHS alone) | ratio | verify s | verify gap |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in GROUPS:
        u, base = run_child("group", name, "upper"), run_child("group", name, "baseline")
        v = run_child("group", name, "verify") if a.full or name != "S6" else None
        tail = f"{v['seconds']:.1f} | {v['gap']:.1e}" if v else "(--full) | -"
        print(f"| {name} | {u['seconds']:.3f} | {u['peak_mib']:.0f} | {u['gap']:.1e} | {base['seconds']:.3f} | "
              f"{u['seconds'] / base['seconds']:.3g} | {tail} |")


if __name__ == "__main__":
    main()
