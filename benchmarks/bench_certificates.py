"""Benchmark of the proved upper bound and its certificate (not run by CI).

    python benchmarks/bench_certificates.py [--quick] [--markdown]

Each case runs in a fresh interpreter (no cache shared between cases; peak memory = the child's max RSS,
interpreter and libraries included): the whole chain of :func:`margintheory.certificate.upper_bound.prove_upper_bound`
(symbolic proof of the reduction, exact cyclotomic check where cheap, block SOS solve, exact rounding and LDL^T),
then the certificate document re-checked by the independent checker.  Columns: wall time, peak MiB, the relative
gap ``U/gamma* - 1`` decided in exact arithmetic (``gamma*`` only as the comparison value), the exactness reached,
and the checker's verdict.  The baseline, measured in the same run, is the float-certified per-frequency bracket of
the previous code path (cvxpy + a-posteriori error margin on the expanded polynomial) at the sizes where it runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

CASES = [(p, k) for k in (2, 3, 4, 5, 6) for p in (5, 31, 199)] + [(7, 7)]
QUICK = [(5, 2), (199, 2), (7, 3), (199, 4), (199, 6)]
BASELINE = [(5, 2), (5, 3), (7, 3)]


def child(p: int, k: int, mode: str) -> None:
    from fractions import Fraction

    import sympy as sp

    t0 = time.perf_counter()
    if mode == "baseline":
        from margintheory.solvers.single_neuron import solve_single_neuron

        b = solve_single_neuron(p, k, method="fourier-blocks", n_starts=4)
        out = {"seconds": time.perf_counter() - t0, "gap": b.upper / _gamma(p, k) - 1, "exactness": "certified",
               "check": "-"}
    else:
        from margintheory.certificate import checker
        from margintheory.certificate.upper_bound import certificate_document, prove_upper_bound
        from margintheory.core.theory import gamma_star_exact

        ub = prove_upper_bound(p, k, max_memory=4 * 2**30)
        doc = json.loads(json.dumps(certificate_document(ub, None, "proved", "benchmark", None)))
        status = checker.check_data(doc).status
        g2 = sp.nsimplify(sp.expand(gamma_star_exact(p, k) ** 2))
        ratio2 = ub.upper**2 / Fraction(int(g2.p), int(g2.q))
        assert ratio2 >= 1
        out = {"seconds": time.perf_counter() - t0, "gap": float(ratio2) ** 0.5 - 1, "exactness": "proved",
               "check": status, "blocks": ub.solver["gram_blocks"], "largest": ub.solver["largest_block"]}
    out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def _gamma(p: int, k: int) -> float:
    from margintheory.core.theory import gamma_star

    return gamma_star(p, k)


def run_case(p: int, k: int, mode: str) -> dict:
    res = subprocess.run([sys.executable, __file__, "--child", str(p), str(k), mode], capture_output=True, text=True)
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--child", nargs=3)
    args = ap.parse_args()
    if args.child:
        child(int(args.child[0]), int(args.child[1]), args.child[2])
        return
    cases = QUICK if args.quick else CASES
    rows = []
    print("| (p, k) | time s | peak MiB | U/gamma* - 1 | exactness | checker | Gram blocks (largest) |")
    print("|---|---|---|---|---|---|---|")
    for p, k in cases:
        r = run_case(p, k, "proved")
        rows.append(((p, k), r))
        if "error" in r:
            print(f"| ({p}, {k}) | - | - | - | refused/failed: {r['error'][:80]} | - | - |")
        else:
            print(f"| ({p}, {k}) | {r['seconds']:.2f} | {r['peak_mib']:.0f} | {r['gap']:.2e} | {r['exactness']} | "
                  f"{r['check']} | {r['blocks']} ({r['largest']}) |", flush=True)
    print("\nbaseline (same run): float-certified per-frequency bracket of the expanded polynomial (cvxpy)")
    print("| (p, k) | baseline s | baseline peak MiB | baseline gap | proved path s | ratio proved/baseline |")
    print("|---|---|---|---|---|---|")
    for p, k in BASELINE:
        b = run_case(p, k, "baseline")
        r = run_case(p, k, "proved")
        if "error" in b or "error" in r:
            print(f"| ({p}, {k}) | {b.get('error', '')[:60]} | | | {r.get('error', '')[:60]} | |")
            continue
        print(f"| ({p}, {k}) | {b['seconds']:.2f} | {b['peak_mib']:.0f} | {b['gap']:.2e} | {r['seconds']:.2f} | "
              f"{r['seconds'] / b['seconds']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
