"""Margin engines: the exhaustive pass over all inputs and the compact (structural) ones."""
