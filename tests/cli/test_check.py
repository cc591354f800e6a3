"""``lance-ns check``: the scenario passes against our server and names the
departures of pylance's Rust RestAdapter and of broken servers/backends."""

from __future__ import annotations

import re
import tempfile

import pytest

import lance_ns
from lance_ns import conformance as C
from lance_ns.base import BY_OP_ID
from lance_ns.conformance.model import RUN_NEEDS

from .broken import http_server


def _failed(result) -> dict[str, str]:
    return {r["name"]: r["detail"] for r in result.json()["results"] if r["status"] == "fail"}


def test_scenario_is_well_formed():
    names = [c.name for c in C.CHECKS]
    assert len(names) == len(set(names))
    for check in C.CHECKS:
        assert check.name and check.expectation and check.steps
        assert check.operation == "*" or check.operation in BY_OP_ID
        for step in check.setup + check.steps:
            if isinstance(step, C.Call):
                assert step.op in BY_OP_ID, step.op
        assert check.needs <= RUN_NEEDS | set(C.CAPABILITY_ATTRIBUTES)
        assert check.unless <= set(C.CAPABILITY_ATTRIBUTES)
        assert check.after is None or check.after in names[: names.index(check.name)]
    # every error code the issue names is exercised
    codes = set()
    for check in C.CHECKS:
        for step in check.steps:
            expect = step.expect if isinstance(step, C.Call) else getattr(step, "code", None)
            codes.update(expect if isinstance(expect, tuple) else [expect] if expect is not None else [])
    assert {1, 2, 3, 4, 5, 13, 16} <= codes


def test_check_backend_in_process(cli, tmp_path):
    r = cli("check", "--impl", "dir", "--prop", f"root={tmp_path}", "--json")
    assert r.rc == 0, _failed(r)
    data = r.json()
    assert data["passed"] and data["summary"]["fail"] == 0
    statuses = {x["name"]: x["status"] for x in data["results"]}
    assert statuses["table.register"] == "pass" and statuses["scenario.cleanup"] == "pass"
    assert statuses["http.malformed_arrow"] == "skip"  # needs a REST server
    assert lance_ns.connect("dir", {"root": str(tmp_path)}).list_namespaces(
        lance_ns.base.OPERATIONS["list_namespaces"].request(id=[])
    ).namespaces == []  # the isolated namespace is gone


def test_check_skips_nested_checks_on_a_flat_catalog(cli):
    # one level of namespaces, like Hive 2 and Glue: the checks that need a
    # namespace inside the scenario's are skipped, saying why; the rest pass
    r = cli("check", "--impl", "tests.cli.flat:FlatMemoryNamespace", "--json")
    assert r.rc == 0, _failed(r)
    statuses = {x["name"]: (x["status"], x["detail"]) for x in r.json()["results"]}
    nested = [c.name for c in C.CHECKS if "nested" in c.needs]
    assert "namespace.create" in nested and "tables.list" in nested and "table.declare" not in nested
    for name in nested:
        assert statuses[name][0] == "skip" and "flat catalog" in statuses[name][1], (name, statuses[name])
    for name in ("table.declare", "table.describe", "table.drop", "table.create", "table.register", "scenario.cleanup"):
        assert statuses[name][0] == "pass", (name, statuses[name])


def test_check_runs_nested_checks_where_namespaces_nest(cli, tmp_path):
    r = cli("check", "--impl", "memory", "--json")
    assert r.rc == 0, _failed(r)
    statuses = {x["name"]: x["status"] for x in r.json()["results"]}
    assert statuses["namespace.create"] == statuses["tables.list.paging"] == "pass"


def test_check_catches_a_backend_that_ignores_skip(cli):
    r = cli("check", "--impl", "tests.cli.broken:IgnoresSkipNamespace", "--json")
    assert r.rc == 1
    assert set(_failed(r)) == {"namespace.drop.skip_missing"}
    assert "expected success, got code 1" in _failed(r)["namespace.drop.skip_missing"]
    human = cli("check", "--impl", "tests.cli.broken:IgnoresSkipNamespace", "--only", "namespace.drop")
    assert human.rc == 1 and "FAILED" in human.out
    assert "departures from the spec: namespace.drop.skip_missing" in human.out
    assert "table.declare" not in human.out  # --only limits the report


def test_check_human_report(cli):
    r = cli("check", "--impl", "memory")
    assert r.rc == 0 and "PASSED" in r.out
    assert "NAMESPACE_NOT_FOUND" in r.out  # the per-error-code summary
    assert re.search(r"pass\s+.*namespace\.drop\.skip_missing", r.out)


def test_check_our_server_passes_with_auth(cli, tmp_path):
    from lance_ns.server import run_server_in_thread

    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    with run_server_in_thread(ns, auth_token="s3cret-token", log_requests=False) as server:
        r = cli("check", "--uri", server.url, "--auth-token", "s3cret-token", "--json")
        assert r.rc == 0, _failed(r)
        statuses = {x["name"]: x["status"] for x in r.json()["results"]}
        for name in ("http.malformed_arrow", "http.unauthenticated", "protocol.error_code", "protocol.error_status",
                     "tables.list.missing_namespace", "namespace.drop.cascade", "table.register"):
            assert statuses[name] == "pass", name
        assert "s3cret-token" not in r.out + r.err
        # without the token the scenario cannot even start
        denied = cli("check", "--uri", server.url, "--json")
        assert denied.rc == 1 and "scenario.setup" in _failed(denied)
        assert "code 16" in _failed(denied)["scenario.setup"]


# The Rust server's known departures and what the report must say about each.
RESTADAPTER_DEPARTURES = {
    "namespace.create.exist_ok": r"expected success, got code 2",
    "namespace.create.overwrite": r"expected success, got code 2",
    "namespace.drop.skip_missing": r"expected success, got code 1",
    "namespace.drop.cascade": r"expected success, got code 3",
    "http.malformed_arrow": r"HTTP 500 \(expected 400\)",
    "tables.list.missing_namespace": r"expected code 1 .* but it succeeded",
}


def test_check_names_pylance_restadapter_departures(cli):
    from lance.namespace import RestAdapter

    root = tempfile.mkdtemp(prefix="lance-ns-adapter-")
    with RestAdapter("dir", {"root": root}, port=0) as adapter:
        uri = f"http://127.0.0.1:{adapter.port}"
        r = cli("check", "--uri", uri, "--json")
        left = lance_ns.connect("rest", {"uri": uri}).list_namespaces(
            lance_ns.base.OPERATIONS["list_namespaces"].request(id=[])
        )
    assert r.rc == 1
    failed = _failed(r)
    for name, pattern in RESTADAPTER_DEPARTURES.items():
        assert name in failed, name
        assert re.search(pattern, failed[name]), (name, failed[name])
    passed = {x["name"] for x in r.json()["results"] if x["status"] == "pass"}
    assert {"namespace.create.duplicate", "table.declare", "table.drop", "protocol.error_code"} <= passed
    assert "scenario.cleanup" in passed and not [n for n in left.namespaces if n.startswith("lance_ns_check_")]


@pytest.mark.parametrize(
    "status, body, content_type, must_fail",
    [
        (200, b"nonsense", "text/plain", "scenario.setup"),  # not JSON at all
        (200, b"{}", "application/json", "namespace.create.duplicate"),  # says yes to everything
        (500, b"<html>oops</html>", "text/html", "scenario.setup"),  # errors without a code
    ],
)
def test_check_fails_against_a_broken_server(cli, status, body, content_type, must_fail):
    with http_server(status, body, content_type) as uri:
        r = cli("check", "--uri", uri, "--json")
    assert r.rc == 1
    assert must_fail in _failed(r)
    assert r.json()["passed"] is False


def test_check_unreachable_server(cli):
    with http_server(200, b"", "text/plain") as uri:
        pass  # stopped: nothing listens there now
    r = cli("check", "--uri", uri, "--json")
    assert r.rc == 1 and "scenario.setup" in _failed(r)


def test_check_options_conflict(cli):
    assert cli("check", "--uri", "http://127.0.0.1:1", "--impl", "memory").rc == 2


def test_check_under_a_parent_namespace(cli, tmp_path):
    conn = ["--impl", "dir", "--prop", f"root={tmp_path}"]
    assert cli("namespace", "create", "team", *conn).rc == 0
    r = cli("check", "--parent", "team", "--json", *conn)
    assert r.rc == 0, _failed(r)
    assert cli("namespace", "list", "team", "--json", *conn).json()["namespaces"] == []  # removed again
    missing = cli("check", "--parent", "absent", "--json", *conn)
    assert missing.rc == 1 and "code 1" in _failed(missing)["scenario.setup"]
