"""Interop of our REST server and client with the ecosystem's own.

* pylance's Rust ``RestNamespace`` and the generated
  ``lance_namespace_urllib3_client`` drive our server (the full conformance
  suite also runs through pylance's client: backend ``rest-pylance-client``);
* our client drives pylance's Rust ``RestAdapter`` (conformance backend
  ``rest-pylance-server``, departures listed there) and its data routes here;
* schemathesis fuzzes our server from the OpenAPI document it serves.
"""

from __future__ import annotations

import io
import json
import uuid

import httpx
import lance
import lance.namespace
import lance_namespace_urllib3_client as gen
import pyarrow as pa
import pytest
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    DescribeTableRequest,
    DropTableRequest,
    ListTablesRequest,
)

import lance_ns
from lance_ns.server import run_server_in_thread
from tests.conformance.backends.rest import data_backend, serving_backend

ARROW = {"content-type": "application/vnd.apache.arrow.stream"}


def sample(n=5, start=0):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()), "name": [f"n{i}" for i in range(start, start + n)]})


def stream(table):
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


@pytest.fixture
def ours(tmp_path):
    with run_server_in_thread(serving_backend(str(tmp_path / "lake"))) as srv:
        yield srv


@pytest.fixture
def ours_data(tmp_path):
    with run_server_in_thread(data_backend(str(tmp_path / "data-lake"))) as srv:
        yield srv


@pytest.fixture
def pylance_server(tmp_path):
    adapter = lance.namespace.RestAdapter("dir", {"root": str(tmp_path / "pylance-lake")}, host="127.0.0.1", port=0)
    adapter.start()
    try:
        yield f"http://127.0.0.1:{adapter.port}"
    finally:
        adapter.stop()


# -- pylance's Rust client -> our server ------------------------------------------------------


def test_pylance_client_writes_and_reads_through_our_server(ours):
    ns = lance.namespace.RestNamespace(uri=ours.url)
    ns.create_namespace(CreateNamespaceRequest(id=["lake"]))
    tid = ["lake", "events"]
    lance.write_dataset(sample(10), namespace_client=ns, table_id=tid, mode="create")
    lance.write_dataset(sample(5, 10), namespace_client=ns, table_id=tid, mode="append")
    ds = lance.dataset(namespace_client=ns, table_id=tid)
    assert ds.count_rows() == 15
    assert sorted(ds.to_table(columns=["id"])["id"].to_pylist()) == list(range(15))
    lance.write_dataset(sample(2), namespace_client=ns, table_id=tid, mode="overwrite")
    assert lance.dataset(namespace_client=ns, table_id=tid).count_rows() == 2
    assert ns.list_tables(ListTablesRequest(id=["lake"])).tables == ["events"]
    # the same table is visible to our own client through the same server
    assert lance_ns.connect("rest", {"uri": ours.url}).list_tables({"id": ["lake"]}).tables == ["events"]
    with pytest.raises(Exception):
        lance.write_dataset(sample(1), namespace_client=ns, table_id=tid, mode="create")
    ns.drop_table(DropTableRequest(id=tid))
    with pytest.raises(lance_ns.errors.TableNotFoundError):
        ns.describe_table(DescribeTableRequest(id=tid))


@pytest.mark.slow  # a moto server
def test_pylance_client_pages_through_our_server_over_glue(tmp_path):
    """pylance's Rust client enumerates a Glue database (moto) in pages through our server,
    declaring and deregistering between pages: the pages after a write show it, and an
    enumeration reads the database from Glue once, not once a page (Glue's GetTables
    cannot start at a name: the continuation pages reuse the first page's listing)."""
    from lance_namespace import DeclareTableRequest, DeregisterTableRequest

    from tests.conformance.backends.glue import _start as glue_on_moto

    with glue_on_moto(tmp_path) as ctx, ctx.connect() as glue, run_server_in_thread(glue) as srv:
        calls = []
        glue.glue.meta.events.register("before-call.glue.GetTables", lambda **_: calls.append(1))
        client = lance.namespace.RestNamespace(uri=srv.url)
        client.create_namespace(CreateNamespaceRequest(id=["db"]))
        names = [f"t{i:02d}" for i in range(10)]
        for name in names:
            client.declare_table(DeclareTableRequest(id=["db", name]))

        def enumerate_pages(between=None):
            listed, token, pages = [], None, 0
            while True:
                page = client.list_tables(ListTablesRequest(id=["db"], limit=3, page_token=token))
                listed, token, pages = listed + page.tables, page.page_token, pages + 1
                if not token:
                    return listed, pages
                if between and pages == 1:
                    between()

        calls.clear()
        assert enumerate_pages() == (names, 4)
        assert len(calls) == 1, f"4 pages read the database {len(calls)} times"

        def write():
            client.declare_table(DeclareTableRequest(id=["db", "t05a"]))
            client.deregister_table(DeregisterTableRequest(id=["db", "t07"]))

        listed, _ = enumerate_pages(between=write)
        assert listed == names[:6] + ["t05a"] + names[6:7] + names[8:]


@pytest.mark.slow  # a moto server
def test_pylance_writes_data_through_our_server_over_glue_and_reads_ours(tmp_path, monkeypatch):
    """pylance writes a table's data itself (``lance.write_dataset`` with our server as its
    namespace: it declares, then writes to the S3 location with the credentials our server
    vends from moto's STS) into Glue on moto, and ours reads those rows from Glue directly;
    the reverse: ours writes a table into Glue, and pylance reads it through our server.
    pylance's client is told S3's endpoint only, never a key, and finds none around it."""
    from tests.conformance.backends.glue import _start as glue_on_moto
    from tests.services.moto import no_ambient_aws_credentials

    no_ambient_aws_credentials(monkeypatch, tmp_path)

    vendor = {"credential_vendor.enabled": "true", "credential_vendor.permission": "admin",
              "credential_vendor.aws_role_arn": "arn:aws:iam::123456789012:role/lake-tables",
              "credential_vendor.aws_sts_endpoint": "{endpoint}"}
    with glue_on_moto(tmp_path, **vendor) as ctx, ctx.connect() as glue, run_server_in_thread(glue) as srv:
        where = {k: ctx.storage_options[k] for k in ("endpoint", "allow_http", "region")}
        client = lance.namespace.RestNamespace(uri=srv.url)
        db = f"w{uuid.uuid4().hex[:8]}"  # (moto's Glue is shared by the tests of a session)
        client.create_namespace(CreateNamespaceRequest(id=[db]))
        theirs = [db, "theirs"]
        lance.write_dataset(sample(10), namespace_client=client, table_id=theirs, mode="create", storage_options=where)
        lance.write_dataset(sample(5, 10), namespace_client=client, table_id=theirs, mode="append")
        vended = client.describe_table(DescribeTableRequest(id=theirs)).storage_options
        assert vended["aws_session_token"] and vended["aws_access_key_id"] != ctx.storage_options["aws_access_key_id"]

        with ctx.connect() as own:
            location = own.describe_table({"id": theirs}).location
            assert location.startswith("s3://")
            read = lance.dataset(location, storage_options=ctx.storage_options).to_table(columns=["id"])
            assert sorted(read["id"].to_pylist()) == list(range(15))

            own.create_table({"id": [db, "ours"]}, stream(sample(3)))
        assert sorted(client.list_tables(ListTablesRequest(id=[db])).tables) == ["ours", "theirs"]
        ours_there = lance.dataset(namespace_client=client, table_id=[db, "ours"], storage_options=where)
        assert sorted(ours_there.to_table(columns=["name"])["name"].to_pylist()) == ["n0", "n1", "n2"]


def test_pylance_client_authenticates_with_headers(tmp_path):
    backend = serving_backend(str(tmp_path / "auth-lake"))
    with run_server_in_thread(backend, auth_token="tok-1", api_keys=["key-1"]) as srv:
        with pytest.raises(lance_ns.errors.UnauthenticatedError):
            lance.namespace.RestNamespace(uri=srv.url).create_namespace(CreateNamespaceRequest(id=["x"]))
        bearer = lance.namespace.RestNamespace(uri=srv.url, **{"header.Authorization": "Bearer tok-1"})
        bearer.create_namespace(CreateNamespaceRequest(id=["x"]))
        keyed = lance.namespace.RestNamespace(uri=srv.url, **{"header.x-api-key": "key-1"})
        assert keyed.list_namespaces(gen.ListNamespacesRequest(id=[])).namespaces == ["x"]


def test_pylance_client_data_routes_on_our_server(ours_data):
    ns = lance.namespace.RestNamespace(uri=ours_data.url)
    ns.create_namespace(CreateNamespaceRequest(id=["d"]))
    from lance_namespace import CreateTableRequest, InsertIntoTableRequest, QueryTableRequest

    ns.create_table(CreateTableRequest(id=["d", "t"]), stream(sample(4)))
    ns.insert_into_table(InsertIntoTableRequest(id=["d", "t"]), stream(sample(2, 4)))
    assert ns.count_table_rows(CountTableRowsRequest(id=["d", "t"])).count == 6
    out = ns.query_table(QueryTableRequest(id=["d", "t"], k=100, vector={}))
    assert sorted(pa.ipc.open_file(pa.BufferReader(out.data)).read_all()["id"].to_pylist()) == list(range(6))


# -- the generated urllib3 client -> our server ------------------------------------------------


def _gen_client(url):
    return gen.ApiClient(gen.Configuration(host=url))


def test_generated_client_scenario(ours):
    api = _gen_client(ours.url)
    nsapi, tapi = gen.NamespaceApi(api), gen.TableApi(api)
    nsapi.create_namespace("lake", gen.CreateNamespaceRequest(properties={"owner": "ml"}))
    with pytest.raises(gen.ApiException) as e:
        nsapi.create_namespace("lake", gen.CreateNamespaceRequest())
    assert e.value.status == 409 and json.loads(e.value.body)["code"] == 2
    nsapi.create_namespace("lake", gen.CreateNamespaceRequest(mode="ExistOk"))
    assert nsapi.list_namespaces("$").namespaces == ["lake"]
    assert nsapi.describe_namespace("lake", gen.DescribeNamespaceRequest()).properties["owner"] == "ml"
    nsapi.namespace_exists("lake", gen.NamespaceExistsRequest())
    declared = tapi.declare_table("lake$events", gen.DeclareTableRequest())
    assert declared.location
    assert tapi.describe_table("lake$events", gen.DescribeTableRequest()).location == declared.location
    tapi.table_exists("lake$events", gen.TableExistsRequest())
    assert nsapi.list_tables("lake", limit=10).tables == ["events"]
    assert nsapi.list_tables("lake", delimiter=".").tables == ["events"]
    with pytest.raises(gen.ApiException) as e:
        tapi.describe_table("lake$ghost", gen.DescribeTableRequest())
    assert e.value.status == 404 and json.loads(e.value.body)["code"] == 4
    with pytest.raises(gen.ApiException) as e:
        nsapi.drop_namespace("lake", gen.DropNamespaceRequest())
    assert e.value.status == 409 and json.loads(e.value.body)["code"] == 3
    tapi.deregister_table("lake$events", gen.DeregisterTableRequest())
    assert nsapi.list_tables("lake").tables == []
    nsapi.drop_namespace("lake", gen.DropNamespaceRequest())
    with pytest.raises(gen.ApiException) as e:
        nsapi.namespace_exists("lake", gen.NamespaceExistsRequest())
    assert e.value.status == 404 and json.loads(e.value.body)["code"] == 1


def test_generated_client_data_routes(ours_data):
    api = _gen_client(ours_data.url)
    gen.NamespaceApi(api).create_namespace("d", gen.CreateNamespaceRequest())
    data = gen.DataApi(api)
    data.create_table("d$t", stream(sample(3)))
    data.insert_into_table("d$t", stream(sample(3, 3)))
    assert data.count_table_rows("d$t", gen.CountTableRowsRequest()) == 6
    raw = data.query_table_with_http_info("d$t", gen.QueryTableRequest(k=10, vector=gen.QueryTableRequestVector()))
    assert pa.ipc.open_file(pa.BufferReader(raw.raw_data)).read_all().num_rows == 6
    merged = data.merge_insert_into_table(
        "d$t", ["id"], stream(sample(4, 4)), when_matched_update_all=True, when_not_matched_insert_all=True
    )
    assert merged is not None
    assert data.count_table_rows("d$t", gen.CountTableRowsRequest()) == 8


# -- our client -> pylance's Rust server --------------------------------------------------------


def test_our_client_data_routes_on_pylance_server(pylance_server):
    ns = lance_ns.connect("rest", {"uri": pylance_server})
    ns.create_namespace({"id": ["d"]})
    ns.create_table({"id": ["d", "t"]}, stream(sample(4)))
    ns.insert_into_table({"id": ["d", "t"]}, stream(sample(2, 4)))
    assert ns.count_table_rows({"id": ["d", "t"]}).count == 6
    out = ns.query_table({"id": ["d", "t"], "k": 100, "vector": {}})
    assert pa.ipc.open_file(pa.BufferReader(out.data)).read_all().num_rows == 6
    lance.write_dataset(sample(3), namespace_client=ns, table_id=["d", "w"], mode="create")
    assert lance.dataset(namespace_client=ns, table_id=["d", "w"]).count_rows() == 3


def test_departures_of_pylance_server_that_ours_does_not_have(pylance_server, ours, ours_data):
    """Measured differences (the CLI's ``check`` reports the same ones)."""
    with httpx.Client(base_url=pylance_server) as theirs, httpx.Client(base_url=ours.url) as mine, httpx.Client(
        base_url=ours_data.url
    ) as mine_data:
        for h in (theirs, mine, mine_data):
            assert h.post("/v1/namespace/n/create", json={}).status_code == 200
        # malformed Arrow: theirs 500 (code 18), ours 400 (code 13)
        t = theirs.post("/v1/table/n$t/create", content=b"not arrow", headers=ARROW)
        m = mine_data.post("/v1/table/n$t/create", content=b"not arrow", headers=ARROW)
        assert (t.status_code, t.json()["code"]) == (500, 18)
        assert (m.status_code, m.json()["code"]) == (400, 13)
        # ExistOk ignored by theirs
        assert theirs.post("/v1/namespace/n/create", json={"mode": "ExistOk"}).status_code == 409
        assert mine.post("/v1/namespace/n/create", json={"mode": "ExistOk"}).status_code == 200
        # unknown modes accepted by theirs
        assert theirs.post("/v1/namespace/n/drop", json={"behavior": "Explode"}).status_code != 400
        assert mine.post("/v1/namespace/n/drop", json={"behavior": "Explode"}).status_code == 400
        # listing tables of a missing namespace: theirs an empty list, ours 404 code 1
        assert theirs.get("/v1/namespace/ghost/table/list").json()["tables"] == []
        assert mine.get("/v1/namespace/ghost/table/list").json()["code"] == 1


# -- fuzzing our server from its own OpenAPI document -----------------------------------------


def _arrow_serializer(ctx, value):
    """Schemathesis bodies for Arrow routes: the generated bytes as they are
    (mostly not Arrow: must be a 400), and for every third one a real stream."""
    raw = value.encode() if isinstance(value, str) else bytes(value) if isinstance(value, (bytes, bytearray)) else b""
    if len(raw) % 3 == 0:
        return stream(pa.table({"x": [len(raw)]}))
    return raw


@pytest.mark.slow  # a fresh process or a whole build: not in the quick loop
def test_schemathesis_finds_no_5xx_and_no_schema_violations(ours):
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

    schemathesis.serializer("application/vnd.apache.arrow.stream")(_arrow_serializer)
    checks = (not_a_server_error, response_schema_conformance, content_type_conformance)
    schema = schemathesis.openapi.from_url(f"{ours.url}/openapi.json")
    failures, statuses = [], []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 54
    for op in operations:

        @given(case=op.as_strategy())
        @settings(max_examples=3, phases=[Phase.explicit, Phase.generate], deadline=None, database=None,
                  suppress_health_check=list(HealthCheck), derandomize=True)  # fmt: skip
        def run(case):
            response = case.call(timeout=30)
            statuses.append(response.status_code)
            try:
                case.validate_response(response, checks=checks)
            except Exception as e:  # record and go on: one report for all operations
                failures.append(f"{op.method.upper()} {op.path} -> {response.status_code}: {str(e)[:300]}")

        run()  # generation errors fail the test
    assert not failures, "\n".join(failures[:10])
    assert 500 not in statuses and len(statuses) >= 100
    assert any(s == 200 for s in statuses)
