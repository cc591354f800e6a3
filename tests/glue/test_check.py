"""``lance-ns check`` against Glue (moto): a flat catalog, so the checks that
need a namespace inside the scenario's skip and every other check passes."""

from __future__ import annotations

import lance_ns
from lance_ns import conformance as C


def test_check_passes_on_glue(props):
    results = C.run_checks(C.Target.backend(lance_ns.connect("glue", props)))
    statuses = {r.name: (r.status, r.detail) for r in results}
    assert not {n: d for n, (s, d) in statuses.items() if s == C.FAIL}
    assert statuses["namespace.create"][0] == "skip" and "flat catalog" in statuses["namespace.create"][1]
    for name in ("table.declare", "table.create", "table.deregister", "table.register", "scenario.cleanup"):
        assert statuses[name][0] == C.PASS, (name, statuses[name])
