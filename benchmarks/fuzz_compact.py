"""A larger fuzz of the compact lower end against the exhaustive engine (the test suite runs a dozen examples).

    python benchmarks/fuzz_compact.py [--examples 2000] [--seed 0] [--rtol R]

Every case is an exact cosine network written in float64 and then changed (``tests/compact_cases.py``: rounding-size
noise, a neuron scaled by a hair, by a rational or an irrational factor, coprime weight ratios, a tiny extra neuron,
a zeroed or duplicated neuron).  For each: the shortcut must not raise; when it accepts the file its certified
interval must hold the exhaustive margin (L never above the true margin); ``verify`` must not raise, a claim
"margin = gamma*" it verifies must hold for the true margin within the tolerance it states, and ``verify`` and
``verify --exhaustive`` must give the same verdict (one claim, one tolerance: ``margintheory.core.margin_claims``).
Prints, per kind of change, how often the shortcut accepted (and how often it handed the file to the exhaustive
engine), the verdicts of both paths, and the widest certified interval (relative); exits 1 on the first violation.
Not run by CI; the device is printed first.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections import Counter

sys.path.insert(0, os.getcwd())

from hypothesis import HealthCheck, given, settings  # noqa: E402

from margintheory import verify  # noqa: E402
from margintheory.core.margin_claims import EQUALITY_RTOL  # noqa: E402
from margintheory.engines import fourier_margin as fm  # noqa: E402
from margintheory.engines.margins import exhaustive_margin  # noqa: E402
from tests.compact_cases import compact_cases  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rtol", type=float, default=None,
                    help="the claims' relative tolerance (default EQUALITY_RTOL); near the files' deviations (1e-13) "
                         "the shortcut's interval often straddles it and hands the file over")
    args = ap.parse_args(argv)
    print(f"device: {platform.processor() or platform.machine()}; {len(os.sched_getaffinity(0))} cores; load "
          f"{os.getloadavg()[0]:.1f}; Python {platform.python_version()}")
    counts: Counter = Counter()
    widest: dict[str, float] = {}

    @settings(max_examples=args.examples, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              derandomize=False)
    @given(compact_cases())
    def one(case):
        cm, why = fm.network_fourier_margin(case.network)
        em = exhaustive_margin(case.network.normalized())
        lo, hi = em.normalized_margin - em.normalized_tolerance, em.normalized_margin + em.normalized_tolerance
        result = verify(case.problem, network=case.network, certificate=False, rtol=args.rtol)
        exhaustive = verify(case.problem, network=case.network, certificate=False, exhaustive=True, rtol=args.rtol)
        how = "refused" if cm is None else "accepted" if result.fields["lower_method"] == "fourier" else "handed over"
        counts[(case.kind, how, result.verdict, exhaustive.verdict)] += 1
        assert result.verdict == exhaustive.verdict, (case, result.verdict, exhaustive.verdict)
        if cm is not None:
            assert cm.normalized_lower <= hi and lo <= cm.normalized_upper, (case, cm.normalized_lower, em)
            width = (cm.normalized_upper - cm.normalized_lower) / abs(em.normalized_margin)
            widest[case.kind] = max(widest.get(case.kind, 0.0), width)
        assert result.normalized_margin <= hi, case
        gamma = case.problem.gamma_star
        row = next(c for c in result.checks if c.name == "margin = gamma* (C.22)")
        if row.passed:  # the whole exhaustive enclosure of the true margin is within T of gamma*
            assert abs(lo - gamma) <= row.tolerance * gamma and abs(hi - gamma) <= row.tolerance * gamma, case

    t0 = time.perf_counter()
    import random

    random.seed(args.seed)
    one()
    total = sum(counts.values())
    handed = sum(n for (_, how, _, _), n in counts.items() if how == "handed over")
    print(f"{total} cases in {time.perf_counter() - t0:.0f} s; no violation; verify and verify --exhaustive gave the "
          f"same verdict on all {total} (0 disagreements); the shortcut handed {handed} file(s) it could not decide "
          f"to the exhaustive engine; claim tolerance rtol {EQUALITY_RTOL if args.rtol is None else args.rtol:g}")
    print("| change | shortcut | verdict (verify) | verdict (verify --exhaustive) | cases |")
    print("|---|---|---|---|---|")
    for (kind, how, a, b), n in sorted(counts.items()):
        print(f"| {kind} | {how} | {a} | {b} | {n} |")
    print("widest certified interval, relative to the margin: "
          + ", ".join(f"{k} {v:.1e}" for k, v in sorted(widest.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
