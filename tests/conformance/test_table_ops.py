"""lance-ns's own backends answer every table operation of the scenario
(lance_ns.conformance.checks_table_ops): those checks are optional in the
spec, so elsewhere an Unsupported answer only skips them; here a skip fails.
A third-party server (``Ctx.third_party``) is judged by test_scenario.py alone."""

from __future__ import annotations

import pytest

from lance_ns import conformance as C
from lance_ns.conformance.checks_table_ops import table_ops_checks

from .test_scenario import _results

CHECKS = {c.name: c for c in table_ops_checks()}
NAMES = list(CHECKS)


def _direct_only(name: str, result) -> bool:
    """A check of what the REST protocol cannot carry, skipped on a REST target."""
    return "direct" in CHECKS[name].needs and result.status == C.SKIP


# (a third-party server's departures are judged by test_scenario.py)
@pytest.mark.needs("!third_party")
def test_every_table_operation_answers(backend):
    results = _results(backend)
    excused = set()  # a storage's documented departure (strict xfail in test_scenario) and what builds on it
    for n in NAMES:
        after = CHECKS[n].after
        if f"scenario:{n}" in backend.departures or (after in excused and results[n].status == C.SKIP):
            excused.add(n)
    not_passed = {n: f"{results[n].status}: {results[n].detail}" for n in NAMES
                  if results[n].status != C.PASS and not _direct_only(n, results[n]) and n not in excused}
    assert not not_passed, not_passed
