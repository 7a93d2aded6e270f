"""Training and analysis of polynomial networks on modular addition (docs/TRAINING.md).

* :mod:`.objective`  cross-entropy + ``lambda * R(theta)`` and its analytic gradient (numpy, row blocks).
* :mod:`.optim`      GD / Adam / AdamW and the learning-rate schedule (warm-up, cosine, doubling).
* :mod:`.metrics`    per-step measurements: normalized margin / gamma*, one-sided max Fourier power, coverage.
* :mod:`.checkpoint` atomic checkpoints (parameters, optimizer moments, generator state, history).
* :mod:`.trainer`    the training loop, seeds, train/test split, progress bar, exact resume.
* :mod:`.figures`    Fourier-circuits Fig. 4.1 / 4.2 and Morwani et al. Fig. 7.1c analogues (matplotlib Agg, PNG + PDF).
* :mod:`.analysis`   ``analyze``: ``verify_network`` plus distance-to-max-margin measurements.
"""
