"""Presentation: the result table and the JSON Schema of every result."""
