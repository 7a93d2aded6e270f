"""Grids of verify / solve / train runs, their Parquet results store, and its report."""
