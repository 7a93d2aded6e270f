"""``(n, k)`` sparse parity (Morwani et al., arXiv:2311.07568, Thm 7.8): the problem's checks (``checks``).
See docs/theory.md."""


def __getattr__(name: str) -> object:  # the 0.1.0 module of this name (deprecated; docs/API.md)
    from margintheory._compat import forwarded_attribute

    return forwarded_attribute(__name__, name)
