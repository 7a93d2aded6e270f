"""Time and memory of ``verify group`` on the groups beyond ``S_n`` (the targets: ``D_60``, ``A_5``, ``S_5`` each under
60 s at the default budget; ``Q_8``, ``C_4 x C_4``, ``S_3 x C_3`` in seconds), and of the regular-representation
irreps against their up-front estimate (:func:`margintheory.core.representations.estimate_regular_irreps`).

    python benchmarks/bench_groups.py [GROUP ...]

Each group runs in a fresh subprocess (its peak resident size is its own); the irreps' peak is measured with
tracemalloc.  Prints one row per group: order, verdict, [L, U], wall time, peak RSS, and the estimate's ratios.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time

GROUPS = ["Q8", "C4xC4", "S3xC3", "D12", "A5", "S5", "D60"]

CHILD = r"""
import json, resource, sys, time, tracemalloc
from margintheory.core.groups import parse_group
from margintheory.core.representations import estimate_regular_irreps, needs_regular_irreps, real_irreps
from margintheory.core.problems import GroupComposition
from margintheory.verification import verify
G = parse_group(sys.argv[1])
tracemalloc.start(); t = time.perf_counter(); real_irreps(G); irreps_s = time.perf_counter() - t
irreps_peak = tracemalloc.get_traced_memory()[1]; tracemalloc.stop()
est = estimate_regular_irreps(G.order)
t = time.perf_counter(); r = verify(GroupComposition(sys.argv[1])); seconds = time.perf_counter() - t
c = r.certificate or {}
print(json.dumps({"order": G.order, "verdict": r.verdict, "lower": c.get("lower"), "upper": c.get("upper"),
                  "upper_exactness": c.get("upper_exactness"), "seconds": seconds, "irreps_seconds": irreps_s,
                  "irreps_peak": irreps_peak, "regular": needs_regular_irreps(G), "est_bytes": est.bytes,
                  "est_seconds": est.seconds,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main(argv: list[str]) -> int:
    groups = argv or GROUPS
    print(f"# verify group, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d')}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'group':8s} {'|G|':>4s} {'verdict':15s} {'L':>22s} {'U':>22s} {'U is':9s} {'time':>7s} {'RSS MiB':>8s} "
          f"{'irreps est/meas mem':>19s} {'time':>6s}")
    for g in groups:
        r = subprocess.run([sys.executable, "-c", CHILD, g], capture_output=True, text=True)
        if r.returncode:
            print(f"{g:8s} failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
            continue
        d = json.loads(r.stdout.strip().splitlines()[-1])
        mem = d["est_bytes"] / max(d["irreps_peak"], 1)
        secs = d["est_seconds"] / max(d["irreps_seconds"], 1e-9)
        ratio = f"{mem:5.2f} {secs:6.2f}" if d["regular"] else f"{'(Young/rotations)':>19s}"
        lo = "-" if d["lower"] is None else f"{d['lower']:.15g}"
        up = "-" if d["upper"] is None else f"{d['upper']:.15g}"
        print(f"{g:8s} {d['order']:4d} {d['verdict']:15s} {lo:>22s} {up:>22s} {str(d['upper_exactness'] or '-'):9s} "
              f"{d['seconds']:6.1f}s {d['rss_mib']:8.0f} {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
