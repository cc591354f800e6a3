"""The conformance scenario ``lance-ns check`` runs (lance_ns.conformance),
one pytest test per check, on every backend of the suite.

The scenario is stateful (later checks build on what earlier ones made), so
it runs once per backend, in its own namespace under the backend's parent;
each test then judges its check's result.  A third-party server's known
departure is a strict expected failure, named ``scenario:<check>`` in the
backend's ``departures``.
"""

from __future__ import annotations

import pytest

from lance_ns import conformance as C

_RUNS: dict[int, dict[str, C.CheckResult]] = {}


def _results(ctx) -> dict[str, C.CheckResult]:
    if id(ctx) not in _RUNS:
        target = C.Target.backend(ctx.connect())
        # the backend's declared capabilities, as the suite's Ctx read them from its class
        declarable = set(C.CAPABILITY_ATTRIBUTES)
        target.caps = frozenset(ctx.caps & declarable)
        target.lacks = frozenset(declarable - ctx.caps)
        _RUNS[id(ctx)] = {r.name: r for r in C.run_checks(target, parent=list(ctx.parent))}
    return _RUNS[id(ctx)]


@pytest.mark.parametrize("check", C.RESULT_NAMES)
def test_scenario(backend, check):
    result = _results(backend).get(check)
    assert result is not None, f"{check} did not run (scenario.setup failed?)"
    if result.status == C.SKIP:
        pytest.skip(result.detail)
    assert result.status == C.PASS, result.detail
