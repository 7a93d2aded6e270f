"""The lower end ``L`` without enumerating the ``p^k`` inputs: the margin of a single-frequency cosine network from
its phase moments (docs/theory.md#compact-margin).

**Lemma (logits through the phase moments).**  Let every neuron ``i`` of a network on ``Z_p`` have one frequency
``zeta_i`` with ``2 zeta_i != 0 (mod p)``, one amplitude ``A_i`` on all its ``k + 1`` vectors, and phases
``phi_i in T^k``, ``psi_i``::

    u_ij[x] = A_i cos(phi_ij + 2 pi zeta_i x / p),      w_i[c] = A_i cos(psi_i + 2 pi zeta_i c / p).

Writing each cosine as two exponentials and expanding ``(sum_j u_ij[a_j])^k w_i[c]``,

    f(a)[c] = 2^-(k+1) sum_zeta sum_(n, eps) N_k(n) mu_zeta(n, eps) omega_p^(zeta (n.a + eps c)),
    mu_zeta(n, eps) = sum_(i: zeta_i = zeta) A_i^(k+1) exp(i (n.phi_i + eps psi_i)),

over ``n in Z^k`` with ``|n|_1 <= k``, ``|n|_1 = k (mod 2)`` and ``eps = +-1``; ``N_k(n)`` is the coefficient of
``z^n`` in ``(sum_j (z_j + 1/z_j))^k`` (:func:`expansion_coefficient`).  **If ``mu_zeta(n, eps) = 0`` for every
frequency and every non-constant ``n``** (the *off-diagonal moments* vanish), only ``n = t (1, ..., 1)`` remains
(``t = +-1``, and ``t = 0`` for even ``k``), ``n.a = t s`` with ``s = a_1 + ... + a_k mod p``, and

    f(a)[c] = F(s, c) = 2 sum_t K_t Re G_t((t s + c) mod p),     K_t = 2^-(k+1) N_k(t (1, ..., 1)),
    G_t(y) = sum_zeta mu_zeta(t (1, ..., 1), +1) omega_p^(zeta y)

(the ``eps = -1`` terms are the complex conjugates of the ``eps = +1`` ones).  The margin is
``min_s (F(s, s) - max_(c != s) F(s, c))``: ``O(p^2)`` work once the moments are known, never ``p^k``.  The norm is
exact as well: ``sum_x cos^2(phi + 2 pi zeta x / p) = p / 2`` when ``2 zeta != 0 (mod p)``, so
``||theta_i||_2^(k+1) = ((k+1) p / 2)^((k+1)/2) A_i^(k+1)``.  The sufficient condition needs no hypothesis on ``p``
(prime or not); it is the non-constant part of the per-frequency moment condition of
:mod:`margintheory.core.phase_measures` (Lemmas C.14, C.15 and C.17 of Li, Liang, Shi, Song, Zhou, "Fourier circuits in
neural networks and transformers", arXiv:2402.09469).

**How the hypotheses are checked.**  The network is described exactly (:class:`CosineNetwork`): integer phase
numerators over a common denominator ``Q`` and rational weights ``A_i^(k+1) / sigma^(k+1)``.  Every moment is then
``sum_r c_r omega_Q^r`` with integer counts ``c``, and it vanishes iff ``c`` reduces to zero modulo the cyclotomic
polynomial ``Phi_Q`` (:func:`check_structure`; integers only).  When moreover every frequency carries only its
*wanted* moment (all of ``M_k`` of :mod:`margintheory.core.phase_measures` vanishes, phases aligned) with the same
total weight, ``F(s, c) = (k!/2^k) sigma^(k+1) W S(s - c)`` with ``S(x) = sum_zeta cos(2 pi zeta x / p)``, and
``S`` is computed exactly in ``Q(omega_p)``: the margin is then exact (``proved``).  Otherwise ``F`` is evaluated in
float64 from the exact moments, with tables of cosines computed in ball arithmetic (python-flint ``arb``) and an
a-priori rounding bound (``certified``).

**A network given by its float64 weights** (:func:`network_fourier_margin`) is first matched with an exact
description ``N*`` (:func:`recognize_cosine_network`: frequency, amplitude and phases of each neuron read from its
DFT, the phases and weight ratios recognised as small-denominator rationals); that is only a proposal.  What is
proved: every weight of the file lies within a rigorous bound ``d_ij`` of ``N*``'s value (cosine tables in ``arb``,
rounding analysed), and ``d_ij <= ROUNDING_TOLERANCE * A_i`` -- the file is ``N*`` up to float64 rounding.  A
network farther from every exact description (a weight moved by ``1e-7``, float32 weights, a trained network)
is refused the shortcut: the caller falls back to the exhaustive engine.  For an accepted file every logit differs
from ``N*``'s by at most ``Delta = sum_i [(S_i + D_i)^k (A_i + d_iw) - S_i^k A_i]`` (``S_i = k A_i``,
``D_i = sum_j d_ij``), and its norm by the triangle inequality, so ``L`` is ``N*``'s margin minus these rigorous
bounds (``certified``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache

import numpy as np
import sympy as sp

from margintheory.core import phase_measures
from margintheory.core.checks import Exactness
from margintheory.core.network import PolyNetwork
from margintheory.core.phase_measures import PhaseMeasure, family_size
from margintheory.core.problems import ModularAddition
from margintheory.core.theory import frequencies
from margintheory.runtime.budget import Estimate

EPS = float(np.finfo(np.float64).eps)
#: a float64 network is "the exact network" when every weight is within this fraction of its neuron's amplitude of
#: the exact value (about 1000 units in the last place: rounding, never a perturbation or float32 storage)
ROUNDING_TOLERANCE = 2.0**-42
#: phase and weight-ratio denominators tried when recognising an exact description from float weights
MAX_PHASE_DENOMINATOR = 10_000
MAX_WEIGHT_DENOMINATOR = 1_000_000
#: rows of moment indices processed at once (bounded memory for large k)
_MOMENT_CHUNK = 2048
#: throughput assumed by the up-front run-time estimate (moment residues per second, table entries per second)
_RESIDUES_PER_SECOND = 5.0e7
_TABLE_PER_SECOND = 2.0e7


# ---------------------------------------------------------------- the expansion of (sum_j cos)^k cos

def expansion_coefficient(k: int, n: tuple[int, ...] | list[int]) -> int:
    """``N_k(n)``: the coefficient of ``z^n`` in ``(sum_j (z_j + 1/z_j))^k`` (exact integer).

    ``N_k(n) = sum_beta k! / prod_j ((beta_j + n_j)/2)! ((beta_j - n_j)/2)!`` over ``beta_j >= |n_j|`` of the parity
    of ``n_j`` with ``sum beta_j = k`` (``beta_j`` factors of coordinate ``j``, split into ``z_j`` and ``1/z_j``);
    computed by a convolution over the coordinates.  ``N_k(+-(1, ..., 1)) = k!``.
    """
    if len(n) != k:
        raise ValueError(f"n must have {k} coordinates")
    poly = {0: Fraction(1)}
    for nj in n:
        nxt: dict[int, Fraction] = {}
        for used, coef in poly.items():
            for beta in range(abs(nj), k - used + 1, 2):
                term = coef / (math.factorial((beta + nj) // 2) * math.factorial((beta - nj) // 2))
                nxt[used + beta] = nxt.get(used + beta, Fraction(0)) + term
        poly = nxt
    value = poly.get(k, Fraction(0)) * math.factorial(k)
    if value.denominator != 1:  # pragma: no cover - a multinomial count is an integer
        raise ArithmeticError("expansion coefficient is not an integer")
    return int(value)


def diagonal_indices(k: int) -> tuple[int, ...]:
    """The ``t`` with ``n = t (1, ..., 1)`` in the expansion: ``-1, 1`` (and ``0`` for even ``k``)."""
    return (-1, 0, 1) if k % 2 == 0 else (-1, 1)


@lru_cache(maxsize=16)
def off_diagonal_indices(k: int) -> np.ndarray:
    """Every non-constant ``n in Z^k`` with ``|n|_1 <= k`` and ``|n|_1 = k (mod 2)`` (read-only, int64)."""
    rows = phase_measures.l1_ball(k, k)
    left = k - np.abs(rows).sum(axis=1)
    keep = (left % 2 == 0) & np.any(rows != rows[:, :1], axis=1)  # |n|_1 = k - left; non-constant
    out = np.ascontiguousarray(rows[keep])
    out.setflags(write=False)
    return out


def ball_size(k: int, radius: int) -> int:
    """``|{n in Z^k : |n|_1 <= radius}|`` (``sum_r N(k, r)``, ``N(k, r) = sum_i 2^i C(k, i) C(r-1, i-1)``)."""
    return 1 + sum(2**i * math.comb(k, i) * math.comb(r - 1, i - 1) for r in range(1, radius + 1)
                   for i in range(1, min(k, r) + 1))


#: the most rows of a piece of :func:`off_diagonal_chunks`
OFF_DIAGONAL_CHUNK_ROWS = 2**18


def off_diagonal_chunks(k: int, max_rows: int = OFF_DIAGONAL_CHUNK_ROWS) -> Iterator[np.ndarray]:
    """:func:`off_diagonal_indices` in pieces of at most about ``max_rows`` rows (the whole set has ``C(k)``
    rows, 40 million at ``k = 11``: 3.5 GB as one array): the first coordinates are fixed one at a time until the
    rest of the ball fits."""
    def pieces(prefix: tuple[int, ...], left: int) -> Iterator[np.ndarray]:
        dim = k - len(prefix)
        if dim == 0 or ball_size(dim, left) <= max_rows:
            tail = phase_measures.l1_ball(dim, left) if dim else np.zeros((1, 0), dtype=np.int64)
            yield np.concatenate([np.broadcast_to(np.asarray(prefix, dtype=np.int64), (len(tail), len(prefix))),
                                  tail], axis=1)
            return
        for v in range(-left, left + 1):
            yield from pieces((*prefix, v), left - abs(v))

    for rows in pieces((), k):
        keep = ((k - np.abs(rows).sum(axis=1)) % 2 == 0) & np.any(rows != rows[:, :1], axis=1)
        if keep.any():
            yield rows[keep]


def largest_off_diagonal_piece(k: int, max_rows: int = OFF_DIAGONAL_CHUNK_ROWS) -> int:
    """Rows of the largest piece :func:`off_diagonal_chunks` forms (before the constant rows are dropped): the
    first coordinates are fixed until the rest of the ball fits, and fixing them at 0 leaves the largest rest."""
    dim = k
    while dim > 0 and ball_size(dim, k) > max_rows:
        dim -= 1
    return ball_size(dim, k)


def off_diagonal_count(k: int) -> int:
    """``len(off_diagonal_indices(k))`` without building them (for the up-front estimates): the ``n`` with
    ``|n|_1 = r`` number ``sum_i 2^i C(k, i) C(r - 1, i - 1)`` (``1`` for ``r = 0``); the constant ones are
    ``+-(1, ..., 1)`` and, for even ``k``, ``0``."""
    total = 0
    for r in range(k % 2, k + 1, 2):
        total += 1 if r == 0 else sum(2**i * math.comb(k, i) * math.comb(r - 1, i - 1) for i in range(1, min(k, r) + 1))
    return total - (3 if k % 2 == 0 else 2)


# ---------------------------------------------------------------- exact descriptions

@dataclass(frozen=True)
class CosineGroup:
    """The neurons at each frequency in ``frequencies``: one per atom, with phases ``2 pi phases[a] / Q`` (columns
    ``u_1, ..., u_k, w``) and ``A^(k+1) = scale_power * weights[a]`` (the network's ``scale_power``)."""

    frequencies: tuple[int, ...]
    phases: np.ndarray
    weights: tuple[Fraction, ...]
    #: optional: the atoms are ``{t G mod Q}``, ``t in Z_Q``, with equal weights (checked before it is used)
    cyclic_generator: tuple[int, ...] | None = None

    @cached_property
    def total_weight(self) -> Fraction:
        return sum(self.weights, Fraction(0))


@dataclass(frozen=True)
class CosineNetwork:
    """A single-frequency cosine network described exactly (module docstring): ``p``, ``k``, the common phase
    denominator ``Q``, the frequency groups and ``scale_power = sigma^(k+1)``."""

    p: int
    k: int
    denominator: int
    groups: tuple[CosineGroup, ...]
    scale_power: Fraction = Fraction(1)
    source: str = ""

    def __post_init__(self) -> None:
        for g in self.groups:
            if g.phases.ndim != 2 or g.phases.shape[1] != self.k + 1 or len(g.phases) != len(g.weights):
                raise ValueError("phases must be (atoms, k+1) with one weight per atom")
            if any(w <= 0 for w in g.weights) or not g.frequencies:
                raise ValueError("weights must be positive and every group needs a frequency")
            if any(not 1 <= z < self.p or (2 * z) % self.p == 0 for z in g.frequencies):
                raise ValueError(f"frequencies must satisfy 1 <= zeta < p and 2 zeta != 0 mod {self.p}")

    @property
    def width(self) -> int:
        return sum(len(g.frequencies) * len(g.weights) for g in self.groups)

    @property
    def atoms(self) -> int:
        """Atoms over all groups (the moment check's size)."""
        return sum(len(g.weights) for g in self.groups)

    def frequency_weights(self) -> dict[int, Fraction]:
        """``W_zeta``: the total weight at each frequency (summed over the groups that contain it)."""
        out: dict[int, Fraction] = {}
        for g in self.groups:
            for z in g.frequencies:
                out[z] = out.get(z, Fraction(0)) + g.total_weight
        return out

    def norm_power_squared(self) -> Fraction:
        """``(sum_i ||theta_i||^(k+1))^2 = ((k+1) p/2)^(k+1) (scale_power sum_i w_i)^2`` (exact; module
        docstring)."""
        total = sum(self.frequency_weights().values(), Fraction(0)) * self.scale_power
        return Fraction((self.k + 1) * self.p, 2) ** (self.k + 1) * total * total


def cosine_network_from_measure(p: int, measure: PhaseMeasure, *, scale_power: Fraction = Fraction(1),
                                source: str = "") -> CosineNetwork:
    """The network of :func:`margintheory.core.construction.build_phase_measure_network` described exactly: the
    measure's
    atoms at every frequency ``1..(p-1)/2``, class phase ``theta_1 + ... + theta_k``."""
    group = measure_group(measure, tuple(frequencies(p)))
    return CosineNetwork(p, measure.k, measure.denominator, (group,), scale_power, source or measure.description)


def measure_group(measure: PhaseMeasure, zetas: tuple[int, ...]) -> CosineGroup:
    """The measure's atoms as one group of neurons at the frequencies ``zetas``, class phase ``theta_1 + ... +
    theta_k`` (the moments of the group do not depend on ``zetas`` or on ``p``)."""
    q = measure.denominator
    pts = np.asarray(measure.points, dtype=np.int64) % q
    phases = np.concatenate([pts, pts.sum(axis=1, keepdims=True) % q], axis=1)
    phases.setflags(write=False)
    gen = None
    if measure.cyclic_generator is not None:
        gen = (*measure.cyclic_generator, sum(measure.cyclic_generator) % q)
    return CosineGroup(zetas, phases, tuple(measure.weights), gen)


def family_scale_power(family: str, k: int) -> Fraction:
    """``sigma^(k+1)`` of a family network at the scale of :func:`margintheory.core.construction.build_construction`:
    ``2^k / k!`` for Lemma C.18 (network function ``sum_zeta cos_zeta(s - c)``), ``1`` for the smaller families."""
    return Fraction(2**k, math.factorial(k)) if family == "lemma-c18" else Fraction(1)


def construction_cosine_network(problem: ModularAddition, family: str = "lemma-c18") -> CosineNetwork:
    """The construction of Lemma C.18 (``family="lemma-c18"``) or a family network of
    :mod:`margintheory.core.phase_measures`, exactly, with the unnormalized scale of
    :func:`margintheory.core.construction.build_construction`: Lemma C.18's neurons have ``A^(k+1) = 1/(2^(k-1) k!)``
    (``2^(2k-1)`` atoms of weight ``2^-(2k-1)``, so ``scale_power = 2^k / k!``: network function
    ``sum_zeta cos_zeta(s - c)``); the families have ``A^(k+1) = w``."""
    p, k = problem.p, problem.k
    measure = phase_measures.family_measure(family, k)  # looked up at call time (tests replace it)
    scale = family_scale_power(family, k)
    name = "the construction of Lemma C.18" if family == "lemma-c18" else f"the {family} network"
    return cosine_network_from_measure(p, measure, scale_power=scale, source=f"{name} ({measure.description})")


def family_atoms(family: str, k: int) -> int | float:
    """Atoms per frequency of a family (``inf`` when no such network can be built), without building it."""
    if family == "lemma-c18":
        return 2 ** (2 * k - 1) if k <= 64 else math.inf
    return family_size(family, k)


# ---------------------------------------------------------------- the moment structure, exactly

@dataclass(frozen=True)
class GroupStructure:
    """Exact moments of one group: ``failures`` lists (up to 10) non-constant ``n`` whose moment ``mu(n, +1)`` is
    not zero; ``diagonal[t]`` holds the integer counts ``c_r`` (length ``Q``) of ``L mu(t (1,...,1), +1) =
    sum_r c_r omega_Q^r`` with ``L = weight_scale``; ``aligned``: ``psi = phi_1 + ... + phi_k`` on every atom."""

    checked: int
    failures: list[tuple[int, ...]]
    diagonal: dict[int, np.ndarray]
    weight_scale: int
    aligned: bool
    wanted_only: bool


@dataclass(frozen=True)
class Structure:
    """Verdict of :func:`check_structure` on a whole network."""

    groups: tuple[GroupStructure, ...]
    seconds: float

    @property
    def passed(self) -> bool:
        """Every off-diagonal moment of every frequency vanishes: the logits depend on ``a`` only through ``s``."""
        return all(not g.failures for g in self.groups)

    @property
    def wanted_only(self) -> bool:
        """Moreover only the wanted moment survives at every frequency (every unwanted moment of ``M_k``
        vanishes and the phases are aligned)."""
        return self.passed and all(g.wanted_only for g in self.groups)

    @property
    def checked(self) -> int:
        return sum(g.checked for g in self.groups)

    def failure_text(self) -> str:
        bad = [f for g in self.groups for f in g.failures][:3]
        return ", ".join(f"mu(n={f[:-1]}, eps={f[-1]})" for f in bad)


class _SuffixIndex:
    """Distinct tails ``phi_a[j:k]`` of the atoms at every depth ``j``: ``ids[j][a]``, ``head[j][id]`` (the tail's
    first phase) and ``step[j][id]`` (the id of the tail one coordinate shorter)."""

    def __init__(self, phi: np.ndarray) -> None:
        k = phi.shape[1]
        self.ids, self.count, self.head, self.step = [], [], [], []
        for j in range(k + 1):
            if j < k:
                uniq, inv = np.unique(phi[:, j:], axis=0, return_inverse=True)
            else:
                uniq, inv = np.zeros((1, 0), dtype=np.int64), np.zeros(len(phi), dtype=np.int64)
            self.ids.append(np.asarray(inv).ravel())
            self.count.append(len(uniq))
        for j in range(k):
            head = np.zeros(self.count[j], dtype=np.int64)
            step = np.zeros(self.count[j], dtype=np.int64)
            head[self.ids[j]] = phi[:, j]
            step[self.ids[j]] = self.ids[j + 1]
            self.head.append(head)
            self.step.append(step)


#: entries of the sparse moment histogram held at once; a larger level is split into blocks of nodes
MOMENT_ENTRIES_LIMIT = 2**17


def moment_blocks(phases: np.ndarray, iw: np.ndarray, k: int, q: int, limit: int = MOMENT_ENTRIES_LIMIT):
    """Every ``n in Z^k`` with ``|n|_1 <= k`` and its nonzero integer counts ``c[n, r] = sum_a iw_a
    [n . phi_a + psi_a = r (mod Q)]`` (so ``mu(n, +1) = sum_r c[n, r] omega_Q^r / L``), exactly, without forming
    the ``|n| x atoms`` table: the coordinates of ``n`` are fixed one at a time, and at depth ``j`` an atom matters
    only through its partial residue and its remaining phases ``phi_a[j:]``, so the weights are merged by that key
    (a sparse histogram that shrinks as ``j`` grows).  Yields blocks ``(nodes, node, r, c)``: the rows ``nodes``
    (values of ``n``) and entries sorted by ``node``; a level larger than ``limit`` entries is split by nodes."""
    phi = np.asarray(phases[:, :k], dtype=np.int64) % q
    tails = _SuffixIndex(phi)
    first = _merge(np.zeros(len(phi), dtype=np.int64), np.asarray(phases[:, k], dtype=np.int64) % q,
                   tails.ids[0], np.asarray(iw, dtype=np.int64), q, tails.count[0], 1)
    stack = [(np.zeros((1, 0), dtype=np.int64), *first, 0)]
    while stack:
        nodes, node, rho, sid, w, j = stack.pop()
        if j == k:
            yield nodes, node, rho, w
            continue
        kids = 2 * (k - np.abs(nodes).sum(axis=1)) + 1
        if int(kids[node].sum()) > limit and len(nodes) > 1:
            half = len(nodes) // 2
            cut = int(np.searchsorted(node, half))
            stack.append((nodes[half:], node[cut:] - half, rho[cut:], sid[cut:], w[cut:], j))
            stack.append((nodes[:half], node[:cut], rho[:cut], sid[:cut], w[:cut], j))
            continue
        nodes, node, rho, sid, w = _expand(nodes, node, rho, sid, w, j, tails, k, q)
        stack.append((nodes, node, rho, sid, w, j + 1))


def _expand(nodes: np.ndarray, node: np.ndarray, rho: np.ndarray, sid: np.ndarray, w: np.ndarray, j: int,
            tails: _SuffixIndex, k: int, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fix coordinate ``j`` of ``n``: every node gets the children ``n_j = -b..b`` (``b`` its remaining budget)."""
    budget = k - np.abs(nodes).sum(axis=1)
    kids = 2 * budget + 1
    first = np.concatenate([[0], np.cumsum(kids)[:-1]])
    rep = np.repeat(np.arange(len(node)), kids[node])
    pos = np.arange(len(rep)) - np.repeat(np.cumsum(kids[node]) - kids[node], kids[node])
    v = pos - budget[node][rep]
    parent = np.repeat(np.arange(len(nodes)), kids)
    nodes = np.concatenate([nodes[parent], (np.arange(len(parent)) - first[parent] - budget[parent])[:, None]],
                           axis=1)
    merged = _merge(first[node][rep] + pos, (rho[rep] + v * tails.head[j][sid][rep]) % q,
                    tails.step[j][sid][rep], w[rep], q, tails.count[j + 1], len(nodes))
    return (nodes, *merged)


def _merge(node: np.ndarray, rho: np.ndarray, sid: np.ndarray, w: np.ndarray, q: int, n_suffix: int,
           n_nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sum the weights of equal ``(node, residue, tail)`` keys (a dense count when the key range is small, else a
    sort); the result is sorted by key, hence by node."""
    key = (node * q + rho) * n_suffix + sid
    size = n_nodes * q * n_suffix
    if size <= 4 * len(key) + 2**20:
        total = np.bincount(key, weights=w.astype(np.float64), minlength=size)
        uniq = np.flatnonzero(total)
        total = total[uniq]
    else:
        uniq, inv = np.unique(key, return_inverse=True)
        total = np.bincount(np.asarray(inv).ravel(), weights=w.astype(np.float64))
    sid, rest = uniq % n_suffix, uniq // n_suffix
    return rest // q, rest % q, sid, np.rint(total).astype(np.int64)


def _zero_rows(rows: np.ndarray, q: int) -> np.ndarray:
    """Which rows ``c`` have ``sum_r c_r omega_Q^r = 0``: reduced modulo ``Phi_Q`` exactly (distinct rows only; the
    float64 product is exact when every partial sum stays below ``2^53``, else int64)."""
    from margintheory.core.cyclotomic import check_int64_bound, reduction_matrix

    if len(rows) == 0:
        return np.zeros(0, dtype=bool)
    uniq, inv = distinct_rows(rows) if q > 64 else (rows, np.arange(len(rows)))
    R = reduction_matrix(q)
    bound = int(np.abs(uniq).sum(axis=1).max(initial=0)) * int(np.abs(R).max(initial=1))
    if bound < 2**52:
        zero = ~np.any(uniq.astype(np.float64) @ R.astype(np.float64) != 0, axis=1)
    else:
        check_int64_bound(bound, "the moment reduction")
        zero = ~np.any(uniq @ R != 0, axis=1)
    return zero[np.asarray(inv).ravel()]


def _vanishing_by_node(nodes: np.ndarray, node: np.ndarray, rho: np.ndarray, w: np.ndarray, q: int) -> np.ndarray:
    """``zero[n]``: the moment of node ``n`` vanishes, decided in chunks of nodes (bounded memory)."""
    zero = np.empty(len(nodes), dtype=bool)
    step = max(1, 2**22 // q)
    bounds = np.searchsorted(node, np.arange(0, len(nodes) + step, step))
    for i, start in enumerate(range(0, len(nodes), step)):
        stop = min(len(nodes), start + step)
        lo, hi = bounds[i], bounds[i + 1]
        block = np.zeros((stop - start, q), dtype=np.int64)
        np.add.at(block, (node[lo:hi] - start, rho[lo:hi]), w[lo:hi])
        zero[start:stop] = _zero_rows(block, q)
    return zero


def _direct_counts(phases: np.ndarray, iw: np.ndarray, n: np.ndarray, q: int) -> np.ndarray:
    """``c[r] = sum_a iw_a [n . phi_a + psi_a = r (mod Q)]`` for one ``n`` (integers)."""
    k = phases.shape[1] - 1
    res = (phases[:, :k] @ n + phases[:, k]) % q
    return np.bincount(res, weights=iw.astype(np.float64), minlength=q).round().astype(np.int64)


def _cyclic_generator_ok(group: CosineGroup, q: int) -> bool:
    """The atoms are exactly ``{t G mod Q : t in Z_Q}`` with equal weights (integer comparison)."""
    if len(group.weights) != q or len(set(group.weights)) != 1:
        return False
    g = np.asarray(group.cyclic_generator, dtype=np.int64)
    expected = np.unique((np.arange(q, dtype=np.int64)[:, None] * g[None, :]) % q, axis=0)
    actual = np.unique(np.asarray(group.phases, dtype=np.int64) % q, axis=0)  # (as sets: arrays of distinct rows)
    return expected.shape == actual.shape and bool(np.array_equal(expected, actual))


#: the integer weights of a group (its weights over their common denominator) must sum below this: the moment
#: counts are accumulated in float64 (exact below 2^53) and reduced in int64
MAX_INTEGER_WEIGHT = 2**52


def integer_weights(group: CosineGroup) -> tuple[int, np.ndarray]:
    """``(L, L w_a)``: the common denominator of the group's weights and the integer weights (int64), or
    :class:`~margintheory.errors.RefusedError` when they sum to :data:`MAX_INTEGER_WEIGHT` or more (weights with
    large coprime denominators: the exact moment check would overflow)."""
    from margintheory.errors import RefusedError

    scale = math.lcm(*(w.denominator for w in group.weights))
    ints = [w.numerator * (scale // w.denominator) for w in group.weights]
    if sum(ints) >= MAX_INTEGER_WEIGHT:
        raise RefusedError(f"the {len(ints)} weight ratios have the common denominator {scale:.3g}, so their integer "
                           f"weights sum to {float(sum(ints)):.3g}, more than the exact moment check holds "
                           f"(2^{MAX_INTEGER_WEIGHT.bit_length() - 1})")
    return scale, np.array(ints, dtype=np.int64)


def group_structure(group: CosineGroup, k: int, q: int) -> GroupStructure:
    """Exact moments of one group (integer counts reduced modulo ``Phi_Q``; no floating point decides anything).

    A cyclic group of atoms ``{t G}`` (equal weights) has ``mu(n, +1) = W [Q divides (n, 1) . G]`` (a geometric
    series of a root of unity): an integer test per ``n``."""
    scale, iw = integer_weights(group)
    if group.cyclic_generator is not None and _cyclic_generator_ok(group, q):
        g = np.asarray(group.cyclic_generator, dtype=np.int64)
        checked, failures = 0, list[tuple[int, ...]]()
        for idx in off_diagonal_chunks(k):  # (bounded memory: the indices number 40 million at k = 11)
            checked += len(idx)
            bad = idx[(idx @ g[:k] + g[k]) % q == 0][:10 - len(failures)]
            failures += [(*(int(v) for v in b), 1) for b in bad]
        diag = {t: _direct_counts(group.phases, iw, np.full(k, t, dtype=np.int64), q) for t in diagonal_indices(k)}
        diag_zero = {t: bool((t * g[:k].sum() + g[k]) % q != 0) for t in diag}
    else:
        checked, failures = 0, []
        for nodes, node, rho, w in moment_blocks(group.phases, iw, k, q):
            zero = _vanishing_by_node(nodes, node, rho, w, q)
            off = ((np.abs(nodes).sum(axis=1) - k) % 2 == 0) & np.any(nodes != nodes[:, :1], axis=1)
            checked += int(off.sum())
            failures += [(*(int(v) for v in nodes[b]), 1) for b in np.flatnonzero(off & ~zero)[:10 - len(failures)]]
        diag = {t: _direct_counts(group.phases, iw, np.full(k, t, dtype=np.int64), q) for t in diagonal_indices(k)}
        diag_zero = {t: bool(_zero_rows(diag[t][None, :], q)[0]) for t in diag}
    aligned = bool(np.all((group.phases[:, :k].sum(axis=1) - group.phases[:, k]) % q == 0))
    wanted = aligned and all(diag_zero[t] for t in diag if t != -1)
    return GroupStructure(checked, failures, diag, scale, aligned, wanted)


def check_structure(net: CosineNetwork) -> Structure:
    """The hypotheses of the module's lemma, exactly, for every group."""
    t0 = time.perf_counter()
    groups = tuple(group_structure(g, net.k, net.denominator) for g in net.groups)
    return Structure(groups, time.perf_counter() - t0)


# ---------------------------------------------------------------- the compact margin

@dataclass
class CompactMargin:
    """The margin of a single-frequency cosine network computed from ``F(s, c)`` (module docstring).

    ``logits[s, c] = F(s, c)`` (raw units, float64; ``logit_error`` bounds ``|f(a)[c] - logits[s, c]|`` for every
    input ``a`` with ``a_1 + ... + a_k = s``, rounding and -- for a float network -- its distance to the exact
    description included); ``label_margins[s]`` and ``wrong_spread[s]`` are every such input's margin and wrong-logit
    spread; ``normalized_lower <= normalized margin <= normalized_upper`` rigorously.  ``exactness`` is ``proved``
    when the margin is exact (``normalized_margin_exact``, a sympy number), else ``certified``.
    """

    p: int
    k: int
    width: int
    logits: np.ndarray
    label_margins: np.ndarray
    wrong_spread: np.ndarray
    h: float
    normalization: float
    normalized_margin: float
    normalized_lower: float
    normalized_upper: float
    logit_error: float
    exactness: Exactness
    how: str
    structure: Structure
    network: CosineNetwork
    normalized_margin_exact: sp.Expr | None = None
    margin_exact: sp.Expr | None = None
    cosine_sum: list[Fraction] | None = None
    seconds: float = 0.0
    details: dict[str, object] = field(default_factory=dict)

    @property
    def normalized_tolerance(self) -> float:
        """A rigorous bound on ``|normalized margin - normalized_margin|``."""
        return max(self.normalized_margin - self.normalized_lower, self.normalized_upper - self.normalized_margin)

    def multidim_dft(self) -> np.ndarray:
        """``f^(j, ..., j, -j) = p^(k-1) sum_(s, c) F(s, c) omega_p^(-j (s - c))`` for ``j = 0..p-1`` (float64)."""
        full = np.fft.fft2(self.logits) * float(self.p) ** (self.k - 1)
        j = np.arange(self.p)
        return full[j, (-j) % self.p]


def _cosine_sum_exact(p: int, zetas: list[int]) -> list[Fraction] | None:
    """``S(x) = sum_(zeta in zetas) cos(2 pi zeta x / p)`` for every ``x`` in ``Z_p``, exactly in ``Q(omega_p)``
    (``2 S(x) = sum_zeta (omega^(zeta x) + omega^(-zeta x))`` as integer counts, reduced modulo ``Phi_p``), or
    ``None`` when some ``S(x)`` is not rational."""
    from margintheory.core.cyclotomic import reduce_mod_cyclotomic

    x = np.arange(p, dtype=np.int64)
    z = np.asarray(zetas, dtype=np.int64)
    exps = np.concatenate([np.outer(x, z) % p, np.outer(x, -z) % p], axis=1)
    counts = np.zeros((p, p), dtype=np.int64)
    np.add.at(counts, (np.repeat(x, exps.shape[1]), exps.ravel()), 1)
    rows, inverse = distinct_rows(counts)
    red = reduce_mod_cyclotomic(rows)
    if np.any(red[:, 1:]):
        return None
    values = [Fraction(int(v), 2) for v in red[:, 0]]
    return [values[i] for i in inverse]


def distinct_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, inverse)`` with ``a == rows[inverse]``: rows hashed by a random integer projection, then every row
    compared with its representative (exact; falls back to a sort when two distinct rows share a hash)."""
    rng = np.random.default_rng(12345)
    h = a @ rng.integers(1, 2**31, size=a.shape[1], dtype=np.int64)  # wraps on overflow: only a hash
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    inv = np.asarray(inv).ravel()
    if np.array_equal(a, a[first][inv]):
        return a[first], inv
    rows, inv2 = np.unique(a, axis=0, return_inverse=True)  # pragma: no cover - a hash collision
    return rows, np.asarray(inv2).ravel()


def _exact_margin(net: CosineNetwork, structure: Structure) -> CompactMargin | None:
    """``F(s, c) = (k!/2^k) sigma^(k+1) W S(s - c)`` when only the wanted moments survive and every frequency
    carries the same weight ``W``: everything exact (``None`` otherwise)."""
    weights = net.frequency_weights()
    if not structure.wanted_only or len(set(weights.values())) != 1:
        return None
    zetas = sorted(weights)
    S = _cosine_sum_exact(net.p, zetas)
    if S is None:
        return None
    p, k = net.p, net.k
    W = next(iter(weights.values()))
    K = Fraction(math.factorial(k), 2**k) * net.scale_power * W
    wrong = [S[x] for x in range(1, p)]
    h = K * (S[0] - max(wrong))
    spread = K * (max(wrong) - min(wrong))
    norm2 = net.norm_power_squared()
    nm = exact_sqrt(h * h / norm2) if h >= 0 else -exact_sqrt(h * h / norm2)
    value = float(nm)
    xs = (np.arange(p)[:, None] - np.arange(p)[None, :]) % p
    logits = np.array([float(K * v) for v in S])[xs]
    how = (f"exact: only the wanted phase moment survives at each of the {len(zetas)} frequencies (proved in "
           f"Q(omega_{net.denominator})), so f(a)[c] = (k!/2^k) sigma^(k+1) W S(s - c) with S(x) = sum_zeta "
           f"cos(2 pi zeta x/p) computed exactly in Q(omega_{p}); no input enumerated")
    return CompactMargin(p, k, net.width, logits, np.full(p, float(h)), np.full(p, float(spread)), float(h),
                         math.sqrt(float(norm2)), value, math.nextafter(value, -math.inf),
                         math.nextafter(value, math.inf), 0.0, "proved", how, structure, net, nm,
                         sp.Rational(h.numerator, h.denominator), S)


def exact_sqrt(x: Fraction) -> sp.Expr:
    """``sqrt(x)`` of a nonnegative rational as a sympy number (a rational when ``x`` is a square)."""
    num, den = math.isqrt(x.numerator), math.isqrt(x.denominator)
    if num * num == x.numerator and den * den == x.denominator:
        return sp.Rational(num, den)
    return sp.sqrt(sp.Rational(x.numerator, x.denominator))


@lru_cache(maxsize=8)
def root_of_unity_table(n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``cos(2 pi r / n)``, ``sin(2 pi r / n)`` for ``r in Z_n`` rounded to float64 from ``arb`` balls, and a
    rigorous bound on the error of every entry."""
    from flint import arb, ctx, fmpq

    old = ctx.prec
    ctx.prec = 96
    try:
        cos = np.empty(n)
        sin = np.empty(n)
        rad = 0.0
        for r in range(n):
            s, c = arb.sin_cos_pi_fmpq(fmpq(2 * r, n))
            cos[r], sin[r] = float(c.mid()), float(s.mid())
            rad = max(rad, float(c.rad()), float(s.rad()))
    finally:
        ctx.prec = old
    cos.setflags(write=False)
    sin.setflags(write=False)
    return cos, sin, EPS + 2 * rad  # float conversion (<= 1 ulp of a value <= 1) + the ball's radius


def _diagonal_moments(net: CosineNetwork, structure: Structure) -> tuple[list[int], dict[int, np.ndarray]]:
    """``mu_zeta(t (1,...,1), +1) / scale_power`` per frequency (float64 complex) from the exact counts."""
    qcos, qsin, _ = root_of_unity_table(net.denominator)
    zetas = sorted(net.frequency_weights())
    pos = {z: i for i, z in enumerate(zetas)}
    mu = {t: np.zeros(len(zetas), dtype=complex) for t in diagonal_indices(net.k)}
    for g, gs in zip(net.groups, structure.groups, strict=True):
        for t, counts in gs.diagonal.items():
            c = counts.astype(np.float64)
            value = complex(float(c @ qcos), float(c @ qsin)) / gs.weight_scale
            for z in g.frequencies:
                mu[t][pos[z]] += value
    return zetas, mu


def _certified_margin(net: CosineNetwork, structure: Structure) -> CompactMargin:
    """``F(s, c)`` in float64 from the exact moments, with an a-priori rounding bound (module docstring)."""
    p, k = net.p, net.k
    zetas, mu = _diagonal_moments(net, structure)
    pcos, psin, tab = root_of_unity_table(p)
    y = np.arange(p, dtype=np.int64)
    idx = np.outer(y, np.asarray(zetas, dtype=np.int64)) % p
    scale = float(net.scale_power)
    K = {t: scale * expansion_coefficient(k, [t] * k) / 2 ** (k + 1) for t in mu}
    reG = {t: pcos[idx] @ mu[t].real - psin[idx] @ mu[t].imag for t in mu}
    s, c = np.meshgrid(y, y, indexing="ij")
    logits = sum(2 * K[t] * reG[t][(t * s + c) % p] for t in mu)
    assert isinstance(logits, np.ndarray)
    w_total = float(sum(net.frequency_weights().values(), Fraction(0)))
    # |mu| <= W_zeta; each Re G is a dot product of 2 n_zeta terms from Q-term moments and tables with error <= tab;
    # first-order bound with a factor 4 of headroom (complex parts, the weights' conversion, the sum over t)
    q = net.denominator
    err = 4 * sum(2 * K[t] for t in mu) * w_total * ((2 * len(zetas) + 2 * q + 16) * EPS + 4 * tab)
    return _finish_certified(net, structure, logits, err)


def _finish_certified(net: CosineNetwork, structure: Structure, logits: np.ndarray, err: float) -> CompactMargin:
    p = net.p
    diag = np.diag(logits).copy()
    wrong = logits.copy()
    np.fill_diagonal(wrong, -np.inf)
    wmax = wrong.max(axis=1)
    np.fill_diagonal(wrong, np.inf)
    wmin = wrong.min(axis=1)
    margins = diag - wmax
    spread = wmax - wmin
    h = float(margins.min())
    top = float(np.abs(logits).max())
    err_h = 2 * err + 2 * EPS * top  # two logits and the subtraction's rounding
    norm = math.sqrt(float(net.norm_power_squared()))  # relative error <= 2 eps, covered by the 4 eps below
    nm = h / norm
    lo, hi = ratio_bounds(h - err_h, h + err_h, norm * (1 - 4 * EPS), norm * (1 + 4 * EPS))
    how = (f"certified: the off-diagonal phase moments vanish (proved in Q(omega_{net.denominator})), so "
           f"f(a)[c] = F(a_1+...+a_k, c); F evaluated on the {p}x{p} table in float64 from the exact moments with "
           f"arb-rounded cosine tables, logit error <= {err:.2e}; no input enumerated")
    return CompactMargin(p, net.k, net.width, logits, margins, spread, h, norm, nm, lo, hi, err, "certified", how,
                         structure, net)


def ratio_bounds(num_lo: float, num_hi: float, den_lo: float, den_hi: float) -> tuple[float, float]:
    """Bounds on ``num / den`` for ``num in [num_lo, num_hi]``, ``den in [den_lo, den_hi]``, ``den_lo > 0``
    (each quotient rounded outward by one unit in the last place)."""
    lo = num_lo / (den_hi if num_lo >= 0 else den_lo)
    hi = num_hi / (den_lo if num_hi >= 0 else den_hi)
    return math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)


def compact_margin(net: CosineNetwork, structure: Structure | None = None) -> CompactMargin:
    """The margin of the exact network ``net`` (module docstring); ``ValueError`` when an off-diagonal moment does
    not vanish (the logits then depend on more than ``s``: use the exhaustive engine)."""
    t0 = time.perf_counter()
    structure = check_structure(net) if structure is None else structure
    if not structure.passed:
        raise ValueError(f"off-diagonal phase moments do not vanish: {structure.failure_text()}")
    cm = _exact_margin(net, structure) or _certified_margin(net, structure)
    cm.seconds = time.perf_counter() - t0
    return cm


# ---------------------------------------------------------------- float64 networks

def float_network(net: CosineNetwork) -> PolyNetwork:
    """The float64 weights of the exact network (each angle reduced exactly as an integer fraction of ``2 pi``
    before the cosine; amplitudes ``(scale_power w)^(1/(k+1))``), neurons group by group, frequency by frequency,
    atom by atom; metadata ``frequency``, ``phase`` (``k + 1`` numerators), ``phase_denominator``,
    ``measure_weight_numerator`` / ``measure_weight_denominator``."""
    p, k, q = net.p, net.k, net.denominator
    x = np.arange(p, dtype=np.int64)
    Us: list[np.ndarray] = []
    Ws: list[np.ndarray] = []
    meta: dict[str, list[np.ndarray]] = {"frequency": [], "phase": [], "num": [], "den": []}
    for g in net.groups:
        amp = np.array([float(net.scale_power * w) ** (1.0 / (k + 1)) for w in g.weights])
        for z in g.frequencies:
            num = (g.phases[:, :, None] * p + z * x[None, None, :] * q) % (p * q)
            vals = amp[:, None, None] * np.cos(2.0 * np.pi * num / (p * q))
            Us.append(vals[:, :k])
            Ws.append(vals[:, k])
            meta["frequency"].append(np.full(len(g.weights), z, dtype=np.int64))
            meta["phase"].append(g.phases)
            meta["num"].append(np.array([w.numerator for w in g.weights], dtype=np.int64))
            meta["den"].append(np.array([w.denominator for w in g.weights], dtype=np.int64))
    U, W = np.concatenate(Us), np.concatenate(Ws)
    m = len(U)
    return PolyNetwork(U, W, {"frequency": np.concatenate(meta["frequency"]), "phase": np.concatenate(meta["phase"]),
                              "phase_denominator": np.full(m, q, dtype=np.int64),
                              "measure_weight_numerator": np.concatenate(meta["num"]),
                              "measure_weight_denominator": np.concatenate(meta["den"])})


@dataclass
class Recognition:
    """An exact description ``network`` of a float64 network and the rigorous distance of the file to it:
    ``deviation[i, j] >= max_x |weight - exact value|`` of vector ``j`` (``u_1..u_k, w``) of kept neuron ``i``,
    ``amplitude[i] >= A*_i``; ``kept``: the neurons that are not exactly zero.  ``network is None`` when the file
    is not (within float64 rounding) a single-frequency cosine network; ``reason`` says why."""

    network: CosineNetwork | None
    reason: str = ""
    deviation: np.ndarray | None = None
    amplitude: np.ndarray | None = None
    kept: np.ndarray | None = None
    max_relative_deviation: float = math.inf


@dataclass(frozen=True)
class _Proposal:
    kept: np.ndarray
    zeta: np.ndarray
    phases: np.ndarray
    denominator: int
    ratios: list[Fraction]
    reference: float


def _neuron_chunks(m: int, k: int, p: int, budget: int = 2**25) -> list[slice]:
    step = max(1, budget // max(1, 8 * (k + 1) * p))
    return [slice(i, min(m, i + step)) for i in range(0, m, step)]


def _fourier_fit(net: PolyNetwork, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str:
    """Per kept neuron: the dominant frequency, the amplitude and phase (fraction of a turn) of every vector there."""
    p, k = net.p, net.k
    zeta = np.empty(len(kept), dtype=np.int64)
    amp = np.empty((len(kept), k + 1))
    turn = np.empty((len(kept), k + 1))
    for sl in _neuron_chunks(len(kept), k, p):
        idx = kept[sl]
        V = np.concatenate([net.U[idx], net.W[idx][:, None, :]], axis=1)
        F = np.fft.rfft(V, axis=-1)
        A = np.abs(F)
        A /= np.maximum(A.max(axis=(1, 2), keepdims=True), np.finfo(float).tiny)  # no overflow at |theta| ~ 1e300
        z = np.argmax((A**2).sum(axis=1), axis=-1)
        comp = np.take_along_axis(F, np.broadcast_to(z[:, None, None], (len(idx), k + 1, 1)), axis=-1)[..., 0]
        zeta[sl], amp[sl], turn[sl] = z, 2.0 * np.abs(comp) / p, np.mod(np.angle(comp) / (2 * np.pi), 1.0)
    bad = np.flatnonzero((zeta == 0) | ((2 * zeta) % p == 0))
    if len(bad):
        return f"neuron {int(kept[bad[0]])} has its largest component at frequency {int(zeta[bad[0]])} (not 1..p/2)"
    return zeta, amp, turn


def _rationals(values: np.ndarray, max_den: int, rtol: float, what: str) -> tuple[dict[float, Fraction], str]:
    """Small-denominator rationals for the distinct values (a proposal; the exact check comes later)."""
    out: dict[float, Fraction] = {}
    for v in np.unique(np.round(values, 12)):
        r = Fraction(float(v)).limit_denominator(max_den)
        if abs(float(r) - v) > rtol * max(abs(v), 1e-300) + 1e-12:
            return out, f"a {what} ({v:.17g}) is not a rational with denominator <= {max_den}"
        out[float(v)] = r
    return out, ""


def _propose(net: PolyNetwork) -> _Proposal | str:
    """Read an exact description off the weights: frequency, common amplitude and rational phases per neuron,
    rational weight ratios.  Only a proposal: :func:`_deviation` decides."""
    k = net.k
    kept = np.flatnonzero(np.any(net.U.reshape(net.m, -1) != 0, axis=1) | np.any(net.W != 0, axis=1))
    if len(kept) == 0:
        return "every neuron is zero"
    fit = _fourier_fit(net, kept)
    if isinstance(fit, str):
        return fit
    zeta, amp, turn = fit
    mean = amp.mean(axis=1)
    unequal = np.flatnonzero(np.abs(amp - mean[:, None]).max(axis=1) > 1e-8 * mean)
    if len(unequal):
        return f"neuron {int(kept[unequal[0]])} has unequal amplitudes on its vectors"
    turns, why = _rationals(np.where(turn > 1 - 1e-11, 0.0, turn), MAX_PHASE_DENOMINATOR, 0.0, "phase / (2 pi)")
    if why:
        return why
    q = math.lcm(*(r.denominator for r in turns.values()))
    if q > MAX_PHASE_DENOMINATOR:
        return f"the phases' common denominator {q} exceeds {MAX_PHASE_DENOMINATOR}"
    rounded = np.round(np.where(turn > 1 - 1e-11, 0.0, turn), 12)
    phases = np.vectorize(lambda v: int(turns[float(v)] * q) % q, otypes=[np.int64])(rounded)
    ref = float(mean.max())
    ratio_values = (mean / ref) ** (k + 1)
    small = np.flatnonzero(~(ratio_values >= 0.5 / MAX_WEIGHT_DENOMINATOR))  # (NaN-safe)
    if len(small):
        return (f"neuron {int(kept[small[0]])} has the weight ratio (A_i / A_max)^(k+1) = "
                f"{ratio_values[small[0]]:.3g}, too small for a rational with denominator <= {MAX_WEIGHT_DENOMINATOR}")
    ratios, why = _rationals(ratio_values, MAX_WEIGHT_DENOMINATOR, 1e-9, "weight ratio (A_i / A_max)^(k+1)")
    if why:
        return why
    if any(r <= 0 for r in ratios.values()):  # (excluded above; the exact description needs positive weights)
        return "a weight ratio rounds to a rational <= 0"
    return _Proposal(kept, zeta, phases, q, [ratios[float(v)] for v in np.round(ratio_values, 12)], ref)


def _exact_amplitudes(proposal: _Proposal, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``A*_i = A_ref (ratio_i)^(1/(k+1))`` in ball arithmetic: float64 values and rigorous error bounds."""
    from flint import arb, ctx, fmpq

    old = ctx.prec
    ctx.prec = 96
    try:
        cache: dict[Fraction, tuple[float, float]] = {}
        for r in set(proposal.ratios):
            ball = arb(proposal.reference) * arb(fmpq(r.numerator, r.denominator)).root(k + 1)
            mid = float(ball.mid())
            cache[r] = (mid, EPS * abs(mid) + float(ball.rad()))
    finally:
        ctx.prec = old
    vals = np.array([cache[r] for r in proposal.ratios])
    return vals[:, 0], vals[:, 1]


def _deviation(net: PolyNetwork, proposal: _Proposal) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous ``max_x |weight - A*_i cos(2 pi (r_ij/Q + zeta_i x/p))|`` per kept neuron and vector, and upper
    bounds on ``A*_i``.  The cosine of the sum is formed from ``arb``-rounded tables of ``Z_Q`` and ``Z_p``
    (``cos(a + b) = cos a cos b - sin a sin b``); rounding: ``|z_f - z| <= 2 (tab_Q + tab_p) + 2 eps`` for the
    cosine, ``+ A eps / 2`` for the product with ``A_f``, ``|A_f - A*| <= e_A``, and the computed difference
    ``r = fl(v - y)`` has ``|v - y| <= (1 + eps) |r|``."""
    p, k = net.p, net.k
    qcos, qsin, tab_q = root_of_unity_table(proposal.denominator)
    pcos, psin, tab_p = root_of_unity_table(p)
    amp, amp_err = _exact_amplitudes(proposal, k)
    dev = np.empty((len(proposal.kept), k + 1))
    x = np.arange(p, dtype=np.int64)
    for sl in _neuron_chunks(len(proposal.kept), k, p):
        idx = proposal.kept[sl]
        tp = np.outer(proposal.zeta[sl], x) % p
        cp, sp_ = pcos[tp], psin[tp]
        for j in range(k + 1):
            v = net.U[idx, j] if j < k else net.W[idx]
            r = proposal.phases[sl, j]
            y = amp[sl, None] * (qcos[r][:, None] * cp - qsin[r][:, None] * sp_)
            dev[sl, j] = np.abs(v - y).max(axis=1)
    dev = dev * (1 + EPS) + (amp * (2 * (tab_q + tab_p) + 3 * EPS) + amp_err)[:, None]
    return dev, np.abs(amp) + amp_err


def recognize_cosine_network(net: PolyNetwork) -> Recognition:
    """The exact single-frequency cosine network that ``net`` is, up to float64 rounding (module docstring), or a
    refusal with its reason."""
    proposal = _propose(net)
    if isinstance(proposal, str):
        return Recognition(None, proposal)
    dev, amp = _deviation(net, proposal)
    rel = dev.max(axis=1) / amp
    bad = np.flatnonzero(~(rel <= ROUNDING_TOLERANCE))  # NaN-safe: a NaN bound (a ball of radius inf) is refused
    if len(bad):
        worst = int(bad[np.argmax(np.where(np.isnan(rel[bad]), np.inf, rel[bad]))])
        size = f"{rel[worst]:.2e} of its amplitude" if math.isfinite(rel[worst]) else "an unbounded amount"
        return Recognition(None, f"neuron {int(proposal.kept[worst])} differs from the nearest exact cosine neuron "
                                 f"by {size} (float64 rounding allows {ROUNDING_TOLERANCE:.1e})",
                           max_relative_deviation=float(rel[worst]))
    worst = int(np.argmax(rel))
    return Recognition(_group_atoms(net, proposal), "", dev, amp, proposal.kept, float(rel[worst]))


def _group_atoms(net: PolyNetwork, proposal: _Proposal) -> CosineNetwork:
    """Neurons grouped by frequency; frequencies with the same atoms share one group (one moment check)."""
    by_zeta: dict[int, list[tuple[tuple[int, ...], Fraction]]] = {}
    for i, z in enumerate(proposal.zeta):
        by_zeta.setdefault(int(z), []).append((tuple(int(v) for v in proposal.phases[i]), proposal.ratios[i]))
    shared: dict[tuple, list[int]] = {}
    for z, atoms in sorted(by_zeta.items()):
        shared.setdefault(tuple(sorted(atoms)), []).append(z)
    groups = []
    for key, zs in shared.items():
        ph = np.array([a for a, _ in key], dtype=np.int64).reshape(-1, net.k + 1)
        ph.setflags(write=False)
        groups.append(CosineGroup(tuple(zs), ph, tuple(w for _, w in key)))
    scale = Fraction(proposal.reference) ** (net.k + 1)
    return CosineNetwork(net.p, net.k, proposal.denominator, tuple(groups), scale,
                         f"exact description read off the float64 weights ({len(proposal.kept)} neurons)")


def perturbation_bound(dev: np.ndarray, amp: np.ndarray, k: int) -> float:
    """``Delta >= max_(a, c) |f(a)[c] - f*(a)[c]|`` for weights within ``dev`` of neurons of amplitude ``<= amp``:
    ``sum_i [sum_(l >= 1) C(k, l) S^(k-l) D^l (A + d_w) + S^k d_w]`` with ``S = k A``, ``D = sum_(j<k) dev_ij``
    (module docstring); nonnegative terms, so float64 rounding is covered by the factor ``1 + 2^-20``."""
    S = k * amp
    D = dev[:, :k].sum(axis=1)
    dw = dev[:, k]
    inner = sum(math.comb(k, l) * S ** (k - l) * D**l for l in range(1, k + 1))
    total = float(np.sum(inner * (amp + dw) + S**k * dw))
    return total * (1 + 2.0**-20)


def network_fourier_margin(net: PolyNetwork, *, max_memory: float | None = None,
                           max_seconds: float | None = None) -> tuple[CompactMargin | None, str]:
    """The compact margin of a float64 network that is an exact single-frequency cosine network up to rounding,
    with rigorous bounds for that rounding (``certified``); ``(None, reason)`` when the shortcut does not apply
    (also when the exact description's moment check would exceed the budget).

    The shortcut is only a faster way to the margin the exhaustive engine computes, so anything that stops it -- a
    refusal (weights whose exact integers would overflow), an arithmetic failure, a bound that is not finite --
    refuses it with the reason, and never ends the verification."""
    from margintheory.errors import RefusedError

    t0 = time.perf_counter()
    rescaled, shift = power_of_two_rescaled(net)
    if rescaled is None:
        return None, ("rescaling the network's weights by a power of two to order 1 (to keep its logits finite) "
                      "would round a subnormal weight")
    try:
        out, why = _recognized_margin(rescaled, max_memory, max_seconds, t0)
    except RefusedError as exc:
        return None, str(exc)
    except (ArithmeticError, ValueError) as exc:  # e.g. a ball of infinite radius: refuse, the exhaustive engine runs
        return None, f"the compact check stopped ({type(exc).__name__}: {exc})"
    if out is None:
        return None, why
    if not all(math.isfinite(v) for v in (out.normalized_lower, out.normalized_upper, out.normalized_margin)):
        return None, (f"the compact bounds are not finite ([{out.normalized_lower}, {out.normalized_upper}]): the "
                      "shortcut proves nothing for this network")
    if shift:
        out.how += (f"; the weights were first multiplied by 2^{shift} (exact in float64; the normalized margin is "
                    f"invariant under scaling, the logits shown are those of the rescaled network)")
    return out, ""


def _recognized_margin(net: PolyNetwork, max_memory: float | None, max_seconds: float | None,
                       t0: float) -> tuple[CompactMargin | None, str]:
    """:func:`network_fourier_margin` after the rescaling: match, check the moments, widen by the distance."""
    from margintheory.errors import RefusedError
    from margintheory.runtime.budget import require

    rec = recognize_cosine_network(net)
    if rec.network is None:
        return None, rec.reason
    atoms = max(len(g.weights) for g in rec.network.groups)
    try:
        require(estimate_compact(net.p, net.k, atoms, rec.network.denominator, "the exact description's moments"),
                max_memory, max_seconds)
    except RefusedError as exc:
        return None, f"the compact check does not fit the budget ({exc})"
    structure = check_structure(rec.network)
    if not structure.passed:
        return None, f"off-diagonal phase moments do not vanish ({structure.failure_text()})"
    star = compact_margin(rec.network, structure)
    assert rec.deviation is not None and rec.amplitude is not None
    return _perturbed(star, net, rec, t0), ""


def power_of_two_rescaled(net: PolyNetwork) -> tuple[PolyNetwork | None, int]:
    """``net`` with every weight multiplied by ``2^e`` so the largest is of order 1, when it is far from it (the
    logits grow as the scale to the power ``k + 1`` and would overflow or underflow float64); ``(None, e)`` when the
    multiplication would round (a subnormal weight), ``(net, 0)`` when no rescaling is needed."""
    top = max(float(np.max(np.abs(net.U), initial=0.0)), float(np.max(np.abs(net.W), initial=0.0)))
    if top == 0.0 or not math.isfinite(top):
        return net, 0
    shift = -math.frexp(top)[1]
    if abs(shift) * (net.k + 1) < 300:  # logits stay well inside float64's range
        return net, 0
    U, W = np.ldexp(net.U, shift), np.ldexp(net.W, shift)
    if not (np.array_equal(np.ldexp(U, -shift), net.U) and np.array_equal(np.ldexp(W, -shift), net.W)):
        return None, shift
    return PolyNetwork(U, W), shift


def _perturbed(star: CompactMargin, net: PolyNetwork, rec: Recognition, t0: float) -> CompactMargin:
    """``star`` (the exact description) widened by the file's rigorous distance to it."""
    assert rec.deviation is not None and rec.amplitude is not None
    k, p = net.k, net.p
    delta = perturbation_bound(rec.deviation, rec.amplitude, k)
    err = star.logit_error + delta
    radius = math.sqrt((k + 1) * p / 2)  # ||theta*_i|| = radius A*_i
    spread_rel = float(np.max(np.sqrt(p * (rec.deviation**2).sum(axis=1)) / (radius * rec.amplitude)))
    grow = (1 + spread_rel) ** (k + 1) * (1 + 8 * (k + 1) * EPS) - 1  # norm^(k+1) within [1 - grow, 1 + grow]
    h, norm = star.h, star.normalization
    slack = 2 * err + 2 * EPS * abs(h)
    lo, hi = ratio_bounds(h - slack, h + slack, norm * max(1 - grow, 0.5) * (1 - 4 * EPS),
                          norm * (1 + grow) * (1 + 4 * EPS))
    lo, hi = min(lo, star.normalized_lower), max(hi, star.normalized_upper)
    how = (f"certified: the network's {net.m} neurons are, to {rec.max_relative_deviation:.1e} of their amplitudes "
           f"(rigorous, arb tables), the exact single-frequency network read off their DFT ({star.exactness} "
           f"margin {star.normalized_margin:.15g} from its phase moments, no input enumerated); every logit moves by "
           f"at most {delta:.2e} and the norm by a factor within 1 +- {grow:.1e}, so the file's own normalized margin "
           f"lies in [{lo:.17g}, {hi:.17g}] (the value reported is the lower end)")
    # the file's margin is known as the interval [lo, hi] only: the value reported is its lower end (never the exact
    # description's margin, which the file is not), with the interval's width as its error bound
    out = CompactMargin(p, k, net.m, star.logits, star.label_margins, star.wrong_spread, h, norm, lo, lo, hi, err,
                        "certified", how, star.structure, star.network, cosine_sum=star.cosine_sum)
    out.details = {"normalized_margin_interval": [lo, hi],
                   "exact_description_margin": str(star.normalized_margin_exact or star.normalized_margin),
                   "exact_description_exactness": star.exactness, "perturbation_bound": delta,
                   "max_relative_deviation": rec.max_relative_deviation, "norm_factor_bound": grow,
                   "zero_neurons": int(net.m - len(rec.kept if rec.kept is not None else []))}
    out.seconds = time.perf_counter() - t0
    return out


# ---------------------------------------------------------------- estimates

#: bytes the compact checks hold per entry of the p x p table (F, its index grids, the exact cosine-sum counts,
#: the reduction matrix), per entry of the moment histogram, and per weight of a network file being matched
TABLE_BYTES = 40
ENTRY_BYTES = 72
#: ... and per entry of a level larger than one block (merged by sorting, split by nodes, with the pieces waiting on
#: the stack: measured 150-170 bytes for Lemma C.18's 2^15 and 2^17 atoms at k = 8, 9, where 72 was 0.58x)
SPLIT_ENTRY_BYTES = 150
WEIGHT_BYTES = 14 * 8
FIXED_BYTES = 8 * 2**20
ATOM_BYTES = 160
PENDING_BYTES = 12


# ---------------------------------------------------------------- estimates

def moment_entries_bound(k: int, atoms: float, q: int) -> tuple[float, float]:
    """``(largest level, all levels)`` of the sparse moment histogram (entries), from ``k``, the atoms and ``Q``:
    level ``j`` has at most ``sum_r N(j-1, r) (2(k - r) + 1) min(atoms, Q^(k-j+2))`` entries (``N(j, r)``: vectors
    of ``Z^j`` with ``|n|_1 = r``); a level is split into blocks of nodes above
    :data:`MOMENT_ENTRIES_LIMIT` entries, so the largest block holds at most that many, or one node's
    ``atoms (2k + 1)``."""
    def count(j: int, r: int) -> int:
        return 1 if r == 0 else sum(2**i * math.comb(j, i) * math.comb(r - 1, i - 1) for i in range(1, min(j, r) + 1))

    levels = [float(atoms)]
    for j in range(1, k + 1):
        per = min(atoms, float(q) ** min(k - j + 2, 64))
        levels.append(sum(count(j - 1, r) * (2 * (k - r) + 1) for r in range(k + 1)) * per)
    return min(max(levels), max(MOMENT_ENTRIES_LIMIT, atoms * (2 * k + 1))), sum(levels)


#: bytes per row and coordinate of a piece of :func:`off_diagonal_chunks` held at once (the piece, its tail being
#: built and the kept rows: about three int64 copies, measured 25-26 bytes at k = 9..11; with headroom)
CHUNK_ROW_BYTES = 32


def estimate_compact(p: int, k: int, atoms: float, q: int, what: str, *, network_weights: float = 0.0,
                     described_atoms: float | None = None, cyclic: bool = False) -> Estimate:
    """Memory and time of the compact checks (the moment check over ``atoms`` atoms, or, ``cyclic``, an integer
    test per off-diagonal index in pieces; the ``p x p`` table; the exact description's ``described_atoms`` atoms
    (default ``atoms``); matching a network file of ``network_weights`` float64 weights), from the sizes alone."""
    if k > 40 or atoms == math.inf:
        return Estimate(what, math.inf, math.inf)
    largest, total = moment_entries_bound(k, atoms, q)
    described = atoms if described_atoms is None else described_atoms
    description = (ATOM_BYTES + 24.0 * (k + 1)) * described  # the atoms' phases and their Fraction weights
    if cyclic:  # no histogram: the off-diagonal indices in pieces (the largest piece and its temporaries)
        description += CHUNK_ROW_BYTES * k * largest_off_diagonal_piece(k)
        largest = 0.0
    # the split blocks waiting on the stack (only when a level exceeds the block size)
    pending = PENDING_BYTES * k * MOMENT_ENTRIES_LIMIT if largest >= MOMENT_ENTRIES_LIMIT else 0.0
    per_entry = ENTRY_BYTES if largest <= MOMENT_ENTRIES_LIMIT else SPLIT_ENTRY_BYTES
    need = (FIXED_BYTES + per_entry * largest + pending + TABLE_BYTES * float(p) * p
            + WEIGHT_BYTES * network_weights + description)
    seconds = total / 3.0e6 + float(p) * p / 2.0e7 + network_weights / 2.0e7 + off_diagonal_count(k) / 1.0e6
    return Estimate(what, need, seconds)


def estimate_compact_construction(problem: ModularAddition, family: str) -> Estimate:
    """:func:`estimate_compact` for the construction of Lemma C.18 or a family network of the problem (nothing is
    built)."""
    return estimate_compact_family(problem.p, problem.k, family)


def estimate_compact_family(p: int, k: int, family: str) -> Estimate:
    """:func:`estimate_compact_construction` from validated integers ``p``, ``k``."""
    from margintheory.errors import InputError

    what = f"the compact check of the {family} network for p = {p}, k = {k}"
    if k > 40:
        return Estimate(what, math.inf, math.inf)
    try:
        atoms = family_atoms(family, k)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    q = {"lemma-c18": 4, "parity-design": 2 * (k + 1)}.get(family, 2 * 3 ** max(k - 1, 0))
    if family == "smallest-known":
        q = 4 if k == 1 else 6 if k == 2 else 2 * (k + 1)
    described, cyclic = atoms, family == "cyclic-lattice" or (family == "smallest-known" and k == 2)
    if cyclic:
        atoms = min(atoms, 1.0)  # a cyclic group: an integer test per n, no histogram (its atoms are still held)
    return estimate_compact(p, k, atoms, q, what, described_atoms=described, cyclic=cyclic)
