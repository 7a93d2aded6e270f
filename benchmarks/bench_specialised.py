"""Benchmark of ``verify --p P --k K`` at large ``P`` (the every-p proof evaluated at ``P``,
:mod:`margintheory.tasks.modular_addition.specialised`) beside today's per-``p`` compact path, and of the AM-GM upper
end beside the SOS one; not run by CI.  Prints measured figures only.

    python benchmarks/bench_specialised.py [--cases 10007:3 1009:9 ...] [--sos]

Each case runs in a fresh child process (wall seconds and peak resident memory of that process): the default
``verify(ModularAddition(P, K))`` (AM-GM upper end; the specialised lower end where the per-``p`` compact check does
not fit the 2 GiB budget) and, on the same machine in the same run, the per-``p`` path as it was
(``upper_method="sos"``, the compact check): a refusal is printed as such, with its one-line reason.

Measured 2026-12-08 on the 2-core shared machine (x86_64), load average 8.0, this script with ``--sos``:

                 P   k  path                   verdict         s  peak GB  gap / reason
             10007   3  every-p at P + am-gm   verified     4.24     0.22  0.0
             10007   3  per-p compact + sos    refused      1.15     0.21  compact check needs 3.7 GiB
              1009   9  per-p compact + am-gm  verified   113.31     0.62  0.0   (the compact check fits at k = 9)
              1009   9  per-p compact + sos    refused      1.02     0.21  block SOS needs 6.5 GiB
               101  12  per-p compact + am-gm  refused      1.37     0.21  compact check needs 33.0 GiB (the every-p
                                                                          facts at k = 12 as well)
               101  12  per-p compact + sos    refused      0.97     0.22  compact check needs 33.0 GiB
      999999999989   2  every-p at P + am-gm   verified     5.68     0.25  0.0
      999999999989   3  every-p at P + am-gm   verified     4.18     0.22  0.0
      999999999989   5  every-p at P + am-gm   verified     3.61     0.22  0.0
      999999999989   8  every-p at P + am-gm   verified    18.00     0.31  0.0
     1000000000039   3  every-p at P + am-gm   verified     4.36     0.22  0.0
    (the per-p path at P ~ 10^12 is refused for every k: its p x p table needs about 4e25 bytes)
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import resource
import time

DEFAULT_CASES = ("10007:3", "1009:9", "101:12", "999999999989:2", "999999999989:3", "999999999989:5",
                 "999999999989:8", "1000000000039:3")


def _child(p: int, k: int, method: str, queue: mp.Queue) -> None:
    """``method`` ``"am-gm"``: the default path; ``"sos"``: the per-p path as it was (compact check, SOS)."""
    from margintheory import ModularAddition, verify
    from margintheory.errors import MarginTheoryError

    t0 = time.perf_counter()
    try:
        res = verify(ModularAddition(p, k), upper_method=method, compact=method == "sos")
        out = (res.verdict, (res.certificate or {}).get("relative_gap"), bool(res.fields.get(
            "specialised_from_every_p")))
    except MarginTheoryError as exc:
        out = ("refused", str(exc)[:110], False)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    queue.put((*out, seconds, peak))


def measured(p: int, k: int, method: str) -> tuple:
    """``(verdict, gap or reason, specialised, seconds, peak bytes)`` of one verification in a fresh process."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(p, k, method, queue))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", nargs="*", default=list(DEFAULT_CASES), metavar="P:K")
    ap.add_argument("--sos", action="store_true", help="also run the per-p path as it was (compact check, SOS)")
    args = ap.parse_args()
    print(f"# {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"{'P':>14} {'k':>3}  {'path':<22} {'verdict':<9} {'s':>7} {'peak GB':>8}  gap / reason")
    for case in args.cases:
        p, k = (int(x) for x in case.split(":"))
        for method in ("am-gm", "sos") if args.sos else ("am-gm",):
            verdict, gap, spec, secs, peak = measured(p, k, method)
            path = ("every-p at P" if spec else "per-p compact") + f" + {method}"
            print(f"{p:>14} {k:>3}  {path:<22} {verdict:<9} {secs:7.2f} {peak / 2**30:8.2f}  {gap}")


if __name__ == "__main__":
    main()
