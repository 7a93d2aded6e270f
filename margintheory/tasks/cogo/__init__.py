"""CoGO (Tian, "Composing Global Optimizers ...", arXiv:2410.01779): the task (``task``), the semi-ring algebra
(``algebra``), the constructions, Lemma 1's checks and the margin comparison. See docs/theory.md."""
