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
2. ``reduction``: the frequency blocks of the single-neuron objective with uniform weights are ``c_b g_k`` in
   orthonormal coordinates (Lemma C.14 of Li et al., "Fourier Circuits in Neural Networks and Transformers",
   arXiv:2402.09469; proved symbolically for all ``p`` by ``margintheory.symbolic.block_reduction``).  The squared
   constants ``c_b^2`` are recomputed here from ``(p, k)`` and must equal the file's.
3. ``claim.upper``: a rational ``U >= 0`` with ``U^2 >= c_b^2 (gamma / scale)^2`` for every block (exact).
4. ``claim.lower`` (``"a/b"`` or ``"sqrt(a/b)"``): when the file includes ``lower_witness`` (a network with
   rational weights ``U (m, k, p)``, ``W (m, p)``), the checker recomputes its margin exactly -- every logit
   ``sum_i (U_i1[a_1] + ... + U_ik[a_k])^k W_i[c]`` on all ``p^k`` inputs -- and the norm
   ``sum_i ||theta_i||^(k+1)`` from above (exact rational square roots rounded up), and checks
   ``lower <= margin / norm``; without a witness the lower bound is a claim (listed as such).  Then
   ``lower <= U`` and the claimed relative gap ``(U - L) / L`` are checked exactly.

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


# -- reading and checking a certificate ----------------------------------------------------------------------------


@dataclass
class Step:
    name: str
    passed: bool
    exactness: str
    detail: str = ""


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
                              "solver", "lower_witness"}),
    "claim": frozenset({"lower", "upper", "relative_gap_at_most", "lower_exactness", "lower_how", "upper_exactness"}),
    "reduction": frozenset({"p", "k", "statement", "blocks", "steps", "exact_check_at_p_k"}),
    "reduction.blocks[]": frozenset({"frequencies", "domain", "constant_squared"}),
    "reduction.steps[]": frozenset({"name", "passed", "exactness", "reason"}),
    "reduction.exact_check_at_p_k": frozenset({"ran", "matches", "monomials_compared", "seconds"}),
    "sos": frozenset({"p", "k", "form", "monomials", "identity", "homogeneous", "half_degree", "scale", "gamma",
                      "blocks", "multiplier"}),
    "sos.blocks[]": frozenset({"basis", "gram"}),
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
    sos = _get(data, "sos", dict, "certificate")
    for where, part in (("reduction", red), ("sos", sos)):
        pk = (part.get("p", p), part.get("k"))
        if pk != (p, k):
            raise Unreadable(f"the {where} section is for (p, k) = {pk}, but the certificate claims ({p}, {k})")
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
    consts = []
    for bi, c in enumerate(_get(red, "blocks", list, "reduction")):
        consts.append({"frequencies": _get(c, "frequencies", str, f"reduction.blocks[{bi}]"),
                       "domain": _get(c, "domain", str, f"reduction.blocks[{bi}]"),
                       "constant_squared": to_fraction(rational(_get(c, "constant_squared", str,
                                                                     f"reduction.blocks[{bi}]"), "constant"))})
    return {
        "p": p, "k": k, "homogeneous": homogeneous, "half_degree": h,
        "scale": rational(_get(sos, "scale", str, "sos"), "sos.scale"),
        "gamma": rational(_get(sos, "gamma", str, "sos"), "sos.gamma"),
        "blocks": blocks, "multiplier": multiplier, "constants": consts,
        "upper": to_fraction(rational(_get(claim, "upper", str, "claim"), "claim.upper")),
        "lower_squared": (positive_algebraic_square(claim["lower"], "claim.lower")
                          if claim.get("lower") is not None else None),
        "gap": (to_fraction(rational(claim["relative_gap_at_most"], "claim.relative_gap_at_most"))
                if claim.get("relative_gap_at_most") is not None else None),
        "argued": [s for s in red.get("steps", []) if isinstance(s, dict) and s.get("exactness") == "argued"],
        "witness": _parse_witness(data.get("lower_witness"), p, k),
        "lower_how": str(claim.get("lower_how", "")),
    }


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
    for stage in (_check_sos, _check_blocks, _check_lower):
        failure = stage(c, steps)
        if failure is not None:
            name, detail = failure
            steps.append(Step(name, False, "proved", detail))
            return Outcome("invalid", f"step failed: {name}: {detail}", steps, p, k)
    U = c["upper"]
    return Outcome("valid", f"valid: every network's max margin for (p, k) = ({p}, {k}) is at most U = {U} "
                            f"(~{float(U):.15g})", steps, p, k)


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
    bound = to_fraction(c["gamma"]) / to_fraction(c["scale"])
    steps.append(Step("max_{|z|=1} g_k <= gamma/scale", True, "proved", f"gamma/scale = {bound}"))
    expected = block_constants_squared(c["p"], c["k"])
    got = [(x["frequencies"], x["domain"], x["constant_squared"]) for x in c["constants"]]
    want = [(x["frequencies"], x["domain"], x["constant_squared"]) for x in expected]
    if got != want:
        return "frequency-block constants (Lemma C.14)", f"file {got} != recomputed {want}"
    steps.append(Step("frequency-block constants c^2 recomputed from (p, k) (Lemma C.14)", True, "proved",
                      "; ".join(f"j in {f}: c^2 = {v}" for f, _, v in want)))
    U = c["upper"]
    if U < 0:  # (squares are compared below)
        return "upper bound U >= c gamma/scale for every block", f"U = {U} is negative"
    if any(U * U < x["constant_squared"] * bound * bound for x in expected):
        return "upper bound U >= c gamma/scale for every block", f"U = {U} is below a block's bound"
    steps.append(Step("upper bound U >= c gamma/scale for every block", True, "proved", f"U = {U}"))
    for name, reason in NOT_RECHECKED:
        steps.append(Step(name, True, "argued", reason))
    own = {name for name, _ in NOT_RECHECKED}
    for s in c["argued"]:  # further arguments the producer listed (printed, never checked)
        name = str(s.get("name", "argued step"))
        if name not in own and not any(name.startswith(o.split(":")[0]) for o in own):
            steps.append(Step(name, True, "argued", str(s.get("reason", ""))))
    return None


def _check_lower(c: dict[str, Any], steps: list[Step]) -> Failure | None:
    """The lower end: the included network's exact margin (or the producer's statement), ``L <= U`` and the
    claimed relative gap."""
    L2, U = c["lower_squared"], c["upper"]
    if c["witness"] is not None:
        if L2 is None:
            return "lower bound: exact margin of the included network", "the claim has no lower value"
        h, S = network_margin_bound(c["p"], c["k"], *c["witness"])
        hq = to_fraction(h)
        # (S > 0 whenever hq > 0: a network whose weights are all zero has margin 0)
        if hq <= 0 or L2 > (hq / S) ** 2:
            return ("lower bound: exact margin of the included network",
                    f"margin/norm bound {hq}/{S} is below the claimed lower bound")
        steps.append(Step("lower bound: exact margin of the included network over all inputs", True, "proved",
                          f"{len(c['witness'][0])} neurons; normalized margin >= {float(hq / S):.15g}"))
    elif L2 is not None:
        steps.append(Step("lower bound: stated, not re-checked (no network included)", True, "argued",
                          c["lower_how"] or "the producer's statement"))
    if L2 is not None:
        if L2 > U * U:
            return "lower <= upper", "the claimed lower bound exceeds the upper bound"
        # (U - L)/L <= g  <=>  U <= (1 + g) L  <=>  U^2 <= (1 + g)^2 L^2   (U, L >= 0)
        if c["gap"] is not None and L2 == 0:
            return "relative gap (U - L)/L <= claimed", f"claimed {c['gap']}, but L = 0"
        if c["gap"] is not None and U * U > (1 + c["gap"]) ** 2 * L2:
            return "relative gap (U - L)/L <= claimed", f"claimed {c['gap']}"
        steps.append(Step("lower <= upper and the claimed relative gap", True, "proved",
                          "" if c["gap"] is None else f"(U - L)/L <= {c['gap']}"))
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
        print(f"[{'PASS' if s.passed else 'FAIL'}] ({s.exactness}) {s.name}" + (f": {s.detail}" if s.detail else ""))
    print(out.message, file=sys.stdout if out.status == "valid" else sys.stderr)
    return out.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
