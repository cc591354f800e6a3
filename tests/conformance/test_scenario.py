"""The conformance scenario ``lance-ns check`` runs (lance_ns.conformance),
one pytest test per check, on every backend of the suite.

The scenario is stateful (later checks build on what earlier ones made), so
it runs once per backend, in its own namespace under the backend's parent;
each test then judges its check's result.  A third-party server's known
departure is a strict expected failure, named ``scenario:<check>`` in the
backend's ``departures``.

Only the checks that can apply to a backend are generated for it
(:func:`combinations`: what ``lance_ns.conformance.target_lacks`` says from the
backend's declared facts, less the checks of optional operations its client is declared not to
offer, ``Backend.unoffered``, each held to it by test_unoffered.py);
what the run itself finds (an optional operation a backend lacks undeclared, a check after one
that failed as expected) still skips, saying why.
"""

from __future__ import annotations

import pytest

from lance_ns import conformance as C

_RUNS: dict[int, dict[str, C.CheckResult]] = {}
_CHECKS = {c.name: c for c in C.CHECKS}


def _declared_target(facts: frozenset[str]) -> C.Target:
    """What the scenario will know of a backend with ``facts``, before it runs."""
    declarable = set(C.CAPABILITY_ATTRIBUTES)
    return C.Target(client=None, rest=object() if "rest" in facts else None,
                    caps=frozenset(facts & declarable), lacks=frozenset(declarable - facts))


def _applies(check: C.Check, facts: frozenset[str]) -> bool:
    if C.target_lacks(check, _declared_target(facts)) is not None:
        return False
    return all(need in facts for need in ("data", "nested") if need in check.needs)


def _generated(b) -> list[str]:
    """The checks that can run on backend ``b``: those that apply to it, but for a check built
    on one that cannot (a known departure of its server fails it, or it does not apply), which
    would only skip ("... did not pass")."""
    departing = {name.split(":", 1)[1] for name in b.departures if name.startswith("scenario:")}
    out, left_out = [], set()
    for name in C.RESULT_NAMES:
        check = _CHECKS.get(name)
        if check is not None and (not _applies(check, b.facts) or check.after in departing | left_out
                                  or check.optional and _operations(check) & set(b.unoffered)):
            left_out.add(name)
            continue
        out.append(name)
    return out


def _operations(check: C.Check) -> set[str]:
    """The operations a check calls (its own and its steps')."""
    return {check.operation, *(getattr(step, "op", None) for step in check.steps)} - {None}


def combinations(backends) -> tuple[tuple[str, str], list]:
    """(backend, check) for each check that can run on each backend (tests/conformance/conftest.py)."""
    return ("backend", "check"), [(b, name) for b in backends for name in _generated(b)]


def _results(ctx) -> dict[str, C.CheckResult]:
    if id(ctx) not in _RUNS:
        target = C.Target.backend(ctx.connect())
        # the backend's declared capabilities, as the suite's Ctx read them from its class
        declarable = set(C.CAPABILITY_ATTRIBUTES)
        target.caps = frozenset(ctx.caps & declarable)
        target.lacks = frozenset(declarable - ctx.caps)
        _RUNS[id(ctx)] = {r.name: r for r in C.run_checks(target, parent=list(ctx.parent))}
    return _RUNS[id(ctx)]


def test_scenario(backend, check):
    result = _results(backend).get(check)
    assert result is not None, f"{check} did not run (scenario.setup failed?)"
    if result.status == C.SKIP:
        pytest.skip(result.detail)
    assert result.status == C.PASS, result.detail

