"""The package version (one place; imported by ``margintheory`` and written into every result)."""

__version__ = "0.2.0"
