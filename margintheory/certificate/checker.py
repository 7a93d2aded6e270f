"""Independent checker of max-margin certificate files (``margintheory check FILE.json``).

This module is deliberately small and self-contained: it imports only the standard library and, when installed,
python-flint (for fast rationals); never numpy, cvxpy or the rest of margintheory, so that a referee can read it
in one sitting and re-check a certificate without trusting the code that produced it.  Every number is an exact
rational; nothing is rounded.  For the same reason it keeps its own deliberate copies of pieces the producer also
has -- the sphere norm polynomial (:func:`norm_power`; producer: ``margintheory.solvers.polynomial.norm_power``),
the block constants ``c_b^2`` (:func:`block_constants_squared`; producer: ``margintheory.symbolic.block_reduction``)
and the exact margin of the witness network -- so that a bug in the producer's copy cannot hide in the check.

What a certificate (format ``margintheory-maxmin-certificate``, version 1; docs/commands.md) claims, and
how each part is re-checked here:

1. ``sos``: an identity of real polynomials in ``z = (z_1..z_k, z_w) in C^(k+1)`` (written in ``z`` and
   ``conj(z)``; the exponents of a monomial ``z^a conj(z)^b`` are the list ``a + b``)::

       sum_blocks sum_{r,s} G_b[r, s] conj(m_r) m_s  +  lambda(z) (1 - |z|^2)  =  gamma N(z) - scale * g_k(z)

   with ``g_k = Re(conj(z_w) z_1...z_k)`` (rebuilt here from ``k``, not read from the file), ``N = |z|^(2h)`` for
   the homogeneous relaxation (no ``lambda``) and ``N = 1`` for the Putinar one.  Checked by expanding both sides
   exactly; every ``G_b`` is checked symmetric and positive semidefinite by an exact LDL^T decomposition.  On the
   unit sphere the left side is ``>= 0``, hence ``max_{|z| = 1} g_k <= gamma / scale``.
1'. ``am_gm`` (instead of ``sos``, for the uniform class weights): ``max_{|z| = 1} g_k = (k+1)^-((k+1)/2)``
   *exactly*, stated as ``bound_squared = (k+1)^-(k+1)`` (the square of the maximum, a rational) and re-checked in
   exact rational arithmetic by :func:`check_am_gm` (no solver: the inequality of arithmetic and geometric means,
   proved by a chain of two-variable identities whose quotients the file lists).
2. ``reduction``: the frequency blocks of the single-neuron objective with uniform weights are ``c_b g_k`` in
   orthonormal coordinates (Lemma C.14 of Li et al., "Fourier Circuits in Neural Networks and Transformers",
   arXiv:2402.09469; proved symbolically for all ``p`` by ``margintheory.symbolic.block_reduction``).  The squared
   constants ``c_b^2`` are recomputed here from ``(p, k)`` and must equal the file's.
3. ``claim.upper`` (``"a/b"``, or ``"sqrt(a/b)"`` with an ``am_gm`` section): ``U >= 0`` with
   ``U^2 >= c_b^2 B^2`` for every block (exact), ``B = gamma / scale`` or ``B^2 = bound_squared``.
4. ``claim.lower`` (``"a/b"`` or ``"sqrt(a/b)"``): when the file includes ``lower_witness`` (a network with
   rational weights ``U (m, k, p)``, ``W (m, p)``), the checker recomputes its margin exactly -- every logit
   ``sum_i (U_i1[a_1] + ... + U_ik[a_k])^k W_i[c]`` on all ``p^k`` inputs -- and the norm
   ``sum_i ||theta_i||^(k+1)`` from above (exact rational square roots rounded up), and checks
   ``lower <= margin / norm``; without a witness the lower bound is a claim (listed as such).  Then
   ``lower <= U`` and the claimed relative gap ``(U - L) / L`` are checked exactly.

5. ``even_p`` (even ``p`` only; docs/theory.md#even-p-max-margin): the true max margin ``gamma_even(p, k)``, with
   numbers of ``Q(sqrt 2)`` written ``["a/b", "c/d"]`` (``a/b + (c/d) sqrt(2)``) and compared exactly.  The ratio
   ``r`` must satisfy ``r^2 = c'^2/c^2`` (the recomputed constants); the translation-invariant dual ``t`` (``t_odd``
   on odd ``d``, ``t_even`` on even ``d != 0``) must be ``>= 0``, and ``claim.upper`` must bound every block's
   ``((p-1)/(p T)) c_b |kappa_t(b)| gamma/scale`` (this replaces check 3); at AM-GM's ``max g_k`` both blocks and the
   network of the budgets ``network.complex`` (each ``0 < j < p/2``) and ``network.real`` (``p/2``) must give
   ``max_margin_squared``, with cost 1 and the same margin at every wrong label; and ``lower <= max margin <=
   upper``.

What this checker does not re-prove is printed with exactness ``argued`` and its reason (:data:`NOT_RECHECKED`,
whatever the file lists): weak duality (Lemma C.6), Lemma C.14 itself (only its constants are recomputed here; the
producer proves it for all ``p`` symbolically) and the homogeneity step ``max_ball sum_j F_j <= max_j
max_sphere F_j``.  Exit status of :func:`main`: 0 valid, 1 invalid (the failing step is named), 2 unreadable.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

try:  # python-flint's rationals are much faster than fractions.Fraction; both are exact
    import flint

    _fmpq: Any = flint.fmpq  # python-flint >= 0.7 ships types: the fallback below needs the name typed Any
except ImportError:  # pragma: no cover - python-flint is a dependency; Fraction is the fallback
    _fmpq = None

FORMAT = "margintheory-maxmin-certificate"
VERSION = 1
MAX_BYTES = 512 * 2**20

Monomial = tuple[int, ...]


class Unreadable(Exception):
    """The file is not a certificate this checker can read (exit 2)."""


#: the most decimal digits an integer of a certificate may have (exact rationals of an SOS identity run to thousands
#: of digits; Python's own limit for ``int(str)`` is 4300)
MAX_DIGITS = 1_000_000
_INTEGER = re.compile(r"[+-]?[0-9]+")


def _integer(text: str) -> Any:
    """A decimal integer of any length up to :data:`MAX_DIGITS` (flint's parser: no digit limit, fast)."""
    text = text.removeprefix("+")
    if _fmpq is not None:
        return flint.fmpz(text)
    if len(text) <= 4000:  # pragma: no cover - the Fraction fallback
        return int(text)
    old = sys.get_int_max_str_digits()  # pragma: no cover
    sys.set_int_max_str_digits(0)  # pragma: no cover
    try:  # pragma: no cover
        return int(text)
    finally:  # pragma: no cover
        sys.set_int_max_str_digits(old)


def rational(text: Any, what: str) -> Any:
    """Parse ``"a/b"`` / ``"a"`` (decimal integers only, at most :data:`MAX_DIGITS` digits each) into an exact
    rational; :class:`Unreadable` otherwise."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise Unreadable(f"{what}: expected a rational 'a/b', got {text!r:.60}")
    s = str(text).strip()
    num, _, den = s.partition("/")
    den = den or "1"
    if not (_INTEGER.fullmatch(num) and _INTEGER.fullmatch(den)):
        raise Unreadable(f"{what}: not a rational 'a/b': {s!r:.60}")
    digits = max(len(num.lstrip("+-")), len(den.lstrip("+-")))
    if digits > MAX_DIGITS:
        raise Unreadable(f"{what}: a rational with a {digits}-digit integer, longer than a certificate's numbers can "
                         f"be (at most {MAX_DIGITS} digits)")
    n, d = _integer(num), _integer(den)
    if d <= 0:
        raise Unreadable(f"{what}: denominator must be positive in {s!r:.60}")
    return _fmpq(n, d) if _fmpq is not None else Fraction(int(n), int(d))


def to_fraction(x: Any) -> Fraction:
    """An exact :class:`Fraction` from a flint or Fraction rational."""
    if isinstance(x, Fraction):
        return x
    return Fraction(int(x.p), int(x.q))


def positive_algebraic_square(text: Any, what: str) -> Fraction:
    """``"a/b"`` -> ``(a/b)^2``; ``"sqrt(a/b)"`` -> ``a/b``: the exact square of a non-negative number."""
    if not isinstance(text, str):
        raise Unreadable(f"{what}: expected 'a/b' or 'sqrt(a/b)', got {text!r:.60}")
    s = text.strip()
    if s.startswith("sqrt(") and s.endswith(")"):
        sq = to_fraction(rational(s[5:-1], what))
        if sq < 0:
            raise Unreadable(f"{what}: square root of a negative number")
        return sq
    v = to_fraction(rational(s, what))
    if v < 0:
        raise Unreadable(f"{what}: must be non-negative")
    return v * v


# -- the mathematics re-derived from (p, k) ------------------------------------------------------------------------


def block_form(k: int) -> dict[Monomial, Fraction]:
    """``g_k = (conj(z_w) z_1...z_k + z_w conj(z_1)...conj(z_k)) / 2``."""
    hol = tuple([1] * k + [0])
    anti = tuple([0] * k + [1])
    return {hol + anti: Fraction(1, 2), anti + hol: Fraction(1, 2)}


def norm_power(n: int, h: int) -> dict[Monomial, Fraction]:
    """``(|z_1|^2 + ... + |z_n|^2)^h`` by repeated multiplication (no multinomial formula assumed)."""
    poly: dict[Monomial, Fraction] = {tuple([0] * (2 * n)): Fraction(1)}
    for _ in range(h):
        nxt: dict[Monomial, Fraction] = {}
        for m, c in poly.items():
            for var in range(n):
                e = list(m)
                e[var] += 1
                e[n + var] += 1
                t = tuple(e)
                nxt[t] = nxt.get(t, Fraction(0)) + c
        poly = nxt
    return poly


def block_constants_squared(p: int, k: int) -> list[dict[str, Any]]:
    """The squared constants ``c_b^2`` of the frequency blocks, recomputed from Lemma C.14 in orthonormal
    coordinates (docs/theory.md#frequency-blocks): frequencies ``1 <= j < p/2`` give
    ``c^2 = (2 k! / ((p-1) p^k))^2 (p/2)^(k+1)`` on ``C^(k+1)``; for even ``p`` the frequency ``p/2`` gives
    ``c^2 = (k! / ((p-1) p^k))^2 p^(k+1)`` on the real subspace ``R^(k+1)`` (where ``g_k`` restricts to
    ``x_w x_1 ... x_k``)."""
    base = Fraction(math.factorial(k), (p - 1) * p**k)
    out = []
    if p >= 3:
        out.append({"frequencies": f"1..{(p - 1) // 2}", "domain": "complex",
                    "constant_squared": (2 * base) ** 2 * Fraction(p, 2) ** (k + 1)})
    if p % 2 == 0:
        out.append({"frequencies": f"{p // 2}", "domain": "real", "constant_squared": base**2 * Fraction(p) ** (k + 1)})
    return out


# -- exact linear algebra and polynomial identity ------------------------------------------------------------------


def ldl_psd(matrix: list[list[Any]]) -> tuple[bool, str]:
    """Exact PSD test of a symmetric rational matrix by LDL^T (symmetric Gaussian elimination).

    A zero pivot is allowed only when the rest of its row is zero (then the row is dropped); a negative pivot, or
    a zero pivot with a non-zero row, proves the matrix is not PSD.  Returns ``(psd, reason)``.
    """
    a = [[_fast(x) for x in row] for row in matrix]
    n = len(a)
    for i in range(n):
        d = a[i][i]
        if d < 0:
            return False, f"negative pivot {d} at row {i}"
        if d == 0:
            if any(a[i][j] != 0 for j in range(i + 1, n)):
                return False, f"zero pivot with a non-zero row at {i}"
            continue
        row = a[i]
        for j in range(i + 1, n):
            if row[j] != 0:  # row j minus f times row i, on the columns still to be eliminated
                f = row[j] / d
                aj = a[j]
                aj[i + 1:] = [aj[t] - f * row[t] for t in range(i + 1, n)]
    return True, ""


def conj_times(mr: Monomial, ms: Monomial) -> Monomial:
    """``conj(m_r) m_s`` for ``m = z^a conj(z)^b``: ``z^(b_r + a_s) conj(z)^(a_r + b_s)``."""
    n = len(mr) // 2
    return tuple(mr[n + i] + ms[i] for i in range(n)) + tuple(mr[i] + ms[n + i] for i in range(n))


def identity_defect(k: int, homogeneous: bool, half_degree: int, scale: Any, gamma: Any,
                    blocks: list[tuple[list[Monomial], list[list[Any]]]],
                    multiplier: list[tuple[Monomial, Any]]) -> dict[Monomial, Any]:
    """``LHS - RHS`` of the identity of the module docstring, coefficient by coefficient (empty when it holds)."""
    n = k + 1
    acc: dict[Monomial, Any] = {}

    def add(m: Monomial, c: Any) -> None:
        acc[m] = acc.get(m, 0) + c

    for basis, gram in blocks:
        for r, mr in enumerate(basis):
            row = gram[r]
            for s, ms in enumerate(basis):
                if row[s] != 0:
                    add(conj_times(mr, ms), row[s])
    for m, c in multiplier:
        add(m, c)
        for var in range(n):
            e = list(m)
            e[var] += 1
            e[n + var] += 1
            add(tuple(e), -c)
    gamma_poly = norm_power(n, half_degree) if homogeneous else {tuple([0] * (2 * n)): Fraction(1)}
    for m, c in gamma_poly.items():
        add(m, -gamma * _like(gamma, c))
    for m, c in block_form(k).items():
        add(m, scale * _like(scale, c))
    return {m: c for m, c in acc.items() if c != 0}


def _fast(x: Any) -> Any:
    """A Fraction as flint's fmpq (same value, faster arithmetic); anything else unchanged."""
    if _fmpq is not None and isinstance(x, Fraction):
        return _fmpq(x.numerator, x.denominator)
    return x


def _like(sample: Any, x: Fraction) -> Any:
    """``x`` in the rational type of ``sample`` (Fraction or flint's fmpq; they do not mix)."""
    if isinstance(sample, Fraction) or _fmpq is None:
        return x
    return _fmpq(x.numerator, x.denominator)


def ceil_sqrt(v: Fraction, bits: int = 64) -> Fraction:
    """A dyadic ``r >= sqrt(v)`` (``v >= 0``) with relative excess below ``2^-bits`` (integer square root), exact
    when ``sqrt(v)`` is a dyadic of that denominator; the denominator is at most ``2^(bits + max(0, (L(b) - L(a))
    // 2 + 2))`` for ``v = a/b`` and ``L`` the bit length (so that certificate numbers stay short)."""
    if v < 0:
        raise ValueError(f"ceil_sqrt of a negative number {v}")
    shift = bits + max(0, (v.denominator.bit_length() - v.numerator.bit_length()) // 2 + 2)
    x = -((-v.numerator * 4**shift) // v.denominator)
    n = math.isqrt(x)
    if n * n < x:
        n += 1
    return Fraction(n, 2**shift)


def network_margin_bound(p: int, k: int, U: list[list[list[Any]]], W: list[list[Any]]) -> tuple[Any, Fraction]:
    """``(h, S)``: the exact unnormalized margin ``h = min_{a, c != y(a)} f(a)[y] - f(a)[c]`` of the network over all
    ``p^k`` inputs, and ``S >= sum_i ||theta_i||_2^(k+1)`` (exact for odd ``k``; square roots rounded up for even
    ``k``), so that its normalized margin is at least ``h / S`` when ``h >= 0``."""
    import itertools

    m = len(U)
    margins = []
    for a in itertools.product(range(p), repeat=k):
        zk = []
        for i in range(m):
            z = U[i][0][a[0]]
            for j in range(1, k):
                z = z + U[i][j][a[j]]
            zk.append(z**k)
        logits = [sum(zk[i] * W[i][c] for i in range(m)) for c in range(p)]
        y = sum(a) % p
        margins.append(logits[y] - max(logits[c] for c in range(p) if c != y))
    h = min(margins)
    S = Fraction(0)
    for i in range(m):
        sq = Fraction(sum(to_fraction(x) ** 2 for row in U[i] for x in row)) + sum(to_fraction(x) ** 2 for x in W[i])
        S += sq ** (k // 2) * (sq if k % 2 else ceil_sqrt(sq))  # sq^((k+1)/2), the square root rounded up
    return h, S


# -- the exact maximum of g_k on the sphere (AM-GM) -----------------------------------------------------------------


def _poly_mul(a: dict[Monomial, Fraction], b: dict[Monomial, Fraction]) -> dict[Monomial, Fraction]:
    """The product of two polynomials in ``z, conj(z)`` (exponent tuples added)."""
    out: dict[Monomial, Fraction] = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(x + y for x, y in zip(ma, mb, strict=True))
            out[m] = out.get(m, Fraction(0)) + ca * cb
    return {m: c for m, c in out.items() if c != 0}


def modulus_identity_holds(k: int) -> bool:
    """``g_k^2 + h_k^2 = |z_w|^2 |z_1|^2 ... |z_k|^2`` with ``w = conj(z_w) z_1...z_k``, ``g_k = (w + conj w)/2`` and
    ``h_k^2 = -(w - conj w)^2 / 4`` (``h_k = Im w``, a real polynomial, so ``h_k^2 >= 0``), expanded exactly:
    ``g_k^2 <= |w|^2 = prod_i |z_i|^2``."""
    n = k + 1
    g = block_form(k)
    w = tuple([1] * k + [0]) + tuple([0] * k + [1])
    cw = w[n:] + w[:n]
    diff = {w: Fraction(1), cw: Fraction(-1)}
    lhs = _poly_mul(g, g)
    for m, c in _poly_mul(diff, diff).items():
        lhs[m] = lhs.get(m, Fraction(0)) - c / 4
    lhs = {m: c for m, c in lhs.items() if c != 0}
    return lhs == {tuple([1] * (2 * n)): Fraction(1)}


def am_gm_step_polynomial(M: int) -> list[int]:
    """Coefficients (constant term first) of ``p_M(t) = (M - 1 + t)^M - M^M t``: the two-variable step
    ``M^M A^(M-1) a <= ((M-1) A + a)^M`` divided by ``A^M`` with ``t = a / A``."""
    coeffs = [math.comb(M, j) * (M - 1) ** (M - j) for j in range(M + 1)]
    coeffs[1] -= M**M
    return coeffs


def am_gm_step_holds(M: int, quotient: list[Fraction]) -> tuple[bool, str]:
    """Whether ``p_M(t) = (t - 1)^2 q(t)`` exactly for the given ``q`` (constant term first) and every coefficient
    of ``q`` is ``>= 0`` -- then ``p_M(t) >= 0`` for ``t >= 0``; with the reason when not."""
    if len(quotient) != M - 1:
        return False, f"M = {M}: the quotient must have degree {M - 2}, got {len(quotient) - 1}"
    if any(c < 0 for c in quotient):
        return False, f"M = {M}: a negative coefficient in the quotient"
    product = [Fraction(0)] * (M + 1)
    for j, c in enumerate(quotient):  # (t^2 - 2t + 1) q(t)
        product[j] += c
        product[j + 1] -= 2 * c
        product[j + 2] += c
    if product != [Fraction(c) for c in am_gm_step_polynomial(M)]:
        return False, f"M = {M}: (t - 1)^2 q(t) != (M - 1 + t)^M - M^M t"
    return True, ""


def check_am_gm(k: int, bound_squared: Fraction, steps: list[tuple[int, list[Fraction]]]) -> Failure | None:
    """``max_{|z| = 1} g_k = sqrt(bound_squared)`` with ``bound_squared = (k+1)^-(k+1)``, re-checked exactly.

    Upper bound, with ``n = k + 1`` and ``t_i = |z_i|^2 >= 0``: (i) ``g_k^2 <= t_1 ... t_n`` by the modulus identity
    (:func:`modulus_identity_holds`); (ii) ``t_1 ... t_n <= ((t_1 + ... + t_n)/n)^n`` by induction on ``M = 2..n``:
    with ``A`` the mean of ``t_1..t_(M-1)`` the hypothesis gives ``t_1...t_M <= A^(M-1) t_M``, and
    ``M^M A^(M-1) t_M <= ((M-1) A + t_M)^M`` is, divided by ``A^M`` (``A = 0`` is trivial), ``p_M(t) >= 0`` at
    ``t = t_M / A``, proved by the identity ``p_M = (t - 1)^2 q_M`` with the file's ``q_M`` (non-negative
    coefficients; :func:`am_gm_step_holds`).  On ``|z| = 1`` the sum is 1, so ``g_k^2 <= n^-n``.  Attained: at
    ``z_i = n^(-1/2)`` for every ``i`` (``|z|^2 = n / n = 1``) ``g_k = n^(-n/2) > 0``, whose square is ``n^-n``.
    Hence the maximum's square is exactly ``n^-n``; any other ``bound_squared`` fails."""
    n = k + 1
    if not modulus_identity_holds(k):
        return "|g_k| <= |z_w| |z_1|...|z_k| (modulus identity)", "g_k^2 + h_k^2 != prod |z_i|^2"
    if [M for M, _ in steps] != list(range(2, n + 1)):
        return "AM-GM chain of two-variable steps", f"the steps must be M = 2..{n} in order"
    for M, q in steps:
        ok, why = am_gm_step_holds(M, q)
        if not ok:
            return "AM-GM chain of two-variable steps", why
    exact = Fraction(1, n**n)
    if bound_squared < exact:
        return ("max_{|z|=1} g_k = (k+1)^-((k+1)/2) (AM-GM, attained)",
                f"the claimed square {bound_squared} is below {exact}, attained at z_i = (k+1)^-1/2")
    if bound_squared > exact:
        return ("max_{|z|=1} g_k = (k+1)^-((k+1)/2) (AM-GM, attained)",
                f"the claimed square {bound_squared} is above the proved maximum's square {exact}")
    return None


# -- reading and checking a certificate ----------------------------------------------------------------------------


@dataclass
class Step:
    """One step: ``premises`` are the names of the earlier or later steps it uses; ``exactness`` becomes the weakest of
    its own and its premises' (``proved > certified > float``; an ``argued`` premise does not lower it) and
    ``assumes`` lists the argued steps it rests on, transitively (:func:`derive_steps`)."""

    name: str
    passed: bool
    exactness: str
    detail: str = ""
    premises: list[str] = field(default_factory=list)
    assumes: list[str] = field(default_factory=list)


def derive_steps(steps: list[Step]) -> list[Step]:
    """Each step's exactness and assumptions from its premises, in place (a deliberate copy of
    ``margintheory.core.premises.derive_premises``, which ``margintheory check`` applies again to the same graph, with
    the same answer).  A premise that names no step, or several, or a cycle raises :class:`ValueError`."""
    rank = {"proved": 0, "certified": 1, "float": 2}
    index: dict[str, list[int]] = {}
    for i, s in enumerate(steps):
        index.setdefault(s.name, []).append(i)
    done: dict[int, tuple[str, list[str]]] = {}

    def visit(i: int, path: tuple[int, ...]) -> tuple[str, list[str]]:
        if i in path:
            raise ValueError("the premises of the steps form a cycle at " + repr(steps[i].name))
        if i not in done:
            s, levels, assumes = steps[i], [steps[i].exactness], []
            for name in s.premises:
                if len(index.get(name, [])) != 1:
                    raise ValueError(f"step {s.name!r}: premise {name!r} names {len(index.get(name, []))} steps")
                level, inherited = visit(index[name][0], (*path, i))
                levels.append(level)
                assumes += [a for a in [*inherited, *([name] if level == "argued" else [])] if a not in assumes]
            computed = [x for x in levels if x != "argued"]
            done[i] = ("argued" if s.exactness == "argued" else max(computed, key=rank.__getitem__), assumes)
        return done[i]

    for i, s in enumerate(steps):
        s.exactness, s.assumes = visit(i, ())
    return steps


@dataclass
class Outcome:
    """``status``: ``valid`` / ``invalid`` / ``unreadable``; ``steps`` in order; ``message`` one line."""

    status: str
    message: str
    steps: list[Step] = field(default_factory=list)
    p: int | None = None
    k: int | None = None

    @property
    def exit_code(self) -> int:
        return {"valid": 0, "invalid": 1}.get(self.status, 2)


def _get(d: Any, key: str, kind: type | tuple, where: str) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise Unreadable(f"missing field {where}.{key}")
    v = d[key]
    if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
        raise Unreadable(f"field {where}.{key} has the wrong type ({type(v).__name__})")
    return v


def _monomial(v: Any, length: int, where: str) -> Monomial:
    if not isinstance(v, list) or len(v) != length or not all(isinstance(x, int) and not isinstance(x, bool)
                                                              and 0 <= x <= 64 for x in v):
        raise Unreadable(f"{where}: a monomial must be a list of {length} exponents in 0..64 (another k than claimed?)")
    return tuple(v)


#: the fields of each object of a version-1 certificate; any other field is refused (this checker cannot vouch for
#: what it does not read, and a certificate is no place for bulk data).  ``lower_witness.grid`` is the 0.1 name of
#: ``lower_witness.weights``.
FIELDS: dict[str, frozenset[str]] = {
    "certificate": frozenset({"format", "version", "producer", "p", "k", "statement", "claim", "reduction", "sos",
                              "am_gm", "solver", "lower_witness", "even_p"}),
    "even_p": frozenset({"statement", "ratio", "dual", "network", "max_margin_squared", "max_margin"}),
    "even_p.dual": frozenset({"odd", "even"}),
    "even_p.network": frozenset({"complex", "real"}),
    "claim": frozenset({"lower", "upper", "relative_gap_at_most", "lower_exactness", "lower_how", "upper_exactness"}),
    "reduction": frozenset({"p", "k", "statement", "blocks", "steps", "exact_check_at_p_k"}),
    "reduction.blocks[]": frozenset({"frequencies", "domain", "constant_squared"}),
    "reduction.steps[]": frozenset({"name", "passed", "exactness", "reason"}),
    "reduction.exact_check_at_p_k": frozenset({"ran", "matches", "monomials_compared", "seconds", "reason"}),
    "sos": frozenset({"p", "k", "form", "monomials", "identity", "homogeneous", "half_degree", "scale", "gamma",
                      "blocks", "multiplier"}),
    "sos.blocks[]": frozenset({"basis", "gram"}),
    "am_gm": frozenset({"k", "form", "statement", "bound_squared", "modulus", "steps", "maximiser"}),
    "am_gm.steps[]": frozenset({"M", "quotient"}),
    "solver": frozenset({"name", "status", "iterations", "solve_seconds", "float_optimum", "kkt", "gram_blocks",
                         "largest_block", "shift_delta", "rounding_tries"}),
    "solver.kkt": frozenset({"primal_residual", "dual_residual", "duality_gap", "primal_cone", "dual_cone",
                             "complementarity"}),
    "lower_witness": frozenset({"U", "W", "weights", "grid", "margin", "norm_power_at_most"}),
}


def check_fields(data: dict[str, Any]) -> None:
    """:class:`Unreadable` naming the first field that a version-1 certificate does not have (:data:`FIELDS`)."""
    for where, allowed in FIELDS.items():
        path, _, many = where.partition("[")
        obj: Any = data
        for part in ([] if path == "certificate" else path.split(".")):
            obj = obj.get(part) if isinstance(obj, dict) else None
        items = obj if many and isinstance(obj, list) else [obj]
        for i, item in enumerate(items):
            unknown = sorted(set(item) - allowed) if isinstance(item, dict) else []
            if unknown:
                at = f"{path}[{i}]" if many else path
                raise Unreadable(f"unknown field {unknown[0]!r:.60} in {at} (a version-{VERSION} certificate has "
                                 f"only {', '.join(sorted(allowed))} there)")


def parse(data: Any) -> dict[str, Any]:
    """Structural reading (raises :class:`Unreadable`): format, version, the fields (:func:`check_fields`), (p, k)
    everywhere, exact rationals."""
    if not isinstance(data, dict):
        raise Unreadable("the top level is not a JSON object")
    if data.get("format") != FORMAT:
        raise Unreadable(f"not a margintheory certificate (format {data.get('format')!r:.60})")
    version = data.get("version")
    if version != VERSION:
        raise Unreadable(f"certificate version {version!r:.20} is not supported (this checker reads version {VERSION})")
    check_fields(data)
    p, k = _get(data, "p", int, "certificate"), _get(data, "k", int, "certificate")
    if p < 2 or k < 1 or k > 64 or p > 10**9:
        raise Unreadable(f"(p, k) = ({p}, {k}) out of range")
    claim = _get(data, "claim", dict, "certificate")
    red = _get(data, "reduction", dict, "certificate")
    if "sos" in data and "am_gm" in data:
        raise Unreadable("a certificate bounds g_k by exactly one of the sections sos and am_gm, not both")
    upper_text = _get(claim, "upper", str, "claim")
    upper, upper_squared = _upper(upper_text)
    head = {"p": p, "k": k, "constants": _constants(red), "upper": upper, "upper_squared": upper_squared,
            "upper_text": upper_text,
            "lower_squared": (positive_algebraic_square(claim["lower"], "claim.lower")
                              if claim.get("lower") is not None else None),
            "gap": (to_fraction(rational(claim["relative_gap_at_most"], "claim.relative_gap_at_most"))
                    if claim.get("relative_gap_at_most") is not None else None),
            "argued": [s for s in red.get("steps", []) if isinstance(s, dict) and s.get("exactness") == "argued"],
            "witness": _parse_witness(data.get("lower_witness"), p, k),
            "lower_how": str(claim.get("lower_how", "")),
            "even_p": _parse_even_p(data.get("even_p"), p)}
    if red.get("p", p) != p or red.get("k") != k:
        raise Unreadable(f"the reduction section is for (p, k) = {(red.get('p', p), red.get('k'))}, but the "
                         f"certificate claims ({p}, {k})")
    if "am_gm" in data:
        if head["even_p"] is not None:
            raise Unreadable("the even_p section rests on the sos section's bound, not on am_gm")
        return {**head, "am_gm": _parse_am_gm(_get(data, "am_gm", dict, "certificate"), k)}
    sos = _get(data, "sos", dict, "certificate")
    for where, part in (("reduction", red), ("sos", sos)):
        pk = (part.get("p", p), part.get("k"))
        if pk != (p, k):
            raise Unreadable(f"the {where} section is for (p, k) = {pk}, but the certificate claims ({p}, {k})")
    return {**head, **_parse_sos(sos, k)}


def _parse_sos(sos: dict[str, Any], k: int) -> dict[str, Any]:
    """The ``sos`` section: relaxation type, Gram blocks and multiplier, as exact rationals."""
    n2 = 2 * (k + 1)
    homogeneous = _get(sos, "homogeneous", bool, "sos")
    h = _get(sos, "half_degree", int, "sos")
    if h < 1 or h > 64:
        raise Unreadable("sos.half_degree out of range")
    blocks = []
    for bi, blk in enumerate(_get(sos, "blocks", list, "sos")):
        basis = [_monomial(m, n2, f"sos.blocks[{bi}].basis") for m in _get(blk, "basis", list, f"sos.blocks[{bi}]")]
        gram_raw = _get(blk, "gram", list, f"sos.blocks[{bi}]")
        if len(gram_raw) != len(basis) or any(not isinstance(r, list) or len(r) != len(basis) for r in gram_raw):
            raise Unreadable(f"sos.blocks[{bi}].gram is not a {len(basis)} x {len(basis)} matrix")
        gram = [[rational(x, f"sos.blocks[{bi}].gram") for x in row] for row in gram_raw]
        blocks.append((basis, gram))
    multiplier = []
    for item in _get(sos, "multiplier", list, "sos"):
        if not isinstance(item, list) or len(item) != 2:
            raise Unreadable("sos.multiplier entries must be [monomial, 'a/b']")
        multiplier.append((_monomial(item[0], n2, "sos.multiplier"), rational(item[1], "sos.multiplier")))
    return {
        "homogeneous": homogeneous, "half_degree": h,
        "scale": rational(_get(sos, "scale", str, "sos"), "sos.scale"),
        "gamma": rational(_get(sos, "gamma", str, "sos"), "sos.gamma"),
        "blocks": blocks, "multiplier": multiplier,
    }


def _constants(red: dict[str, Any]) -> list[dict[str, Any]]:
    consts = []
    for bi, c in enumerate(_get(red, "blocks", list, "reduction")):
        consts.append({"frequencies": _get(c, "frequencies", str, f"reduction.blocks[{bi}]"),
                       "domain": _get(c, "domain", str, f"reduction.blocks[{bi}]"),
                       "constant_squared": to_fraction(rational(_get(c, "constant_squared", str,
                                                                     f"reduction.blocks[{bi}]"), "constant"))})
    return consts


def _upper(text: str) -> tuple[Fraction, Fraction | None]:
    """``claim.upper``: ``"a/b"`` -> ``(U, U^2)`` (``U^2`` is ``None`` for a negative ``U``, refused later as such);
    ``"sqrt(a/b)"`` -> ``(a rational >= U, a/b)``."""
    if text.strip().startswith("sqrt("):
        sq = positive_algebraic_square(text, "claim.upper")
        return ceil_sqrt(sq), sq
    U = to_fraction(rational(text, "claim.upper"))
    return U, (U * U if U >= 0 else None)


#: the most terms of the AM-GM certificate (``k + 1`` squared moduli) this checker reads
MAX_AM_GM_TERMS = 65


def _parse_am_gm(section: dict[str, Any], k: int) -> dict[str, Any]:
    if section.get("k") != k:
        raise Unreadable(f"the am_gm section is for k = {section.get('k')!r:.20}, but the certificate claims {k}")
    if k + 1 > MAX_AM_GM_TERMS:
        raise Unreadable(f"am_gm: k = {k} is beyond what this checker reads (k + 1 <= {MAX_AM_GM_TERMS})")
    steps = []
    for i, st in enumerate(_get(section, "steps", list, "am_gm")):
        M = _get(st, "M", int, f"am_gm.steps[{i}]")
        q = _get(st, "quotient", list, f"am_gm.steps[{i}]")
        if not 2 <= M <= MAX_AM_GM_TERMS or len(q) > MAX_AM_GM_TERMS:
            raise Unreadable(f"am_gm.steps[{i}]: M = {M} or its quotient out of range")
        steps.append((M, [to_fraction(rational(x, f"am_gm.steps[{i}].quotient")) for x in q]))
    return {"bound_squared": to_fraction(rational(_get(section, "bound_squared", str, "am_gm"),
                                                  "am_gm.bound_squared")),
            "steps": steps}


# -- exact arithmetic in Q(sqrt 2) (the even-p section: r = 2^((k-1)/2) is irrational for even k) -----------------

#: ``a + b sqrt(2)`` as the pair ``(a, b)`` of Fractions
Sqrt2 = tuple[Fraction, Fraction]


def q2(a: Any, b: Any = 0) -> Sqrt2:
    return (Fraction(a), Fraction(b))


def q2_add(x: Sqrt2, y: Sqrt2) -> Sqrt2:
    return (x[0] + y[0], x[1] + y[1])


def q2_sub(x: Sqrt2, y: Sqrt2) -> Sqrt2:
    return (x[0] - y[0], x[1] - y[1])


def q2_mul(x: Sqrt2, y: Sqrt2) -> Sqrt2:
    return (x[0] * y[0] + 2 * x[1] * y[1], x[0] * y[1] + x[1] * y[0])


def q2_div(x: Sqrt2, y: Sqrt2) -> Sqrt2:
    """``x / y`` (``y != 0``): multiply by the conjugate ``a - b sqrt 2``; ``a^2 - 2 b^2 != 0`` since sqrt 2 is
    irrational."""
    norm = y[0] * y[0] - 2 * y[1] * y[1]
    if norm == 0:
        raise ZeroDivisionError("division by zero in Q(sqrt 2)")
    num = q2_mul(x, (y[0], -y[1]))
    return (num[0] / norm, num[1] / norm)


def q2_sign(x: Sqrt2) -> int:
    """The sign of ``a + b sqrt 2``, exactly: compare ``a^2`` with ``2 b^2`` when the signs of ``a`` and ``b``
    differ."""
    a, b = x
    sa, sb = (a > 0) - (a < 0), (b > 0) - (b < 0)
    if sa == sb or sb == 0:
        return sa
    if sa == 0:
        return sb
    return sa if a * a > 2 * b * b else sb


def q2_text(x: Sqrt2) -> str:
    return f"{x[0]}" if x[1] == 0 else f"{x[0]} + {x[1]} sqrt(2)"


def _q2_field(v: Any, where: str) -> Sqrt2:
    """``["a/b", "c/d"]`` -> ``a/b + (c/d) sqrt 2``."""
    if not isinstance(v, list) or len(v) != 2:
        raise Unreadable(f"{where}: a number of Q(sqrt 2) is a list ['a/b', 'c/d'] meaning a/b + (c/d) sqrt(2)")
    return (to_fraction(rational(v[0], where)), to_fraction(rational(v[1], where)))


def _parse_even_p(e: Any, p: int) -> dict[str, Sqrt2] | None:
    if e is None:
        return None
    if p % 2:
        raise Unreadable(f"the even_p section is for an even p; this certificate is for p = {p}")
    dual = _get(e, "dual", dict, "even_p")
    net = _get(e, "network", dict, "even_p")
    return {"ratio": _q2_field(_get(e, "ratio", list, "even_p"), "even_p.ratio"),
            "t_odd": _q2_field(_get(dual, "odd", list, "even_p.dual"), "even_p.dual.odd"),
            "t_even": _q2_field(_get(dual, "even", list, "even_p.dual"), "even_p.dual.even"),
            "s_complex": _q2_field(_get(net, "complex", list, "even_p.network"), "even_p.network.complex"),
            "s_real": _q2_field(_get(net, "real", list, "even_p.network"), "even_p.network.real"),
            "max_margin_squared": _q2_field(_get(e, "max_margin_squared", list, "even_p"),
                                            "even_p.max_margin_squared")}


#: what the even-p stage does not re-prove (printed as ``argued``)
EVEN_P_NOT_RECHECKED = (
    ("weak duality with the invariant dual lam(a, c) = t(c - y(a)) / (p^k T)",
     "an argument, not re-checked here: Lemma C.6 of Li et al. (arXiv:2402.09469) / Lemma 7.6 of Morwani et al. "
     "(arXiv:2311.07568) holds for every distribution over (input, wrong label) pairs, this one included"),
    ("blocks scaled by kappa_t: block b of the lam-weighted objective is ((p-1)/(p T)) c_b |kappa_t(b)| g_k",
     "not re-proved here: for lam(a, y + d) proportional to t(d) the objective is ((p-1)/p) F_uniform(u, K w) with "
     "the circulant K = I - C(t)/T (eigenvalue kappa_t(j)/T at frequency j); docs/theory.md#class-weighted-bracket"),
    ("character sums: kappa_t = T + t_even on 0 < j < p/2, T + n t_odd - (n-1) t_even at j = p/2",
     "orthogonality of characters, not re-proved here: sum_(m=0)^(n-1) exp(2 pi i j m/n) = 0 for 0 < j < n and "
     "sum_(d=0)^(p-1) exp(2 pi i j d/p) = 0 for 0 < j < p (geometric series), exp(pi i d) = (-1)^d; the producer "
     "proves them for every even p symbolically (margintheory.symbolic.even_p)"),
    ("the network's margin per unit cost: C (1 - cos(2 pi j d/p)) for j < p/2, r C (1 - (-1)^d) at p/2",
     "not re-proved here: C = c (p-1)/p (k+1)^-((k+1)/2), Lemma C.18's sub-networks and Lemma C.16's real block "
     "(the producer proves it for every even p symbolically); the included network's exact margin is what the "
     "lower end rests on"),
    ("AM-GM: max_(|z| = 1) g_k = (k+1)^-((k+1)/2)",
     "an argument (Lemma C.15's quadratic-mean / geometric-mean step); used only for the closed form's exact "
     "value, the upper end uses the SOS bound"),
)


def _check_even_p(c: dict[str, Any], steps: list[Step]) -> Failure | None:
    """The even-``p`` section: the ratio ``r`` against the recomputed block constants, the dual's bound on every
    block with the SOS bound (this is ``U``), the closed form both at the dual and at the network's budgets, and
    ``lower <= max margin <= upper`` (all exact, in ``Q(sqrt 2)``)."""
    for name, reason in EVEN_P_NOT_RECHECKED:  # first: the later steps name them as premises
        steps.append(Step(name, True, "argued", reason))
    e = c["even_p"]
    p, k = c["p"], c["k"]
    n = p // 2
    consts = {x["domain"]: x["constant_squared"] for x in block_constants_squared(p, k)}
    c2, cr2 = consts["complex"], consts["real"]
    r = e["ratio"]
    r2 = q2_mul(r, r)
    if q2_sign(r) <= 0 or r2 != q2(cr2 / c2):
        return "ratio r^2 = c'^2/c^2 (blocks recomputed)", f"r = {q2_text(r)}, but c'^2/c^2 = {cr2 / c2}"
    steps.append(Step("ratio r^2 = c'^2/c^2 (blocks recomputed)", True, "proved", f"r = {q2_text(r)}"))
    t_odd, t_even = e["t_odd"], e["t_even"]
    total = q2_add(q2_mul(q2(n), t_odd), q2_mul(q2(n - 1), t_even))
    if q2_sign(t_odd) < 0 or q2_sign(t_even) < 0 or q2_sign(total) <= 0:
        return "dual t >= 0 with a positive total", f"t_odd = {q2_text(t_odd)}, t_even = {q2_text(t_even)}"
    kappa = {"complex": q2_add(total, t_even),
             "real": q2_sub(q2_add(total, q2_mul(q2(n), t_odd)), q2_mul(q2(n - 1), t_even))}
    steps.append(Step("dual t >= 0 (t(d) = t_odd on odd d, t_even on even d != 0, t(0) = 0)", True, "proved",
                      f"T = {q2_text(total)}; kappa_t = {q2_text(kappa['complex'])} (j < p/2), "
                      f"{q2_text(kappa['real'])} (j = p/2)"))
    # Psi_b^2 / B^2 = ((p-1)/p)^2 c_b^2 kappa_b^2 / T^2, an element of Q(sqrt 2)
    factor = Fraction(p - 1, p) ** 2
    psi2 = {b: q2_mul(q2(factor * cb2), q2_div(q2_mul(kappa[b], kappa[b]), q2_mul(total, total)))
            for b, cb2 in (("complex", c2), ("real", cr2))}
    bound = to_fraction(c["gamma"]) / to_fraction(c["scale"])
    U = c["upper"]
    for b, v in psi2.items():
        if U < 0 or q2_sign(q2_sub(q2(U * U), q2_mul(v, q2(bound * bound)))) < 0:
            return EVEN_P_UPPER, f"U = {U} is below the {b} block's bound"
    steps.append(Step(EVEN_P_UPPER, True, "proved", f"U = {U}",
                      [MAX_G, CONSTANTS, "ratio r^2 = c'^2/c^2 (blocks recomputed)",
                                   "dual t >= 0 (t(d) = t_odd on odd d, t_even on even d != 0, t(0) = 0)"]
                      + [n for n, _ in EVEN_P_NOT_RECHECKED[:3]] + [n for n, _ in NOT_RECHECKED[1:]]))
    star2 = Fraction(1, (k + 1) ** (k + 1))  # (max g_k)^2 by AM-GM
    m2 = e["max_margin_squared"]
    if not (psi2["complex"] == psi2["real"] and q2_mul(psi2["complex"], q2(star2)) == m2):
        return ("closed form: the dual's value", f"complex block {q2_text(q2_mul(psi2['complex'], q2(star2)))}, real "
                f"block {q2_text(q2_mul(psi2['real'], q2(star2)))}, claimed max margin^2 {q2_text(m2)}")
    steps.append(Step("closed form: the dual's value at max g_k, both blocks", True, "proved",
                      f"max margin^2 = {q2_text(m2)} (~{math.sqrt(float(m2[0]) + float(m2[1]) * math.sqrt(2)):.15g})"))
    failure = _check_even_p_network(e, n, r, factor * c2 * star2, m2, steps)
    if failure is not None:
        return failure
    L2 = c["lower_squared"]
    if L2 is not None and q2_sign(q2_sub(m2, q2(L2))) < 0:
        return "lower <= max margin <= upper", "the claimed lower bound exceeds the closed form"
    if q2_sign(q2_sub(q2(U * U), m2)) < 0:
        return "lower <= max margin <= upper", "the closed form exceeds the upper bound"
    steps.append(Step("lower <= max margin (closed form) <= upper", True, "proved", "exact, in Q(sqrt 2)",
                      [EVEN_P_UPPER] + [n for n, _ in EVEN_P_NOT_RECHECKED]))
    return None


#: names of the steps that other steps name as premises
MAX_G = "max_{|z|=1} g_k <= gamma/scale"
CONSTANTS = "frequency-block constants c^2 recomputed from (p, k) (Lemma C.14)"
UPPER = "upper bound U >= c gamma/scale for every block"
#: the even-p certificate's upper end (the invariant dual's bound on every block)
EVEN_P_UPPER = "upper bound U >= ((p-1)/(p T)) c_b |kappa_t(b)| gamma/scale for every block"
LOWER_WITNESS = "lower bound: exact margin of the included network over all inputs"
LOWER_STATED = "lower bound: stated, not re-checked (no network included)"

#: the links of the chain that this checker does not re-prove (always printed as ``argued``, whatever the file says)
NOT_RECHECKED = (
    ("weak duality: max margin of any network <= max_{|theta| <= 1} F (uniform q, tau)",
     "an argument, not re-checked here: Lemma C.6 of Li et al. (arXiv:2402.09469) / Lemma 7.6 of Morwani et al. "
     "(arXiv:2311.07568): the minimum over (input, wrong label) pairs is at most their uniform average, which for "
     "a network of norm 1 is sum_i ||theta_i||^(k+1) F(theta_i/||theta_i||) <= max_{|theta| = 1} F"),
    ("Lemma C.14: F = sum_b c_b g_k(zeta_b) (cross-frequency terms vanish)",
     "not re-proved here: this checker only recomputes the constants c_b^2 from (p, k); the lemma is proved for all "
     "p by the producer (margintheory.symbolic.block_reduction, sympy, from the orthogonality of characters) and "
     "recorded in the file's reduction section"),
    ("homogeneity: max_{|y| <= 1} sum_j F_j(y_j) <= max_j max(0, max_{|y_j| = 1} F_j)",
     "an argument, not re-checked here: each block F_j is a form of degree k+1, so F_j(y_j) <= M_j |y_j|^(k+1), and "
     "sum_j |y_j|^(k+1) <= (sum_j |y_j|^2)^((k+1)/2) <= 1 for k >= 1"),
)

#: the checker recomputes a witness network's margin only up to this many scalar operations (p^k m (k + p))
MAX_WITNESS_WORK = 5_000_000


def _parse_witness(w: Any, p: int, k: int) -> tuple[list, list] | None:
    if w is None:
        return None
    if not isinstance(w, dict):
        raise Unreadable("lower_witness must be an object with U and W")
    U, W = w.get("U"), w.get("W")
    if not isinstance(U, list) or not isinstance(W, list) or len(U) != len(W) or not U:
        raise Unreadable("lower_witness: U (m, k, p) and W (m, p) must be non-empty lists of the same length")
    if p**k * len(U) * (k + p) > MAX_WITNESS_WORK:
        raise Unreadable(f"lower_witness: a network of {len(U)} neurons on {p}^{k} inputs is too large to re-check")
    for i in range(len(U)):  # (len(U) == len(W))
        u, w_row = U[i], W[i]
        if (not isinstance(u, list) or len(u) != k or any(not isinstance(r, list) or len(r) != p for r in u)
                or not isinstance(w_row, list) or len(w_row) != p):
            raise Unreadable(f"lower_witness: neuron {i} does not have shapes (k, p) = ({k}, {p}) and (p,)")
    return ([[[rational(x, "lower_witness.U") for x in r] for r in u] for u in U],
            [[rational(x, "lower_witness.W") for x in r] for r in W])


def _no_progress(what: str, done: float, total: float | None = None) -> None:
    """The progress reporter of this module when it is used on its own: nothing is shown."""


def _progress_hook() -> Any:
    """``margintheory.runtime.progress.report`` when the package is there (a progress bar on a terminal), else
    :func:`_no_progress`: this module stays usable on its own."""
    try:
        from margintheory.runtime.progress import report
    except ImportError:  # the module copied out of the package
        return _no_progress
    return report


#: a failed step: its name and what is wrong
Failure = tuple[str, str]


def check_data(data: Any) -> Outcome:
    """Check a parsed JSON certificate; never raises for bad content (returns an ``unreadable`` outcome).

    The stages run in order (the SOS certificate, the frequency blocks and ``U``, the lower end); the first failed
    step ends the check and is named in the outcome."""
    try:
        c = parse(data)
    except Unreadable as exc:
        return Outcome("unreadable", str(exc))
    p, k = c["p"], c["k"]
    steps: list[Step] = []
    for stage in (_check_am_gm if "am_gm" in c else _check_sos, _check_blocks, _check_even_p_if_any, _check_lower):
        failure = stage(c, steps)
        if failure is not None:
            name, detail = failure
            steps.append(Step(name, False, "proved", detail))
            return Outcome("invalid", f"step failed: {name}: {detail}", derive_steps(steps), p, k)
    U = c["upper"]
    if c["even_p"] is not None:
        m2 = c["even_p"]["max_margin_squared"]
        value = math.sqrt(float(m2[0]) + float(m2[1]) * math.sqrt(2))
        return Outcome("valid", f"valid: every network's max margin for (p, k) = ({p}, {k}) is at most U = "
                                f"{c['upper_text']} (~{float(U):.15g}); the closed form ~{value:.15g} lies in "
                                "[lower, U]", derive_steps(steps), p, k)
    return Outcome("valid", f"valid: every network's max margin for (p, k) = ({p}, {k}) is at most U = "
                            f"{c['upper_text']} (~{float(U):.15g})", derive_steps(steps), p, k)


def _check_even_p_network(e: dict[str, Any], n: int, r: Sqrt2, C2: Fraction, m2: Sqrt2,
                          steps: list[Step]) -> Failure | None:
    """The even-``p`` network's budgets: cost 1, the same margin at odd and even ``d``, and that margin squared
    (``C2 = ((p-1)/p)^2 c^2 (max g_k)^2`` per unit of budget) is the claimed max margin squared."""
    s_c, s_r = e["s_complex"], e["s_real"]
    cost = q2_add(q2_mul(q2(n - 1), s_c), s_r)
    odd_d = q2_add(q2_mul(s_c, q2(n - 1)), q2_mul(q2(2), q2_mul(s_r, r)))  # margins divided by C
    even_d = q2_mul(s_c, q2(n))
    if (q2_sign(s_c) < 0 or q2_sign(s_r) < 0 or cost != q2(1) or odd_d != even_d
            or q2_mul(q2_mul(even_d, even_d), q2(C2)) != m2):
        return ("closed form: the network's margin", f"budgets {q2_text(s_c)}, {q2_text(s_r)}: cost {q2_text(cost)}, "
                f"margin/C at odd d {q2_text(odd_d)}, at even d {q2_text(even_d)}")
    steps.append(Step("closed form: the network's budgets have cost 1 and the same margin at every d", True,
                      "proved", f"s_c = {q2_text(s_c)} (each j < p/2), s_r = {q2_text(s_r)} (j = p/2)"))
    return None


def _check_even_p_if_any(c: dict[str, Any], steps: list[Step]) -> Failure | None:
    return None if c["even_p"] is None else _check_even_p(c, steps)


AM_GM_STEP = "max_{|z|=1} g_k = (k+1)^-((k+1)/2) (AM-GM, attained)"
#: the upper end's step when g_k is bounded by the AM-GM certificate
UPPER_AM_GM = "upper bound U >= c max g_k for every block"


def _check_am_gm(c: dict[str, Any], steps: list[Step]) -> Failure | None:
    """The exact maximum of ``g_k`` on the sphere (:func:`check_am_gm`)."""
    k, section = c["k"], c["am_gm"]
    failure = check_am_gm(k, section["bound_squared"], section["steps"])
    if failure is not None:
        return failure
    modulus = "|g_k| <= |z_w| |z_1|...|z_k| (modulus identity)"
    chain = "AM-GM chain of two-variable steps"
    steps.append(Step(modulus, True, "proved",
                      "g_k^2 + (Im conj(z_w) z_1...z_k)^2 = prod_i |z_i|^2, expanded exactly"))
    steps.append(Step(chain, True, "proved",
                      f"M = 2..{k + 1}: (M - 1 + t)^M - M^M t = (t - 1)^2 q_M(t), q_M >= 0 coefficientwise (exact)"))
    steps.append(Step(AM_GM_STEP, True, "proved",
                      f"max^2 = {section['bound_squared']}; attained at z_i = (k+1)^-1/2 for every i",
                      [modulus, chain]))
    return None


def _check_sos(c: dict[str, Any], steps: list[Step]) -> Failure | None:
    """The SOS certificate of ``max_{|z|=1} g_k <= gamma/scale``: relaxation type, Gram bases and symmetry, the
    polynomial identity, positive semidefiniteness (exact LDL^T)."""
    k = c["k"]
    expected_h = k // 2 + 1  # (k + 1)/2 for odd k (homogeneous), (k + 2)/2 for even k (Putinar)
    if c["homogeneous"] != (k % 2 == 1) or c["half_degree"] != expected_h:
        return "relaxation type", f"k = {k} needs homogeneous={k % 2 == 1}, half_degree={expected_h}"
    if c["homogeneous"] and c["multiplier"]:
        return "relaxation type", "a homogeneous certificate has no multiplier"
    if not c["scale"] > 0:
        return "scale", "the scale of g_k must be positive"
    for bi, (basis, gram) in enumerate(c["blocks"]):
        degs = {sum(m) for m in basis}
        if (c["homogeneous"] and degs - {expected_h}) or any(d > expected_h for d in degs):
            return "Gram bases", f"block {bi} has monomials of degree {sorted(degs)}"
        n = len(gram)
        if any(gram[i][j] != gram[j][i] for i in range(n) for j in range(i)):
            return "Gram matrices symmetric", f"block {bi} is not symmetric"
    steps.append(Step("Gram matrices symmetric, bases of the right degree", True, "proved",
                      f"{len(c['blocks'])} blocks"))
    report = _progress_hook()
    report("exact polynomial identity", 0, 1)
    defect = identity_defect(k, c["homogeneous"], c["half_degree"], c["scale"], c["gamma"], c["blocks"],
                             c["multiplier"])
    report("exact polynomial identity", 1, 1)
    if defect:
        m, v = next(iter(defect.items()))
        return ("polynomial identity SOS + lambda (1 - |z|^2) = gamma N - scale g_k",
                f"{len(defect)} coefficients differ, e.g. monomial {list(m)}: {v}")
    steps.append(Step("polynomial identity SOS + lambda (1 - |z|^2) = gamma N - scale g_k", True, "proved",
                      "exact rational coefficients"))
    n_blocks = len(c["blocks"])
    for bi, (_basis, gram) in enumerate(c["blocks"]):
        if bi % 64 == 0:
            report("exact LDL^T of the Gram blocks", bi, n_blocks)
        ok, why = ldl_psd(gram)
        if not ok:
            return "Gram matrices positive semidefinite (exact LDL^T)", f"block {bi}: {why}"
    steps.append(Step("Gram matrices positive semidefinite (exact LDL^T)", True, "proved",
                      # (at least one block: without any, the identity cannot hold and failed above)
                      f"{len(c['blocks'])} blocks, largest {max(len(g) for _, g in c['blocks'])}"))
    return None


def _check_blocks(c: dict[str, Any], steps: list[Step]) -> Failure | None:
    """``gamma/scale`` bounds ``g_k``; the block constants of Lemma C.14 recomputed from ``(p, k)``; ``U`` bounds
    every block; the file's argued steps are listed as such."""
    if "am_gm" in c:
        bound2 = c["am_gm"]["bound_squared"]
        upper_step, max_g = UPPER_AM_GM, AM_GM_STEP
    else:
        bound = to_fraction(c["gamma"]) / to_fraction(c["scale"])
        bound2 = bound * bound
        upper_step, max_g = UPPER, MAX_G
        steps.append(Step(MAX_G, True, "proved", f"gamma/scale = {bound}", [s.name for s in steps]))
    expected = block_constants_squared(c["p"], c["k"])
    got = [(x["frequencies"], x["domain"], x["constant_squared"]) for x in c["constants"]]
    want = [(x["frequencies"], x["domain"], x["constant_squared"]) for x in expected]
    if got != want:
        return "frequency-block constants (Lemma C.14)", f"file {got} != recomputed {want}"
    steps.append(Step(CONSTANTS, True, "proved", "; ".join(f"j in {f}: c^2 = {v}" for f, _, v in want)))
    U, U2 = c["upper_text"], c["upper_squared"]
    if c["even_p"] is not None:  # U is the invariant dual's, checked by _check_even_p
        for name, reason in NOT_RECHECKED[1:]:  # (the uniform weak duality is replaced by the invariant dual's)
            steps.append(Step(name, True, "argued", reason))
        return None
    if U2 is None:  # (squares are compared below)
        return upper_step, f"U = {U} is negative"
    if any(U2 < x["constant_squared"] * bound2 for x in expected):
        return upper_step, f"U = {U} is below a block's bound"
    top = max((x["constant_squared"] * bound2 for x in expected), default=None)
    exact = " = max_b c_b max g_k exactly" if "am_gm" in c and U2 == top else ""
    # U is an upper bound on the max margin by the chain: the bound on g_k, the block constants and the links this
    # checker does not re-prove (argued)
    steps.append(Step(upper_step, True, "proved", f"U = {U}{exact}",
                      [max_g, CONSTANTS] + [n for n, _ in NOT_RECHECKED]))
    for name, reason in NOT_RECHECKED:
        steps.append(Step(name, True, "argued", reason))
    own = {name for name, _ in NOT_RECHECKED}
    for s in c["argued"]:  # further arguments the producer listed (printed, never checked)
        name = str(s.get("name", "argued step"))
        if name in {x.name for x in steps}:  # a step's name is what premises refer to: never two steps of one name
            continue
        if name not in own and not any(name.startswith(o.split(":")[0]) for o in own):
            steps.append(Step(name, True, "argued", str(s.get("reason", ""))))
    return None


def _check_lower(c: dict[str, Any], steps: list[Step]) -> Failure | None:
    """The lower end: the included network's exact margin (or the producer's statement), ``L <= U`` and the
    claimed relative gap."""
    L2, U2 = c["lower_squared"], c["upper_squared"]
    if c["witness"] is not None:
        if L2 is None:
            return "lower bound: exact margin of the included network", "the claim has no lower value"
        h, S = network_margin_bound(c["p"], c["k"], *c["witness"])
        hq = to_fraction(h)
        # (S > 0 whenever hq > 0: a network whose weights are all zero has margin 0)
        if hq <= 0 or L2 > (hq / S) ** 2:
            return ("lower bound: exact margin of the included network",
                    f"margin/norm bound {hq}/{S} is below the claimed lower bound")
        steps.append(Step(LOWER_WITNESS, True, "proved",
                          f"{len(c['witness'][0])} neurons; normalized margin >= {float(hq / S):.15g}"))
    elif L2 is not None:
        how = c["lower_how"]
        steps.append(Step(LOWER_STATED, True, "argued",
                          "unverified: the file includes no lower_witness network whose margin this checker could "
                          "recompute, so claim.lower is the producer's word"
                          + (f" (its description, not checked: {how})" if how else "")))
    if L2 is not None:
        if L2 > U2:
            return "lower <= upper", "the claimed lower bound exceeds the upper bound"
        # (U - L)/L <= g  <=>  U <= (1 + g) L  <=>  U^2 <= (1 + g)^2 L^2   (U, L >= 0)
        if c["gap"] is not None and L2 == 0:
            return "relative gap (U - L)/L <= claimed", f"claimed {c['gap']}, but L = 0"
        if c["gap"] is not None and U2 > (1 + c["gap"]) ** 2 * L2:
            return "relative gap (U - L)/L <= claimed", f"claimed {c['gap']}"
        lower = LOWER_WITNESS if c["witness"] is not None else LOWER_STATED
        verified = ("the lower end verified (exact margin of the included network)" if c["witness"] is not None
                    else "the lower end NOT verified (no network included): the comparison is exact, the interval "
                         "rests on the producer's claim.lower")
        steps.append(Step("lower <= upper and the claimed relative gap", True, "proved",
                          ("" if c["gap"] is None else f"(U - L)/L <= {c['gap']}; ") + verified,
                          [lower, EVEN_P_UPPER if c["even_p"] is not None else
                           UPPER_AM_GM if "am_gm" in c else UPPER]))
    return None


#: the number of conic variables of the producer's relaxation for each ``k`` (a deliberate copy of
#: ``margintheory.certificate.block_sos.VARIABLES``, compared by a test): only sizes a file, never trusted
RELAXATION_VARIABLES = {1: 4, 2: 28, 3: 30, 4: 258, 5: 283, 6: 3842, 7: 4414, 8: 57837, 9: 66379, 10: 1039893,
                        11: 1199181}
#: bytes of a certificate per conic variable (measured 150-220 for k = 2..7: the Gram entry, its share of the basis),
#: with room for longer rationals; the fixed part (statement, reduction, claim, solver); the largest lower witness
#: the producer includes (``margintheory.certificate.maxmin.WITNESS_MAX_BYTES``)
BYTES_PER_VARIABLE = 400
FIXED_BYTES = 64 * 2**10
WITNESS_MAX_BYTES = 64 * 2**20
#: bytes read first to find the claimed ``k`` (the producer writes ``format, version, producer, p, k`` first)
HEAD_BYTES = 4096


def max_certificate_bytes(k: int | None) -> int:
    """The largest file a certificate for ``k`` can be (``None``: any ``k``), at most :data:`MAX_BYTES`."""
    variables = RELAXATION_VARIABLES.get(k, max(RELAXATION_VARIABLES.values())) if k is not None else max(
        RELAXATION_VARIABLES.values())
    return min(MAX_BYTES, FIXED_BYTES + BYTES_PER_VARIABLE * variables + WITNESS_MAX_BYTES)


def _claimed_k(head: bytes) -> int | None:
    """The ``k`` a file claims in its first bytes (``None`` when it is not there)."""
    match = re.search(rb'"k"\s*:\s*([0-9]{1,3})\b', head)
    return int(match.group(1)) if match else None


def check_file(path: str) -> Outcome:
    """Read ``path`` (a regular file, at most ``MAX_BYTES``, and no larger than a certificate for the ``k`` it
    claims can be: :func:`max_certificate_bytes`, refused before the rest is read) and check it."""
    import os
    import stat

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return Outcome("unreadable", f"{path}: not a regular file")
        if st.st_size > MAX_BYTES:
            return Outcome("unreadable", f"{path}: {st.st_size} bytes is larger than a certificate can be")
        with open(path, "rb") as fh:
            raw = fh.read(HEAD_BYTES)
            k = _claimed_k(raw)
            limit = max_certificate_bytes(k)
            if st.st_size > limit:
                return Outcome("unreadable", f"{path}: {st.st_size} bytes is larger than a certificate for k = {k} "
                                             f"can be (at most {limit} bytes)")
            raw += fh.read(limit + 1 - len(raw))
        if len(raw) > limit:  # it grew after the size check
            return Outcome("unreadable", f"{path}: more than {limit} bytes is larger than a certificate can be")
        data = json.loads(raw.decode(), object_pairs_hook=_unique_keys)  # UTF-8, the only encoding of the format
    except FileNotFoundError:
        return Outcome("unreadable", f"{path}: no such file")
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return Outcome("unreadable", f"{path}: not a readable JSON certificate ({type(exc).__name__}: "
                                     f"{str(exc)[:80]})")
    return check_data(data)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all distinct (a repeated key would be read as its last value: which one is the
    certificate's is not for the checker to guess); ``ValueError`` naming the key otherwise.  The same rule as
    ``margintheory.runtime.strict_json``, kept here so that this module needs only the standard library."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key[:40]!r}")
        out[key] = value
    return out


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - exercised through the CLI
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: checker.py FILE.json", file=sys.stderr)
        return 2
    out = check_file(args[0])
    for s in out.steps:
        star = "*" if s.assumes and s.exactness != "argued" else ""
        print(f"[{'PASS' if s.passed else 'FAIL'}] ({s.exactness}{star}) {s.name}"
              + (f": {s.detail}" if s.detail else "") + (f" [assumes: {'; '.join(s.assumes)}]" if star else ""))
    print(out.message, file=sys.stdout if out.status == "valid" else sys.stderr)
    return out.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
