"""The semi-ring statements of Tian's CoGO (arXiv:2410.01779; docs/theory.md#cogo-semiring), checked by computation:
Theorem 2 (``<Z, +, *>`` is a commutative semi-ring), Observation 2 (``ord`` is a homomorphism), Lemma 2 (0/1-sets
of sums and products -- part (2) is false as printed), Corollary 1 (a global optimizer times a unit) and Lemma 4
(canonical decomposition).

Exactness: Theorem 2 and Observation 2 are ``argued`` (the argument for every element is in the row), with exact
checks on seeded Gaussian-integer instances (every product of two or three such numbers is exact in float64, so
equality up to node permutation is decided without rounding) that test the implementation but are not a proof;
Lemma 2 (2)'s counterexample is exact (every potential of ``1 + 1`` is a sum of exact ones); the rest are float64
with their tolerance and measured error.
"""

from __future__ import annotations

import numpy as np

from margintheory.core.checks import Check, bool_check
from margintheory.core.network import PolyNetwork
from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo.algebra import A, B, Z, forward_loss, from_network, r_abc, r_pp, to_network, zero
from margintheory.tasks.cogo.lemma1_checks import ZERO_TOL

SEED = 0


def identity(d: int) -> Z:
    """The paper's ring identity ``1`` (Def. 5): one node with ``z[p, k] = 1`` for **every** ``k``, including
    ``k = 0`` (:func:`margintheory.tasks.cogo.algebra.one` leaves ``k = 0`` at 0, the identity on zero-mean
    weights only)."""
    return Z(np.ones((3, d, 1), dtype=complex))


def gaussian_integer_weights(rng: np.random.Generator, d: int, q: int) -> Z:
    """Weights with entries in ``{-2..2} + i {-2..2}``: products of three of them are exact in float64."""
    return Z(rng.integers(-2, 3, size=(3, d, q)) + 1j * rng.integers(-2, 3, size=(3, d, q)))


def node_multiset(z: Z) -> np.ndarray:
    """The nodes of ``z`` as rows (real and imaginary parts of the ``3 d`` entries), sorted: two weights are the
    same element of ``Z`` (Def. 4: equal up to a permutation of the nodes) iff these arrays are equal."""
    rows = np.concatenate([z.z.real, z.z.imag]).reshape(6 * z.d, z.order).T
    return rows[np.lexsort(rows.T[::-1])] if z.order else rows


def same_element(z1: Z, z2: Z) -> bool:
    """``z1 = z2`` in ``Z`` (Def. 4), decided exactly (no tolerance)."""
    return z1.order == z2.order and bool(np.array_equal(node_multiset(z1), node_multiset(z2)))


def semiring_axioms(d: int, seed: int = SEED) -> dict[str, bool]:
    """Each axiom of a commutative semi-ring on three seeded Gaussian-integer weights of orders 1, 2, 3."""
    rng = np.random.default_rng(seed)
    a, b, c = (gaussian_integer_weights(rng, d, q) for q in (1, 2, 3))
    o, e = zero(d), identity(d)
    return {
        "(a+b)+c = a+(b+c)": same_element((a + b) + c, a + (b + c)),
        "a+b = b+a": same_element(a + b, b + a),
        "0+a = a": same_element(o + a, a),
        "(ab)c = a(bc)": same_element((a * b) * c, a * (b * c)),
        "ab = ba": same_element(a * b, b * a),
        "1a = a": same_element(e * a, a),
        "a(b+c) = ab+ac": same_element(a * (b + c), a * b + a * c),
        "(a+b)c = ac+bc": same_element((a + b) * c, a * c + b * c),
        "0a = 0": same_element(o * a, o),
    }


def order_homomorphism(d: int, seed: int = SEED) -> dict[str, bool]:
    """Observation 2 on the same instances: ``ord`` maps ``+, *, 0, 1`` to ``+, *, 0, 1`` of the naturals."""
    rng = np.random.default_rng(seed)
    a, b = (gaussian_integer_weights(rng, d, q) for q in (2, 3))
    return {"ord(a+b)": (a + b).order == a.order + b.order, "ord(ab)": (a * b).order == a.order * b.order,
            "ord(0)": zero(d).order == 0, "ord(1)": identity(d).order == 1}


def algebra_statement_checks(d: int) -> list[Check]:
    """Theorem 2 and Observation 2 as two rows labelled ``argued``: each is an argument for every element (below,
    in ``detail``) together with exact checks on seeded instances, which test the implementation but prove nothing
    for the other elements."""
    axioms, orders = semiring_axioms(d), order_homomorphism(d)
    bad = [k for k, ok in axioms.items() if not ok]
    return [
        bool_check("Thm 2: semi-ring axioms", not bad, exactness="argued",
                   detail="argument: + concatenates the node lists and * takes node (i, j) to the entrywise product "
                          "z1_i z2_j, so each axiom is a bijection of node indices (the same for every order) times "
                          "an identity of entrywise complex products (associative, commutative, distributive; 1 = one "
                          "node of ones at every k, 0 = no node); checked exactly, up to node permutation (Def. 4), "
                          f"on Gaussian-integer weights of orders 1, 2, 3 (seed {SEED}): "
                          + (f"failed: {', '.join(bad)}" if bad else f"{len(axioms)} axioms hold")
                          + " (instances test the implementation, they are not the proof)",
                   statement="Theorem 2: <Z, +, *> is a commutative semi-ring (+ = concatenation, * = Kronecker "
                             "product of the nodes, Def. 5)"),
        bool_check("Obs. 2: ord is a ring map", all(orders.values()), exactness="argued",
                   detail="argument: ord counts nodes; + concatenates node lists (ord adds) and * pairs every node of "
                          "z1 with every node of z2 (ord multiplies); ord(0) = 0 and ord(1) = 1 by the definitions of "
                          "0 (no node) and 1 (one node); checked on the node counts of seeded instances of orders 2 "
                          "and 3: " + ", ".join(f"{k} {'ok' if v else 'FAILS'}" for k, v in orders.items()),
                   statement="Observation 2: ord(z1 + z2) = ord z1 + ord z2, ord(z1 * z2) = ord z1 ord z2, "
                             "ord(0) = 0, ord(1) = 1"),
    ]


# ---------------------------------------------------------------- Lemma 2: 0/1-sets of sums and products

def potential_values(z: Z) -> np.ndarray:
    """Every monomial potential of Theorem 1 (``r[k1,k2,k]``, ``r_a``, ``r_b``; output frequency ``k != 0``) as
    one vector, in a fixed order."""
    return np.concatenate([f(z)[:, :, 1:].ravel() for f in (r_abc, lambda x: r_pp(x, A), lambda x: r_pp(x, B))])


def zero_one_sets(z: Z, tol: float = ZERO_TOL) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks over :func:`potential_values`: the 0-set and the 1-set of ``z``."""
    v = potential_values(z)
    scale = max(1.0, float(np.abs(v).max()))
    return np.abs(v) <= tol * scale, np.abs(v - 1) <= tol * scale


def _set_deviation(z: Z, zeros: np.ndarray, ones: np.ndarray) -> float:
    """How far ``z`` is from having 0-set ``zeros`` and 1-set ``ones`` (max deviation)."""
    v = potential_values(z)
    dev = [float(np.abs(v[zeros]).max()) if zeros.any() else 0.0,
           float(np.abs(v[ones] - 1).max()) if ones.any() else 0.0]
    return max(dev)


def normalized(z: Z) -> Z:
    """``z`` scaled by the real cube root of ``1 / r[1,1,1](z)`` (real for the Table 1 partial solutions), so that
    ``r[+-1, +-1, +-1] = 1``: the 1-set of Lemma 1 at frequency 1."""
    r = complex(r_abc(z)[1, 1, 1])
    return z.scaled(float(np.cbrt(1 / r.real))) if abs(r.imag) <= ZERO_TOL * abs(r) and r.real != 0 else z


def lemma2_checks(d: int) -> list[Check]:
    """Lemma 2 (1) on ``z_syn`` and ``z_nu`` (partial solutions of Table 1); Lemma 2 (2) as printed fails on
    ``1 + 1``; the corrected (2) holds on ``z_syn + z_nu``."""
    z1, z2 = (normalized(z) for z in (cc.z_syn(d, 1), cc.z_nu(d, 1, cc.DEFAULT_NU)))
    (n1, o1), (n2, o2) = zero_one_sets(z1), zero_one_sets(z2)
    prod = _set_deviation(z1 * z2, n1 | n2, o1 & o2)
    z3 = normalized(cc.z_nu(d, 2, cc.DEFAULT_NU)) if d >= 5 else z2  # another frequency: a non-empty 1-set below
    n3, o3 = zero_one_sets(z3)
    ones = (o1 & n3) | (n1 & o3)
    summ = _set_deviation(z1 + z3, n1 & n3, ones)
    e = identity(d)
    twos = potential_values(e + e).real  # exact: sums of two exact ones (imaginary parts exactly 0)
    worst = float(np.abs(twos - 1).max())
    tol = ZERO_TOL * 10
    return [
        Check(name="Lemma 2(1): z1 * z2 sets", expected=0.0, measured=prod, tolerance=tol, passed=prod <= tol,
              exactness="float", detail=f"z1 = z_syn, z2 = z_nu (nu = {cc.DEFAULT_NU:.3g}) at frequency 1, d = {d}; "
              f"|0-set| {int((n1 | n2).sum())}, |1-set| {int((o1 & o2).sum())}; max deviation",
              statement="Lemma 2 (1): z1 * z2 has 0/1-sets (R1- union R2-, R1+ intersect R2+)"),
        Check(name="Lemma 2(2) as printed", expected=1.0, measured=float(twos.max()), tolerance=0.0,
              passed=worst == 0.0, exactness="proved", informational=True,
              detail="z1 = z2 = 1 (1-set: every potential); every potential of 1 + 1 is "
                     f"{float(twos.min()):g}..{float(twos.max()):g}, not 1 (r(z1 + z2) = r(z1) + r(z2))",
              statement="Lemma 2 (2) as printed: z1 + z2 has 1-set R1+ union R2+ (false: erratum)"),
        Check(name="Lemma 2(2) corrected", expected=0.0, measured=summ, tolerance=tol, passed=summ <= tol,
              exactness="float", detail=f"z1 = z_syn at frequency 1, z2 = z_nu at frequency {2 if d >= 5 else 1}; "
              f"|0-set| {int((n1 & n3).sum())}, |1-set| {int(ones.sum())}; max deviation",
              statement="Lemma 2 (2) corrected: z1 + z2 has 0-set R1- intersect R2- and 1-set "
                        "(R1+ intersect R2-) union (R1- intersect R2+)"),
    ]


# ---------------------------------------------------------------- Corollary 1: global optimizer times a unit

def random_unit(d: int, rng: np.random.Generator, *, unit_modulus: bool = False) -> Z:
    """An order-1 unit (``r[k,k,k] = 1`` for ``k != 0``, Def. 7) with real weights: ``|y_ak|, |y_bk|`` drawn from
    ``[1/2, 2]`` (or 1), random phases, ``y_ck = 1/(y_ak y_bk)``; conjugates at ``-k``, real at ``k = d/2``."""
    y = np.ones((3, d, 1), dtype=complex)
    for k in range(1, d // 2 + 1):
        mags = np.ones(2) if unit_modulus else rng.uniform(0.5, 2.0, 2)
        if 2 * k == d:
            a, b = mags * rng.choice([-1.0, 1.0], 2)
        else:
            a, b = mags * np.exp(2j * np.pi * rng.uniform(size=2))
        y[:, k, 0] = (a, b, 1 / (a * b))
        y[:, (-k) % d, 0] = np.conj(y[:, k, 0])
    return Z(y)


def real_network_loss(z: Z) -> tuple[float, float]:
    """The forward-pass loss of ``z``'s real network and the imaginary part :func:`~margintheory.tasks.cogo.algebra.
    to_network` discarded, relative to the largest weight (0 up to rounding for Hermitian ``z``)."""
    net, imag = to_network(z)
    scale = max(float(np.abs(net.U).max()), float(np.abs(net.W).max()), 1e-300)
    return forward_loss(net), imag / scale


def corollary1_checks(d: int) -> list[Check]:
    """Cor. 1 on ``z_F6`` (meets Lemma 1's condition) with a unit of unequal moduli: loss 0.  On ``z_F4/6``
    (corrected bias; a global optimizer meeting only the summed ``R_n``): loss > 0 with that unit, 0 with a
    unit of modulus 1.  Each row reports the imaginary part dropped when the real network is formed, bounded by
    :data:`~margintheory.tasks.cogo.lemma1_checks.ZERO_TOL` (relative to the largest weight)."""
    rng = np.random.default_rng(SEED)
    y, y1 = random_unit(d, rng), random_unit(d, rng, unit_modulus=True)
    f6 = cc.build_f6(d, variant="paper" if d % 2 else "corrected").z
    loss, imag = real_network_loss(f6 * y)
    dropped = "; imaginary part dropped from the real weights {:.1e} of the largest (bound {:.0e})"
    rows = [Check(name="Cor. 1 on z_F6 * y", expected=0.0, measured=loss, tolerance=ZERO_TOL,
                  passed=loss <= ZERO_TOL and imag <= ZERO_TOL, exactness="float",
                  detail=f"forward-pass loss; y an order-1 unit with |y_pk| in [1/2, 2] (seed {SEED})"
                         + dropped.format(imag, ZERO_TOL),
                  statement="Corollary 1 under Lemma 1's condition: z_F6 * y is a global optimizer (loss 0) for a "
                            "unit y")]
    if d >= 5:
        f46 = cc.build_f46(d, variant="corrected").z
        (bad, ibad), (good, igood) = (real_network_loss(f46 * u) for u in (y, y1))
        rows += [
            Check(name="Cor. 1 on z_F4/6 * y", expected=0.0, measured=bad, tolerance=ZERO_TOL,
                  passed=bad <= ZERO_TOL and ibad <= ZERO_TOL, exactness="float", informational=True,
                  detail="the same unit y: the sums sum_k' r_p[k',-k',k] |y_pk'|^2 y_ck no longer cancel"
                         + dropped.format(ibad, ZERO_TOL),
                  statement="Corollary 1 as stated, for a global optimizer outside Lemma 1's condition (z_F4/6, "
                            "Corollary 5): z * y is a global optimizer (false for units with unequal |y_pk|)"),
            Check(name="Cor. 1 on z_F4/6, |y| = 1", expected=0.0, measured=good, tolerance=ZERO_TOL,
                  passed=good <= ZERO_TOL and igood <= ZERO_TOL, exactness="float",
                  detail="a unit with |y_pk| = 1 for every p, k" + dropped.format(igood, ZERO_TOL),
                  statement="Corollary 1 for z_F4/6 and a unit with |y_pk| = 1: the R_n sums keep cancelling "
                            "(loss 0)"),
        ]
    return rows


# ---------------------------------------------------------------- Lemma 4: canonical decomposition

def canonical_decomposition(z: Z, k0: int) -> tuple[Z, Z, int]:
    """Lemma 4: ``z = z' * y`` with ``z'`` canonical at ``k0`` (node 0 equal to 1 at ``+-k0``) and ``ord(y) = 1``;
    the node used is the one with the largest ``|z_a z_b z_c|`` at ``k0`` (the proof takes any with all three
    non-zero), moved first.  Returns ``z', y`` and that node."""
    d = z.d
    j = int(np.argmax(np.abs(z.z[0, k0] * z.z[1, k0] * z.z[2, k0])))
    order = [j] + [i for i in range(z.order) if i != j]
    zz = z.z[:, :, order].copy()
    y = np.ones((3, d, 1), dtype=complex)
    for k in {k0 % d, (-k0) % d}:
        y[:, k, 0] = zz[:, k, 0]
        zz[:, k, :] /= zz[:, k, :1]
    return Z(zz), Z(y), j


def lemma4_check(d: int, q: int = 5) -> Check:
    """Lemma 4 on seeded random real weights at ``k0 = 1``."""
    rng = np.random.default_rng(SEED)
    wa, wb, v = (rng.normal(size=(q, d)) for _ in range(3))
    wa -= wa.mean(axis=1, keepdims=True)
    wb -= wb.mean(axis=1, keepdims=True)
    z = from_network(PolyNetwork(np.stack([wa, wb], axis=1), v))
    zp, y, _ = canonical_decomposition(z, 1)
    rebuilt = zp * y
    canon = float(np.abs(zp.z[:, [1, d - 1], 0] - 1).max())
    err = float(np.abs(node_multiset(rebuilt) - node_multiset(z)).max())
    rz, rzp, ry = (r_abc(x)[1, 1, 1] for x in (z, zp, y))
    hom = float(np.abs(potential_values(z) - potential_values(zp) * potential_values(y)).max())
    worst = max(canon, err, hom / max(1.0, float(np.abs(potential_values(z)).max())))
    ok = worst <= ZERO_TOL and y.order == 1 and abs(rzp) > ZERO_TOL and abs(ry) > ZERO_TOL
    return Check(name="Lemma 4: z = z' * y", expected=0.0, measured=worst, tolerance=ZERO_TOL, passed=ok,
                 exactness="float",
                 detail=f"random real weights (seed {SEED}, order {q}, k0 = 1): |z'_(p,+-k0,0) - 1| {canon:.1e}, "
                        f"|z' * y - z| {err:.1e} (up to node order), |r(z) - r(z') r(y)| {hom:.1e}; ord(y) = "
                        f"{y.order}; |r_k0k0k0| of z, z', y: {abs(rz):.3g}, {abs(rzp):.3g}, {abs(ry):.3g}",
                 statement="Lemma 4: z with r_k0k0k0(z) != 0 is z' * y, z' canonical at k0, ord(y) = 1, "
                           "r_k0k0k0(z') != 0 and r_k0k0k0(y) != 0")
