"""Margin engines: the exhaustive engine over all p^k inputs and the Fourier-side tools."""
