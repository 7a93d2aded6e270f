"""Finite groups as multiplication tables (Morwani et al., "Feature emergence via margin maximization",
arXiv:2311.07568, Sec. 7.6, App. D.8; docs/theory.md#finite-groups).

A :class:`FiniteGroup` stores its elements as indices ``0..|G|-1``, the table ``mul[a, b] = index of a*b``, the index
of its identity (0 for every named group; any index for a Cayley table file), the inverses and the conjugacy classes
``C(a) = {g a g^-1}`` (computed from the table, not assumed).  Element order (documented, used by network files of the
``group`` task):

* ``S_n`` (``n <= 7``): permutations of ``0..n-1`` as image tuples in lexicographic order (identity first); the
  product is composition ``(a*b)(x) = a(b(x))``.  ``A_n``: the even ones, in the same order.
* ``C_n``: residues ``0..n-1``; the product is addition mod ``n``.
* ``D_n`` (dihedral, order ``2n``): element ``i + n j`` is ``r^i s^j`` (``0 <= i < n``, ``j in {0, 1}``), with
  ``r^n = s^2 = e`` and ``s r s = r^-1``.
* ``Dic_n`` (dicyclic, order ``4n``; ``Q_8 = Dic_2``): element ``i + 2n j`` is ``a^i x^j`` with ``a^(2n) = e``,
  ``x^2 = a^n`` and ``x a x^-1 = a^-1``.
* ``G x H``: element ``g |H| + h`` is ``(g, h)``, componentwise product.
* ``perm:GENERATORS``: the permutation group the generators (cycle notation, points ``0..n-1``) generate, as image
  tuples in lexicographic order (identity first), composition as for ``S_n``.
* A Cayley table file (``.npy`` or ``.csv``): the file's own order, ``table[a, b]`` the index of ``a*b``; the identity
  may be at any index.  The table is checked (closure, identity, inverses, associativity) before use.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field

import numpy as np

from margintheory.errors import InputError

MAX_SYMMETRIC_DEGREE = 7
MAX_CYCLIC_ORDER = 400
MAX_DIHEDRAL_N = 200
MAX_DICYCLIC_N = 100
#: the largest order a group can have to be built (products, permutation groups, tables); the tasks' budgets may
#: refuse smaller ones (an order-``n`` group has ``n^2`` inputs and an ``n x n`` regular representation)
MAX_GROUP_ORDER = 5040


@dataclass(frozen=True)
class FiniteGroup:
    """A finite group given by its multiplication table ``mul[a, b] = a*b``; ``identity`` is the index of ``e``."""

    name: str
    mul: np.ndarray
    labels: list[str] = field(default_factory=list)
    permutations: np.ndarray | None = None  # (|G|, n) image tuples for S_n (Young's orthogonal form applies)
    identity: int = 0
    family: str = "table"  # "symmetric", "cyclic", "alternating", "dihedral", "dicyclic", "product", "perm", "table"

    @property
    def order(self) -> int:
        return int(self.mul.shape[0])

    def inverses(self) -> np.ndarray:
        """``inv[a]`` with ``a * inv[a] = e``."""
        return np.argmax(self.mul == self.identity, axis=1)

    def conjugacy_classes(self) -> list[np.ndarray]:
        """Orbits of ``a -> g a g^-1``, the identity class first, then by (size, smallest element)."""
        inv = self.inverses()
        c = self.mul[self.mul, inv[:, None]]  # c[g, a] = (g a) g^-1
        seen = np.zeros(self.order, dtype=bool)
        classes = []
        for a in range(self.order):
            if not seen[a]:
                orbit = np.unique(c[:, a])
                seen[orbit] = True
                classes.append(orbit)
        e = self.identity
        classes.sort(key=lambda cl: (int(cl[0]) != e, len(cl), int(cl[0])))
        return classes

    def class_index(self) -> np.ndarray:
        """``cls[a]`` = index of the conjugacy class of ``a`` in :meth:`conjugacy_classes` order."""
        out = np.empty(self.order, dtype=np.int64)
        for i, cl in enumerate(self.conjugacy_classes()):
            out[cl] = i
        return out

    def element_orders(self) -> np.ndarray:
        """The order of every element (the least ``m >= 1`` with ``a^m = e``)."""
        n = self.order
        out = np.zeros(n, dtype=np.int64)
        power = np.full(n, self.identity)
        for m in range(1, n + 1):
            power = self.mul[power, np.arange(n)]
            out[(out == 0) & (power == self.identity)] = m
            if out.all():
                break
        return out

    def exponent(self) -> int:
        """The least common multiple of the element orders."""
        return int(np.lcm.reduce(self.element_orders()))

    def product_labels(self) -> np.ndarray:
        """Class index of ``a*b`` for every row ``(a, b)`` of ``input_grid(|G|, 2)`` (``a`` most significant)."""
        return self.mul.reshape(-1).astype(np.int64)

    def check_axioms(self) -> dict[str, bool]:
        """Closure (a Latin square), identity, associativity (exhaustive), inverses."""
        return {name: failure is None for name, failure in group_axiom_failures(self.mul, self.identity).items()}


def group_axiom_failures(mul: np.ndarray, identity: int | None = None) -> dict[str, str | None]:
    """For each group axiom, ``None`` where it holds, else a sentence naming a failing element, pair or triple.

    Checked exhaustively on the table: entries in range, every row and column a permutation (closure and cancellation,
    a Latin square), an identity (at ``identity``, or found), inverses, and ``(ab)c = a(bc)`` for every triple.
    """
    n = mul.shape[0]
    out: dict[str, str | None] = {"latin square": None, "identity": None, "inverses": None, "associative": None}
    for what, lines in (("row", mul), ("column", mul.T)):
        repeat = _first_repeat(lines)
        if repeat is not None:
            i, c, j1, j2 = repeat
            pairs = (f"{i}*{j1} = {i}*{j2}" if what == "row" else f"{j1}*{i} = {j2}*{i}")
            out["latin square"] = f"{what} {i} repeats {c}: {pairs} = {c}"
            break
    ar = np.arange(n)
    if identity is None:
        found = [e for e in range(n) if np.array_equal(mul[e], ar) and np.array_equal(mul[:, e], ar)]
        identity = found[0] if found else None
    if identity is None or not (np.array_equal(mul[identity], ar) and np.array_equal(mul[:, identity], ar)):
        out["identity"] = "no element e with e*a = a*e = a for every a"
        out["inverses"] = "no identity, so no inverses"
    else:
        for a in range(n):
            right = np.flatnonzero(mul[a] == identity)
            if len(right) == 0 or mul[int(right[0]), a] != identity:
                out["inverses"] = f"element {a} has no two-sided inverse"
                break
    # associativity, vectorized in slices of a to bound memory: left[a, b, c] = (ab)c, right[a, b, c] = a(bc)
    step = max(1, 4_000_000 // max(1, n * n))
    for a0 in range(0, n, step):
        rows = ar[a0:a0 + step]
        left = mul[mul[rows][:, :, None], ar[None, None, :]]
        right = mul[rows[:, None, None], mul[None, :, :]]
        bad = np.argwhere(left != right)
        if len(bad):
            i, b, c = (int(x) for x in bad[0])
            a_ = int(rows[i])
            out["associative"] = (f"(a*b)*c != a*(b*c) at (a, b, c) = ({a_}, {b}, {c}): ({a_}*{b})*{c} = "
                                  f"{int(left[i, b, c])}, {a_}*({b}*{c}) = {int(right[i, b, c])}")
            break
    return out


def _first_repeat(lines: np.ndarray) -> tuple[int, int, int, int] | None:
    """The first line ``i`` of the square table ``lines`` that is not a permutation of ``0..n-1``: ``(i, c, j1, j2)``
    with ``lines[i, j1] = lines[i, j2] = c``; ``None`` when every line is one (entries are in range)."""
    n = lines.shape[0]
    bad = np.flatnonzero((np.sort(lines, axis=1) != np.arange(n)).any(axis=1))
    if len(bad) == 0:
        return None
    i = int(bad[0])
    vals, counts = np.unique(lines[i], return_counts=True)
    c = int(vals[counts > 1][0])
    j1, j2 = (int(x) for x in np.flatnonzero(lines[i] == c)[:2])
    return i, c, j1, j2


def _perm_group(name: str, perms: np.ndarray, family: str) -> FiniteGroup:
    """The group of the given image tuples (closed under composition), sorted lexicographically."""
    perms = np.unique(perms, axis=0)  # lexicographic; the identity (0, 1, ..., n-1) is the smallest
    n = perms.shape[1]
    weights = n ** np.arange(n - 1, -1, -1, dtype=np.int64)
    codes = perms @ weights
    prod = perms[np.arange(len(perms))[:, None, None], perms[None, :, :]]  # a[b[x]]
    pc = prod @ weights
    mul = np.searchsorted(codes, pc).astype(np.int64)
    if not np.array_equal(codes[np.clip(mul, 0, len(codes) - 1)], pc):
        raise InputError(f"{name}: the permutations are not closed under composition")
    labels = [cycle_notation(p) for p in perms.tolist()]
    return FiniteGroup(name, mul, labels, perms, 0, family)


def symmetric_group(n: int) -> FiniteGroup:
    """``S_n`` with elements in lexicographic order of their image tuples; ``(a*b)(x) = a(b(x))``."""
    if not 2 <= n <= MAX_SYMMETRIC_DEGREE:
        raise InputError(f"S_n is supported for 2 <= n <= {MAX_SYMMETRIC_DEGREE}, got n={n}")
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)
    return _perm_group(f"S{n}", perms, "symmetric")


def permutation_sign(perm: np.ndarray) -> np.ndarray:
    """``+1`` / ``-1`` for every row (image tuple) of ``perm``: the parity of its inversions."""
    n = perm.shape[1]
    inversions = np.zeros(perm.shape[0], dtype=np.int64)
    for i in range(n):
        for j in range(i + 1, n):
            inversions += perm[:, i] > perm[:, j]
    return 1 - 2 * (inversions % 2)


def alternating_group(n: int) -> FiniteGroup:
    """``A_n`` (``3 <= n <= 7``): the even permutations of ``S_n``, in lexicographic order."""
    if not 3 <= n <= MAX_SYMMETRIC_DEGREE:
        raise InputError(f"A_n is supported for 3 <= n <= {MAX_SYMMETRIC_DEGREE}, got n={n}")
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)
    even = perms[permutation_sign(perms) == 1]
    return _perm_group(f"A{n}", even, "alternating")


def cyclic_group(n: int) -> FiniteGroup:
    """``C_n = Z_n`` with element ``j`` = residue ``j``; the product is addition mod ``n``.

    ``C_2`` is ``S_2`` (residue ``j`` is the permutation ``x -> x + j mod 2``) and carries those permutations: its
    two irreps (trivial and sign) are of real type, so it is checked on the real-type path (Theorem 7.9, the exact
    character table by Murnaghan-Nakayama), as ``S2`` is; every other ``C_n`` has complex-type irreps."""
    if not 2 <= n <= MAX_CYCLIC_ORDER:
        raise InputError(f"C_n is supported for 2 <= n <= {MAX_CYCLIC_ORDER}, got n={n}")
    r = np.arange(n)
    return FiniteGroup(f"C{n}", (r[:, None] + r[None, :]) % n, [str(j) for j in range(n)], family="cyclic")


def dihedral_group(n: int) -> FiniteGroup:
    """``D_n`` of order ``2n`` (``3 <= n <= 200``): element ``i + n j`` is ``r^i s^j``;
    ``(r^a s^b)(r^c s^d) = r^(a + (-1)^b c) s^(b + d)``."""
    if not 3 <= n <= MAX_DIHEDRAL_N:
        raise InputError(f"D_n (dihedral, order 2n) is supported for 3 <= n <= {MAX_DIHEDRAL_N}, got n={n}")
    i = np.arange(2 * n) % n
    j = np.arange(2 * n) // n
    a, b, c, d = i[:, None], j[:, None], i[None, :], j[None, :]
    mul = (a + (1 - 2 * b) * c) % n + n * ((b + d) % 2)
    labels = [("e" if x == 0 else ("r" if x == 1 else f"r^{x}")) if y == 0 else
              ("s" if x == 0 else ("rs" if x == 1 else f"r^{x}s")) for x, y in zip(i, j, strict=True)]
    return FiniteGroup(f"D{n}", mul.astype(np.int64), labels, family="dihedral")


def dicyclic_group(n: int) -> FiniteGroup:
    """``Dic_n`` of order ``4n`` (``2 <= n <= 100``; ``Dic_2 = Q_8``): element ``i + 2n j`` is ``a^i x^j``,
    ``a^(2n) = e``, ``x^2 = a^n``, ``x a x^-1 = a^-1``."""
    if not 2 <= n <= MAX_DICYCLIC_N:
        raise InputError(f"Dic_n (dicyclic, order 4n) is supported for 2 <= n <= {MAX_DICYCLIC_N}, got n={n}")
    m = 2 * n
    i = np.arange(2 * m) % m
    j = np.arange(2 * m) // m
    a, b, c, d = i[:, None], j[:, None], i[None, :], j[None, :]
    # (a^i x^j)(a^k x^l) = a^(i + (-1)^j k) x^(j + l), and x^2 = a^n
    e = a + (1 - 2 * b) * c + n * (b * d)
    mul = e % m + m * ((b + d) % 2)
    labels = [("e" if x == 0 else f"a^{x}") if y == 0 else ("x" if x == 0 else f"a^{x}x")
              for x, y in zip(i, j, strict=True)]
    name = "Q8" if n == 2 else f"Dic{n}"
    return FiniteGroup(name, mul.astype(np.int64), labels, family="dicyclic")


def direct_product(G: FiniteGroup, H: FiniteGroup) -> FiniteGroup:
    """``G x H``: element ``g |H| + h`` is ``(g, h)``; the product is componentwise."""
    order = G.order * H.order
    if order > MAX_GROUP_ORDER:
        raise InputError(f"{G.name}x{H.name} has order {order}, above the largest supported order {MAX_GROUP_ORDER}")
    g = np.arange(order) // H.order
    h = np.arange(order) % H.order
    mul = G.mul[g[:, None], g[None, :]] * H.order + H.mul[h[:, None], h[None, :]]
    e = G.identity * H.order + H.identity
    labels = [f"({G.labels[x] if G.labels else x},{H.labels[y] if H.labels else y})" for x, y in zip(g, h, strict=True)]
    return FiniteGroup(f"{G.name}x{H.name}", mul.astype(np.int64), labels, identity=int(e), family="product")


def parse_cycles(text: str, degree: int | None = None) -> list[list[int]]:
    """``"(0 1 2)(3 4)"`` -> the cycles as lists; ``InputError`` on anything else (points are integers >= 0)."""
    t = text.strip()
    if t in ("", "e", "()"):
        return []
    if not re.fullmatch(r"(\(\s*\d+(?:[\s,]+\d+)*\s*\))+", t):
        raise InputError(f"cannot read the permutation {text!r}: use cycle notation such as (0 1 2)(3 4)")
    cycles = [[int(x) for x in re.split(r"[\s,]+", c.strip())] for c in re.findall(r"\(([^)]*)\)", t)]
    points = [x for c in cycles for x in c]
    if len(set(points)) != len(points):
        raise InputError(f"the permutation {text!r} names a point twice")
    return cycles


def permutation_group(generators: str) -> FiniteGroup:
    """The permutation group generated by ``generators`` (``"(0 1 2)(3 4),(0 1)"``: cycle notation, separated by
    commas or semicolons between the cycles), closed by breadth-first search, refused above
    ``MAX_GROUP_ORDER``."""
    parts = [p for p in re.split(r"(?<=\))\s*[,;]\s*(?=\()", generators.strip()) if p.strip()]
    if not parts:
        raise InputError("perm: needs at least one generator, e.g. perm:(0 1 2),(0 1)")
    cyc = [parse_cycles(p) for p in parts]
    n = 1 + max((x for cs in cyc for c in cs for x in c), default=0)
    if n > 64:
        raise InputError(f"perm: permutations of at most 64 points are supported, got {n}")
    gens = []
    for cs in cyc:
        img = list(range(n))
        for c in cs:
            for a, b in zip(c, c[1:] + c[:1], strict=True):
                img[a] = b
        gens.append(tuple(img))
    ident = tuple(range(n))
    seen = {ident}
    frontier = [ident]
    while frontier:
        nxt = []
        for g in frontier:
            for s in gens:
                h = tuple(g[s[x]] for x in range(n))  # g o s
                if h not in seen:
                    seen.add(h)
                    nxt.append(h)
                    if len(seen) > MAX_GROUP_ORDER:
                        raise InputError(f"perm:{generators} generates a group of order > {MAX_GROUP_ORDER}, above "
                                         "the largest supported order")
        frontier = nxt
    if len(seen) < 2:
        raise InputError(f"perm:{generators} generates the trivial group")
    return _perm_group(f"perm:{generators.strip()}", np.array(sorted(seen), dtype=np.int64), "perm")


def read_cayley_table(path: str) -> FiniteGroup:
    """A group from a Cayley table file (``.npy`` or ``.csv`` of integers, ``table[a, b]`` = index of ``a*b``), in
    the file's order; refused with one sentence naming the failing element, pair or triple if it is not a group."""
    if not os.path.isfile(path):
        raise InputError(f"group table {path}: no such file")
    try:
        if path.lower().endswith(".npy"):
            table = np.load(path, allow_pickle=False)
        else:
            table = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
    except (OSError, ValueError) as exc:
        raise InputError(f"group table {path}: cannot read it ({str(exc).splitlines()[0]})") from None
    if table.ndim != 2 or table.shape[0] != table.shape[1] or table.shape[0] < 2:
        raise InputError(f"group table {path}: needs a square table of size >= 2, got shape {table.shape}")
    n = table.shape[0]
    if n > MAX_GROUP_ORDER:
        raise InputError(f"group table {path}: order {n} is above the largest supported order {MAX_GROUP_ORDER}")
    if not np.issubdtype(table.dtype, np.integer):
        if not np.issubdtype(table.dtype, np.floating) or not np.all(np.isfinite(table)) or \
                not np.all(table == np.round(table)):
            raise InputError(f"group table {path}: entries must be integers (element indices 0..{n - 1})")
    table = table.astype(np.int64)
    if table.min() < 0 or table.max() >= n:
        bad = np.argwhere((table < 0) | (table >= n))[0]
        raise InputError(f"group table {path}: table[{bad[0]}, {bad[1]}] = {table[bad[0], bad[1]]} is not an element "
                         f"index 0..{n - 1}")
    failures = group_axiom_failures(table)
    for axiom in ("latin square", "identity", "inverses", "associative"):
        if failures[axiom]:
            raise InputError(f"group table {path} is not a group: {failures[axiom]}")
    ar = np.arange(n)
    e = next(x for x in range(n) if np.array_equal(table[x], ar))
    name = f"table:{os.path.basename(path)}"
    return FiniteGroup(name, table, [str(j) for j in range(n)], identity=int(e), family="table")


def cycle_notation(perm: list[int]) -> str:
    """``(0 1)(2 3)`` style label of a permutation given by its image tuple; ``e`` for the identity."""
    seen, out = set(), []
    for s in range(len(perm)):
        if s in seen:
            continue
        cyc, x = [], s
        while x not in seen:
            seen.add(x)
            cyc.append(x)
            x = perm[x]
        if len(cyc) > 1:
            out.append("(" + " ".join(map(str, cyc)) + ")")
    return "".join(out) or "e"


GROUP_NAMES_SHORT = "S<n>, A<n>, C<n>, D<n>, Dic<n>, Q8, products (C4xC4), perm:GENERATORS or a Cayley table file"
GROUP_NAMES_HELP = ("S<n> or A<n> (n <= 7), C<n>, D<n> (dihedral of order 2n), Dic<n>, Q8, products such as C4xC4 "
                    "or S3xC3, perm:GENERATORS such as 'perm:(0 1 2)(3 4),(0 1)', or a Cayley table file (.npy, .csv)")


def _named_factor(token: str) -> FiniteGroup:
    m = re.fullmatch(r"(dic|[SsCcZzAaDdQq])_?(\d+)", token.strip(), flags=re.IGNORECASE)
    if not m:
        raise InputError(f"unknown group {token!r}: use {GROUP_NAMES_HELP}")
    kind, n = m.group(1).upper(), int(m.group(2))
    if kind == "S":
        return symmetric_group(n)
    if kind in ("C", "Z"):
        return cyclic_group(n)
    if kind == "A":
        return alternating_group(n)
    if kind == "D":
        return dihedral_group(n)
    if kind == "DIC":
        return dicyclic_group(n)
    if n != 8:
        raise InputError(f"unknown group {token!r}: the quaternion group is Q8 (Dic<n> for the dicyclic family)")
    return dicyclic_group(2)


def parse_group(name: str) -> FiniteGroup:
    """A group by name (module docstring): ``S4``, ``A5``, ``C7``/``Z7``, ``D12``, ``Dic3``, ``Q8``, products
    ``C4xC4``, ``perm:(0 1 2),(0 1)``, or the path of a Cayley table file; else :class:`InputError`."""
    text = str(name).strip()
    if text.lower().startswith("perm:"):
        return permutation_group(text[5:])
    if text.lower().startswith("table:"):
        return read_cayley_table(text[6:])
    if text.lower().endswith((".npy", ".csv")):
        return read_cayley_table(text)
    factors = [f for f in re.split(r"\s*[xX×]\s*", text)]
    if not text or any(not f for f in factors):
        raise InputError(f"unknown group {name!r}: use {GROUP_NAMES_HELP}")
    groups = [_named_factor(f) for f in factors]
    out = groups[0]
    for g in groups[1:]:
        out = direct_product(out, g)
    return out


def group_order_estimate(order: int) -> float:
    """Bytes of the largest arrays a group of this order needs: its table, the regular representation and its
    eigenvectors (float64), each ``order^2`` entries."""
    return float(8 * order * order * 6)


__all__ = [
    "FiniteGroup", "GROUP_NAMES_HELP", "GROUP_NAMES_SHORT", "alternating_group", "cycle_notation", "cyclic_group",
    "dicyclic_group",
    "dihedral_group", "direct_product", "group_axiom_failures", "parse_group", "permutation_group",
    "read_cayley_table", "symmetric_group",
]
