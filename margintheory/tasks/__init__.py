"""The tasks of the seed papers: modular addition, sparse parity, group composition, CoGO."""
