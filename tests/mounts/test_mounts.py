"""What only a ``mounts`` namespace does: the root, mounts as configuration, ids across
mounts, a mount that is down, grants per mount.  (Every other operation is the
conformance suite's, run inside a mount: tests/conformance/backends/mounts.py.)"""

import socket
import uuid

import lance
import lance.namespace
import pyarrow as pa
import pytest
from lance_namespace import BatchCreateTableVersionsRequest, CreateTableVersionEntry, DescribeTableRequest, LanceNamespace

import lance_ns
from lance_ns.errors import code_of
from lance_ns.impls.mounts import MountsNamespace
from lance_ns.server import run_server_in_thread


def _code(call) -> int:
    with pytest.raises(Exception) as e:
        call()
    return code_of(e.value)


@pytest.fixture
def lake(tmp_path):
    props = {"mounts.scratch.impl": "dir", "mounts.scratch.root": str(tmp_path / "scratch"),
             "mounts.mem.impl": "memory", "mounts.mem.root": str(tmp_path / "mem")}
    with lance_ns.connect("mounts", props) as ns:
        ns.create_namespace({"id": ["scratch", "s"]})
        ns.create_namespace({"id": ["mem", "m"]})
        yield ns


def test_the_root_lists_the_mounts_and_holds_nothing_else(lake):
    assert lake.list_namespaces({"id": []}).namespaces == ["mem", "scratch"]
    first = lake.list_namespaces({"id": [], "limit": 1})
    assert first.namespaces == ["mem"]
    assert lake.list_namespaces({"id": [], "limit": 1, "page_token": first.page_token}).namespaces == ["scratch"]
    assert lake.describe_namespace({"id": []}).properties == {}
    assert lake.list_tables({"id": []}).tables == []
    assert lake.list_namespaces({"id": ["scratch"]}).namespaces == ["s"]


def test_mounts_are_configuration_not_namespaces(lake):
    assert _code(lambda: lake.create_namespace({"id": ["new"]})) == 13
    assert _code(lambda: lake.drop_namespace({"id": ["mem"]})) == 13
    assert _code(lambda: lake.drop_namespace({"id": []})) == 13
    assert lake.list_namespaces({"id": []}).namespaces == ["mem", "scratch"]


def test_an_unknown_mount_answers_as_the_ids_kind(lake):
    assert _code(lambda: lake.describe_namespace({"id": ["nope", "s"]})) == 1
    assert _code(lambda: lake.namespace_exists({"id": ["nope"]})) == 1
    assert _code(lambda: lake.describe_table({"id": ["nope", "s", "t"]})) == 4
    assert _code(lambda: lake.describe_table({"id": ["scratch"]})) == 4  # a mount is not a table


def test_a_table_written_into_one_mount_is_its_backends_own(lake, tmp_path):
    data = pa.table({"x": [1, 2, 3]})
    lance.write_dataset(data, namespace_client=lake, table_id=["scratch", "s", "t"], mode="create")
    assert lake.describe_table({"id": ["scratch", "s", "t"]}).namespace == ["scratch", "s"]
    # the mount's own client, with no mounts layer, sees the table at the id below the mount
    native = lance_ns.connect("dir", {"root": str(tmp_path / "scratch")})
    assert lance.dataset(namespace_client=native, table_id=["s", "t"]).to_table() == data
    # and a table its native client writes is read through the mounts
    mem = lake.mount("mem")
    lance.write_dataset(data, namespace_client=mem, table_id=["m", "u"], mode="create")
    assert lance.dataset(namespace_client=lake, table_id=["mem", "m", "u"]).count_rows() == 3
    tables = lake.list_all_tables({})
    assert tables.tables == ["mem$m$u", "scratch$s$t"]
    page = lake.list_all_tables({"limit": 1})
    assert page.tables == ["mem$m$u"]
    assert lake.list_all_tables({"limit": 1, "page_token": page.page_token}).tables == ["scratch$s$t"]
    assert lake.list_all_tables({"id": ["scratch"]}).tables == ["scratch$s$t"]


def test_an_operation_across_two_mounts_is_refused_naming_both(lake):
    lake.declare_table({"id": ["scratch", "s", "t"]})
    rename = {"id": ["scratch", "s", "t"], "new_table_name": "u", "new_namespace_id": ["mem", "m"]}
    with pytest.raises(Exception) as e:
        lake.rename_table(rename)
    assert code_of(e.value) == 13 and "'mem'" in str(e.value) and "'scratch'" in str(e.value)
    lake.table_exists({"id": ["scratch", "s", "t"]})  # nothing moved (a missing table raises 4)
    batch = BatchCreateTableVersionsRequest(entries=[
        CreateTableVersionEntry(id=["scratch", "s", "t"], version=2, manifest_path="a"),
        CreateTableVersionEntry(id=["mem", "m", "t"], version=2, manifest_path="b"),
    ])
    assert _code(lambda: lake.batch_create_table_versions(batch)) == 13
    assert _code(lambda: lake.rename_table({**rename, "new_namespace_id": []})) == 13  # into the root


def test_an_operation_a_mount_lacks_answers_0_naming_it(tmp_path):
    class ListsOnly(LanceNamespace):  # a third-party namespace implementing one operation
        def namespace_id(self):
            return "lists-only"

        def list_namespaces(self, request):
            from lance_namespace import ListNamespacesResponse
            return ListNamespacesResponse(namespaces=["a"])

    ns = MountsNamespace.of({"thin": ListsOnly(), "mem": lance_ns.connect("memory", {"root": str(tmp_path)})})
    assert ns.list_namespaces({"id": ["thin"]}).namespaces == ["a"]
    with pytest.raises(Exception) as e:
        ns.describe_table({"id": ["thin", "a", "t"]})
    assert code_of(e.value) == 0 and "'thin'" in str(e.value)
    assert "DeclareTable" in ns.mount_operations()["mem"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_mount_that_is_down_answers_17_for_its_ids_only_and_recovers(tmp_path):
    backend = lance_ns.connect("dir", {"root": str(tmp_path / "remote")})
    backend.create_namespace({"id": ["r"]})
    port = _free_port()
    props = {"mounts.remote.impl": "rest", "mounts.remote.uri": f"http://127.0.0.1:{port}",
             "mounts.remote.max_retries": "0", "mounts.remote.connect_timeout": "500",
             "mounts.mem.impl": "memory", "mounts.mem.root": str(tmp_path / "mem")}
    ns = lance_ns.connect("mounts", props)  # starts with the remote mount's server not yet up
    assert _code(lambda: ns.list_namespaces({"id": ["remote"]})) == 17
    assert ns.list_namespaces({"id": ["mem"]}).namespaces == []
    with run_server_in_thread(backend, port=port, log_requests=False):
        assert ns.list_namespaces({"id": ["remote"]}).namespaces == ["r"]
    assert _code(lambda: ns.describe_namespace({"id": ["remote", "r"]})) == 17  # stopped again
    assert ns.list_namespaces({"id": []}).namespaces == ["mem", "remote"]  # the root does not ask the mounts
    with run_server_in_thread(backend, port=port, log_requests=False):
        assert ns.describe_namespace({"id": ["remote", "r"]}).properties is not None


def test_grants_on_one_mount_do_not_reach_another(lake, tmp_path):
    auth = tmp_path / "auth.toml"
    auth.write_text('[[principal]]\nname = "onprem-etl"\ntoken = "tok-scratch"\nwrite = ["scratch"]\n')
    with run_server_in_thread(lake, auth_file=str(auth), log_requests=False) as server:
        client = lance_ns.connect("rest", {"uri": server.url, "auth_token": "tok-scratch"})
        client.declare_table({"id": ["scratch", "s", "t"]})
        assert client.list_tables({"id": ["scratch", "s"]}).tables == ["t"]
        assert _code(lambda: client.declare_table({"id": ["mem", "m", "t"]})) == 15
        assert _code(lambda: client.list_tables({"id": ["mem", "m"]})) == 15


def test_mount_configuration_errors_are_told_at_connect(tmp_path, monkeypatch):
    assert _code(lambda: lance_ns.connect("mounts", {})) == 13
    assert _code(lambda: lance_ns.connect("mounts", {"mounts.a.root": "/x"})) == 13  # no impl
    assert _code(lambda: lance_ns.connect("mounts", {"mounts.a.impl": "nosuch"})) == 13
    assert _code(lambda: lance_ns.connect("mounts", {"mounts.a.impl": "mounts"})) == 13
    assert _code(lambda: lance_ns.connect("mounts", {"mounts.a.b.impl": "dir"})) == 13  # "a.b" is no mount name
    # a named configuration
    monkeypatch.setenv("LANCE_NS__SCRATCHCFG__IMPL", "dir")
    monkeypatch.setenv("LANCE_NS__SCRATCHCFG__ROOT", str(tmp_path / "named"))
    ns = lance_ns.connect("mounts", {"mounts.scratch": "scratchcfg"})
    ns.create_namespace({"id": ["scratch", "x"]})
    assert lance_ns.connect("dir", {"root": str(tmp_path / "named")}).list_namespaces({}).namespaces == ["x"]


def test_glue_and_pylances_server_mounted_beside_a_directory(tmp_path):
    """Real third-party services as mounts: Glue on moto, pylance's RestAdapter (Rust) over
    its own DirectoryNamespace.  A table written through the mounts into each is read by
    that service's own client at the id below the mount, and the reverse."""
    from tests.conformance.backends import glue as glue_backend
    from tests.conformance.backends import rest as rest_backend

    data = pa.table({"x": [1, 2, 3]})
    glue, pylance_server = glue_backend.BACKENDS[0], next(b for b in rest_backend.BACKENDS
                                                          if b.name == "rest-pylance-server")
    for part in ("g", "p"):
        (tmp_path / part).mkdir()
    with glue.start(tmp_path / "g") as aws, pylance_server.start(tmp_path / "p") as py:
        impl, glue_props = aws.spawn
        uri = py.connect().uri
        props = {**{f"aws.{k}": v for k, v in glue_props.items()}, "aws.impl": impl,
                 "py.impl": "rest", "py.uri": uri,
                 "local.impl": "dir", "local.root": str(tmp_path / "local")}
        db = f"m{uuid.uuid4().hex[:8]}"  # moto's Glue outlives this test
        with lance_ns.connect("mounts", props) as lake:
            assert lake.list_namespaces({"id": []}).namespaces == ["aws", "local", "py"]
            for mount in ("aws", "py", "local"):
                lake.create_namespace({"id": [mount, db]})
                lance.write_dataset(data, namespace_client=lake, table_id=[mount, db, "t"], mode="create",
                                    storage_options=aws.storage_options if mount == "aws" else None)
            # each service's own client, no mounts layer
            native_glue = lance_ns.connect(impl, glue_props)
            assert native_glue.list_tables({"id": [db]}).tables == ["t"]
            assert lance.dataset(namespace_client=native_glue, table_id=[db, "t"],
                                 storage_options=aws.storage_options).to_table() == data
            pylance_client = lance.namespace.RestNamespace(uri=uri)
            assert lance.dataset(namespace_client=pylance_client, table_id=[db, "t"]).to_table() == data
            # and the reverse: what pylance's own client writes into its server is read through the mounts
            theirs = pa.table({"x": [7, 8]})
            lance.write_dataset(theirs, namespace_client=pylance_client, table_id=[db, "theirs"], mode="create")
            assert lance.dataset(namespace_client=lake, table_id=["py", db, "theirs"]).to_table() == theirs
            lance.write_dataset(theirs, namespace_client=native_glue, table_id=[db, "theirs"], mode="create",
                                storage_options=aws.storage_options)
            assert lance.dataset(namespace_client=lake, table_id=["aws", db, "theirs"],
                                 storage_options=aws.storage_options).to_table() == theirs
            # (moto's Glue is shared by the tests of this worker: only this test's database is looked at)
            assert [t for t in lake.list_all_tables({"id": ["aws"]}).tables
                    if t.startswith(f"aws${db}$")] == [f"aws${db}$t", f"aws${db}$theirs"]
            rename = {"id": ["aws", db, "t"], "new_table_name": "u", "new_namespace_id": ["py", db]}
            assert _code(lambda: lake.rename_table(rename)) == 13


def test_a_mount_that_cannot_connect_answers_17_without_its_secrets(tmp_path):
    calls = []

    def refuses():
        calls.append(1)
        raise ConnectionError("cannot reach https://etl:hunter2@catalog.internal:9083 secret_access_key=AKIA123")

    ns = MountsNamespace.of({"mem": lance_ns.connect("memory", {"root": str(tmp_path)}), "down": refuses})
    with pytest.raises(Exception) as e:
        ns.list_namespaces({"id": ["down"]})
    assert code_of(e.value) == 17 and "hunter2" not in str(e.value) and "AKIA123" not in str(e.value)
    assert _code(lambda: ns.list_namespaces({"id": ["down"]})) == 17
    assert len(calls) == 2  # tried again on the next call
    assert ns.list_namespaces({"id": ["mem"]}).namespaces == []


def test_metrics_audit_lines_and_the_ui_name_the_mount(lake, caplog):
    import logging
    import warnings

    from lance_ns.server import create_app

    warnings.filterwarnings("ignore", message=".*httpx.*")
    from starlette.testclient import TestClient

    http = TestClient(create_app(lake), base_url="http://testserver")
    with caplog.at_level(logging.INFO, logger="lance_ns.audit"):
        assert http.post("/v1/table/scratch$s$t/declare", json={}).status_code == 200
        assert http.post("/v1/table/mem$m$t/declare", json={}).status_code == 200
        assert http.post("/v1/table/mem$m$t/declare", json={}).status_code == 409
        assert http.post("/v1/table/mem$nowhere$t/describe", json={}).status_code == 404
        assert http.get("/v1/namespace/$/list").status_code == 200  # the root: no mount
    audit = [r.getMessage() for r in caplog.records if r.name == "lance_ns.audit"]
    assert any("id=scratch.s.t mount=scratch outcome=ok" in line for line in audit), audit
    assert any("id=mem.m.t mount=mem outcome=error code 5" in line for line in audit), audit
    scraped = http.get("/metrics").text
    assert 'lance_ns_mount_requests_total{mount="scratch",operation="DeclareTable",status="200"} 1.0' in scraped
    assert 'lance_ns_mount_requests_total{mount="mem",operation="DeclareTable",status="409"} 1.0' in scraped
    assert 'lance_ns_mount_errors_total{code="5",mount="mem",operation="DeclareTable"} 1.0' in scraped
    assert 'lance_ns_mount_errors_total{code="4",mount="mem",operation="DescribeTable"} 1.0' in scraped
    by_mount = [line for line in scraped.splitlines() if line.startswith("lance_ns_mount_")]
    assert not any('operation="ListNamespaces"' in line for line in by_mount), by_mount
    root = http.get("/ui/").text  # the browser's root: the mounts
    assert 'href="/ui/ns/mem"' in root and 'href="/ui/ns/scratch"' in root


def test_served_reads_run_where_the_mount_would_run_them(tmp_path, monkeypatch):
    """Served, a read of a mount that answers it from memory (a local ``dir``) runs on the
    event loop, as the mount served alone does: a mount adds no thread hand-off.  A mount
    that lists no such read (``memory``), a mount's first connection and the root's
    ListAllTables run on the server's threads, and every answer is the same."""
    import threading

    import httpx

    from lance_ns.impls.dir.namespace import DirectoryNamespace
    from lance_ns.impls.memory import MemoryNamespace

    connects: list[str] = []

    def late():  # a mount connected on its first call
        connects.append(threading.current_thread().name)
        return lance_ns.connect("dir", {"root": str(tmp_path / "late")})

    scratch = lance_ns.connect("dir", {"root": str(tmp_path / "scratch")})
    mem = lance_ns.connect("memory", {"root": str(tmp_path / "mem")})
    for ns, db in ((scratch, "s"), (mem, "m")):
        ns.create_namespace({"id": [db]})
        ns.declare_table({"id": [db, "t"]})
    lake = MountsNamespace.of({"scratch": scratch, "mem": mem, "late": late})
    assert {"describe_table", "table_exists", "list_tables"} <= lake.inline_methods  # scratch's
    seen: dict[str, list[str]] = {"dir": [], "memory": []}
    for cls, key in ((DirectoryNamespace, "dir"), (MemoryNamespace, "memory")):
        def spy(self, *args, real=cls.get_table_entry, key=key):
            seen[key].append(threading.current_thread().name)
            return real(self, *args)

        monkeypatch.setattr(cls, "get_table_entry", spy)
    on_threads = lambda names: names and all(n.startswith("lance-ns-backend") for n in names)  # noqa: E731
    with run_server_in_thread(lake, log_requests=False, ui=False) as srv:
        describe = lambda path: httpx.post(f"{srv.url}/v1/table/{path}/describe", json={}, timeout=30)  # noqa: E731
        for _ in range(3):
            answer = describe("scratch$s$t")
            assert answer.status_code == 200 and answer.json()["namespace"] == ["scratch", "s"], answer.text
        assert seen["dir"] and not any(n.startswith("lance-ns-backend") for n in seen["dir"]), seen
        answer = describe("mem$m$t")
        assert answer.status_code == 200 and answer.json()["namespace"] == ["mem", "m"], answer.text
        assert on_threads(seen["memory"]), seen
        listed = httpx.get(f"{srv.url}/v1/namespace/late/list", timeout=30)
        assert listed.status_code == 200 and listed.json()["namespaces"] == [], listed.text
        assert on_threads(connects), connects
        every = httpx.get(f"{srv.url}/v1/table", timeout=30)
        assert every.status_code == 200 and every.json()["tables"] == ["mem$m$t", "scratch$s$t"], every.text
    scratch.close()


def test_a_mount_connected_after_the_server_started_is_served_as_it_would_be_alone(tmp_path, monkeypatch):
    """The only mount answering reads from memory connects on its first call, after the server
    read what the mounts answer from memory: its reads still run on the event loop."""
    import threading

    import httpx

    from lance_ns.impls.dir.namespace import DirectoryNamespace

    lake = MountsNamespace.of({"late": lambda: lance_ns.connect("dir", {"root": str(tmp_path / "late")})})
    seen: list[str] = []

    def spy(self, *args, real=DirectoryNamespace.get_table_entry):
        seen.append(threading.current_thread().name)
        return real(self, *args)

    monkeypatch.setattr(DirectoryNamespace, "get_table_entry", spy)
    with run_server_in_thread(lake, log_requests=False, ui=False) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        assert c.post("/v1/namespace/late$d/create", json={}).status_code == 200  # connects it (on a thread)
        client = lance.namespace.RestNamespace(uri=srv.url)  # pylance's Rust client writes and reads
        lance.write_dataset(pa.table({"x": [1, 2]}), namespace_client=client, table_id=["late", "d", "t"],
                            mode="create")
        seen.clear()
        for _ in range(2):
            assert client.describe_table(DescribeTableRequest(id=["late", "d", "t"])).namespace == ["late", "d"]
        assert seen and not any(n.startswith("lance-ns-backend") for n in seen), seen
        assert lance.dataset(namespace_client=client, table_id=["late", "d", "t"]).count_rows() == 2
    mounted = lance_ns.connect("dir", {"root": str(tmp_path / "late")})  # ours reads what pylance wrote
    assert lance.dataset(mounted.describe_table({"id": ["d", "t"]}).location).count_rows() == 2
    mounted.close()


def test_the_roots_listing_of_every_table_pages_mount_by_mount(tmp_path):
    """The root's ListAllTables: every mount's tables, mount after mount, each mount paging
    its own listing, so a page asks only the mounts it spans (a mount that is down answers
    17 only for a page that reaches it)."""
    dirs = {name: lance_ns.connect("dir", {"root": str(tmp_path / name)}) for name in ("a", "b")}
    for name, n in (("a", 5), ("b", 4)):
        dirs[name].create_namespace({"id": ["s"]})
        for i in range(n):
            dirs[name].declare_table({"id": ["s", f"t{i}"]})
    asked: list[tuple[str, int | None]] = []

    def counting(name):
        real = dirs[name].list_all_tables

        def list_all_tables(request):
            asked.append((name, request.limit))
            return real(request)

        dirs[name].list_all_tables = list_all_tables  # the root calls a mount's public method
        return dirs[name]

    def down():
        raise ConnectionError("catalog.internal: connection refused")

    lake = MountsNamespace.of({"b": counting("b"), "a": counting("a"), "zz": down})
    want = [f"a$s$t{i}" for i in range(5)] + [f"b$s$t{i}" for i in range(4)]
    pages, token = [], None
    for _ in range(3):  # three pages of three: the third ends where b does, before mount zz
        page = lake.list_all_tables({"limit": 3, **({"page_token": token} if token else {})})
        pages.append(page.tables)
        token = page.page_token
    assert pages == [want[:3], want[3:6], want[6:]], pages
    assert asked == [("a", 3), ("a", 3), ("b", 1), ("b", 3)], asked  # never a whole listing of a mount
    assert token  # zz is next: reaching it answers 17, naming it
    with pytest.raises(Exception) as e:
        lake.list_all_tables({"limit": 3, "page_token": token})
    assert code_of(e.value) == 17 and "'zz'" in str(e.value)
    assert _code(lambda: lake.list_all_tables({"limit": 3, "page_token": "bm90IG91cnM"})) == 13  # not a token we gave
    for ns in dirs.values():
        ns.close()


def test_a_mount_connected_again_is_called_on_its_new_connection(tmp_path):
    """How a call reaches a mount is worked out once per connection (Mount.route): after the
    mount is closed and connected again, calls reach the new namespace object, through its
    checked boundary where it is ours (the request checked once, on the way in), and a request
    over the limits is still refused before it reaches the mount."""
    made = []

    def connect():
        made.append(lance_ns.connect("dir", {"root": str(tmp_path / "lake")}))
        return made[-1]

    ns = MountsNamespace.of({"lake": connect})
    ns.create_namespace({"id": ["lake", "s"]})
    ns.declare_table({"id": ["lake", "s", "t"]})
    assert ns.describe_table({"id": ["lake", "s", "t"]}).namespace == ["lake", "s"]
    first = made[-1]
    seen = []
    first.__dict__["describe_table"] = lambda request: seen.append(("first", request.id))  # a stand-in, per object
    ns.describe_table({"id": ["lake", "s", "t"]})
    assert seen == [("first", ["s", "t"])]
    ns._mounts["lake"].close()
    assert ns.describe_table({"id": ["lake", "s", "t"]}).location  # connected again: the new object answers
    assert made[-1] is not first and seen == [("first", ["s", "t"])]
    assert _code(lambda: ns.describe_table({"id": ["lake", "s", "x" * 300]})) == 13  # over the limits: refused here
