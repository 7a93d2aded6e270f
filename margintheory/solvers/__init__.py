"""Numeric optimum (issue 4): certified single-neuron brackets, the network-level max-margin LP by column
generation, and small-width networks.  See THEORY.md sections 2-3 and the module docstrings."""

from margintheory.solvers.column_generation import ColumnGenerationResult, column_generation, solve_margin_lp
from margintheory.solvers.objective import PairWeights, SingleNeuronObjective, pair_weights, pair_weights_from_lambda
from margintheory.solvers.single_neuron import SingleNeuronBracket, solve_single_neuron
from margintheory.solvers.width import WidthResult, smallest_width

__all__ = ["ColumnGenerationResult", "PairWeights", "SingleNeuronBracket", "SingleNeuronObjective", "WidthResult",
           "column_generation", "pair_weights", "pair_weights_from_lambda", "smallest_width", "solve_margin_lp",
           "solve_single_neuron"]
