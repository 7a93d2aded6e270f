"""``(n, k)`` sparse parity (Morwani et al. Thm 7.8, proof App. D.7).

Inputs: all ``2^n`` points ``x in {+1,-1}^n`` (row ``r``: bit ``j`` of ``r`` set <=> ``x_j = -1``, ``x_0`` the
least significant bit); label ``y = prod_{j in S} x_j``, ``|S| = k``.  Network ``f(x) = sum_i (u_i . x)^k
w_i`` with ``u_i in R^n``, ``w_i in R^2``; ``w_i[0]`` is the logit of class ``y = +1``, ``w_i[1]`` of ``y =
-1``. Norm ``||theta||_{2,k+1} = (sum_i ||(u_i, w_i)||^(k+1))^(1/(k+1))``.

Claims checked: ``gamma* = k! sqrt(2 (k+1)^-(k+1))`` for ``m >= 2^(k-1)``; the ``2^(k-1)``-neuron construction
``u = sigma/sqrt(k+1)`` on ``S`` (``sigma_1 = +1``), ``w = prod(sigma) b / sqrt(2(k+1))``, ``b = (1, -1)``,
whose function is ``k! (k+1)^-(k+1)/2 prod x_S b / sqrt 2`` after normalization; the characterization of every
max-margin neuron (support ``S``, ``|u[j]| = ||w||``, ``w`` along ``b``, ``prod u_S (w . b) >= 0``); and the max
margin as ``[L, U]``: ``U`` computed for ``(n, k)`` with its proof (:mod:`margintheory.tasks.parity.maxmin`), ``L``
the checked network's margin (exact for the construction).  Margins are evaluated on the ``2^J`` patterns of the
``J`` coordinates that the network or the label reads (:func:`reduced_network`), which carry every distinct input.

Network file (``.npz``): ``U`` float ``(m, n)``, ``W`` float ``(m, 2)`` (column 0 = class +1), optional ``S``
int ``(k,)`` (0-based support; default ``0..k-1``); ``k`` is the activation degree and ``|S|``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from margintheory.certificate.interval import TaskUpperBound, attach_interval, upper_at_most_check
from margintheory.core.checks import Check, MarginMeasurement, VerificationResult, bool_check, close_check
from margintheory.core.problems import SparseParity
from margintheory.core.theory import gamma_star_parity, validate_nk
from margintheory.engines.margins import power_sum_error_bound
from margintheory.errors import InputError, NetworkFormatError
from margintheory.runtime import progress
from margintheory.runtime.budget import Estimate, require
from margintheory.tasks.parity.maxmin import (
    MAX_EXACT_CONSTRUCTION_K,
    construction_margin_squared,
    gamma_below_upper_check,
    parity_upper_bound,
)

EPS = float(np.finfo(np.float64).eps)
CHAR_TOL = 1e-9
B = np.array([1.0, -1.0])


@dataclass(frozen=True)
class ParityNetwork:
    """``U`` (m x n), ``W`` (m x 2), support ``S`` (k indices); activation degree ``k = len(S)``."""

    U: np.ndarray
    W: np.ndarray
    S: np.ndarray

    def __post_init__(self) -> None:
        U, W = np.asarray(self.U, dtype=np.float64), np.asarray(self.W, dtype=np.float64)
        S = np.asarray(self.S)
        if U.ndim != 2 or W.ndim != 2 or W.shape != (U.shape[0], 2) or U.shape[0] < 1:
            raise NetworkFormatError(f"parity network needs U (m, n) and W (m, 2); got {U.shape}, {W.shape}")
        if not (np.all(np.isfinite(U)) and np.all(np.isfinite(W))):
            raise NetworkFormatError("parity network contains non-finite weights")
        n = U.shape[1]
        if (
            S.ndim != 1
            or S.dtype.kind not in "iu"
            or len(S) < 1
            or len(set(S.tolist())) != len(S)
            or S.min() < 0
            or S.max() >= n
        ):
            raise NetworkFormatError(f"S must be k >= 1 distinct indices in 0..{n - 1}; got {S.tolist()}")
        object.__setattr__(self, "U", U)
        object.__setattr__(self, "W", W)
        object.__setattr__(self, "S", S.astype(np.int64))

    @property
    def m(self) -> int:
        return int(self.U.shape[0])

    @property
    def n(self) -> int:
        return int(self.U.shape[1])

    @property
    def k(self) -> int:
        return int(len(self.S))

    def neuron_norms(self) -> np.ndarray:
        return np.sqrt((self.U**2).sum(1) + (self.W**2).sum(1))

    def norm(self) -> float:
        """``||theta||_{2,k+1}``."""
        return float(np.sum(self.neuron_norms() ** (self.k + 1)) ** (1.0 / (self.k + 1)))

    def normalized(self) -> ParityNetwork:
        s = self.norm()
        if s == 0:
            raise NetworkFormatError("the zero network cannot be normalized")
        return ParityNetwork(self.U / s, self.W / s, self.S)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write ``U``, ``W``, ``S`` atomically as ``.npz`` or ``.safetensors`` (by suffix)."""
        from margintheory.network_io import write_arrays

        write_arrays(path, {"U": self.U, "W": self.W, "S": self.S})

    @classmethod
    def load(cls, path: str | os.PathLike[str], k: int | None = None,
             max_memory: int | None = None) -> ParityNetwork:
        """Read the documented layout (``.npz``, ``.safetensors`` or a PyTorch dict of ``U``, ``W``, ``S``) through
        :mod:`margintheory.network_io` (headers first, regular files only); without ``S`` the support is ``0..k-1``."""
        from margintheory.network_io import DEFAULT_MAX_MEMORY, read_arrays

        arrays = read_arrays(path, ("U", "W"), ("S",), max_memory=max_memory or DEFAULT_MAX_MEMORY)
        U, W, S = arrays["U"], arrays["W"], arrays.get("S")
        if S is None:
            if k is None:
                raise InputError(f"{path} has no support array 'S': the support size k must be given")
            S = np.arange(k)
        try:
            net = cls(U, W, S)
        except NetworkFormatError as exc:
            raise NetworkFormatError(f"{path}: {exc}") from None
        if k is not None and net.k != k:
            raise InputError(f"{path}: |S| = {net.k} but k = {k} was given")
        return net


def parity_inputs(n: int) -> np.ndarray:
    """All ``2^n`` points of ``{+1,-1}^n`` (module docstring order)."""
    r = np.arange(2**n)[:, None]
    return 1.0 - 2.0 * ((r >> np.arange(n)[None, :]) & 1)


def parity_labels(X: np.ndarray, S: np.ndarray) -> np.ndarray:
    """``prod_{j in S} x_j`` in ``{+1, -1}``."""
    return np.prod(X[:, S], axis=1)


def parity_logits(net: ParityNetwork, X: np.ndarray, chunk_elements: int = 2**23) -> np.ndarray:
    """``sum_i (u_i . x)^k w_i`` for every row of ``X``: shape ``(N, 2)`` (rows streamed in chunks of about
    ``chunk_elements`` activations, so memory stays ``O(chunk + N)``)."""
    step = max(1, chunk_elements // net.m)
    out = np.empty((X.shape[0], 2))
    for r0 in range(0, X.shape[0], step):
        out[r0 : r0 + step] = ((X[r0 : r0 + step] @ net.U.T) ** net.k) @ net.W
        progress.report(f"parity logits on {X.shape[0]} points", min(r0 + step, X.shape[0]), X.shape[0])
    return out


def logit_error_bound(net: ParityNetwork) -> float:
    """:func:`~margintheory.engines.margins.power_sum_error_bound` of a parity network (``n`` terms inside each power):
    ``(n + k + m + 2) eps sum_i ||u_i||_1^k max|w_i|``."""
    return power_sum_error_bound(net.n, net.k, np.abs(net.U).sum(1), np.abs(net.W).max(1))


def relevant_coordinates(net: ParityNetwork) -> np.ndarray:
    """The coordinates the network or the label read: ``S`` and every ``j`` with a non-zero weight ``U[i, j]``
    (sorted).  Logits and labels depend on ``x`` through these only (a zero weight contributes exactly 0)."""
    used = np.flatnonzero(np.any(net.U != 0, axis=0))
    return np.union1d(net.S, used).astype(np.int64)


def reduced_network(net: ParityNetwork) -> tuple[ParityNetwork, int]:
    """``(net on its relevant coordinates J, 2^(n - |J|))``: the ``2^|J|`` patterns of ``x_J`` carry every distinct
    (logits, label) pair of the ``2^n`` inputs, each pattern standing for ``2^(n - |J|)`` inputs, so the least, the
    mean and the fraction of margins on the patterns equal those on all inputs."""
    J = relevant_coordinates(net)
    position = {int(j): i for i, j in enumerate(J)}
    S = np.array([position[int(j)] for j in net.S], dtype=np.int64)
    return ParityNetwork(net.U[:, J], net.W, S), 2 ** (net.n - len(J))


def margins(net: ParityNetwork) -> np.ndarray:
    """``g(x) = f[y] - f[-y]`` on the ``2^|J|`` patterns of the relevant coordinates (:func:`reduced_network`; all
    ``2^n`` inputs when every coordinate is used).  Binary task: the class-weighted margin equals ``g``."""
    red, _ = reduced_network(net)
    X = parity_inputs(red.n)
    L = parity_logits(red, X)
    y = parity_labels(X, red.S)
    return np.where(y > 0, L[:, 0] - L[:, 1], L[:, 1] - L[:, 0])


def build_parity_construction(
    n: int | SparseParity, k: int | None = None, S: np.ndarray | None = None, normalize: bool = True
) -> ParityNetwork:
    """The ``2^(k-1)`` unit neurons of D.7 (``sigma in {+-1}^k``, ``sigma_1 = +1``), scaled to unit norm, for the
    problem ``n`` (a :class:`~margintheory.core.problems.SparseParity`, validated when it was made) or ``(n, k)``."""
    n, k = (n.n, n.k) if isinstance(n, SparseParity) else validate_nk(n, k)
    S = np.arange(k) if S is None else np.asarray(S)
    sig = np.array([[1] + [1 - 2 * ((t >> j) & 1) for j in range(k - 1)] for t in range(2 ** (k - 1))], float)
    U = np.zeros((len(sig), n))
    U[:, S] = sig / math.sqrt(k + 1)
    W = np.prod(sig, axis=1)[:, None] * B[None, :] / math.sqrt(2.0 * (k + 1))
    net = ParityNetwork(U, W, S)
    return net.normalized() if normalize else net


def characterization(net: ParityNetwork, tol: float = CHAR_TOL) -> dict[str, np.ndarray]:
    """Per active neuron the four properties of Thm 7.8 (relative to the neuron norm ``r_i``)."""
    r = net.neuron_norms()
    active = r > tol * r.max()
    off = np.setdiff1d(np.arange(net.n), net.S)
    uS = net.U[:, net.S]
    wn = np.linalg.norm(net.W, axis=1)
    rr = np.where(active, r, 1.0)
    return {
        "active": active,
        "support": ((np.abs(net.U[:, off]).max(1) if len(off) else np.zeros(net.m)) <= tol * rr)
        & (np.abs(uS).min(1) > tol * rr),
        "w_along_b": np.abs(net.W.sum(1)) / math.sqrt(2) <= tol * rr,
        "equal_magnitudes": np.abs(np.abs(uS) - wn[:, None]).max(1) <= tol * rr,
        "sign": np.prod(uS, axis=1) * (net.W @ B) >= -tol * rr ** (net.k + 1),
    }


def characterization_checks(net: ParityNetwork, tol: float = CHAR_TOL) -> list[Check]:
    ch = characterization(net, tol)
    act = ch["active"]
    names = {
        "support": ("support S", "spt(u_i) = S"),
        "w_along_b": ("w along b", "w_i in span(1, -1)"),
        "equal_magnitudes": ("equal magnitudes", "|u_i(j)| = ||w_i|| for j in S"),
        "sign": ("sign", "prod_S u_i(j) (w_i . b) >= 0"),
    }
    out = []
    for key, (short, label) in names.items():
        ok = ch[key] & act
        out.append(
            Check(name=f"neurons: {short}", expected=int(act.sum()), measured=int(ok.sum()), tolerance=tol,
                  passed=bool(ok.sum() == act.sum()), exactness="float",
                  detail="count of active neurons with the property (tolerance relative to the neuron norm)",
                  statement=f"every active neuron: {label} (Thm 7.8)")
        )
    return out


def parity_margin_checks(net: ParityNetwork, gamma: float, ub: TaskUpperBound,
                         rtol: float | None = None) -> tuple[list[Check], dict]:
    """Normalized margin vs the computed ``U`` (weak duality: no network exceeds it) and vs the closed form
    ``gamma*`` (Thm 7.8, a third, independent column), every input on the margin (uniform ``q*``); on the relevant
    coordinates (:func:`reduced_network`)."""
    red, _ = reduced_network(net.normalized())
    g = margins(red)
    h = float(g.min())
    err = 2 * logit_error_bound(red) + 4 * (red.m + red.n) * EPS * abs(h)
    tol = max(err, (rtol or 0.0) * gamma)
    checks = [upper_at_most_check(h, err, ub, "normalized margin <= U, the computed upper bound on every network "
                                              "(weak duality, Lemma 7.6)"),
              close_check("margin = gamma* (Thm 7.8)", gamma, h, tol / gamma,
                          statement="normalized margin = k! sqrt(2 (k+1)^-(k+1)) (Thm 7.8)")]
    on = g <= h + tol
    checks += [
        Check(name="every input on margin", expected=1.0, measured=float(on.mean()), tolerance=tol / gamma,
              passed=bool(on.all()), exactness="float",
              detail=f"fraction of points within {tol / gamma:.2g} gamma* of the least margin; "
                     f"{int((~on).sum())} of {len(g)} patterns of the {red.n} relevant coordinates off",
              statement="every input on the margin (uniform q*)"),
        close_check(
            "mean margin = gamma* (7.5)", gamma, float(g.mean()), tol / gamma,
            statement="mean margin E_q*(g) = gamma* (Lemma 7.5, uniform q*)"
        ),
    ]
    fields = {"normalized_margin": h, "relative_error": abs(h - gamma) / gamma, "margin_tolerance": tol,
              "relevant_coordinates": int(red.n), "margin_error_bound": err}
    return checks, fields


#: measured cost of one activation ``(u_i . x)^k`` (matrix product, float power, output product), with margin
PARITY_SECONDS_PER_ACTIVATION = 2.0e-7


def estimate_parity_check(n: int, k: int, m: int, relevant: int | None = None,
                          construction: bool = False) -> Estimate:
    """Memory and time of :func:`verify_parity` for width ``m``: the ``2^J`` patterns of the ``J = relevant``
    coordinates (default ``n``; :func:`reduced_network`) as floats (and their integer bits while they are formed),
    the streamed activations, the per-pattern logits and margins; for the construction also the exact integer
    margin of :func:`~margintheory.tasks.parity.maxmin.construction_margin_squared` (``2^(2k-1)`` products)."""
    J = n if relevant is None else relevant
    N = 2**J
    need = 3 * 8 * N * J + 2 * 8 * min(2**23, N * m) + 64 * N + 32 * m * n  # chunks of <= 2^23 activations
    seconds = PARITY_SECONDS_PER_ACTIVATION * N * m
    if construction and k <= MAX_EXACT_CONSTRUCTION_K:
        need = max(need, 3 * 8 * 2**20 + 16 * 2**k * k)
        seconds += PARITY_SECONDS_PER_ACTIVATION * 2 ** (2 * k - 1)
    return Estimate(f"the sparse-parity check of width {m} on 2^{J} patterns of {J} relevant coordinates", need,
                    seconds)


def parity_margin_measurement(construction: bool, k: int, fields: dict) -> MarginMeasurement:
    """The typed margin that ``L`` is read from: the construction's exact margin (integers, all ``2^k`` patterns of
    ``x_S``) for ``k <= MAX_EXACT_CONSTRUCTION_K``, else the float64 margin with its a-priori error bound."""
    if construction and k <= MAX_EXACT_CONSTRUCTION_K:
        import sympy as sp

        L2, patterns, all_on = construction_margin_squared(k)
        exact = sp.sqrt(sp.Rational(abs(L2.numerator), L2.denominator)) * (1 if L2 >= 0 else -1)
        value = float(sp.N(exact, 30))
        how = (f"exact: the construction of D.7 (u = sigma/sqrt(k+1) on S, w = prod(sigma) b/sqrt(2(k+1))) has margin "
               f"sqrt(2) (k+1)^-(k+1)/2 y(x) sum_sigma prod(sigma) (sigma . x_S)^k at x, an integer sum evaluated on "
               f"all {patterns} patterns of x_S (the weights vanish off S); L^2 = {L2}; every pattern on the margin: "
               f"{all_on}")
        return MarginMeasurement(value=value, error_bound=2 * math.ulp(value), exactness="proved",
                                 method="exhaustive", how=how, exact=str(exact))
    return MarginMeasurement(
        value=float(fields["normalized_margin"]), error_bound=float(fields["margin_error_bound"]), exactness="float",
        method="exhaustive", how=f"float64 on all 2^{fields['relevant_coordinates']} patterns of the relevant "
                                 "coordinates (every distinct input), minus the a-priori error bound")


def _parity_result(net: ParityNetwork, construction: bool, gamma: float) -> VerificationResult:
    n, k = net.n, net.k
    title = f"sparse parity (n={n}, k={k}) " + ("construction of D.7" if construction else f"network (m={net.m})")
    res = VerificationResult(title, task="parity", parameters={"n": n, "k": k},
                             fields={"n": n, "k": k, "S": net.S.tolist(), "width": net.m, "gamma_star": gamma,
                                     "theorem_width": 2 ** (k - 1)})
    res.add(bool_check("width >= 2^(k-1)", net.m >= 2 ** (k - 1), exactness="proved", detail=f"m = {net.m}",
                       informational=not construction, statement="width m >= 2^(k-1) (Thm 7.8 hypothesis)"))
    if not construction and net.m < 2 ** (k - 1):  # Thm 7.8 speaks of width >= 2^(k-1): nothing to refute below
        res.applicable = False
        res.notes.append(f"width {net.m} < 2^(k-1) = {2 ** (k - 1)}: Theorem 7.8's hypothesis fails, so its max "
                         "margin is not a claim about this network (verdict not-applicable); the margin is reported")
    return res


def verify_parity(net: ParityNetwork, *, construction: bool, rtol: float | None = None,
                  max_memory: int | None = None, max_seconds: float | None = None) -> VerificationResult:
    """All checks of the module docstring on ``net`` (the construction if ``construction``), and the max margin as
    ``[L, U]`` (:mod:`margintheory.tasks.parity.maxmin`); work whose estimate exceeds ``max_memory`` bytes or
    ``max_seconds`` is refused before it starts."""
    n, k = net.n, net.k
    require(estimate_parity_check(n, k, net.m, len(relevant_coordinates(net)), construction), max_memory,
            max_seconds)
    gamma = gamma_star_parity(k)
    ub = parity_upper_bound(n, k)
    res = _parity_result(net, construction, gamma)
    checks, fields = parity_margin_checks(net, gamma, ub, rtol)
    res.checks += checks
    res.fields.update(fields)
    res.set_margin(parity_margin_measurement(construction, k, fields))
    res.checks += characterization_checks(net.normalized())
    if construction:
        res.checks += construction_function_checks(net)
    attach_interval(res, ub, gamma=gamma, gamma_below_upper=gamma_below_upper_check(k, ub),
                    applicable=res.applicable, rtol=rtol)
    return res


def construction_function_checks(net: ParityNetwork) -> list[Check]:
    """D.7's network function on every pattern of the relevant coordinates, and its width ``2^(k-1)``."""
    k = net.k
    red, _ = reduced_network(net.normalized())
    X = parity_inputs(red.n)
    c = math.factorial(k) * (k + 1) ** (-(k + 1) / 2) / math.sqrt(2)
    target = c * parity_labels(X, red.S)[:, None] * B[None, :]
    dev = float(np.abs(parity_logits(red, X) - target).max())
    tol = 2 * logit_error_bound(red) + 16 * EPS * c
    return [
        Check(name="network function (D.7)", expected=0.0, measured=dev, tolerance=tol, passed=dev <= tol,
              exactness="float", detail=f"max |logit - stated value| over all {len(X)} patterns of the relevant "
              "coordinates (every distinct input) and both classes",
              statement="network function = k! (k+1)^-(k+1)/2 prod x_S b / sqrt 2 (D.7)"),
        Check(name="width = 2^(k-1)", expected=2 ** (k - 1), measured=net.m, tolerance=None,
              passed=net.m == 2 ** (k - 1), exactness="proved", statement="construction width = 2^(k-1)"),
    ]
