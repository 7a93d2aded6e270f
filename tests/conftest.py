"""Shared test configuration: hypothesis profiles sized for CI (2 cores, whole suite well under 20 minutes)."""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# train and reproduce print a progress line every 30 s where stderr is not a terminal (as under pytest); on a loaded
# machine a test's run may pass 30 s, and a test that counts stderr's lines would then depend on the machine's speed.
# The tests of those lines set their own interval (tests/test_newcomer_defects.py).
os.environ.setdefault("MARGINTHEORY_PROGRESS_SECONDS", "3600")


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
