"""Up-front estimates of the memory and run time of the solvers, from ``(p, k)`` alone (nothing is allocated).

The sizes follow the code paths: the pricing objective holds a few ``(p^k, p)`` arrays; the block split
(:func:`margintheory.solvers.symmetry.split_by_frequency`) expands ``F`` in ``N = (k+1) p`` variables into
``E = C(N+k-1, k) N`` monomials with ``N`` exponents each; a SOS relaxation of a form of degree ``d = k+1`` in ``n``
variables has a Gram matrix of side ``s`` (monomials of degree ``d/2``, or up to ``ceil(d/2)`` for odd ``d``), and an
interior-point solver (Clarabel) factors a dense block of side ``t = s (s+1) / 2`` (about ``56 t^2`` bytes with its
factor and indices, measured; :data:`CLARABEL_BYTES_PER_T2`); column generation ends with a network of at most
``(initial + added) p^k`` neurons whose margin is computed densely (at most ``2^25`` pair entries) or streamed.
"""

from __future__ import annotations

import math

from margintheory.runtime.budget import FLOPS_PER_SECOND, Estimate, grid_points

#: above this many float64 entries (neurons x inputs x classes) column generation's margin is streamed by the
#: exhaustive engine (:mod:`margintheory.solvers.column_generation`; here so that the estimates need not import it)
DENSE_MARGIN_ENTRIES = 2**25
#: the single-neuron bracket's lower bound is also evaluated by the direct sum over the p^k inputs up to this many
#: inputs (:mod:`margintheory.solvers.single_neuron`)
DIRECT_LIMIT = 2_000_000

#: bound on the orbits column generation can hold (initial columns + add_per_round * max_rounds of its defaults)
MAX_ORBITS = 4 + 4 * 60
#: Clarabel on a SOS relaxation with a Gram matrix of side ``s``: bytes per ``t^2``, ``t = s (s+1) / 2`` (the dense
#: PSD-cone block of its KKT system, its factor and their sparse indices).  Measured growth of the peak resident size
#: above the warm interpreter (``ru_maxrss``, ``solve --single-neuron --weights`` on random weights, the generic
#: relaxation): 122 MiB at ``s = 55`` ``(3, 2)``, 481 MiB at ``s = 78`` ``(3, 3)``, 883 MiB at ``s = 91`` ``(4, 2)``,
#: 4332 MiB at ``s = 136`` ``(5, 2)`` -- 52 to 54 bytes per ``t^2`` (the former ``16 t^2`` was 3.3x low)
CLARABEL_BYTES_PER_T2 = 56
#: cvxpy's canonicalisation of the Gram variable and its coefficient-matching rows (and SCS's workspace), bytes per
#: ``s^2``: measured 1650 to 1860 (SCS, the same four sizes: 5, 10, 13, 29 MiB)
CVXPY_BYTES_PER_S2 = 2000
#: Clarabel's run time, in flops at :data:`~margintheory.runtime.budget.FLOPS_PER_SECOND`: ``2 t^3 + 8000 t^2``
#: (measured 1.2, 5.2, 11.9 and 100 s for the four sizes above on one core; the former ``10 t^3`` gave 404 s at
#: ``(5, 2)``)
CLARABEL_FLOPS_PER_T3, CLARABEL_FLOPS_PER_T2 = 2.0, 8000.0
#: SCS's run time in flops: ``1500 s^3 + 8e5 s^2`` (measured 0.12 to 0.6 s, dominated by the canonicalisation)
SCS_FLOPS_PER_S3, SCS_FLOPS_PER_S2 = 1500.0, 8.0e5


def gram_side(n_vars: int, degree: int) -> int:
    """Side of the Gram matrix of the relaxation of :mod:`margintheory.solvers.sos` (its ``_build``)."""
    h = math.ceil(degree / 2)
    if degree % 2 == 0:  # a form of even degree: monomials of degree exactly h
        return math.comb(n_vars + h - 1, h)
    return math.comb(n_vars + h, h)  # monomials of degree <= h


def sos_cost(n_vars: int, degree: int, solver: str = "CLARABEL") -> tuple[float, float]:
    """``(bytes, seconds)`` of one SOS relaxation in ``n_vars`` variables of a form of degree ``degree``, fitted to
    measured peaks and times (:data:`CLARABEL_BYTES_PER_T2`, :data:`CVXPY_BYTES_PER_S2`)."""
    s = gram_side(n_vars, degree)
    t = s * (s + 1) / 2
    if solver.upper() == "CLARABEL":
        return (CLARABEL_BYTES_PER_T2 * t * t + CVXPY_BYTES_PER_S2 * s * s,
                (CLARABEL_FLOPS_PER_T3 * t**3 + CLARABEL_FLOPS_PER_T2 * t * t) / FLOPS_PER_SECOND)
    # SCS: sparse factor, s x s eigenproblems
    return CVXPY_BYTES_PER_S2 * s * s, (SCS_FLOPS_PER_S3 * s**3 + SCS_FLOPS_PER_S2 * s * s) / FLOPS_PER_SECOND


def expansion_cost(p: int, k: int) -> tuple[float, float]:
    """``(bytes, seconds)`` of expanding the single-neuron objective in all ``N = (k+1) p`` coordinates."""
    n_pts = grid_points(p, k)
    N = (k + 1) * p
    E = math.comb(N + k - 1, k)
    return 24.0 * E * N * N + 16.0 * n_pts * N, 2.0 * n_pts * E * N / FLOPS_PER_SECOND


def single_neuron_bracket_bytes(p: int, k: int, method: str, solver: str = "CLARABEL") -> float:
    """Peak bytes of a single-neuron bracket by ``method`` (the float expansion of ``F`` in ``(k+1) p`` variables and
    the SOS relaxation, :func:`sos_cost`), from the sizes alone.  The ``fourier-exact`` path is bounded by the block
    SOS estimate, plus the direct sum of the lower bound up to :data:`DIRECT_LIMIT` inputs."""
    from margintheory.certificate.block_sos import estimate_memory as block_estimate

    if method == "fourier-exact":  # the SOS of the block form, and the neuron (k+1, p) with its DFT and frequencies
        # ... and, up to DIRECT_LIMIT inputs, the direct sum of the lower bound (pair weights and activations over
        # all p^k inputs and p classes: about three (p^k, p) float64 arrays)
        direct = 24 * p**k * p if p**k <= DIRECT_LIMIT else 0
        return block_estimate(k) + 64 * (k + 1) * p + 48 * p + direct
    n = (k + 1) * p
    nk = math.comb(n + k - 1, k)
    expansion = 8 * nk * n * (3 * n + 4)
    if method == "none":
        return 64 * 2**20 + 8 * p**k * (p + 4 * k) * 4
    relaxation, _ = sos_cost(n if method == "generic" else 2 * (k + 1), k + 1, solver)
    return 64 * 2**20 + expansion + relaxation


def single_neuron_estimate(p: int, k: int, *, solver: str = "CLARABEL", method: str = "fourier-blocks") -> Estimate:
    """Memory and time of :func:`margintheory.solvers.single_neuron.solve_single_neuron` with an upper bound by
    ``method`` (``fourier-exact``: that path's own estimate,
    :func:`single_neuron_bracket_bytes`; ``fourier-blocks`` / ``generic``: expansion and
    SOS relaxations as in the module docstring)."""
    what = f"the single-neuron bracket for p = {p}, k = {k}"
    n_pts = grid_points(p, k)
    if n_pts == math.inf or k > 64:
        return Estimate(what, math.inf, math.inf)
    if method == "fourier-exact":  # no expansion in (k+1) p variables: the torus-reduced relaxation of g_k only
        from margintheory.certificate.block_sos import require_supported

        require_supported(k)  # beyond, no memory would do: refused as unsupported, not with a budget

        return Estimate(what, single_neuron_bracket_bytes(p, k, method), None)
    exp_bytes, exp_secs = expansion_cost(p, k)
    objective = 64.0 * n_pts * p + 16.0 * ((k + 1) * p) ** 2
    if method == "none":
        return Estimate(what, objective, None)
    if method == "generic":
        sos_bytes, sos_secs = sos_cost((k + 1) * p, k + 1, solver)
    else:
        sos_bytes, sos_secs = sos_cost(2 * (k + 1), k + 1, solver)
        sos_secs *= (p - 1) // 2 + 1
    return Estimate(what, objective + exp_bytes + sos_bytes, exp_secs + sos_secs)


def column_generation_estimate(p: int, k: int, *, solver: str = "CLARABEL", pricing: str = "fourier") -> Estimate:
    """Memory and the time of one round of :func:`margintheory.solvers.column_generation.column_generation`,
    including the final network (at most :data:`MAX_ORBITS` orbits of ``p^k`` translates) checked on all points.
    ``pricing="fourier"`` (odd ``p``) prices by a closed form: no expansion, no relaxation."""
    what = f"column generation for p = {p}, k = {k}"
    n_pts = grid_points(p, k)
    if n_pts == math.inf or k > 64:
        return Estimate(what, math.inf, math.inf)
    if pricing == "fourier" and p % 2 == 1:
        pricing_cost = Estimate(what, 64.0 * n_pts * p, 2.0 * n_pts * p * (k + 1) / FLOPS_PER_SECOND)
    else:
        pricing_cost = single_neuron_estimate(p, k, solver=solver)
    if pricing_cost.bytes == math.inf:
        return Estimate(what, math.inf, math.inf)
    network = final_network_bytes(p, k, n_pts)
    return Estimate(what, pricing_cost.bytes + network + SOLVER_OVERHEAD, pricing_cost.seconds)


#: the LP's and the solvers' own structures (cvxpy problem, HiGHS workspace), measured about 40 MB
SOLVER_OVERHEAD = 40 * 2**20


def final_network_bytes(p: int, k: int, n_pts: float) -> float:
    """The orbit network of the last LP and its margin.  The reduced LP has ``p - 1`` margin rows and the simplex
    row, so a basic optimal solution (HiGHS: simplex, or crossover after its interior point) has at most ``p``
    orbits with positive weight -- ``p p^k`` neurons, not :data:`MAX_ORBITS` orbits (measured: 6 orbits at
    ``p = 7``, 10 at ``p = 11``).  The margin is a dense pair array (about 18 bytes per neuron x input x class
    entry, up to ``DENSE_MARGIN_ENTRIES``) or streamed by the exhaustive engine (the weights about 3.5 times)."""
    from margintheory.engines.margins import engine_bytes_per_point

    m = min(MAX_ORBITS, p) * n_pts
    weights = 8.0 * m * (k + 1) * p
    entries = m * n_pts * p
    if entries <= DENSE_MARGIN_ENTRIES:
        return 18.0 * entries + 2 * weights + 64.0 * n_pts * p
    return 3.5 * weights + engine_bytes_per_point() * n_pts + 5 * 2**20 + 64.0 * n_pts * p


def _family_estimate(p: int, k: int, what: str) -> tuple[Estimate, int]:
    """The smallest family's exact moment check and margin, its float64 network and the exact check of the width
    lower bound's certificate; with the family's width (an upper bound: a lattice search only finds smaller)."""
    from margintheory.certificate.block_sos import require_supported
    from margintheory.engines.fourier_margin import estimate_compact_family, family_atoms
    from margintheory.solvers.width_bounds import estimate_width_lower_bound_bytes

    require_supported(k)
    compact = estimate_compact_family(p, k, "smallest-known")
    width = int(family_atoms("smallest-known", k)) * ((p - 1) // 2)
    network = 8.0 * 3 * width * (k + 1) * p  # the weights, their normalized copy, the built angles
    return Estimate(what, compact.bytes + network + estimate_width_lower_bound_bytes(k), compact.seconds), width


def min_width_estimate(p: int, k: int) -> Estimate:
    """Memory and time of ``solve --min-width`` without column generation: the smallest family's exact moment check
    and margin (:func:`margintheory.engines.fourier_margin.estimate_compact`), its float64 network (written to
    ``--out``), the proved upper bound (:func:`margintheory.certificate.block_sos.estimate_memory`) and the exact
    check of the width lower bound's certificate
    (:func:`margintheory.solvers.width_bounds.estimate_width_lower_bound_bytes`)."""
    from margintheory.certificate.block_sos import estimate_memory

    what = f"the smallest max-margin network for p = {p}, k = {k}"
    if k > 64 or p > 2**40:
        return Estimate(what, math.inf, math.inf)
    family, _ = _family_estimate(p, k, what)
    return Estimate(what, family.bytes + estimate_memory(k), family.seconds)


#: the margin LP of :func:`margintheory.solvers.width.greedy_prune` through cvxpy (HiGHS) on a dense ``(pairs, m)``
#: matrix: bytes per matrix entry at the peak (cvxpy's canonicalisation of the dense constant).  Measured growth of
#: the peak resident size, ``prune_to_width`` of the family network to half its width: 19.5 MiB at ``(13, 2)``
#: (73 k entries), 285 MiB at ``(11, 3)`` (1.06 M), 611 MiB at ``(31, 2)`` (2.6 M): 247 to 281 bytes per entry
PRUNE_LP_BYTES_PER_ENTRY = 300.0
#: run time of one re-solve of that LP, flops per matrix entry (measured 2.7e-7 to 2.9e-7 s per entry and re-solve
#: on one core; the greedy elimination re-solves once per neuron dropped)
PRUNE_LP_FLOPS_PER_ENTRY = 6000.0


def max_width_estimate(p: int, k: int, max_width: int) -> Estimate:
    """Memory and time of ``solve --max-width M``: the smallest family network (:func:`min_width_estimate` without the
    proved upper bound) and, when it is wider than ``M``, its backward elimination to ``M`` neurons
    (:func:`margintheory.solvers.width.prune_to_width`: the dense pair contributions of its ``m`` neurons and one LP
    on them per neuron dropped, :data:`PRUNE_LP_BYTES_PER_ENTRY`), then the pruned network's margin (dense pair
    contributions, or streamed by the exhaustive engine)."""

    what = f"the smallest max-margin network for p = {p}, k = {k} pruned to at most {max_width} neurons"
    n_pts = grid_points(p, k)
    if k > 64 or p > 2**40 or n_pts == math.inf:
        return Estimate(what, math.inf, math.inf)
    family, m = _family_estimate(p, k, what)
    if m <= max_width:  # nothing to prune: the family network is returned as it is
        return family
    entries = float(m) * n_pts * (p - 1)  # the LP's matrix: every neuron on every wrong pair
    contributions = 16.0 * m * n_pts * p  # (m, p^k, p) contributions and the masked, transposed copy
    kept = min(m, max_width) * n_pts * p
    margin = 16.0 * kept if kept <= DENSE_MARGIN_ENTRIES else 64.0 * n_pts
    prune = PRUNE_LP_BYTES_PER_ENTRY * entries + contributions + margin
    seconds = PRUNE_LP_FLOPS_PER_ENTRY * (m - max_width) * entries / FLOPS_PER_SECOND
    return Estimate(what, family.bytes + prune, (family.seconds or 0.0) + seconds)
