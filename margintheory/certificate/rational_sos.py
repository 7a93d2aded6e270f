"""From the solver's float SOS certificate of the block form to an exact rational one (Peyrl and Parrilo's
rounding-and-projection, "Computing sum of squares decompositions with rational coefficients", 2008).

Input: the float Gram blocks ``G_b``, multiplier ``lambda`` and value ``gamma`` of
:func:`margintheory.certificate.block_sos.solve_block_sos` for ``scale * g_k`` (``scale`` a power of two that brings
``gamma`` near 1).  Steps, all in exact rational arithmetic after the first:

1. *shift*: add ``delta`` times an exact certificate of the ``gamma`` polynomial ``N`` with a positive *diagonal*
   Gram matrix ``D`` (``N = |z|^(2h) = sum_c binom(h; c) |z^c|^2`` spread evenly over the basis monomials with
   ``a + b = c``; for ``N = 1``: ``1 = (1/(h+1)) sum_{j<=h} |z|^(2j) + (1 - |z|^2) mu`` with
   ``mu = sum_{i<h} (h-i)/(h+1) |z|^(2i)``).  This raises ``gamma`` by ``delta`` and every eigenvalue by
   ``>= delta min D``, room for the next two steps;
2. *round* every entry to the dyadic grid ``2^-60``;
3. *project* the Gram blocks exactly onto the coefficient-matching equations: the residual of each monomial ``mu``
   is spread evenly over the Gram entries ``(r, s)`` with ``conj(m_r) m_s = mu`` (the orthogonal projection, since
   every entry enters exactly one equation); the multiplier is kept as rounded (made conjugation-symmetric);
4. *check* with the independent checker's exact routines: the polynomial identity and an exact LDL^T of every
   block.  If a block is not PSD, ``delta`` is raised (x4) and steps 1-4 repeated; after ``MAX_TRIES`` a
   :class:`~margintheory.errors.SolverError` is raised -- there is no float fallback that could pass as exact.
   (A float eigenvalue screen of the projected blocks skips the exact checks of shifts that would clearly fail;
   it only saves time, it never accepts anything.)
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from margintheory.certificate import checker
from margintheory.certificate.block_sos import BlockSOSSolution, BlockStructure, Monomial, conj_times, conjugate
from margintheory.errors import SolverError

GRID_BITS = 60
#: first shift (relative to gamma ~ 1) and the number of x4 increases tried
FIRST_DELTA = Fraction(1, 2**36)
MAX_TRIES = 4


@dataclass
class RationalSOS:
    """An exact certificate of ``scale * g_k <= gamma`` on the unit sphere (module docstring)."""

    k: int
    homogeneous: bool
    half_degree: int
    scale: Fraction
    gamma: Fraction
    blocks: list[tuple[list[Monomial], list[list[Fraction]]]]
    multiplier: list[tuple[Monomial, Fraction]]
    delta: Fraction
    tries: int

    @property
    def bound(self) -> Fraction:
        """The proved ``max_{|z| = 1} g_k <= gamma / scale``."""
        return self.gamma / self.scale

    def to_json(self) -> dict[str, object]:
        """The ``sos`` section of a certificate file (exact rationals as ``"a/b"`` strings)."""
        return {
            "k": self.k,
            "form": "g_k = Re(conj(z_w) z_1 ... z_k), z = (z_1, ..., z_k, z_w) in C^(k+1)",
            "monomials": "z^a conj(z)^b written as the exponent list a + b (length 2(k+1))",
            "identity": "sum_b sum_{r,s} gram_b[r][s] conj(m_r) m_s + lambda (1 - |z|^2) = gamma N - scale g_k, "
                        "N = |z|^(2 half_degree) if homogeneous else 1",
            "homogeneous": self.homogeneous,
            "half_degree": self.half_degree,
            "scale": str(self.scale),
            "gamma": str(self.gamma),
            "blocks": [{"basis": [list(m) for m in basis], "gram": [[str(x) for x in row] for row in gram]}
                       for basis, gram in self.blocks],
            "multiplier": [[list(m), str(c)] for m, c in self.multiplier],
        }


def _multinomial(c: tuple[int, ...]) -> int:
    return math.factorial(sum(c)) // math.prod(math.factorial(x) for x in c)


def shift_certificate(structure: BlockStructure) -> tuple[dict[Monomial, Fraction], dict[Monomial, Fraction]]:
    """``(D, mu)``: diagonal Gram entries per basis monomial and multiplier with ``sum D_m |m|^2 + mu (1 - |z|^2)
    = N`` exactly (module docstring, step 1)."""
    n = structure.nvars
    h = structure.half_degree
    diag: dict[Monomial, Fraction] = {}
    for blk in structure.blocks:
        for m in blk:
            c = tuple(m[i] + m[n + i] for i in range(n))
            share = Fraction(_multinomial(c), math.prod(x + 1 for x in c))
            diag[m] = share if structure.homogeneous else share / (h + 1)
    mu: dict[Monomial, Fraction] = {}
    if not structure.homogeneous:
        for i in range(h):
            for m, coef in checker.norm_power(n, i).items():
                mu[m] = mu.get(m, Fraction(0)) + coef * Fraction(h - i, h + 1)
    return diag, mu


def _dyadic(x: float) -> Fraction:
    return Fraction(int(round(float(x) * 2**GRID_BITS)), 2**GRID_BITS)


def _entry_index(structure: BlockStructure) -> dict[Monomial, list[tuple[int, int, int]]]:
    """For every monomial ``mu`` the Gram entries ``(block, r, s)`` with ``conj(m_r) m_s = mu``."""
    idx: dict[Monomial, list[tuple[int, int, int]]] = defaultdict(list)
    for b, blk in enumerate(structure.blocks):
        for r, mr in enumerate(blk):
            for s, ms in enumerate(blk):
                idx[conj_times(mr, ms)].append((b, r, s))
    return idx


def _attempt(sol: BlockSOSSolution, scale: Fraction, delta: Fraction,
             index: dict[Monomial, list[tuple[int, int, int]]], shift: tuple[dict, dict]) -> RationalSOS:
    st = sol.structure
    n = st.nvars
    diag, mu = shift
    gamma = _dyadic(sol.gamma * float(scale)) + delta
    grams: list[list[list[Fraction]]] = []
    for blk, G in zip(st.blocks, sol.grams, strict=True):
        Gs = np.asarray(G) * float(scale)
        rows = [[_dyadic(Gs[r, s]) for s in range(len(blk))] for r in range(len(blk))]
        for r, m in enumerate(blk):
            rows[r][r] += delta * diag[m]
        grams.append(rows)
    lam: dict[Monomial, Fraction] = {}
    for m, v in zip(st.multiplier, sol.multiplier, strict=True):
        lam[m] = _dyadic(v * float(scale)) + delta * mu.get(m, Fraction(0))
    for m in list(lam):  # conjugation-symmetric multiplier (the target is), so the projection keeps G symmetric
        mc = conjugate(m)
        if mc in lam and mc != m:
            avg = (lam[m] + lam[mc]) / 2
            lam[m] = lam[mc] = avg
    # target gamma N - scale g_k minus the multiplier's part: what the Gram blocks must produce
    need: dict[Monomial, Fraction] = defaultdict(Fraction)
    for m, c in st.gamma_polynomial().items():
        need[m] += gamma * c
    for m, c in checker.block_form(st.k).items():
        need[m] -= scale * c
    for m, c in lam.items():
        need[m] -= c
        for var in range(n):
            e = list(m)
            e[var] += 1
            e[n + var] += 1
            need[tuple(e)] += c
    residual = dict(need)
    for mono, entries in index.items():
        residual[mono] = residual.get(mono, Fraction(0)) - sum(grams[b][r][s] for b, r, s in entries)
    unmatched = [m for m, v in residual.items() if v != 0 and m not in index]
    if unmatched:
        raise SolverError(f"exact rounding: monomial {list(unmatched[0])} cannot be produced by the Gram blocks")
    for mono, entries in index.items():
        corr = residual.get(mono, Fraction(0)) / len(entries)
        if corr:
            for b, r, s in entries:
                grams[b][r][s] += corr
    blocks = [(list(blk), g) for blk, g in zip(st.blocks, grams, strict=True)]
    multiplier = sorted((m, c) for m, c in lam.items() if c != 0)
    return RationalSOS(st.k, st.homogeneous, st.half_degree, scale, gamma, blocks, multiplier, delta, 0)


def _float_screen_fails(cert: RationalSOS, margin: float = 1e-13) -> bool:
    """Whether some projected block has a float eigenvalue below ``margin`` (time saver, see step 4)."""
    for _basis, gram in cert.blocks:
        G = np.array([[float(x) for x in row] for row in gram])
        if len(G) and float(np.linalg.eigvalsh(G)[0]) < margin:
            return True
    return False


def exact_certificate(sol: BlockSOSSolution) -> RationalSOS:
    """Round, project and check (module docstring); the result has passed the independent checker's identity and
    LDL^T tests.  ``SolverError`` if no shift up to ``FIRST_DELTA * 4^(MAX_TRIES-1)`` gives PSD blocks."""
    scale = Fraction(2) ** (-round(math.log2(sol.gamma)))
    index = _entry_index(sol.structure)
    shift = shift_certificate(sol.structure)
    delta = FIRST_DELTA
    worst = ""
    for attempt in range(1, MAX_TRIES + 1):
        cert = _attempt(sol, scale, delta, index, shift)
        cert.tries = attempt
        if attempt < MAX_TRIES and _float_screen_fails(cert):
            worst = "float eigenvalue screen"
            delta *= 4
            continue
        defect = checker.identity_defect(cert.k, cert.homogeneous, cert.half_degree, cert.scale, cert.gamma,
                                         cert.blocks, cert.multiplier)
        if defect:
            raise SolverError(f"exact rounding: the projected identity has {len(defect)} non-zero coefficients")
        bad = []
        for b, (_basis, gram) in enumerate(cert.blocks):
            ok, why = checker.ldl_psd(gram)
            if not ok:
                bad.append(f"block {b}: {why}")
        if not bad:
            return cert
        worst = bad[0]
        delta *= 4
    raise SolverError(f"exact rounding of the SOS certificate for k = {sol.k} failed after {MAX_TRIES} shifts "
                      f"(last: {worst}); no proved bound")
