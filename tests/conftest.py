"""Shared test configuration: hypothesis profiles sized for CI (2 cores, whole suite well under 20 minutes)."""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _every_json_result_follows_the_schema(monkeypatch):
    """Every ``--json`` result a test prints in-process is validated against the shipped result schema, and its rows
    against their premises (:func:`tests.premise_walk.premise_faults`)."""
    from margintheory.presentation import report
    from margintheory.presentation.schema import validate_result

    original = report.render_json

    def validated(result, stream=None):
        from tests.premise_walk import premise_faults

        doc = validate_result(result)
        assert not premise_faults(doc), premise_faults(doc)  # no row more certain than its premises
        original(result, stream)

    monkeypatch.setattr(report, "render_json", validated)
