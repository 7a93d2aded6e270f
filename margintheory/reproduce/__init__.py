"""The papers' training experiments as named recipes (docs/reproductions.md).

A :class:`~margintheory.reproduce.recipes.Recipe` is one experiment of Li et al. "Fourier circuits"
(arXiv:2402.09469), Morwani et al. "Feature emergence via margin maximization" (arXiv:2311.07568) or Tian "CoGO"
(arXiv:2410.01779): its citation, the paper's settings of every training run, the paper's claims about it, and the
time it takes (:mod:`.estimates`, from measured steps per second).  :func:`margintheory.reproduce.runner.reproduce`
trains its runs (in this process or on dask through :mod:`margintheory.sweep`), measures each claim as a check row
of the one result shape (:class:`margintheory.core.checks.VerificationResult`) and draws the paper's figure.

This layer sits above the sweeps (it runs its training runs as sweep cells) and below the commands.
"""
