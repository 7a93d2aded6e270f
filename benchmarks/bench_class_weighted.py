"""The class-weighted single-neuron bracket at the sizes of its targets, for random and for peaked weights.

    python benchmarks/bench_class_weighted.py [--only 5x2 7x2 ...] [--kinds random peaked ...] [--seeds 1 2]
                                              [--eps 1e-12 1e-9 1e-6 1e-3] [--time-limit SEC]
                                              [--method auto|quartic-sos|eliminated]

Each case runs in a fresh subprocess under ``/usr/bin/time -v`` (when present): the path is imported and warmed up
on ``(3, 2)`` (lazy imports, solver set-up), ``ru_maxrss`` is read (the baseline: interpreter, libraries, warm
state), the bracket is computed at the case's size, and ``ru_maxrss`` and the CPU time are read again.  Printed per
case: the method (``auto``'s choice by default), the exactness of ``U``, ``(U - L)/L``, the wall and user CPU
seconds of the bracket alone (and the whole process's from ``/usr/bin/time``), the target time of
docs/theory.md#class-weighted-scale, the up-front time estimate, and the up-front memory estimate
(:func:`margintheory.solvers.class_weighted.estimate`) against the measured peak above the baseline (target ratio
within 2x; below 16 MiB the measurement is allocator noise and the ratio is flagged).

Weights: ``random`` -- ``q`` and every row of ``tau`` uniform random, normalised; ``peaked`` -- ``q`` on 3 random
inputs, ``tau`` one-hot on a random wrong label; ``sparse`` -- ``q`` on a random quarter of the inputs, each row of
``tau`` on two random wrong labels; ``near-uniform`` -- uniform ``q`` and ``tau`` times ``1 + eps N(0, 1)``
entrywise, normalised (not exactly translation-invariant, so the quartic SOS path), one row per ``--eps``;
``near-invariant`` -- the same around a random translation-invariant ``(q, tau)`` (``q`` constant, ``tau[x,
y(x) + d] = t(d)``).  Every size runs every kind in the same run, beside the random case.  ``--time-limit``
passes a limit and prints the wall time against it.  Not run by CI; the device (CPU model, cores, load) is
printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import textwrap

#: (p, k) and the target seconds of the issue, on 2 cores at the default budget
TARGETS = {"5x2": 10, "7x2": 60, "5x3": 60, "7x3": 300, "11x2": 300}
NOISE_BYTES = 16 * 2**20
#: the weights of a case (the child's ``weights``)
KINDS = ("random", "peaked", "sparse", "near-uniform", "near-invariant")

CHILD = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    from margintheory.engines.margins import input_grid
    from margintheory.errors import RefusedError
    from margintheory.solvers.class_weighted import class_weighted_single_neuron, class_weights, estimate

    def weights(p, k, kind, seed, eps=0.0):
        rng = np.random.default_rng(seed)
        n, y = p**k, input_grid(p, k).sum(axis=1) % p
        if kind == "peaked":
            q = np.zeros(n); idx = rng.choice(n, 3, replace=False); q[idx] = rng.random(3); q /= q.sum()
            tau = np.zeros((n, p)); tau[np.arange(n), (y + rng.integers(1, p, n)) % p] = 1.0
        elif kind == "sparse":
            q = np.zeros(n); idx = rng.choice(n, max(1, n // 4), replace=False); q[idx] = rng.random(len(idx))
            q /= q.sum(); tau = np.zeros((n, p))
            for x in range(n):
                tau[x, (y[x] + rng.choice(np.arange(1, p), 2, replace=False)) % p] = rng.random(2)
            tau /= tau.sum(axis=1, keepdims=True)
        elif kind in ("near-uniform", "near-invariant"):
            t = np.ones(p) if kind == "near-uniform" else rng.random(p)
            t[0] = 0.0
            tau = t[(np.arange(p)[None, :] - y[:, None]) % p] * (1 + eps * rng.standard_normal((n, p)))
            tau[np.arange(n), y] = 0.0; tau /= tau.sum(axis=1, keepdims=True)
            q = 1 + eps * rng.standard_normal(n); q /= q.sum()
        else:
            q = rng.random(n); q /= q.sum(); tau = rng.random((n, p)); tau[np.arange(n), y] = 0.0
            tau /= tau.sum(axis=1, keepdims=True)
        return q, tau

    p, k, kind, seed, method = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
    eps, limit = float(sys.argv[6]), (float(sys.argv[7]) if sys.argv[7] != "none" else None)
    q, tau = weights(3, 2, "random", 0)
    class_weighted_single_neuron(3, 2, q=q, tau=tau, method=method)  # warm-up
    base = resource.getrusage(resource.RUSAGE_SELF)
    q, tau = weights(p, k, kind, seed, eps)
    est = estimate(class_weights(p, k, q=q, tau=tau), method=method)
    t0 = time.perf_counter()
    out = {"estimate": est.bytes, "what": est.what, "estimate_seconds": est.seconds}
    try:
        b = class_weighted_single_neuron(p, k, q=q, tau=tau, method=method, time_limit=limit)
        out.update(method=b.method, lower=b.lower, upper=b.upper, gap=(b.upper - b.lower) / b.lower,
                   exactness=b.upper_exactness, eliminated=b.weights.get("eliminated"))
    except RefusedError as exc:
        out.update(method="refused", refused=str(exc))
    end = resource.getrusage(resource.RUSAGE_SELF)
    out.update(wall=time.perf_counter() - t0, user=end.ru_utime - base.ru_utime,
               measured=(end.ru_maxrss - base.ru_maxrss) * 1024, baseline=base.ru_maxrss * 1024)
    print(json.dumps(out))
""")


def device() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{model}; {os.cpu_count()} cores; load average {load:.1f}"


def run_case(p: int, k: int, kind: str, seed: int, timeout: float, method: str = "auto", eps: float = 0.0,
             time_limit: float | None = None) -> dict:
    cmd = [sys.executable, "-c", CHILD, str(p), str(k), kind, str(seed), method, repr(eps),
           "none" if time_limit is None else repr(time_limit)]
    timer = shutil.which("time") and os.path.exists("/usr/bin/time")
    if timer:
        cmd = ["/usr/bin/time", "-v"] + cmd
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"method": f"timed out after {timeout:.0f} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    out = json.loads(lines[-1]) if lines else {"method": f"failed: {proc.stderr.strip().splitlines()[-1:]}"}
    if timer:
        user = re.search(r"User time \(seconds\): ([\d.]+)", proc.stderr)
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
        out["process_user"] = float(user.group(1)) if user else None
        out["process_rss"] = int(rss.group(1)) * 1024 if rss else None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=list(TARGETS))
    ap.add_argument("--kinds", nargs="*", default=list(KINDS), choices=KINDS)
    ap.add_argument("--eps", type=float, nargs="*", default=[1e-12, 1e-9, 1e-6, 1e-3],
                    help="the noise of the near-uniform and near-invariant weights (one row each)")
    ap.add_argument("--time-limit", type=float, default=None, help="time limit passed to each bracket")
    ap.add_argument("--seeds", type=int, nargs="*", default=[1])
    ap.add_argument("--method", default="auto", choices=("auto", "quartic-sos", "eliminated"))
    args = ap.parse_args()
    print(f"device: {device()}")
    print(f"{'case':>6} {'kind':>12} {'seed':>4} {'method':>12} {'U is':>9} {'gap':>9} {'wall s':>7} {'user s':>7} "
          f"{'proc user':>9} {'target s':>8} {'est. s':>7} {'estimate MiB':>12} {'measured MiB':>12} {'est/meas':>8}")
    for name in args.only:
        p, k = (int(x) for x in name.split("x"))
        for kind in args.kinds:
            for eps in (args.eps if kind.startswith("near") else [0.0]):
                for seed in args.seeds:
                    r = run_case(p, k, kind, seed, timeout=4 * TARGETS.get(name, 300) + 60, method=args.method,
                                 eps=eps, time_limit=args.time_limit)
                    label = f"{kind[:7]}{eps:.0e}" if kind.startswith("near") else kind
                    print_row(name, label, seed, r)


def print_row(name: str, kind: str, seed: int, r: dict) -> None:
    est, meas = r.get("estimate", float("nan")), r.get("measured", float("nan"))
    ratio = est / meas if meas and meas > 0 else float("inf")
    flag = " (noise)" if meas < NOISE_BYTES else ""
    gap = f"{r['gap']:.2e}" if "gap" in r else "-"
    est_s = f"{r['estimate_seconds']:7.1f}" if r.get("estimate_seconds") is not None else f"{'-':>7}"
    print(f"{name:>6} {kind:>12} {seed:>4} {r.get('method', '?')[:12]:>12} {r.get('exactness', '-'):>9} {gap:>9} "
          f"{r.get('wall', 0):7.1f} {r.get('user', 0):7.1f} {r.get('process_user') or 0:9.1f} "
          f"{TARGETS.get(name, 0):8d} {est_s} {est / 2**20:12.1f} {meas / 2**20:12.1f} {ratio:8.2f}{flag}", flush=True)
    if r.get("refused"):
        print(f"        refused: {r['refused']}")


if __name__ == "__main__":
    main()
