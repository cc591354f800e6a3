"""The test server's contract checks can fail: requests and responses outside
tests/contracts/unity-catalog-api.yaml are caught, answered 500 and
reported by ``check()``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.services.unity import PREFIX, HttpError, contract_path, unity_server


@pytest.fixture
def unity():
    with unity_server(catalogs=("c",)) as u:
        with httpx.Client(base_url=u.endpoint + PREFIX) as http:
            yield u, http


def violated(u) -> str:
    with pytest.raises(AssertionError, match="contract violations") as info:
        u.server.check()
    return str(info.value)


def test_contract_is_the_vendored_copy_inside_the_repository():
    repo = Path(__file__).resolve().parents[2]
    assert contract_path().is_file() and contract_path().is_relative_to(repo / "tests" / "contracts")
    assert contract_path().read_text().startswith("openapi: 3.0")


def test_valid_traffic_passes(unity):
    u, http = unity
    assert http.post("/schemas", json={"name": "s", "catalog_name": "c"}).status_code == 200
    assert http.get("/tables", params={"catalog_name": "c", "schema_name": "s", "max_results": 50}).json() == {"tables": []}
    assert http.get("/schemas/c.nope").json()["error_code"] == "SCHEMA_NOT_FOUND"
    u.server.check()


@pytest.mark.parametrize(
    "method,path,kwargs",
    [
        ("GET", "/tables", {"params": {"catalog_name": "c", "schema_name": "s", "max_results": 51}}),  # above the maximum
        ("GET", "/tables", {"params": {"catalog_name": "c"}}),  # schema_name is required
        ("POST", "/tables", {"json": {"name": "t", "catalog_name": "c", "schema_name": "s", "table_type": "EXTERNAL"}}),  # no columns
        ("POST", "/schemas", {"json": {"name": "s", "catalog_name": "c", "properties": {"n": 1}}}),  # property values are strings
        ("GET", "/no-such-resource", {}),
    ],
    ids=["max_results", "missing-param", "missing-columns", "non-string-property", "unknown-path"],
)
def test_requests_outside_the_contract_are_violations(unity, method, path, kwargs):
    u, http = unity
    r = http.request(method, path, **kwargs)
    assert r.status_code == 500 and r.json()["error_code"] == "CONTRACT_VIOLATION"
    assert path in violated(u)


def test_a_repeated_request_gets_its_verdict_every_time(unity):
    """The double remembers verdicts by the whole request (and response): the same bytes
    again are the same violation again, and a valid request answered differently is judged anew."""
    u, http = unity
    for _ in range(3):
        r = http.get("/tables", params={"catalog_name": "c", "schema_name": "s", "max_results": 51})
        assert r.status_code == 500 and r.json()["error_code"] == "CONTRACT_VIOLATION"
        assert "max_results" in violated(u)
    http.post("/schemas", json={"name": "s", "catalog_name": "c"})
    http.post("/tables", json={"name": "t", "catalog_name": "c", "schema_name": "s", "table_type": "EXTERNAL",
                               "data_source_format": "DELTA", "columns": [], "storage_location": "/tmp/t"})
    assert http.get("/tables/c.s.t").status_code == 200
    u.server.check()  # no violation so far
    u.server.tables["c.s.t"]["table_type"] = "LANCE"  # the same request, an answer outside the contract
    assert http.get("/tables/c.s.t").status_code == 500
    assert "LANCE" in violated(u)


def test_responses_outside_the_contract_are_violations(unity):
    u, http = unity
    http.post("/schemas", json={"name": "s", "catalog_name": "c"})
    u.server.tables["c.s.bad"] = {"name": "bad", "catalog_name": "c", "schema_name": "s", "table_type": "LANCE"}
    assert http.get("/tables/c.s.bad").status_code == 500
    assert "LANCE" in violated(u)


def test_error_bodies_must_carry_an_error_code(unity, monkeypatch):
    u, http = unity

    def broken(request):
        raise HttpError(404, "", "no code")

    monkeypatch.setattr(u.server, "_dispatch", broken)
    assert http.get("/catalogs/c").status_code == 500
    assert "404 response" in violated(u)


def test_schema_with_tables_is_deleted_only_with_force(unity):
    u, http = unity
    http.post("/schemas", json={"name": "s", "catalog_name": "c"})
    table = {"name": "t", "catalog_name": "c", "schema_name": "s", "table_type": "EXTERNAL", "columns": [], "storage_location": "/tmp/t"}
    assert http.post("/tables", json=table).status_code == 200
    r = http.delete("/schemas/c.s")
    assert (r.status_code, r.json()["error_code"]) == (400, "FAILED_PRECONDITION")
    assert http.delete("/schemas/c.s", params={"force": "true"}).status_code == 200
    assert http.get("/tables/c.s.t").status_code == 404
    u.server.check()
