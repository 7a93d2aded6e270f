"""Any finite group: names, permutation generators and Cayley tables; real irreps from the regular representation,
their types and checks; Theorem 7.9's two legs on groups outside S_n; invariance of [L, U] under isomorphism."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core.groups import (
    FiniteGroup,
    dicyclic_group,
    dihedral_group,
    parse_group,
    permutation_group,
    read_cayley_table,
)
from margintheory.core.problems import GroupComposition
from margintheory.core.representations import (
    Irrep,
    character_inner_products,
    frobenius_schur_indicator,
    generators,
    homomorphism_error,
    orthogonality_error,
    real_irreps,
    regular_real_irreps,
)
from margintheory.errors import InputError
from margintheory.tasks.groups.characters import exact_character_facts
from margintheory.tasks.groups.representation_checks import representation_checks
from margintheory.verification import verify


def relabelled(G: FiniteGroup, sigma: np.ndarray) -> np.ndarray:
    """The table of ``G`` with element ``a`` renamed ``sigma[a]``: ``T[sigma a, sigma b] = sigma(ab)``."""
    T = np.empty_like(G.mul)
    T[np.ix_(sigma, sigma)] = sigma[G.mul]
    return T


# -- naming ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, order, classes", [
    ("D5", 10, 4), ("D_6", 12, 6), ("D60", 120, 33), ("A4", 12, 4), ("A5", 60, 5), ("Q8", 8, 5), ("Dic3", 12, 6),
    ("C4xC4", 16, 16), ("S3xC3", 18, 9), ("C2xC2xC2", 8, 8), ("perm:(0 1 2 3),(0 1)", 24, 5),
])
def test_named_groups_have_their_order_and_classes(name: str, order: int, classes: int) -> None:
    G = parse_group(name)
    assert G.order == order and len(G.conjugacy_classes()) == classes
    assert all(G.check_axioms().values())


def test_dihedral_and_dicyclic_relations() -> None:
    D = dihedral_group(7)
    r, s, e = 1, 7, 0
    assert D.mul[s, s] == e and D.mul[D.mul[s, r], s] == D.inverses()[r]  # s r s = r^-1
    Q = dicyclic_group(2)
    a, x = 1, 4
    assert Q.mul[x, x] == Q.mul[a, a]  # x^2 = a^n = a^2
    assert Q.mul[Q.mul[x, a], Q.inverses()[x]] == Q.inverses()[a]
    assert Q.element_orders().tolist().count(4) == 6  # Q8: six elements of order 4


def test_cayley_table_files(tmp_path) -> None:
    G = parse_group("S3")
    sigma = np.array([3, 1, 4, 0, 5, 2])  # the identity moves to index 3
    T = relabelled(G, sigma)
    np.save(tmp_path / "s3.npy", T)
    np.savetxt(tmp_path / "s3.csv", T, fmt="%d", delimiter=",")
    for f in ("s3.npy", "s3.csv"):
        H = parse_group(str(tmp_path / f))
        assert H.identity == 3 and H.order == 6 and [len(c) for c in H.conjugacy_classes()] == [1, 2, 3]


def test_non_group_tables_are_refused_naming_the_failure(tmp_path) -> None:
    # a Latin square with an identity that is not associative (the smallest loop that is not a group, order 5)
    loop = np.array([[0, 1, 2, 3, 4], [1, 0, 3, 4, 2], [2, 4, 0, 1, 3], [3, 2, 4, 0, 1], [4, 3, 1, 2, 0]])
    np.save(tmp_path / "loop.npy", loop)
    with pytest.raises(InputError, match=r"not a group: \(a\*b\)\*c != a\*\(b\*c\) at \(a, b, c\) = "):
        read_cayley_table(str(tmp_path / "loop.npy"))
    np.save(tmp_path / "rep.npy", np.array([[0, 1], [1, 1]]))
    with pytest.raises(InputError, match="row 1 repeats 1"):
        read_cayley_table(str(tmp_path / "rep.npy"))
    np.save(tmp_path / "noid.npy", np.array([[1, 0], [0, 1]]))  # a Latin square, e*a = a for no e... (it is Z_2
    # relabelled: 1 is the identity) -- so it is a group, and accepted
    assert read_cayley_table(str(tmp_path / "noid.npy")).identity == 1
    np.save(tmp_path / "range.npy", np.array([[0, 1], [1, 2]]))
    with pytest.raises(InputError, match=r"table\[1, 1\] = 2 is not an element"):
        read_cayley_table(str(tmp_path / "range.npy"))
    np.save(tmp_path / "noident.npy", np.array([[1, 2, 0], [2, 0, 1], [0, 1, 2]])[::-1].copy())
    with pytest.raises(InputError, match="no element e"):
        read_cayley_table(str(tmp_path / "noident.npy"))


def test_bad_table_on_the_cli_is_one_line_exit_2(tmp_path) -> None:
    np.save(tmp_path / "loop.npy", np.array([[0, 1, 2, 3, 4], [1, 0, 3, 4, 2], [2, 4, 0, 1, 3], [3, 2, 4, 0, 1],
                                             [4, 3, 1, 2, 0]]))
    r = subprocess.run([sys.executable, "-m", "margintheory.cli", "verify", "group", "--group",
                        str(tmp_path / "loop.npy")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "not a group" in r.stderr
    assert "Traceback" not in r.stderr


# -- irreps ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, types", [
    ("D5", {1: 4}), ("D6", {1: 6}), ("A4", {1: 2, 0: 1}), ("A5", {1: 5}), ("Q8", {1: 4, -2: 1}),
    ("Dic3", {1: 3, 0: 1, -2: 1}), ("C3xC3", {1: 1, 0: 4}), ("S3xC3", {1: 3, 0: 3}),
])
def test_regular_irreps_are_checked_and_typed(name: str, types: dict[int, int]) -> None:
    G = parse_group(name)
    irreps = real_irreps(G)
    fs = [round(frobenius_schur_indicator(G, R)) for R in irreps]
    assert {t: fs.count(t) for t in set(fs)} == types
    gens = generators(G)
    assert max(homomorphism_error(G, R, gens) for R in irreps) < 1e-11
    assert max(homomorphism_error(G, R) for R in irreps) < 1e-11  # all elements, not only the generators
    assert max(orthogonality_error(R) for R in irreps) < 1e-11
    norms = np.diag(character_inner_products(G, irreps))
    assert np.allclose(norms, [{1: 1, 0: 2, -2: 4}[t] for t in fs])
    checks, fields = representation_checks(G, irreps)
    assert all(c.passed for c in checks if not c.informational)


def test_generators_generate() -> None:
    for name in ("D12", "A5", "C4xC4", "Q8", "perm:(0 1 2)(3 4),(0 1)"):
        G = parse_group(name)
        reached = {G.identity}
        frontier = list(reached)
        gens = generators(G)
        while frontier:
            frontier = [int(G.mul[g, s]) for g in frontier for s in gens if int(G.mul[g, s]) not in reached]
            reached.update(frontier)
        assert len(reached) == G.order


def test_wrong_irreps_are_refused() -> None:
    G = parse_group("D5")
    irreps = real_irreps(G)
    # a non-homomorphism: one matrix of one irrep changed (still orthogonal)
    mats = irreps[2].mats.copy()
    mats[3] = -mats[3]
    broken = [*irreps[:2], Irrep("broken", mats), *irreps[3:]]
    checks, _ = representation_checks(G, broken)
    assert not next(c for c in checks if c.name == "R is a homomorphism").passed
    # a reducible one: the direct sum of two irreps in place of one of them
    a, b = irreps[2].mats, irreps[3].mats
    block = np.zeros((G.order, 4, 4))
    block[:, :2, :2], block[:, 2:, 2:] = a, b
    reducible = [*irreps[:2], Irrep("sum", block), irreps[3]]
    checks, _ = representation_checks(G, reducible)
    assert any(not c.passed and not c.informational for c in checks)
    assert not exact_character_facts(G, reducible).holds


def test_exact_characters_of_a5_and_d5() -> None:
    A5 = parse_group("A5")
    facts = exact_character_facts(A5, real_irreps(A5))
    assert facts.holds and not facts.integer_table  # the golden ratio
    text = facts.text_table()
    assert sorted(row[0] for row in text) == [1, 3, 3, 4, 5]
    assert any("cos(2pi*6/30)" in str(v) for row in text for v in row)  # 1 + 2 cos(2pi/5) = golden ratio
    D4 = parse_group("D4")
    assert exact_character_facts(D4, real_irreps(D4)).integer_table


def test_regular_irreps_of_s4_match_youngs_characters() -> None:
    G = parse_group("S4")
    young = sorted(tuple(np.round(R.character()[[int(c[0]) for c in G.conjugacy_classes()]], 9))
                   for R in real_irreps(G))
    regular = sorted(tuple(np.round(R.character()[[int(c[0]) for c in G.conjugacy_classes()]], 9))
                     for R in regular_real_irreps(G))
    assert young == regular


# -- the two legs, and isomorphism invariance ----------------------------------------------------------------------
def _interval(group: str) -> tuple[str, float, float]:
    r = verify(GroupComposition(group))
    return r.verdict, float(r.certificate["lower"]), float(r.certificate["upper"])


def test_dihedral_verified_with_both_legs() -> None:
    r = verify(GroupComposition("D5"))
    assert r.verdict == "verified"
    assert r.certificate["upper_exactness"] == "certified"  # the characters of D_5 are not integers
    assert float(r.certificate["upper"]) >= r.fields["gamma_star"] >= float(r.certificate["lower"])
    assert r.certificate["relative_gap"] < 1e-9


def test_s4_by_name_generators_and_relabelled_table(tmp_path) -> None:
    sigma = np.random.default_rng(7).permutation(24)
    np.save(tmp_path / "s4.npy", relabelled(parse_group("S4"), sigma))
    results = [_interval(g) for g in ("S4", "perm:(0 1 2 3),(0 1)", str(tmp_path / "s4.npy"))]
    assert {v for v, _, _ in results} == {"verified"}
    lows, ups = [lo for _, lo, _ in results], [up for _, _, up in results]
    assert max(lows) - min(lows) < 1e-12 and max(ups) - min(ups) < 1e-12


def test_complex_and_quaternionic_groups_are_not_applicable_without_an_invented_interval() -> None:
    r = verify(GroupComposition("Q8"))
    assert r.verdict == "not-applicable" and r.fields["gamma_star"] is None
    assert not r.certificate  # no [L, U] that the package cannot prove
    assert "quaternionic" in " ".join(r.notes)


@settings(max_examples=6, deadline=None)
@given(st.data(), st.sampled_from(["(0 1 2),(0 1)", "(0 1 2)(3 4),(3 4)", "(0 1)(2 3),(0 2)(1 3)", "(0 1 2 3),(0 2)"]))
def test_random_permutation_groups_relabelled(data, gens: str) -> None:
    """A permutation group and a random relabelling of its table: same axioms, classes and characters."""
    G = permutation_group(gens)
    sigma = np.array(data.draw(st.permutations(range(G.order))))
    H = FiniteGroup("relabelled", relabelled(G, sigma), identity=int(sigma[G.identity]))
    assert all(H.check_axioms().values())
    assert sorted(len(c) for c in H.conjugacy_classes()) == sorted(len(c) for c in G.conjugacy_classes())

    def chars(I: list[Irrep]) -> list[tuple]:
        return sorted(tuple(sorted(np.round(R.character(), 8))) for R in I)

    assert chars(real_irreps(G)) == chars(real_irreps(H))
