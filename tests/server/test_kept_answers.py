"""A read the backend answers from memory, asked again with the same bytes by the same
principal, is answered from the bytes of its last answer while the backend's
``answers_stamp`` says nothing that read reads has changed (lance_ns.server.app's
``_known_read``; the ``dir`` namespace's stamp: its manifest's and version store's views,
its root listing and the root directory's stamp).

Each test counts the backend's calls (what keeping saves) and, above all, checks that no
kept answer outlives a change: made by this process, by another process (another
``dir`` namespace on the same root), or by hand in the root directory.  The randomized
test replays changes from both processes against two servers on the same root, one
keeping answers and one not, and requires the same answer from both to every read.
"""

from __future__ import annotations

import random
import shutil
import time

import httpx
import lance
import pyarrow as pa
import pytest

import lance_ns
from lance_ns.directory_stamp import RACY_NS
from lance_ns.impls.mounts import MountsNamespace
from lance_ns.server import run_server_in_thread
from lance_ns.server.pipeline import Pipeline

SETTLE = RACY_NS / 1e9 + 0.2  # seconds after which the root's stamp may be trusted


def _backend_calls(monkeypatch, ns) -> list[str]:
    """The method of every read the server runs on ``ns`` (not each attempt: a read tried on
    the event loop that would block is run again on a thread, and counted once)."""
    calls: list[str] = []
    real = Pipeline.call

    def spy(self, principal, route, *args, **kwargs):
        if self.namespace is ns:
            calls.append(route.op.method)
        return real(self, principal, route, *args, **kwargs)

    monkeypatch.setattr(Pipeline, "call", spy)
    return calls


def describe(c: httpx.Client, table: str) -> httpx.Response:
    return c.post(f"/v1/table/{table}/describe", json={})


@pytest.fixture
def unlisted(tmp_path):
    """A ``dir`` namespace whose tables are all in its manifest (no root listing)."""
    props = {"root": str(tmp_path / "lake"), "dir_listing_enabled": "false"}
    ns = lance_ns.connect("dir", props)
    ns.create_namespace({"id": ["db"]})
    ns.declare_table({"id": ["db", "t"]})
    yield ns, props
    ns.close()


def test_a_read_asked_again_is_not_run_again_until_what_it_reads_changes(unlisted, monkeypatch):
    ns, props = unlisted
    calls = _backend_calls(monkeypatch, ns)
    other = lance_ns.connect("dir", props)  # another process's namespace on the same root
    with run_server_in_thread(ns, log_requests=False, ui=False) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        first = describe(c, "db$t")
        assert first.status_code == 200 and first.json()["table"] == "t"
        for _ in range(3):
            again = describe(c, "db$t")
            assert again.status_code == 200 and again.content == first.content
        assert calls.count("describe_table") == 1, calls  # asked 4 times, run once

        other.declare_table({"id": ["db", "u"]})  # a commit elsewhere: the manifest moved on
        assert describe(c, "db$t").content == first.content
        assert calls.count("describe_table") == 2, calls  # run again: its stamp changed
        # (that read loaded the new version on a thread: its answer is not kept; the next,
        # answered from memory, is)
        for _ in range(3):
            assert describe(c, "db$t").content == first.content
        assert calls.count("describe_table") == 3, calls

        other.drop_table({"id": ["db", "t"]})  # the very table, by another process
        gone = describe(c, "db$t")
        assert gone.status_code == 404 and gone.json()["code"] == 4

        ns.declare_table({"id": ["db", "t"]})  # back, by this process
        back = describe(c, "db$t")
        assert back.status_code == 200 and back.json()["table"] == "t"
        ns.rename_table({"id": ["db", "t"], "new_table_name": "v"})
        assert describe(c, "db$t").json()["code"] == 4
        assert describe(c, "db$v").json()["table"] == "v"
    other.close()


def test_a_listing_of_the_root_is_kept_only_while_the_root_is_as_it_was(tmp_path, monkeypatch):
    """ListTables of the root also lists tables found only as directories (one pylance wrote):
    its answer is kept once the root has been still long enough for the root directory's
    stamp to be trusted, and a directory removed by hand, with nothing told, is seen at once."""
    root = tmp_path / "lake"
    ns = lance_ns.connect("dir", {"root": str(root)})
    ns.create_namespace({"id": ["db"]})  # (without a manifest nothing is answered from memory)
    lance.write_dataset(pa.table({"x": [1, 2]}), str(root / "bare.lance"))
    calls = _backend_calls(monkeypatch, ns)
    with run_server_in_thread(ns, log_requests=False, ui=False) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        for _ in range(3):
            assert c.get("/v1/namespace/$/table/list").json()["tables"] == ["bare"]
        assert calls.count("list_tables") == 3  # the root changed just now: nothing kept
        time.sleep(SETTLE)
        # the first lists the root again (on a thread: the listing made as the table was
        # written cannot be trusted), the second answers from memory and is kept
        for _ in range(4):
            assert c.get("/v1/namespace/$/table/list").json()["tables"] == ["bare"]
        assert calls.count("list_tables") == 5, calls
        shutil.rmtree(root / "bare.lance")
        assert c.get("/v1/namespace/$/table/list").json()["tables"] == []
    ns.close()


def test_a_kept_answer_is_never_handed_to_another_principal_or_after_a_grant_is_revoked(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path / "lake"), "dir_listing_enabled": "false"})
    ns.create_namespace({"id": ["db"]})
    ns.declare_table({"id": ["db", "t"]})
    auth = tmp_path / "auth.toml"
    grants = '[[principal]]\nname = "reader"\ntoken = "r"\nread = [{}]\n\n' \
             '[[principal]]\nname = "stranger"\ntoken = "s"\nread = ["other"]\n'
    auth.write_text(grants.format('"db"'))
    reader, stranger = ({"authorization": f"Bearer {t}"} for t in ("r", "s"))
    with run_server_in_thread(ns, auth_file=str(auth), log_requests=False, ui=False) as srv, \
            httpx.Client(base_url=srv.url, timeout=30) as c:
        for _ in range(3):
            assert c.post("/v1/table/db$t/describe", json={}, headers=reader).status_code == 200
        denied = c.post("/v1/table/db$t/describe", json={}, headers=stranger)
        assert denied.status_code == 403 and denied.json()["code"] == 15
        auth.write_text(grants.format('"other"'))  # the reader's grant revoked
        deadline = time.monotonic() + 30
        while c.post("/v1/table/db$t/describe", json={}, headers=reader).status_code == 200:
            assert time.monotonic() < deadline, "the revoked grant was never applied"
            time.sleep(0.1)
        refused = c.post("/v1/table/db$t/describe", json={}, headers=reader)
        assert refused.status_code == 403 and refused.json()["code"] == 15
    ns.close()


def test_a_mount_keeps_answers_under_its_own_stamp(tmp_path, monkeypatch):
    lake = lance_ns.connect("dir", {"root": str(tmp_path / "lake"), "dir_listing_enabled": "false"})
    lake.create_namespace({"id": ["db"]})
    lake.declare_table({"id": ["db", "t"]})
    mounts = MountsNamespace.of({"lake": lake})
    calls = _backend_calls(monkeypatch, mounts)
    with run_server_in_thread(mounts, log_requests=False, ui=False) as srv, \
            httpx.Client(base_url=srv.url, timeout=30) as c:
        for _ in range(3):
            r = describe(c, "lake$db$t")
            assert r.status_code == 200 and r.json()["namespace"] == ["lake", "db"]
        assert calls.count("describe_table") == 1, calls
        scraped = c.get("/metrics").text  # a kept answer is counted, and labelled, as any other
        assert 'lance_ns_mount_requests_total{mount="lake",operation="DescribeTable",status="200"} 3.0' in scraped
        lake.drop_table({"id": ["db", "t"]})
        assert describe(c, "lake$db$t").json()["code"] == 4
        roots = [c.get("/v1/namespace/$/list").json() for _ in range(2)]  # the root's own answer
        assert roots[0] == roots[1] and roots[0]["namespaces"] == ["lake"]
    lake.close()


_READS = [
    ("POST", "/v1/table/db$t0/describe", {}), ("POST", "/v1/table/db$t1/describe", {"with_table_uri": True}),
    ("POST", "/v1/table/db2$t0/describe", {}), ("POST", "/v1/table/db$t2/exists", {}),
    ("POST", "/v1/table/db2$t1/exists", {}), ("POST", "/v1/namespace/db2/describe", {}),
    ("POST", "/v1/namespace/db2/exists", {}), ("POST", "/v1/namespace/db/exists", {}),
    ("GET", "/v1/namespace/db/table/list", None), ("GET", "/v1/namespace/db2/table/list?limit=1", None),
    ("GET", "/v1/namespace/$/list", None),
]


def _change(rng: random.Random, ns) -> None:
    """One random change through ``ns``, which may fail as the catalog says it must."""
    ids = [["db", f"t{i}"] for i in range(3)] + [["db2", f"t{i}"] for i in range(2)]
    pick = rng.randrange(6)
    try:
        if pick == 0:
            ns.declare_table({"id": rng.choice(ids), "properties": {"round": str(rng.random())}})
        elif pick == 1:
            ns.drop_table({"id": rng.choice(ids)})
        elif pick == 2:
            ns.create_namespace({"id": ["db2"], "properties": {"p": str(rng.random())}})
        elif pick == 3:
            ns.drop_namespace({"id": ["db2"], "behavior": "Cascade"})
        elif pick == 4:
            source, target = rng.sample(ids, 2)
            ns.rename_table({"id": source, "new_namespace_id": target[:1], "new_table_name": target[1]})
        else:
            ns.deregister_table({"id": rng.choice(ids)})
    except lance_ns.errors.LanceNamespaceError:
        pass  # a table or namespace that is not there, or is already


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_answers_match_a_server_keeping_none_through_changes_of_two_processes(tmp_path, monkeypatch, seed):
    props = {"root": str(tmp_path / "lake"), "dir_listing_enabled": "false"}
    served, other, plain = (lance_ns.connect("dir", props) for _ in range(3))
    served.create_namespace({"id": ["db"]})
    plain.answers_stamp = lambda method, ident: None  # the server over it keeps nothing
    calls = _backend_calls(monkeypatch, served)
    rng = random.Random(seed)
    asked = 0
    with run_server_in_thread(served, log_requests=False, ui=False) as keeping, \
            run_server_in_thread(plain, log_requests=False, ui=False) as reference, \
            httpx.Client(base_url=keeping.url, timeout=30) as k, httpx.Client(base_url=reference.url, timeout=30) as r:
        for step in range(40):
            if rng.random() < 0.5:
                _change(rng, rng.choice([served, other]))
            for method, path, body in rng.sample(_READS, 4) * 2:  # each read twice: the second may be kept
                got, want = k.request(method, path, json=body), r.request(method, path, json=body)
                asked += 1
                assert (got.status_code, got.json()) == (want.status_code, want.json()), (seed, step, path)
    for ns in (served, other, plain):
        ns.close()
    assert asked - len(calls) >= asked / 8, (len(calls), asked)  # answers were kept: the check is not vacuous


def test_an_answer_carrying_vended_credentials_is_never_kept():
    """They expire: a backend vends off the event loop (never answered from memory), and the
    server checks the answer itself too."""
    from lance_namespace import DescribeTableResponse

    from lance_ns.server.pipeline import keepable
    from lance_ns.vending import EXPIRES_AT

    assert keepable(DescribeTableResponse(location="/x", storage_options={"region": "us-east-1"}))
    assert not keepable(DescribeTableResponse(location="/x", storage_options={"aws_access_key_id": "AKIA",
                                                                              EXPIRES_AT: "1"}))
    assert not keepable({"storage_options": {EXPIRES_AT: "1"}})


def test_a_large_answer_is_not_kept(unlisted, monkeypatch):
    """Kept answers are bounded (4,096 reads of at most 16 KiB): a page of many long names is
    answered afresh each time."""
    ns, _ = unlisted
    ns.create_namespace({"id": ["big"]})
    for i in range(200):
        ns.declare_table({"id": ["big", "a_long_name_" * 8 + f"{i:04d}"]})  # 100 characters
    calls = _backend_calls(monkeypatch, ns)
    with run_server_in_thread(ns, log_requests=False, ui=False) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        pages = [c.get("/v1/namespace/big/table/list") for _ in range(3)]
        assert len(pages[0].content) > 16 * 1024 and all(p.content == pages[0].content for p in pages)
        small = [c.get("/v1/namespace/big/table/list?limit=2") for _ in range(3)]
        assert all(p.json()["tables"] == small[0].json()["tables"] for p in small)
    assert calls.count("list_tables") == 4, calls  # the large page thrice, the small page once


def test_pylance_through_our_server_sees_at_once_what_pylances_own_directory_namespace_changes(tmp_path, monkeypatch):
    """Clients we did not write on both sides: pylance's Rust ``RestNamespace`` reads through a
    server keeping answers, while pylance's Rust ``DirectoryNamespace`` (another writer of the
    same ``__manifest``) drops and writes tables.  A kept describe never outlives its change,
    and every table either writes is read back by the other and by ours."""
    import lance.namespace
    from lance_namespace import DescribeTableRequest, DropTableRequest

    root = tmp_path / "lake"
    ns = lance_ns.connect("dir", {"root": str(root)})
    ns.create_namespace({"id": ["db"]})
    theirs = lance.namespace.DirectoryNamespace(root=str(root))
    calls = _backend_calls(monkeypatch, ns)
    rows = pa.table({"x": [1, 2, 3]})
    with run_server_in_thread(ns, log_requests=False, ui=False) as srv:
        client = lance.namespace.RestNamespace(uri=srv.url)
        lance.write_dataset(rows, namespace_client=client, table_id=["db", "t"], mode="create")
        time.sleep(SETTLE)  # (the new table's directory changed the root just now)
        before = calls.count("describe_table")
        described = [client.describe_table(DescribeTableRequest(id=["db", "t"])) for _ in range(4)]
        assert all(d.location == described[0].location for d in described)
        assert calls.count("describe_table") - before <= 2, calls  # the rest were kept
        assert lance.dataset(namespace_client=theirs, table_id=["db", "t"]).count_rows() == 3  # theirs reads ours
        assert lance.dataset(ns.describe_table({"id": ["db", "t"]}).location).count_rows() == 3

        theirs.drop_table(DropTableRequest(id=["db", "t"]))  # another process's commit
        with pytest.raises(Exception, match="(?i)not (be )?found|does not exist"):
            client.describe_table(DescribeTableRequest(id=["db", "t"]))

        lance.write_dataset(rows, namespace_client=theirs, table_id=["db", "u"], mode="create")
        assert lance.dataset(namespace_client=client, table_id=["db", "u"]).count_rows() == 3  # ours serves theirs
        assert lance.dataset(ns.describe_table({"id": ["db", "u"]}).location).count_rows() == 3
    ns.close()
