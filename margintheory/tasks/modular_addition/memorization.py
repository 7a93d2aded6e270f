"""The memorizing network of Morwani et al., "Feature emergence via margin maximization" (arXiv:2311.07568),
Appendix D.4 (docs/theory.md#memorization-network): for any table ``r : Z_p^2 -> Z_p`` (here ``r(a, b) = a + b``),
two neurons per input pair,

    (u, v, w) = (e_a, e_b, e_r(a,b) / 4)   and   (u', v', w') = (e_a, -e_b, -e_r(a,b) / 4),

together ``2 p^2`` neurons, compute ``f(i, j)[k] = 1[k = r(i, j)]`` exactly; every vector is (up to sign) one-hot,
so every neuron is spread evenly over all frequencies.  The paper shows that it fits the labels; the package also
computes its ``L_{2,3}``-normalized margin against ``gamma*`` exactly (it is smaller: correct classification alone
does not force Fourier features, the margin does).

The network is kept sparse (three non-zero entries per neuron: ``2 p^2`` neurons at ``p = 1009`` would be 32 GB
dense).  Exactness: the logits are computed in integers (``4 f``) from the neurons, on the whole table for
``p <= DENSE_P_MAX`` and, for every ``p``, per neuron pair on the four cases ``(i = a or not) x (j = b or not)``
(each pair's output depends on nothing else, so the sum over pairs is decided by them); norms and margins are
exact algebraic numbers (sympy), compared with ``gamma*`` by the square of their ratio.
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


def pair_cases(net: MemorizationNetwork) -> set[tuple[bool, bool, int]]:
    """For every neuron pair ``(2t, 2t+1)``: its summed output ``4 f`` at class ``c`` on the four cases
    ``(i = a, j = b)``, ``(i = a, j != b)``, ``(i != a, j = b)``, ``(i != a, j != b)`` -- the set of
    ``(i = a, j = b, value)`` over all pairs (exact integers)."""
    out = set()
    for ia, jb in ((True, True), (True, False), (False, True), (False, False)):
        vals = sum(((1 if ia else 0) + net.sv[s::2] * (1 if jb else 0)) ** 2 * net.sw[s::2] for s in (0, 1))
        out |= {(ia, jb, int(v)) for v in np.unique(vals)}
    return out


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


def memorization_checks(p: int) -> tuple[list[Check], dict]:
    """Appendix D.4 at ``p``: the network computes ``1[c = a + b]`` (exact), its width, its normalized margin
    (printed and balanced) against ``gamma*(p, 2)`` (exact), and its Fourier spread (informational)."""
    net = memorization_network(p)
    cases = pair_cases(net)
    want = {(True, True, 4), (True, False, 0), (False, True, 0), (False, False, 0)}
    table = ""
    ok = cases == want
    if p <= DENSE_P_MAX:
        F = logits_times_four(net)
        s = np.add.outer(np.arange(p), np.arange(p)) % p
        target = 4 * (np.arange(p)[None, None, :] == s[:, :, None])
        ok = ok and bool(np.array_equal(F, target))
        table = f"; the whole {p}^3 table 4 f equals 4 1[k = i + j] (integers)"
    # the margin from the computed outputs: correct logit (case i = a, j = b) minus the largest other value, / 4
    margin = sp.Rational(max(v for ia, jb, v in cases if ia and jb) - max(v for ia, jb, v in cases
                                                                           if not (ia and jb)), 4)
    rows = [Check(name="D.4: f = 1[c = a+b]", expected=True, measured=ok, tolerance=None, passed=ok,
                  exactness="proved",
                  detail=f"each of the {p * p} neuron pairs adds 4 at (i, j, k) = (a, b, a+b) and 0 elsewhere "
                         f"(cases {sorted(cases)}){table}",
                  statement="Morwani et al. App. D.4: the 2p^2-neuron memorizing network computes "
                            "f(a, b)[c] = 1[c = a + b] exactly"),
            Check(name="D.4: width 2p^2", expected=2 * p * p, measured=net.width, tolerance=None,
                  passed=net.width == 2 * p * p, exactness="proved", statement="App. D.4: 2 p^2 neurons")]
    fields: dict = {"memorization_width": net.width}
    gamma = theory.gamma_star_exact_of(p, 2) if p % 2 else None  # p validated by the problem object
    for balanced in (False, True):
        value = sp.nsimplify(margin / norm_cubed(net, balanced))
        ratio = sp.simplify(value / gamma) if gamma is not None else None
        below = bool(sp.simplify(ratio**2 - 1) < 0) if ratio is not None else True
        tag = "balanced" if balanced else "as printed"
        rows.append(Check(name=f"D.4 margin ({tag})", expected=None if gamma is None else float(gamma),
                          measured=float(value), tolerance=0.0, passed=below, exactness="proved", informational=True,
                          detail=f"exact {value}" + (f" = {float(ratio):.6g} gamma* (exact ratio {ratio})"
                                                     if ratio is not None else ""),
                          statement=f"App. D.4 network ({tag}"
                                    f"{', each neuron rescaled to equal norms' if balanced else ''}"
                                    "): L_{2,3}-normalized margin < gamma*(p, 2) (computed here, not in the paper)"))
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
