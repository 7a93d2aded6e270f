"""Run-time services: atomic files, memory/time budgets, progress reporting, process streams, worker threads."""
