"""Numeric optimum: certified single-neuron brackets, the network-level max-margin LP by column
generation, and small-width networks.  See docs/theory.md#weak-duality and the module docstrings.

What is certified by what (nothing here uses the closed form ``gamma*`` or the construction):

* lower bounds are values attained by explicit unit-norm networks, re-evaluated in float64 (every pair of ``D_p``);
* upper bounds on a single-neuron problem come from an SOS certificate returned by the SDP solver, turned into a
  bound with an a-posteriori margin for its residual and the negative part of its Gram spectrum (``sos``);
* the reduction to frequency blocks (``symmetry``) is an *argument* (homogeneity, ``sum r_j^(k+1) <= 1``); the
  cross-frequency coefficients it would drop are computed and added to the bound instead;
* network-level upper bounds are weak duality (Lemma C.6 / 7.6) applied to the LP's dual distribution, with the
  pricing problem bounded as above; the translation-symmetry reduction of the LP (``column_generation``) only
  affects speed, never validity;
* widths are upper bounds (networks found and re-checked); the per-frequency lower bound in ``width`` is an
  argument under stated assumptions, not a solver certificate.
"""

from margintheory.solvers.column_generation import ColumnGenerationResult, column_generation, solve_margin_lp
from margintheory.solvers.objective import PairWeights, SingleNeuronObjective, pair_weights, pair_weights_from_lambda
from margintheory.solvers.single_neuron import SingleNeuronBracket, solve_single_neuron
from margintheory.solvers.width import WidthResult, smallest_width

__all__ = ["ColumnGenerationResult", "PairWeights", "SingleNeuronBracket", "SingleNeuronObjective", "WidthResult",
           "column_generation", "pair_weights", "pair_weights_from_lambda", "smallest_width", "solve_margin_lp",
           "solve_single_neuron"]
