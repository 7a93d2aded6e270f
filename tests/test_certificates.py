"""The max-min certificate: the block SOS program (KKT on random instances, as cvxpy's solver tests do), its exact
rounding, the proved upper bound, certificate files and the independent checker, and the weakenings they catch."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from margintheory.certificate import block_sos, checker
from margintheory.certificate.maxmin import GAP_TOL
from margintheory.certificate.upper_bound import ceil_sqrt, certificate_document, prove_upper_bound
from margintheory.core.theory import gamma_star, gamma_star_exact
from margintheory.errors import RefusedError, SolverError
from margintheory.presentation.schema import validate_result

KKT_TOL = 1e-7


def _square(x: sp.Expr) -> Fraction:
    sq = sp.nsimplify(sp.expand(x**2))
    return Fraction(int(sq.p), int(sq.q))


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "margintheory.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


# -- the conic programs: primal feasibility, dual feasibility, complementarity -------------------------------------


@pytest.mark.parametrize("k,seed", [(2, 0), (2, 1), (3, 2), (3, 3), (4, 4)])
def test_block_sos_kkt_on_random_invariant_targets(k, seed):
    rng = np.random.default_rng(seed)
    st = block_sos.relaxation_structure(k)
    target = block_sos.random_invariant_target(k, rng, terms=5)
    gamma, sol = block_sos.minimise_gamma(block_sos.build_program(st, target), tol=1e-9)
    res = block_sos.kkt_residuals(sol)
    assert sol.status == "Solved"
    for name, value in res.items():
        assert value <= KKT_TOL, (name, value)
    # the value bounds the target on the sphere: gamma >= target(z) at random unit points
    n = k + 1
    for _ in range(200):
        z = rng.normal(size=n) + 1j * rng.normal(size=n)
        z /= np.linalg.norm(z)
        val = sum(c * np.prod(z ** np.array(m[:n])) * np.prod(np.conj(z) ** np.array(m[n:]))
                  for m, c in target.items())
        assert val.real <= gamma + 1e-8


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_margin_lp_kkt_on_random_instances(seed):
    from margintheory.solvers.column_generation import max_min_lp

    rng = np.random.default_rng(seed)
    A = rng.normal(size=(40, 9)) + 0.8
    s, lam, status, _ = max_min_lp(A)
    assert status == "optimal"
    gamma = float((A @ s).min())
    t = float((A.T @ lam).max())
    assert gamma > 0
    # primal and dual feasibility (distributions), strong duality, complementary slackness
    assert np.all(s >= 0) and abs(s.sum() - 1) <= 1e-9
    assert np.all(lam >= 0) and abs(lam.sum() - 1) <= 1e-9
    assert abs(t - gamma) <= KKT_TOL * max(1.0, gamma)
    assert abs(float(lam @ (A @ s - gamma))) <= KKT_TOL
    assert abs(float(s @ (t - A.T @ lam))) <= KKT_TOL


def test_solve_margin_lp_kkt_on_random_network_columns():
    from margintheory.solvers.column_generation import solve_margin_lp
    from margintheory.solvers.objective import _wrong_mask, neuron_pair_contributions

    rng = np.random.default_rng(5)
    p, k, m = 3, 2, 12
    phi = neuron_pair_contributions(rng.normal(size=(m, k, p)), rng.normal(size=(m, p)))
    mask = _wrong_mask(p, k)
    sol = solve_margin_lp(phi, mask)
    A = phi[:, mask].T
    lam = sol.lam[mask]
    t = float((A.T @ lam).max())
    assert abs(sol.lam.sum() - 1) <= 1e-9 and np.all(sol.lam >= 0) and np.all(sol.lam[~mask] == 0)
    if sol.gamma > 0:
        assert abs(t - sol.gamma) <= KKT_TOL * max(1.0, abs(sol.gamma))
        assert abs(float(lam @ (A @ sol.s - sol.gamma))) <= KKT_TOL


def test_an_unsolved_program_raises_instead_of_returning_a_bound():
    """The status is checked: stopping the solver after 2 iterations must raise, never return a value."""
    st = block_sos.relaxation_structure(4)
    prog = block_sos.build_program(st, {m: float(c) for m, c in checker.block_form(4).items()})
    with pytest.raises(SolverError, match="status"):
        block_sos.minimise_gamma(prog, max_iter=2)


# -- the block form, its reduction and the exact certificate -------------------------------------------------------


def test_lemma_c14_and_block_form_proved_for_all_p():
    from margintheory.symbolic.block_reduction import lemma_c14_for_all_p

    d = lemma_c14_for_all_p()
    assert d.all_passed
    assert all(s.check.kind == "proved" for s in d.steps)


@pytest.mark.parametrize("p,k", [(5, 2), (6, 2), (5, 3), (4, 3)])
def test_block_polynomial_closed_form_matches_the_float_expansion(p, k):
    from margintheory.solvers.objective import SingleNeuronObjective, pair_weights
    from margintheory.solvers.symmetry import split_by_frequency
    from margintheory.symbolic.block_reduction import block_polynomial

    split = split_by_frequency(SingleNeuronObjective(pair_weights(p, k)))
    poly, syms = block_polynomial(p, k)
    f = sp.lambdify(syms, poly)
    rng = np.random.default_rng(p * 10 + k)
    for _ in range(10):
        y = rng.normal(size=2 * (k + 1))
        assert abs(split.block_polys[1](y) - f(*y)) <= 1e-12 * max(1.0, abs(f(*y)))
    assert split.remainder_l1 <= 1e-12 * split.total_l1  # no cross-frequency terms (Lemma C.14)


def test_rounded_certificate_passes_the_checker_and_bounds_the_block_maximum():
    cert, _ = prove_upper_bound(5, 3).sos, None
    assert not checker.identity_defect(cert.k, cert.homogeneous, cert.half_degree, cert.scale, cert.gamma,
                                       cert.blocks, cert.multiplier)
    assert all(checker.ldl_psd(g)[0] for _, g in cert.blocks)
    # B >= max g_k = 4^-2 (attained at |z_l| = 1/2, aligned phases), and only just
    assert Fraction(1, 16) <= cert.bound <= Fraction(1, 16) * (1 + Fraction(1, 10**9))


def test_exact_ldl_rejects_an_indefinite_matrix():
    F = Fraction
    assert checker.ldl_psd([[F(2), F(1)], [F(1), F(1)]])[0]
    assert checker.ldl_psd([[F(1), F(1)], [F(1), F(1)]])[0]  # singular PSD
    assert not checker.ldl_psd([[F(1), F(2)], [F(2), F(1)]])[0]
    assert not checker.ldl_psd([[F(0), F(1)], [F(1), F(0)]])[0]


@pytest.mark.parametrize("p,k", [(7, 3), (7, 2), (9, 2), (199, 4)])
def test_upper_bound_is_above_gamma_star_exactly_and_within_1e9(p, k):
    ub = prove_upper_bound(p, k)
    g2 = _square(gamma_star_exact(p, k))
    assert ub.upper * ub.upper >= g2  # U >= gamma* (squares of non-negative numbers)
    assert ub.upper * ub.upper <= g2 * (1 + Fraction(1, 10**9)) ** 2
    assert [s.exactness for s in ub.steps if s.exactness == "argued"] == ["argued", "argued"]
    assert all(s.detail for s in ub.steps)


def test_even_p_interval_is_computed_and_the_real_block_dominates():
    ub = prove_upper_bound(4, 2)
    consts = checker.block_constants_squared(4, 2)
    assert [c["domain"] for c in consts] == ["complex", "real"]
    assert ub.upper * ub.upper >= consts[1]["constant_squared"] * ub.block_bound**2
    assert float(ub.upper) / gamma_star(4, 2) > 1.4  # the uniform dual is not tight for even p


def test_ceil_sqrt_is_an_upper_bound():
    for v in (Fraction(2), Fraction(1, 3), Fraction(10**-30).limit_denominator(10**40), Fraction(49, 4)):
        r = ceil_sqrt(v)
        assert r * r >= v and float(r) <= math.sqrt(float(v)) * (1 + 1e-15)


def test_memory_estimate_refuses_up_front():
    with pytest.raises(RefusedError, match="GiB"):
        block_sos.require_memory(8, 2**30)
    assert block_sos.estimate_memory(6) < 2**30


# -- certificate files, the checker, and what it rejects -----------------------------------------------------------


@pytest.fixture(scope="module")
def cert_doc():
    ub = prove_upper_bound(7, 3)
    doc = certificate_document(ub, "1/224", "proved", "exact margin of the construction", Fraction(1, 10**9))
    return json.loads(json.dumps(doc))


def test_valid_certificate_and_its_claim(cert_doc):
    out = checker.check_data(cert_doc)
    assert out.status == "valid", out.message
    assert Fraction(cert_doc["claim"]["upper"]) > Fraction(1, 224)  # strictly above the attained margin


def test_fake_upper_bound_is_rejected(cert_doc):
    """The lower bound returned as the upper one (or any value below c B) fails the exact comparison."""
    doc = json.loads(json.dumps(cert_doc))
    doc["claim"]["upper"] = doc["claim"]["lower"]
    out = checker.check_data(doc)
    assert out.status == "invalid" and "U >=" in out.message


def test_lowered_upper_bound_is_rejected(cert_doc):
    doc = json.loads(json.dumps(cert_doc))
    doc["claim"]["upper"] = str(Fraction(doc["claim"]["upper"]) * Fraction(999_999, 10**6))
    assert checker.check_data(doc).status == "invalid"


def test_changed_gram_entry_is_rejected(cert_doc):
    doc = json.loads(json.dumps(cert_doc))
    blk = max(doc["sos"]["blocks"], key=lambda b: len(b["gram"]))
    blk["gram"][0][0] = str(Fraction(blk["gram"][0][0]) + Fraction(1, 10**12))
    out = checker.check_data(doc)
    assert out.status == "invalid" and "identity" in out.message


def test_gram_change_keeping_the_identity_is_caught_by_ldl(cert_doc):
    """Moving mass between two Gram entries that produce the same monomial keeps the polynomial identity; only the
    exact PSD test can reject it."""
    from margintheory.certificate.rational_sos import _entry_index

    doc = json.loads(json.dumps(cert_doc))
    index = _entry_index(block_sos.relaxation_structure(3))
    def pairs():
        for entries in index.values():
            off = [e for e in entries if e[1] != e[2]]
            for a in off:
                for b in off:
                    if (a[0], frozenset(a[1:])) != (b[0], frozenset(b[1:])):
                        yield a, b

    e1, e2 = next(pairs())
    big = Fraction(10)
    for (b, r, s), sign in ((e1, 1), (e2, -1)):
        g = doc["sos"]["blocks"][b]["gram"]
        g[r][s] = g[s][r] = str(Fraction(g[r][s]) + sign * big)
    out = checker.check_data(doc)
    assert out.status == "invalid" and "semidefinite" in out.message, out.message


@pytest.mark.parametrize("mutate,fragment", [
    (lambda d: d.update(version=2), "version"),
    (lambda d: d["sos"].update(k=4), "(p, k)"),
    (lambda d: d["reduction"].update(p=11), "(p, k)"),
    (lambda d: d.pop("sos"), "missing"),
    (lambda d: d["claim"].update(upper="12.5"), "rational"),
])
def test_unreadable_certificates(cert_doc, mutate, fragment):
    doc = json.loads(json.dumps(cert_doc))
    mutate(doc)
    out = checker.check_data(doc)
    assert out.status == "unreadable" and fragment in out.message


def test_witness_network_bounds_the_claimed_lower_end(tmp_path):
    from margintheory.certificate.maxmin import rational_witness
    from margintheory.core.construction import build_construction

    ub = prove_upper_bound(5, 2)
    wdoc, L = rational_witness(build_construction(5, 2))
    doc = certificate_document(ub, L.text(), "proved", L.how, Fraction(1, 10**9))
    doc["lower_witness"] = wdoc
    doc = json.loads(json.dumps(doc))
    assert checker.check_data(doc).status == "valid"
    raised = json.loads(json.dumps(doc))  # a lower end above what the network attains (still below U)
    raised["claim"]["lower"] = str(Fraction(doc["claim"]["lower"]) * (1 + Fraction(1, 10**12)))
    out = checker.check_data(raised)
    assert out.status == "invalid" and "lower bound" in out.message
    broken = json.loads(json.dumps(doc))  # one weight changed: the exact margin drops below the claim
    broken["lower_witness"]["W"][0][0] = str(Fraction(broken["lower_witness"]["W"][0][0]) + Fraction(1, 1000))
    assert checker.check_data(broken).status == "invalid"


def test_constants_for_another_p_are_invalid(cert_doc):
    doc = json.loads(json.dumps(cert_doc))
    doc["reduction"]["blocks"][0]["constant_squared"] = str(Fraction(doc["reduction"]["blocks"][0]["constant_squared"])
                                                             * 2)
    assert checker.check_data(doc).status == "invalid"


def test_checker_imports_neither_numpy_nor_cvxpy(tmp_path, cert_doc):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cert_doc))
    src = Path(checker.__file__)
    code = textwrap.dedent(f"""
        import importlib.abc, importlib.util, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("numpy", "cvxpy", "scipy", "margintheory"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        spec = importlib.util.spec_from_file_location("standalone_checker", {str(src)!r})
        mod = importlib.util.module_from_spec(spec)
        sys.modules["standalone_checker"] = mod
        spec.loader.exec_module(mod)
        out = mod.check_file({str(path)!r})
        assert out.status == "valid", out.message
        assert not any(m.split(".")[0] in ("numpy", "cvxpy") for m in sys.modules)
        print("ok")
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


# -- the CLI: verify's interval, the certificate file, check's exit codes, refusals --------------------------------


def test_verify_writes_a_certificate_that_check_accepts(tmp_path):
    cert = tmp_path / "p5k2.json"
    res = _cli("verify", "--p", "5", "--k", "2", "--exact", "--json", "--certificate", str(cert))
    assert res.returncode == 0, res.stderr
    assert res.stderr.strip().splitlines()[-1] == f"wrote {cert}"  # says where it wrote, on stderr (stdout: JSON)
    out = json.loads(res.stdout)
    validate_result(out)  # the certificate object is the schema's optional top-level "certificate"
    c = out["certificate"]
    assert c["lower_exactness"] == "proved" and c["upper_exactness"] == "proved"
    assert 0 <= c["relative_gap"] <= GAP_TOL
    assert c["lower"] <= gamma_star(5, 2) * (1 + 1e-15) and gamma_star(5, 2) <= c["upper"]
    written = json.loads(cert.read_text())
    assert "lower_witness" in written and "/" in written["claim"]["lower"]  # a rational network, re-checked
    assert Fraction(written["claim"]["lower"]) ** 2 <= _square(gamma_star_exact(5, 2))
    ok = _cli("check", str(cert), "--json")
    assert ok.returncode == 0, ok.stderr
    checked = validate_result(json.loads(ok.stdout))
    steps = checked["checks"]
    assert checked["seconds"] > 0  # the wall time, as for every command (it was null)
    assert any(s["name"].startswith("lower bound: exact margin") and s["exactness"] == "proved" for s in steps)
    again = _cli("verify", "--p", "5", "--k", "2", "--certificate", str(cert))
    assert again.returncode == 2 and "already exists" in again.stderr and len(again.stderr.strip().splitlines()) == 1
    # tampered: exit 1 naming the step; truncated: exit 2, one line, no traceback
    doc = json.loads(cert.read_text())
    doc["claim"]["upper"] = doc["claim"]["lower"].removeprefix("sqrt(").removesuffix(")")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    res = _cli("check", str(bad))
    assert res.returncode == 1 and "U >=" in res.stdout + res.stderr
    trunc = tmp_path / "trunc.json"
    trunc.write_text(cert.read_text()[: 2000])
    res = _cli("check", str(trunc))
    assert res.returncode == 2 and "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_verify_interval_rows_and_no_certificate():
    res = _cli("verify", "--p", "7", "--k", "2", "--json")
    out = json.loads(res.stdout)
    names = [c["name"] for c in out["checks"]]
    row = next(c for c in out["checks"] if c["name"] == "network margin = optimum")
    assert row["passed"] and row["measured"] <= GAP_TOL
    assert any(c["exactness"] == "argued" and c["detail"] for c in out["checks"])
    assert any("gamma* <= U" in n for n in names)
    res = _cli("verify", "--p", "7", "--k", "2", "--json", "--no-certificate")
    out = json.loads(res.stdout)
    assert "certificate" not in out and not any("optimum" in c["name"] for c in out["checks"])


def test_solve_single_neuron_k4_uses_the_exact_path():
    res = _cli("solve", "--p", "5", "--k", "4", "--single-neuron", "--json")
    assert res.returncode == 0, res.stderr
    out = validate_result(json.loads(res.stdout))
    fields = out["details"]
    assert fields["method"] == "fourier-exact"
    assert fields["relative_gap"] <= GAP_TOL


def test_solvers_refuse_beyond_the_memory_budget():
    res = _cli("solve", "--p", "5", "--k", "8", "--single-neuron", "--max-memory", "1G")
    assert res.returncode == 2 and "GiB" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = _cli("verify", "--p", "3", "--k", "9", "--max-memory", "1G", "--method", "sos")
    assert res.returncode == 2 and "GiB" in res.stderr and len(res.stderr.strip().splitlines()) == 1



# -- second audit: the solver's bound in the verdict, what the checker names, and what check refuses --------------


def _clear_upper_bound_caches():
    from margintheory.certificate import upper_bound

    upper_bound._block_certificate.cache_clear()
    upper_bound._prove_upper_bound.cache_clear()


def test_verify_upper_end_is_the_solvers_bound_not_the_lower_nor_the_closed_form(monkeypatch):
    """U in the verdict is c_b B from this run's SOS certificate: strictly above gamma* and L, equal to the exact
    rational it prints, one solve for all (p-1)/2 frequencies, and it moves when the certificate moves (a closed
    form, or the lower end, substituted for it would not)."""
    from margintheory import ModularAddition, verify
    from margintheory.certificate import rational_sos
    from margintheory.certificate.upper_bound import ceil_float

    calls = []
    real_solve = block_sos.solve_block_sos
    monkeypatch.setattr(block_sos, "solve_block_sos", lambda *a, **kw: calls.append(a) or real_solve(*a, **kw))
    _clear_upper_bound_caches()
    try:
        res = verify(ModularAddition(7, 2), upper_method="sos")
        assert len(calls) == 1  # three frequencies, one solve
        c = res.certificate
        U = Fraction(c["upper_exact"])
        g2 = _square(gamma_star_exact(7, 2))
        assert g2 < U * U <= g2 * (1 + Fraction(1, 10**9)) ** 2
        assert c["upper"] == ceil_float(U) and c["upper"] > c["lower"] and c["relative_gap"] > 0
        assert abs(c["relative_gap"] - (c["upper"] - c["lower"]) / c["lower"]) <= 1e-15
        B = Fraction(c["block_bound"])
        c2 = checker.block_constants_squared(7, 2)[0]["constant_squared"]
        assert c2 * B * B <= U * U <= c2 * B * B * (1 + Fraction(1, 2**50))
        row = next(r for r in res.checks if r.name.startswith("max margin <= U"))
        assert row.measured == c["upper"] and row.passed
        # a looser certificate (a larger shift before rounding) must give a larger U, and the verdict must see it
        monkeypatch.setattr(rational_sos, "FIRST_DELTA", Fraction(1, 2**16))
        _clear_upper_bound_caches()
        looser = verify(ModularAddition(7, 2), upper_method="sos")
        U2 = Fraction(looser.certificate["upper_exact"])
        assert U2 > U and float(U2) / math.sqrt(float(g2)) - 1 > 1e-6
        gap_row = next(r for r in looser.checks if r.name == "network margin = optimum")
        assert not gap_row.passed and looser.verdict != "verified"
    finally:
        _clear_upper_bound_caches()


def test_verify_upper_end_by_am_gm_is_gamma_star_exactly_without_a_solve(monkeypatch):
    """The default upper end: the AM-GM certificate's exact max g_k, so U = gamma* (squares equal) with gap 0, and
    no SOS solve runs; the certificate object carries U as sqrt(a/b) where it is irrational."""
    from margintheory import ModularAddition, verify

    calls = []
    monkeypatch.setattr(block_sos, "solve_block_sos", lambda *a, **kw: calls.append(a))
    _clear_upper_bound_caches()
    try:
        for p, k in ((7, 2), (7, 3)):
            res = verify(ModularAddition(p, k), exact=True)
            c = res.certificate
            g2 = _square(gamma_star_exact(p, k))
            text = c["upper_algebraic"]
            U2 = Fraction(text[5:-1]) if text.startswith("sqrt(") else Fraction(text) ** 2
            assert U2 == g2 and c["relative_gap"] == 0 and c["upper_method"] == "am-gm", (p, k, c)
            assert (c["upper_exact"] is None) == (k == 2)  # sqrt(2/27)/(sqrt 7 * 6) is irrational, 1/224 is not
            assert res.verdict == "verified" and "U = gamma* exactly" in next(
                r for r in res.checks if r.name.startswith("max margin <= U")).detail
        assert calls == []
    finally:
        _clear_upper_bound_caches()


def test_reduction_rows_say_which_proof_of_lemma_c14_ran():
    from margintheory.certificate.maxmin import reduction_checks

    small, large = reduction_checks(prove_upper_bound(7, 3)), reduction_checks(prove_upper_bound(23, 3))
    # without the exact expansion at (p, k), the row rests on the all-p proof's argued bookkeeping (its own row)
    argued, large = large[0], large[1:]
    assert (argued.name, argued.exactness, large[0].premises) == (
        "U: C.14 terms that cancel", "argued", ["U: C.14 terms that cancel"])
    assert small[0].premises == [] and all(c.exactness != "argued" for c in small)
    assert small[0].passed and "expanded exactly in Q(omega_7)" in small[0].detail and "not run" not in small[0].detail
    assert large[0].passed and "not run" in large[0].detail and "proved for all p (sympy" in large[0].detail
    assert "Galois" in large[1].statement and large[1].expected == "11 frequencies"
    assert large[1].measured.startswith("1 ")


def test_checker_names_the_steps_it_does_not_reprove_whatever_the_file_says(cert_doc):
    doc = json.loads(json.dumps(cert_doc))
    doc["reduction"]["steps"] = []  # a file that lists no argued step must not make the chain look fully proved
    out = checker.check_data(doc)
    assert out.status == "valid", out.message
    argued = [s.name for s in out.steps if s.exactness == "argued"]
    for fragment in ("weak duality", "Lemma C.14", "homogeneity"):
        assert sum(fragment in n for n in argued) == 1, (fragment, argued)
    assert all(s.detail for s in out.steps if s.exactness == "argued")


def test_check_command_loads_neither_numpy_nor_cvxpy(tmp_path, cert_doc):
    """The process of 'margintheory check' (CLI entry point, --json output included), not only the checker module."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cert_doc))
    code = textwrap.dedent(f"""
        import sys
        from margintheory.cli import main
        rc = main(["check", {str(path)!r}, "--json"])
        heavy = sorted({{m.split(".")[0] for m in sys.modules}} & {{"numpy", "cvxpy", "scipy", "clarabel"}})
        print("RESULT", rc, heavy, file=sys.stderr)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "RESULT 0 []" in res.stderr, res.stderr
    assert json.loads(res.stdout)["verdict"] == "verified"


def test_check_bad_files_one_line_exit_2(tmp_path, cert_doc):
    import os

    good = tmp_path / "good.json"
    good.write_text(json.dumps(cert_doc))
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as fh:  # sparse: no disk used
        fh.truncate(checker.MAX_BYTES + 1)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    garbled = tmp_path / "garbled.json"
    garbled.write_bytes(b"\x00\xff{garbage")
    trunc = tmp_path / "trunc.json"
    trunc.write_text(json.dumps(cert_doc)[:1000])
    cases = [huge, fifo, tmp_path, garbled, trunc, tmp_path / "missing.json"]
    if os.path.exists("/dev/zero"):
        cases.append(Path("/dev/zero"))
    code = textwrap.dedent(f"""
        import subprocess, sys
        for f in {[str(c) for c in cases]!r}:
            r = subprocess.run([sys.executable, "-m", "margintheory.cli", "check", f], capture_output=True, text=True,
                               timeout=60)
            print(repr((f, r.returncode, r.stderr)))
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    rows = [eval(line) for line in res.stdout.splitlines()]  # noqa: S307 - our own repr output
    assert len(rows) == len(cases), res.stderr
    for f, rc, err in rows:
        assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (f, rc, err)
    # a valid certificate for another (p, k) than the one required: exit 1, named
    other = _cli("check", str(good), "--p", "5", "--k", "3")
    assert other.returncode == 1 and "for (p, k) = (7, 3), not the requested (5, 3)" in other.stdout
    assert "note: valid" not in other.stdout and other.stdout.rstrip().endswith("verdict: refuted")
    assert _cli("check", str(good), "--p", "7", "--k", "3").returncode == 0


def test_even_p_verdict_has_the_interval_and_no_closed_form():
    from margintheory import ModularAddition, verify

    res = verify(ModularAddition(4, 2))
    c = res.certificate
    assert c is not None and c["upper_exactness"] == "proved" and c["lower"] < c["upper"]
    names = [r.name for r in res.checks]
    assert not any("gamma* <= U" in n for n in names)  # the closed form is not applied to even p
    row = next(r for r in res.checks if r.name.startswith("max margin <= U"))
    # the true max margin's upper end: the optimal translation-invariant dual t(d), not the uniform one
    assert row.expected == "holds" and "t(d) = " in row.detail and row.passed and not row.informational
    assert c["relative_gap"] <= 1e-6 and c["upper"] < prove_upper_bound(4, 2).upper_float
    assert "Lemma C.14: cross-frequency terms vanish" in " ".join(r.statement for r in res.checks)


def test_gap_row_allows_the_float_error_bound_of_L_and_no_more():
    """At k = 6, 7 the a-priori float64 error bound of the construction's margin (1.6e-9, 3e-8 relative at p = 3) is
    above 1e-9: the row must not refute a correct network for it, and must still fail a gap beyond it."""
    from margintheory.certificate.maxmin import LowerBound, maxmin_checks
    from margintheory.certificate.upper_bound import floor_float

    ub = prove_upper_bound(7, 3)
    g = 1 / 224
    err = 3e-8 * g

    def row(measured: float):
        L = LowerBound(floor_float(Fraction(measured) - Fraction(err)), None, "float", "test", err)
        return next(r for r in maxmin_checks(ub, L, gamma_star_exact(7, 3), True, None)
                    if r.name == "network margin = optimum")

    ok = row(g)
    assert ok.passed and "error bound of L" in ok.statement
    assert GAP_TOL + 3e-8 * 0.99 <= ok.tolerance <= GAP_TOL + 3.1e-8
    assert not row(g * (1 - 2e-9)).passed  # a margin 2e-9 below gamma* is not explained by the error bound


def test_no_certificate_file_for_a_network_whose_margin_is_not_positive(tmp_path, capsys):
    """A network with negative margin (the construction with W negated) has an interval [L, U] with L < 0: no file
    is written (check would refuse its lower end as unreadable), stderr and the notes say why, the verdict stands."""
    import json

    from margintheory.cli import main
    from margintheory.core.construction import build_construction
    from margintheory.core.network import PolyNetwork

    net = build_construction(5, 2)
    PolyNetwork(net.U, -net.W).save(tmp_path / "neg.npz")
    cert = tmp_path / "neg.json"
    assert main(["verify", "--network", str(tmp_path / "neg.npz"), "--certificate", str(cert), "--json"]) == 1
    out, err = capsys.readouterr()
    assert not cert.exists() and f"{cert} not written" in err and "is not positive" in err
    assert any("not written" in note for note in json.loads(out)["notes"])
