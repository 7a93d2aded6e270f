"""Composition in a finite group (Morwani et al., arXiv:2311.07568, Thm 7.9 and App. D.9): the task (``task``), the
irrep-block margin and LP (``margin``), the theorem's condition, its construction and the representation checks.
See docs/theory.md."""


def __getattr__(name: str) -> object:  # the 0.1.0 module of this name (deprecated; docs/API.md)
    from margintheory._compat import forwarded_attribute

    return forwarded_attribute(__name__, name)
