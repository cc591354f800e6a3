"""Authorization from an auth file (issue 19.1): principals with read/write/admin grants
on namespace prefixes, 403 code 15 with nothing changed, filtered listings, an audit
line per mutating call, the file re-read on change."""

from __future__ import annotations

import hashlib
import logging
import os
import time

import pyarrow as pa
import pytest
from lance_namespace import DropTableRequest

import lance_ns
from lance_ns.base import OPERATIONS
from lance_ns.errors import PermissionDeniedError, UnauthenticatedError
from lance_ns.server import auth as A
from lance_ns.protocol import routes as R
from lance_ns.server import run_server_in_thread
from tests.rest.conftest import arrow_stream as table_to_ipc

TOKENS = {"reader": "r-token-5a1e", "writer": "w-token-77c2", "admin": "a-token-0d9f"}


def auth_toml(reader_grant: str = "read") -> str:
    writer_digest = hashlib.sha256(TOKENS["writer"].encode()).hexdigest()
    return f"""
[[principal]]
name = "reader"
token = "{TOKENS['reader']}"
{reader_grant} = ["sales"]

[[principal]]
name = "writer"
token_sha256 = "{writer_digest}"
write = ["sales"]
read = ["reference"]

[[principal]]
name = "admin"
token = "{TOKENS['admin']}"
admin = ["*"]
"""


def ipc(n: int = 3) -> bytes:
    return table_to_ipc(pa.table({"x": list(range(n))}))


@pytest.fixture
def world(tmp_path):
    path = tmp_path / "auth.toml"
    path.write_text(auth_toml())
    backend = lance_ns.connect("dir", {"root": str(tmp_path / "lake")})
    with run_server_in_thread(backend, auth_file=str(path), auth_token="legacy-token-1", log_requests=False) as server:
        clients = {}

        def client(who: str):
            if who not in clients:
                token = TOKENS.get(who, who)
                clients[who] = lance_ns.connect("rest", {"uri": server.url, "auth_token": token, "max_retries": "0"})
            return clients[who]

        admin = client("admin")
        for ns in (["sales"], ["sales", "eu"], ["reference"], ["hr"]):
            admin.create_namespace({"id": ns})
        for t in (["sales", "t"], ["reference", "codes"], ["hr", "salaries"]):
            admin.create_table({"id": t}, ipc())
        yield client, path, server
        for c in clients.values():
            c.close()


def denied(fn, *args):
    with pytest.raises(PermissionDeniedError) as e:
        fn(*args)
    assert e.value.code == 15
    return e.value


def test_a_read_principal_reads_its_prefix_and_cannot_create_write_or_drop(world):
    client, _, _ = world
    reader, admin = client("reader"), client("admin")
    assert reader.list_namespaces({"id": []}).namespaces == ["sales"]  # not hr, not reference
    assert reader.list_namespaces({"id": ["sales"]}).namespaces == ["eu"]
    assert reader.list_tables({"id": ["sales"]}).tables == ["t"]
    assert reader.describe_table({"id": ["sales", "t"]}).location
    assert reader.count_table_rows({"id": ["sales", "t"]}).count == 3
    denied(reader.create_table, {"id": ["sales", "new"]}, ipc())
    denied(reader.declare_table, {"id": ["sales", "eu", "new"]})
    denied(reader.insert_into_table, {"id": ["sales", "t"]}, ipc(2))
    denied(reader.drop_table, DropTableRequest(id=["sales", "t"]))
    denied(reader.create_namespace, {"id": ["sales", "x"]})
    denied(reader.drop_namespace, {"id": ["sales", "eu"]})
    # outside its prefix: nothing at all
    denied(reader.describe_table, {"id": ["hr", "salaries"]})
    denied(reader.list_tables, {"id": ["hr"]})
    denied(reader.list_namespaces, {"id": ["hr"]})
    # and nothing changed
    assert admin.list_tables({"id": ["sales"]}).tables == ["t"]
    assert admin.list_tables({"id": ["sales", "eu"]}).tables == []
    assert admin.count_table_rows({"id": ["sales", "t"]}).count == 3
    assert admin.list_namespaces({"id": ["sales"]}).namespaces == ["eu"]


def test_a_write_principal_writes_tables_but_cannot_create_namespaces(world):
    client, _, _ = world
    writer, admin = client("writer"), client("admin")
    assert writer.list_namespaces({"id": []}).namespaces == ["reference", "sales"]
    writer.create_table({"id": ["sales", "eu", "orders"]}, ipc())
    writer.insert_into_table({"id": ["sales", "eu", "orders"]}, ipc(2))
    assert writer.count_table_rows({"id": ["sales", "eu", "orders"]}).count == 5
    writer.drop_table(DropTableRequest(id=["sales", "eu", "orders"]))
    denied(writer.create_namespace, {"id": ["sales", "x"]})
    denied(writer.drop_namespace, {"id": ["sales", "eu"]})
    # read-only where it has read
    assert writer.count_table_rows({"id": ["reference", "codes"]}).count == 3
    denied(writer.insert_into_table, {"id": ["reference", "codes"]}, ipc(1))
    denied(writer.drop_table, DropTableRequest(id=["reference", "codes"]))
    assert admin.count_table_rows({"id": ["reference", "codes"]}).count == 3
    assert admin.list_namespaces({"id": ["sales"]}).namespaces == ["eu"]
    # an admin on "*" creates and drops namespaces, the root included
    admin.create_namespace({"id": ["sales", "x"]})
    admin.drop_namespace({"id": ["sales", "x"]})


def test_denied_calls_answer_403_code_15_over_http(world):
    import httpx

    _, _, server = world
    r = httpx.post(f"{server.url}/v1/namespace/sales$y/create", json={},
                   headers={"Authorization": f"Bearer {TOKENS['writer']}"})
    assert r.status_code == 403 and r.json()["code"] == 15
    # the auth file's token is accepted as x-api-key too; a wrong or missing one is 401 code 16
    r = httpx.get(f"{server.url}/v1/namespace/$/list", headers={"x-api-key": TOKENS["reader"]})
    assert r.status_code == 200 and r.json()["namespaces"] == ["sales"]
    for headers in ({}, {"Authorization": "Bearer nope"}):
        r = httpx.get(f"{server.url}/v1/namespace/$/list", headers=headers)
        assert r.status_code == 401 and r.json()["code"] == 16


def test_the_plain_auth_token_still_may_do_everything(world):
    client, _, _ = world
    legacy = client("legacy-token-1")
    assert legacy.list_namespaces({"id": []}).namespaces == ["hr", "reference", "sales"]
    legacy.create_namespace({"id": ["ops"]})
    with pytest.raises(UnauthenticatedError):
        client("not-a-token").list_namespaces({"id": []})


def test_every_mutating_call_is_audited_with_the_principal_name_never_the_token(world, caplog):
    client, _, _ = world
    with caplog.at_level(logging.INFO, logger="lance_ns.audit"):
        client("writer").declare_table({"id": ["sales", "declared"]})
        denied(client("reader").drop_table, DropTableRequest(id=["sales", "t"]))
        client("reader").describe_table({"id": ["sales", "t"]})  # a read: not audited
    lines = [r.getMessage() for r in caplog.records if r.name == "lance_ns.audit"]
    assert lines == ["principal=writer op=DeclareTable id=sales.declared outcome=ok",
                     "principal=reader op=DropTable id=sales.t outcome=error code 15"]
    assert not any(t in caplog.text for t in TOKENS.values())


def test_the_auth_file_is_reread_when_it_changes(world, monkeypatch):
    monkeypatch.setattr(A.AuthFile, "CHECK_INTERVAL", 0)  # every request looks (1 s by default)
    client, path, _ = world
    reader = client("reader")
    denied(reader.declare_table, {"id": ["sales", "r1"]})
    _rewrite(path, auth_toml(reader_grant="write"))
    reader.declare_table({"id": ["sales", "r1"]})
    # a file that no longer parses keeps the principals last read
    _rewrite(path, "[[principal]\nname = ")
    reader.declare_table({"id": ["sales", "r2"]})
    _rewrite(path, auth_toml(reader_grant="read"))
    denied(reader.declare_table, {"id": ["sales", "r3"]})


def test_with_the_default_interval_a_change_takes_effect_within_a_second(world):
    client, path, _ = world
    reader = client("reader")
    denied(reader.declare_table, {"id": ["sales", "w1"]})
    _rewrite(path, auth_toml(reader_grant="write"))
    time.sleep(A.AuthFile.CHECK_INTERVAL + 0.1)
    reader.declare_table({"id": ["sales", "w1"]})


def test_a_token_removed_from_the_file_is_refused_although_it_was_remembered(world, monkeypatch):
    """The server remembers the principal of credentials it has seen, only while the
    file is as it was loaded; a wrong token beside a remembered one is refused each time."""
    monkeypatch.setattr(A.AuthFile, "CHECK_INTERVAL", 0)
    client, path, server = world
    reader = client("reader")
    for _ in range(3):
        reader.describe_table({"id": ["sales", "t"]})
    wrong = lance_ns.connect("rest", {"uri": server.url, "auth_token": TOKENS["reader"] + "x", "max_retries": "0"})
    for _ in range(2):
        with pytest.raises(UnauthenticatedError):
            wrong.describe_table({"id": ["sales", "t"]})
    wrong.close()
    _rewrite(path, auth_toml().replace(f'token = "{TOKENS["reader"]}"', 'token = "a-new-reader-token"'))
    with pytest.raises(UnauthenticatedError):
        reader.describe_table({"id": ["sales", "t"]})


def _rewrite(path, text: str) -> None:
    before = os.stat(path).st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(time.time_ns(), max(time.time_ns(), before + 1_000_000)))


@pytest.mark.parametrize("method", sorted(OPERATIONS))
def test_every_operation_has_a_grant_derived_from_the_registry(method):
    route = R.ROUTES[method]
    op = OPERATIONS[method]
    fields = {"id": ["sales", "eu", "t"]} if "id" in op.request.model_fields else {}
    need = A.requirement(route, op.request.model_construct(**fields))
    expected = (A.ADMIN if method in ("create_namespace", "drop_namespace") else
                A.READ if method.startswith(("list_", "describe_", "get_")) or method.endswith(("_exists", "count_table_rows",
                                                                                               "query_table", "_plan"))
                else A.WRITE)  # fmt: skip
    assert need.grant == expected
    if route.path.startswith("/v1/namespace/"):
        assert need.namespaces == (("sales", "eu", "t"),)
    elif route.path.startswith(("/v1/table/{id}", "/v1/materialized_view/")):
        assert need.namespaces[0] == ("sales", "eu")


@pytest.mark.parametrize("text, message", [
    ('[[principal]]\nname = "a"\nread = ["x"]', "exactly one of token"),
    ('[[principal]]\nname = "a"\ntoken_sha256 = "abc"', "64 hex digits"),
    ('[[principal]]\nname = "a"\ntoken = "t"\nread = ["a..b"]', "namespace id"),
    ('[[principal]]\nname = "a"\ntoken = "t"\nwrite = "x"\nown = ["y"]', "unknown keys"),
    ('[[principal]]\nname = "a"\ntoken = "t"\n[[principal]]\nname = "b"\ntoken = "t"', "shares its token"),
])  # fmt: skip
def test_a_malformed_auth_file_is_refused_at_startup(tmp_path, text, message):
    from lance_ns.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match=message):
        A.parse_principals(text)
