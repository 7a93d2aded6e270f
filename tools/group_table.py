"""Write docs/groups.md: every group of order <= 32 that the package names, verified by ``verify group``.

    python tools/group_table.py [--max-order 32] [--out docs/groups.md]

For each group: the types of its real irreps, whether Theorem 7.9's hypotheses (every irrep of real type) and
condition hold, gamma* (Theorem 7.9's closed form) against the computed [L, U], the irreps a max-margin network
uses (those tight under the optimal class weights), and the time the run took on this machine.  Every number in the
page is computed by the run; the page names the date and the machine.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from margintheory.core.groups import parse_group  # noqa: E402
from margintheory.core.problems import GroupComposition  # noqa: E402
from margintheory.verification import verify  # noqa: E402

ATOMS = (["S3", "S4", "A4", "Q8"] + [f"C{n}" for n in range(2, 33)] + [f"D{n}" for n in range(3, 17)]
         + [f"Dic{n}" for n in range(3, 9)])


def names(max_order: int) -> list[str]:
    """The atoms of order <= max_order, then the products of two atoms (smaller order first, then by name), each
    product named once."""
    order = {a: parse_group(a).order for a in ATOMS}
    atoms = [a for a in ATOMS if order[a] <= max_order]
    out = list(atoms)
    for a, b in itertools.combinations_with_replacement(atoms, 2):
        if order[a] * order[b] <= max_order:
            x, y = sorted((a, b), key=lambda n: (order[n], n))
            out.append(f"{x}x{y}")
    return sorted(dict.fromkeys(out), key=lambda n: (parse_group(n).order, n))


def row(name: str) -> str:
    t = time.perf_counter()
    r = verify(GroupComposition(name))
    seconds = time.perf_counter() - t
    f, c = r.fields, r.certificate or {}
    fs = f.get("frobenius_schur") or []
    kinds = {"real": sum(1 for x in fs if abs(x - 1) < 0.5), "complex": sum(1 for x in fs if abs(x) < 0.5),
             "quaternionic": sum(1 for x in fs if abs(x + 2) < 0.5)}
    types = ", ".join(f"{v} {k}" for k, v in kinds.items() if v) or "cyclic (rotations)"
    real = bool(fs) and kinds["complex"] == kinds["quaternionic"] == 0
    cond = f.get("condition_holds")
    cond_text = "-" if cond is None else ("holds" if cond else "fails")
    gamma = f.get("gamma_star")
    gamma_text = "-" if gamma is None else f"{gamma:.10g}"
    interval = "not computed" if not c else f"[{c['lower']:.10g}, {c['upper']:.10g}] ({c.get('upper_exactness', '')})"
    used = f.get("irreps_tight_under_dual") or f.get("irreps_used_by_lp") or ("every non-trivial" if cond else "-")
    if isinstance(used, list):
        used = ", ".join(str(u) for u in used)
    order = parse_group(name).order
    return (f"| {name} | {order} | {types} | {'yes' if real else 'no'} | {cond_text} | {gamma_text} | {interval} | "
            f"{used} | {r.verdict} | {seconds:.1f} s |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-order", type=int, default=32)
    ap.add_argument("--out", default=str(ROOT / "docs" / "groups.md"))
    ap.add_argument("--only", nargs="*", help="these groups only (printed, the page is not written)")
    a = ap.parse_args(argv)
    groups = a.only or names(a.max_order)
    rows = []
    for g in groups:
        rows.append(row(g))
        print(rows[-1], flush=True)
    if a.only:
        return 0
    head = f"""# Finite groups of order at most {a.max_order}

Every group of order at most {a.max_order} that `--group` names (the named families and the products of two of
them; a group may appear under several names, e.g. `C6` and `C2xC3`), run through `margintheory verify group` by
`tools/group_table.py` on {time.strftime('%Y-%m-%d')} ({platform.machine()}, {os.cpu_count()} cores; the times are
that machine's, while other jobs ran). How the irreps and both ends are computed: [Theory, any finite
group](theory.md#any-group).

- *irreps*: the real irreducible representations by type (Frobenius–Schur indicator of the realified character).
- *Thm 7.9 applies*: every irrep of real type (its hypothesis); *condition*: Lemma D.14's `sum_R d_R^1.5 chi_R(C) < 0`
  for every non-trivial class.
- *gamma\\**: Theorem 7.9's closed form where it applies (or `gamma*(n, 2)` for an odd cyclic group), against the
  true max margin `[L, U]`: `L` the margin of a checked network (float64, every input, minus its error bound), `U`
  proved (exact rationals) or certified (ball arithmetic) as labelled. "not computed": a group with an irrep of
  complex or quaternionic type, where the package has no upper end it can re-check.
- *irreps used*: the irreps a max-margin network may use (tight under the optimal class weights; every non-trivial
  irrep where the condition holds).

| group | order | irreps | Thm 7.9 applies | condition | gamma* | [L, U] | irreps used | verdict | time |
|---|---|---|---|---|---|---|---|---|---|
"""
    Path(a.out).write_text(head + "\n".join(rows) + "\n")
    print(f"wrote {a.out} ({len(rows)} groups)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
