"""Two REST servers on one directory root: exactly one winner per conflict,
no 5xx, nothing acknowledged missing (see stress.py); and each sees the other's
commits at once."""

from __future__ import annotations

import io
import os

import pyarrow as pa
import pytest

import lance_ns
from lance_ns.errors import TableNotFoundError

from .stress import dir_servers, run

SLOTS = int(os.environ.get("LANCE_NS_STRESS_SLOTS", "4"))
THREADS = 8


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory):
    """Two ``python -m lance_ns.server --impl dir`` processes on one root (started once:
    their start-up is most of these tests' time); each test leaves the root as it found it."""
    root = str(tmp_path_factory.mktemp("two-servers") / "root")
    with dir_servers(root, 2, THREADS) as urls:
        yield root, urls


@pytest.mark.slow  # two server processes and a few hundred requests: ~30-60 s
def test_two_servers_one_root(two_servers):
    root, urls = two_servers
    report = run(root, SLOTS, THREADS, urls)
    assert not report.problems, "\n".join(report.problems)
    assert report.conflicts >= SLOTS * 7


@pytest.mark.slow  # the servers above: ~2 s of requests
def test_a_commit_through_one_server_is_seen_by_the_next_request_on_the_other(two_servers):
    """Issue 22 item 3: the directory namespace answers describe/exists/list from its
    in-memory manifest, revalidated on every read (``manifest_staleness_ms`` 0, the
    default): a create, an append and a drop through server A are seen by the very
    next describe, exists and list on server B, for a root table (the directory
    listing) and a nested one (the manifest), with no wait in between."""
    url_a, url_b = two_servers[1]
    a = lance_ns.connect("rest", {"uri": url_a})
    b = lance_ns.connect("rest", {"uri": url_b})
    try:
        for ns, name in (([], "fresh_root_t"), (["fresh"], "t")):
            ident = ns + [name]
            if ns:
                b.list_namespaces({})  # B has loaded the manifest before A's commits below
                a.create_namespace({"id": ns})
                assert ns[0] in b.list_namespaces({}).namespaces
            assert name not in b.list_tables({"id": ns}).tables  # loaded before A creates it
            a.create_table({"id": ident}, ipc(pa.table({"x": [1]})))
            assert b.describe_table({"id": ident}).location
            b.table_exists({"id": ident})
            assert name in b.list_tables({"id": ns}).tables
            a.insert_into_table({"id": ident}, ipc(pa.table({"x": [2]})))
            assert b.describe_table({"id": ident, "load_detailed_metadata": True}).version == 2
            a.drop_table({"id": ident})
            with pytest.raises(TableNotFoundError):
                b.describe_table({"id": ident})
            with pytest.raises(TableNotFoundError):
                b.table_exists({"id": ident})
            assert name not in b.list_tables({"id": ns}).tables
        a.drop_namespace({"id": ["fresh"]})  # the stress test expects the root as it found it
    finally:
        a.close()
        b.close()


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()
