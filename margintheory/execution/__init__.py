"""Where work runs: this process, or a dask.distributed cluster (local or remote), behind one boundary."""
