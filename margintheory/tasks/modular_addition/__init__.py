"""Modular addition of ``k`` inputs mod ``p`` (Li et al., "Fourier circuits", arXiv:2402.09469, Thm C.22;
``k = 2``: Morwani et al., arXiv:2311.07568, Thm 7.2): the network checks (``checks``) and the lower end of the max
margin without enumerating inputs (``compact``). See docs/theory.md."""


def __getattr__(name: str) -> object:  # the 0.1.0 module of this name (deprecated; docs/API.md)
    from margintheory._compat import forwarded_attribute

    return forwarded_attribute(__name__, name)
