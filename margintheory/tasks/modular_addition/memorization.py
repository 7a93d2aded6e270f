"""The memorizing network of Morwani et al., "Feature emergence via margin maximization" (arXiv:2311.07568),
Appendix D.4 (docs/theory.md#memorization-network): for any table ``r : Z_p^2 -> Z_p`` (here ``r(a, b) = a + b``),
two neurons per input pair,

    (u, v, w) = (e_a, e_b, e_r(a,b) / 4)   and   (u', v', w') = (e_a, -e_b, -e_r(a,b) / 4),

together ``2 p^2`` neurons, compute ``f(i, j)[k] = 1[k = r(i, j)]`` exactly; every vector is (up to sign) one-hot,
so every neuron is spread evenly over all frequencies.  The paper shows that it fits the labels; the package also
computes its ``L_{2,3}``-normalized margin against ``gamma*`` exactly (it is smaller: correct classification alone
does not force Fourier features, the margin does).

The network is kept sparse (three non-zero entries per neuron: ``2 p^2`` neurons at ``p = 1009`` would be 32 GB
dense).  Exactness, for every ``p`` and without enumerating the ``p^3`` table: a neuron ``(e_a, sv e_b, sw e_c / 4)``
adds ``sw (1[i=a] + sv^2 1[j=b] + 2 sv 1[i=a, j=b]) / 4`` at class ``c``, so the network's ``4 f`` is
``R[i, k] + C[j, k] + P(i, j, k)`` with ``R``, ``C`` two ``p x p`` integer tables and ``P`` a sparse map (at most one
entry per neuron), all summed from the network's weights (:func:`output_structure`).  Whether ``4 f = 4 1[k = i + j]``
at every one of the ``p^3`` points is then decided exactly per class in ``O(p log p + nnz)``
(:func:`table_mismatches`): every input covered, exactly once, at its class ``i + j``.  The margin is read off the same
structure (:func:`output_margin_times_four`).  For ``p <= DENSE_P_MAX`` the whole table is also computed neuron by
neuron (:func:`logits_times_four`), an independent second computation.  Norms and margins are exact algebraic numbers
(sympy), compared with ``gamma*`` by the square of their ratio.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from margintheory.core import theory
from margintheory.core.checks import Check
from margintheory.core.network import PolyNetwork

#: the whole ``p^3`` logit table is computed (in integers) up to this ``p``
DENSE_P_MAX = 61


@dataclass(frozen=True)
class MemorizationNetwork:
    """Neuron ``n`` is ``u = e_(a_n)``, ``v = sv_n e_(b_n)``, ``w = sw_n e_(c_n) / 4`` (``sv, sw`` in ``{+1, -1}``)."""

    p: int
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    sv: np.ndarray
    sw: np.ndarray

    @property
    def width(self) -> int:
        return len(self.a)

    def dense(self) -> PolyNetwork:
        """The float64 network (for small ``p``; the weights are exact in float64)."""
        p, n = self.p, self.width
        U = np.zeros((n, 2, p))
        W = np.zeros((n, p))
        U[np.arange(n), 0, self.a] = 1.0
        U[np.arange(n), 1, self.b] = self.sv
        W[np.arange(n), self.c] = self.sw / 4
        return PolyNetwork(U, W)


def memorization_network(p: int) -> MemorizationNetwork:
    """Appendix D.4's network for ``r(a, b) = a + b mod p``."""
    a, b = np.divmod(np.arange(p * p), p)
    rep = np.repeat
    return MemorizationNetwork(p, rep(a, 2), rep(b, 2), rep((a + b) % p, 2), np.tile([1, -1], p * p),
                               np.tile([1, -1], p * p))


def logits_times_four(net: MemorizationNetwork) -> np.ndarray:
    """``4 f(i, j)[k]`` for every ``(i, j, k)``, exactly (int64): a neuron touches only the inputs with ``i = a``
    or ``j = b`` and only the class ``c``, where it adds ``(1[i=a] + sv 1[j=b])^2 sw``."""
    p = net.p
    F = np.zeros((p, p, p), dtype=np.int64)
    j = np.arange(p)
    for a, b, c, sv, sw in zip(net.a, net.b, net.c, net.sv, net.sw, strict=True):
        F[a, :, c] += (1 + sv * (j == b)) ** 2 * sw  # the row i = a (including j = b)
        rows = np.arange(p) != a
        F[rows, b, c] += sv * sv * sw  # the column j = b, i != a
    return F


@dataclass(frozen=True)
class OutputStructure:
    """The network's ``4 f(i, j)[k] = R[i, k] + C[j, k] + P(i, j, k)`` (exact integers), summed from its weights:
    ``R[a, c] += sw``, ``C[b, c] += sv^2 sw`` and ``P(a, b, c) += 2 sv sw`` for each neuron; ``P`` is stored sparse,
    as sorted keys ``(i p + j) p + k`` with their non-zero values."""

    p: int
    R: np.ndarray
    C: np.ndarray
    keys: np.ndarray
    values: np.ndarray

    @property
    def separable_zero(self) -> bool:
        """``R = C = 0``: the outputs are the sparse point terms alone."""
        return not (self.R.any() or self.C.any())


def output_structure(net: MemorizationNetwork) -> OutputStructure:
    """:class:`OutputStructure` of ``net``: a neuron ``(e_a, sv e_b, sw e_c / 4)`` adds
    ``sw (1[i=a] + sv 1[j=b])^2 = sw 1[i=a] + sv^2 sw 1[j=b] + 2 sv sw 1[i=a] 1[j=b]`` to ``4 f(i, j)[c]``."""
    p = net.p
    a, b, c = (np.asarray(x, dtype=np.int64) for x in (net.a, net.b, net.c))
    sv, sw = np.asarray(net.sv, dtype=np.int64), np.asarray(net.sw, dtype=np.int64)
    R = np.zeros((p, p), dtype=np.int64)
    C = np.zeros((p, p), dtype=np.int64)
    np.add.at(R, (a, c), sw)
    np.add.at(C, (b, c), sv * sv * sw)
    keys, inverse = np.unique((a * p + b) * p + c, return_inverse=True)
    values = np.zeros(len(keys), dtype=np.int64)
    np.add.at(values, inverse, 2 * sv * sw)
    keep = values != 0
    return OutputStructure(p, R, C, keys[keep], values[keep])


def _target_keys(p: int) -> np.ndarray:
    """The keys ``(i p + j) p + (i + j mod p)`` of the ``p^2`` points where ``1[k = i + j] = 1``, sorted."""
    i, j = np.divmod(np.arange(p * p, dtype=np.int64), p)
    return (i * p + j) * p + (i + j) % p


@dataclass(frozen=True)
class TableComparison:
    """``4 f`` against ``4 1[k = i + j]`` at all ``p^3`` points, decided from :class:`OutputStructure`."""

    mismatches: int  # points (i, j, k) where 4 f != 4 1[k = i + j]
    covered: int  # inputs (i, j) with a point term at some class
    right_class: int  # inputs whose point term at class i + j is exactly 4
    wrong_class: int  # point terms at a class other than i + j


def table_mismatches(st: OutputStructure) -> TableComparison:
    """The number of points where ``4 f != 4 1[k = i + j]``, exactly, without enumerating the table: with
    ``D = 4 1[k = i + j] - P`` (sparse), the difference at class ``k`` is ``R[i, k] + C[j, k] - D(i, j, k)``.  At the
    stored points of ``D`` it is compared directly; off them it is ``R[i, k] + C[j, k]``, whose zeros over all
    ``(i, j)`` are counted as ``sum_v #{i: R[i, k] = v} #{j: C[j, k] = -v}`` (``O(p log p)`` per class)."""
    p = st.p
    tkeys = _target_keys(p)
    keys = np.union1d(st.keys, tkeys)
    D = np.zeros(len(keys), dtype=np.int64)
    D[np.searchsorted(keys, tkeys)] += 4
    D[np.searchsorted(keys, st.keys)] -= st.values
    ij, k = np.divmod(keys, p)
    i, j = np.divmod(ij, p)
    sep = st.R[i, k] + st.C[j, k]  # R + C at the stored points
    mismatches = int(np.count_nonzero(sep != D))
    for kk in np.flatnonzero(st.R.any(axis=0) | st.C.any(axis=0)):  # classes where R + C can be non-zero off D
        rv, rc = np.unique(st.R[:, kk], return_counts=True)
        cv, cc = np.unique(st.C[:, kk], return_counts=True)
        pos = np.searchsorted(cv, -rv).clip(max=len(cv) - 1)
        zeros = int(np.sum(np.where(cv[pos] == -rv, rc * cc[pos], 0)))
        stored_nonzero = int(np.count_nonzero(sep[k == kk]))
        mismatches += p * p - zeros - stored_nonzero
    pij, pk = np.divmod(st.keys, p)
    pi, pj = np.divmod(pij, p)
    right = pk == (pi + pj) % p
    return TableComparison(mismatches, len(np.unique(pij)), int(np.count_nonzero(right & (st.values == 4))),
                           int(np.count_nonzero(~right)))


def output_margin_times_four(st: OutputStructure, net: MemorizationNetwork) -> int | None:
    """``min_(i, j) (4 f(i, j)[i + j] - max_(k != i + j) 4 f(i, j)[k])``, exactly, from the network's outputs: from the
    sparse point terms when ``R = C = 0`` (every ``p``), else from the whole table (``p <= DENSE_P_MAX``); ``None``
    when neither applies."""
    p = st.p
    if not st.separable_zero:
        if p > DENSE_P_MAX:
            return None
        F = logits_times_four(net)
        s = np.add.outer(np.arange(p), np.arange(p)) % p
        right = np.take_along_axis(F, s[:, :, None], axis=2)[:, :, 0]
        np.put_along_axis(F, s[:, :, None], np.iinfo(np.int64).min, axis=2)
        return int((right - F.max(axis=2)).min())
    ij, k = np.divmod(st.keys, p)
    i, j = np.divmod(ij, p)
    is_right = k == (i + j) % p
    correct = np.zeros(p * p, dtype=np.int64)
    correct[ij[is_right]] = st.values[is_right]
    wrong_max = np.full(p * p, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(wrong_max, ij[~is_right], st.values[~is_right])
    wrong_count = np.bincount(ij[~is_right], minlength=p * p)
    wrong_max = np.where(wrong_count < p - 1, np.maximum(wrong_max, 0), wrong_max)  # an unstored wrong class is 0
    return int((correct - wrong_max).min())


def norm_cubed(net: MemorizationNetwork, balanced: bool = False) -> sp.Expr:
    """``||theta||_{2,3}^3 = sum_n ||theta_n||_2^3`` exactly, from the neurons' entries.  With ``balanced`` each
    neuron ``(u, v, w)`` is first rescaled to ``(s u, s v, t w)`` with ``s^2 t = 1`` (the same output) and
    ``||s u|| = ||s v|| = ||t w||``: for ``||u|| = ||v||`` that is the smallest norm for its output (AM-GM), with
    ``||theta_n||^2 = 3 (||u|| ||v|| ||w||)^(2/3)``."""
    u2 = np.ones(net.width, dtype=np.int64)  # ||u||^2 = 1 (one-hot), ||v||^2 = sv^2, ||w||^2 = sw^2 / 16
    v2, w2 = net.sv.astype(np.int64) ** 2, net.sw.astype(np.int64) ** 2
    counts: dict[tuple[int, int, int], int] = {}
    for key in zip(u2.tolist(), v2.tolist(), w2.tolist(), strict=True):
        counts[key] = counts.get(key, 0) + 1
    total = sp.Integer(0)
    for (a, b, c), m in counts.items():
        sq = (3 * (sp.Rational(a * b * c, 16)) ** sp.Rational(1, 3) if balanced
              else sp.Integer(a) + b + sp.Rational(c, 16))
        total += m * sq ** sp.Rational(3, 2)
    return sp.nsimplify(total)


def memorization_checks(p: int, net: MemorizationNetwork | None = None) -> tuple[list[Check], dict]:
    """Appendix D.4 at ``p``: the network (``net``, by default :func:`memorization_network`) computes
    ``1[c = a + b]`` at every one of the ``p^3`` points (exact, from its weights), its width, its normalized margin
    (from its outputs; printed and balanced) against ``gamma*(p, 2)`` (exact), and its Fourier spread
    (informational)."""
    net = memorization_network(p) if net is None else net
    st = output_structure(net)
    cmp = table_mismatches(st)
    ok = cmp.mismatches == 0
    table = ""
    if p <= DENSE_P_MAX:  # the second, independent computation: every neuron on the whole table
        F = logits_times_four(net)
        s = np.add.outer(np.arange(p), np.arange(p)) % p
        dense_bad = int(np.count_nonzero(F != 4 * (np.arange(p)[None, None, :] == s[:, :, None])))
        ok = ok and dense_bad == 0
        table = f"; neuron by neuron on the whole {p}^3 table: {dense_bad} points differ"
    margin4 = output_margin_times_four(st, net)
    rows = [Check(name="D.4: f = 1[c = a+b]", expected=0, measured=cmp.mismatches, tolerance=None, passed=ok,
                  exactness="proved",
                  detail=f"points (i, j, k) of the {p}^3 table where the network's 4 f differs from 4 1[k = i + j], "
                         f"counted exactly from its weights (4 f = R[i,k] + C[j,k] + P(i,j,k); R, C zero: "
                         f"{st.separable_zero}); inputs covered by a point term {cmp.covered} of {p * p}, with 4 at "
                         f"class i + j {cmp.right_class}, point terms at another class {cmp.wrong_class}{table}",
                  statement="Morwani et al. App. D.4: the 2p^2-neuron memorizing network computes "
                            "f(a, b)[c] = 1[c = a + b] exactly"),
            Check(name="D.4: width 2p^2", expected=2 * p * p, measured=net.width, tolerance=None,
                  passed=net.width == 2 * p * p, exactness="proved", statement="App. D.4: 2 p^2 neurons")]
    fields: dict = {"memorization_width": net.width}
    gamma = theory.gamma_star_exact_of(p, 2) if p % 2 else None  # p validated by the problem object
    for balanced in (False, True):
        tag = "balanced" if balanced else "as printed"
        statement = (f"App. D.4 network ({tag}{', each neuron rescaled to equal norms' if balanced else ''}): "
                     "L_{2,3}-normalized margin < gamma*(p, 2) (computed here, not in the paper)")
        name = f"D.4 margin ({tag})"
        if margin4 is None:
            rows.append(Check(name=name, expected=None if gamma is None else float(gamma), measured=None,
                              tolerance=0.0, passed=False, exactness="proved", informational=True,
                              detail=f"not computed: the outputs are not point terms alone and p > {DENSE_P_MAX}",
                              statement=statement))
            fields[f"memorization_margin_{'balanced' if balanced else 'printed'}"] = None
            continue
        value = sp.nsimplify(sp.Rational(margin4, 4) / norm_cubed(net, balanced))
        ratio = sp.simplify(value / gamma) if gamma is not None else None
        below = bool(sp.simplify(ratio**2 - 1) < 0) if ratio is not None and value > 0 else True
        rows.append(Check(name=name, expected=None if gamma is None else float(gamma),
                          measured=float(value), tolerance=0.0, passed=below, exactness="proved", informational=True,
                          detail=f"min over the p^2 inputs of f at i + j minus the largest other f = {margin4}/4 (from "
                                 f"the network's outputs); exact {value}"
                                 + (f" = {float(ratio):.6g} gamma* (exact ratio {ratio})" if ratio is not None else ""),
                          statement=statement))
        fields[f"memorization_margin_{'balanced' if balanced else 'printed'}"] = float(value)
    rows.append(_fourier_spread_row(net))
    return rows, fields


def _fourier_spread_row(net: MemorizationNetwork) -> Check:
    """Every vector of the network is one-hot: its DFT has modulus 1 at every frequency, so the largest normalized
    power is ``1/p`` (a max-margin neuron has 1): measured on one neuron pair."""
    p = net.p
    one_hot = np.zeros(p)
    one_hot[net.a[0]] = 1.0
    power = np.abs(np.fft.fft(one_hot)) ** 2
    share = float(power.max() / power.sum())
    return Check(name="D.4: Fourier-dense", expected=1 / p, measured=share, tolerance=1e-12,
                 passed=abs(share - 1 / p) <= 1e-12, exactness="float", informational=True,
                 detail="largest normalized power max_j |u^(j)|^2 / sum_j |u^(j)|^2 of a one-hot vector (every "
                        "vector of the network is one, up to sign)",
                 statement="App. D.4: the memorizing network is dense in Fourier space (max normalized power 1/p)")
