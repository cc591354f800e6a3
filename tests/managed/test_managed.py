"""Implementation-managed tables end to end, with pylance's own clients.

What the shared scenario (lance_ns.conformance.checks_managed) cannot express:
several processes committing at once, pylance's DirectoryNamespace opening a
managed root, an atomic commit of several tables, and where pylance itself
does not consult the namespace (a minimal reproduction, documented in
docs/reliability.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import lance
import lance.namespace
import pyarrow as pa
import pytest
from lance_namespace import LanceNamespaceError

import lance_ns
from lance_ns.conformance.checks_managed import Stager
from lance_ns.server import run_server_in_thread

REPO = Path(__file__).resolve().parents[2]
WRITERS, APPENDS = 4, 3


def managed_dir(root) -> lance_ns.DirectoryNamespace:
    return lance_ns.connect("dir", {"root": str(root), "managed_versioning": "true"})


def rows(*values) -> pa.Table:
    return pa.table({"v": [str(v) for v in values]})


def published(ns, table_id) -> list[int]:
    return [v.version for v in ns.list_table_versions({"id": table_id}).versions]


def run_appenders(writers: list[tuple[str, str]], table: str) -> list[str]:
    """Start one appender process per (kind, where), all at once; their output lines."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [
        subprocess.Popen([sys.executable, "-m", "tests.managed.appender", kind, where, table, f"w{i}", str(APPENDS)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
        for i, (kind, where) in enumerate(writers)
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        assert p.returncode == 0, stderr[-2000:]
        out += [line for line in stdout.splitlines() if line != "ready"]
    return out


@pytest.mark.slow
def test_four_processes_append_concurrently_in_process_and_over_rest(tmp_path):
    """Two processes use the directory namespace in-process, two pylance's own
    RestNamespace against our server, all on one table at once: nothing is lost,
    versions 1..n without gap or duplicate, a fresh connection sees the same latest."""
    ns = managed_dir(tmp_path)
    lance.write_dataset(rows("seed"), namespace_client=ns, table_id=["t"], mode="create")
    with run_server_in_thread(lance_ns.connect("dir", {"root": str(tmp_path)})) as server:
        writers = [("dir", str(tmp_path)), ("rest", server.url)] * (WRITERS // 2)
        lines = run_appenders(writers, "t")
        failed = [line for line in lines if line.startswith("failed")]
        assert not failed, failed
        acked = [line.split()[2:] for line in lines]
        assert len(acked) == WRITERS * APPENDS
        n = WRITERS * APPENDS + 1
        for reader in (lance_ns.connect("dir", {"root": str(tmp_path)}), lance_ns.connect("rest", {"uri": server.url})):
            # every acknowledged append is there exactly once, nothing else is
            got = sorted(lance.dataset(namespace_client=reader, table_id=["t"]).to_table()["v"].to_pylist())
            assert got == sorted(["seed"] + [v for values in acked for v in values])
            # the namespace's history: strictly increasing, no gap, no duplicate
            assert published(reader, ["t"]) == list(range(1, n + 1))
            assert reader.describe_table({"id": ["t"]}).version == n
        assert sorted(int(line.split()[1]) for line in lines) == list(range(2, n + 1))
        theirs = lance.namespace.RestNamespace(uri=server.url)
        described = theirs.describe_table(lance.namespace.DescribeTableRequest(id=["t"]))
        assert described.managed_versioning is True and described.version == n


def test_pylances_directory_namespace_lists_and_opens_a_managed_root(tmp_path):
    ns = managed_dir(tmp_path)
    ns.create_namespace({"id": ["a"]})
    lance.write_dataset(rows(1, 2), namespace_client=ns, table_id=["a", "t"], mode="create")
    lance.write_dataset(rows(3), namespace_client=ns, table_id=["a", "t"], mode="append")
    lance.write_dataset(rows(1), namespace_client=ns, table_id=["r"], mode="create")
    theirs = lance.namespace.DirectoryNamespace(root=str(tmp_path))
    assert theirs.list_namespaces(lance.namespace.ListNamespacesRequest(id=[])).namespaces == ["a"]
    assert theirs.list_tables(lance.namespace.ListTablesRequest(id=["a"])).tables == ["t"]
    assert theirs.list_tables(lance.namespace.ListTablesRequest(id=[])).tables == ["r"]
    assert lance.dataset(namespace_client=theirs, table_id=["a", "t"]).count_rows() == 3
    assert lance.dataset(namespace_client=theirs, table_id=["r"]).count_rows() == 1
    # and ours still reads the history pylance's namespace left alone
    assert published(ns, ["a", "t"]) == [1, 2]


def test_batch_commit_is_atomic_across_tables(tmp_path):
    ns = managed_dir(tmp_path)
    for name in ("a", "b"):
        lance.write_dataset(rows(name), namespace_client=ns, table_id=[name], mode="create")
    staged = {}
    for name in ("a", "b"):
        stager = Stager(ns)
        with pytest.raises(Exception):
            lance.write_dataset(rows(name + "2"), namespace_client=stager, table_id=[name], mode="append")
        staged[name] = {**stager.staged, "id": [name]}
    # one entry is stale (version 1 is taken): the whole batch is refused, nothing published
    stale = {**staged["b"], "version": 1}
    with pytest.raises(LanceNamespaceError) as e:
        ns.batch_commit_tables({"operations": [{"create_table_version": staged["a"]},
                                               {"create_table_version": stale}]})
    assert int(e.value.code) == 14
    assert published(ns, ["a"]) == [1] and published(ns, ["b"]) == [1]
    resp = ns.batch_commit_tables({"operations": [{"create_table_version": staged[n]} for n in ("a", "b")]})
    assert [r.create_table_version.version.version for r in resp.results] == [2, 2]
    for name in ("a", "b"):
        assert lance.dataset(namespace_client=ns, table_id=[name]).to_table()["v"].to_pylist() == [name, name + "2"]


def test_storage_managed_tables_keep_todays_behaviour_beside_managed_ones(tmp_path):
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    lance.write_dataset(rows(1), namespace_client=ns, table_id=["plain"], mode="create")
    ns.declare_table({"id": ["m"], "properties": {"managed_versioning": "true"}})
    lance.write_dataset(rows(1), namespace_client=ns, table_id=["m"], mode="append")
    for name in ("plain", "m"):
        lance.write_dataset(rows(2), ns.describe_table({"id": [name]}).location, mode="append")  # bypass
    assert ns.describe_table({"id": ["plain"]}).managed_versioning is None
    assert ns.count_table_rows({"id": ["plain"]}).count == 2  # storage-managed: storage is the truth
    assert ns.describe_table({"id": ["m"]}).managed_versioning is True
    assert ns.count_table_rows({"id": ["m"]}).count == 1  # managed: the bypass write is not reflected
    with pytest.raises(LanceNamespaceError) as e:
        ns.create_table_version({"id": ["plain"], "version": 3, "manifest_path": "x"})
    # a storage-managed table's versions are committed to storage, as pylance's namespace does:
    # a manifest_path outside the table's _versions/ is refused before anything is written
    assert int(e.value.code) == 13 and "staging manifest" in str(e.value)


def test_a_staging_manifest_outside_the_table_is_refused(tmp_path):
    ns = managed_dir(tmp_path)
    lance.write_dataset(rows(1), namespace_client=ns, table_id=["t"], mode="create")
    lance.write_dataset(rows(1), namespace_client=ns, table_id=["u"], mode="create")
    other = ns.describe_table_version({"id": ["u"], "version": 1}).version.manifest_path
    for path in (other, "/etc/passwd", str(tmp_path / "t.lance" / "_versions" / ".." / "x")):
        with pytest.raises(LanceNamespaceError) as e:
            ns.create_table_version({"id": ["t"], "version": 2, "manifest_path": path})
        assert int(e.value.code) == 13, path


def test_pylance_opening_by_location_does_not_consult_the_namespace(tmp_path):
    """Minimal reproduction (docs/reliability.md): only pylance calls that name the
    namespace (``namespace_client=``) see the namespace's version; opening the
    table's location reads whatever storage holds, bypass writes included -- until
    the namespace's next read of the table sets the bypass version aside."""
    ns = managed_dir(tmp_path)
    lance.write_dataset(rows(1), namespace_client=ns, table_id=["t"], mode="create")
    location = ns.list_table_versions({"id": ["t"]}).versions[0].manifest_path.rsplit("/_versions/", 1)[0]
    location = "/" + location if not location.startswith("/") else location
    lance.write_dataset(rows(2), location, mode="append")  # bypass
    assert lance.dataset(location).count_rows() == 2  # storage, not the namespace
    assert lance.dataset(namespace_client=ns, table_id=["t"]).count_rows() == 1
    assert lance.dataset(location).count_rows() == 1  # set aside by that read
    assert any("-unpublished-" in p.name for p in Path(location, "_versions").iterdir())


def test_an_append_after_a_bypass_write_is_the_namespaces_next_version(tmp_path):
    """Issue 29: pylance's append after a bypass write used to fail with "Commit result
    for version N+1 is unknown".  The namespace's chain goes on instead: the append is
    version N+1 with the namespace's rows and its own; the bypass rows stay invisible."""
    ns = managed_dir(tmp_path)
    lance.write_dataset(rows("a"), namespace_client=ns, table_id=["t"], mode="create")
    lance.write_dataset(rows("b"), namespace_client=ns, table_id=["t"], mode="append")
    location = ns.describe_table({"id": ["t"]}).location
    lance.write_dataset(rows("bypass"), location, mode="append")
    ds = lance.write_dataset(rows("c"), namespace_client=ns, table_id=["t"], mode="append")
    assert ds.version == 3 and published(ns, ["t"]) == [1, 2, 3]
    assert sorted(lance.dataset(namespace_client=ns, table_id=["t"]).to_table()["v"].to_pylist()) == ["a", "b", "c"]
    assert sorted(lance.dataset(location).to_table()["v"].to_pylist()) == ["a", "b", "c"]


def test_the_spark_sources_table_reads_and_commits_through_the_namespace(tmp_path):
    """The Spark source's table resolution (lance_ns.spark.resolve, no JVM needed): a managed
    table is read at the namespace's version and committed through CreateTableVersion."""
    from lance_ns.spark.resolve import latest_version, resolve

    config = {"impl": "dir", "dir.root": str(tmp_path), "dir.managed_versioning": "true", "path": "t"}
    ref, declared = resolve(config, create=True)
    assert declared and ref.managed and latest_version(ref) is None
    ns = lance_ns.connect("dir", {"root": str(tmp_path)})
    lance.write_dataset(rows(1, 2), namespace_client=ns, table_id=["t"], mode="append")
    lance.write_dataset(rows(9), ref.uri, mode="append")  # bypass
    ref, _ = resolve(config)  # resolving reads the table: the bypass version is set aside
    assert ref.open().version == 1 and ref.open().count_rows() == 2
    fragments = lance.fragment.write_fragments(rows(3), ref.uri)
    tx = lance.Transaction(read_version=1, operation=lance.LanceOperation.Append(fragments))
    ds = lance.LanceDataset.commit(ref.uri, tx, **ref.commit_options())
    assert ds.version == 2 and published(ns, ["t"]) == [1, 2]
    assert sorted(ref.open().to_table()["v"].to_pylist()) == ["1", "2", "3"]


def test_a_version_whose_manifest_never_arrived_is_refused_until_withdrawn(tmp_path, monkeypatch):
    """A committer that stops between the grant and the manifest copy: reads of the latest
    version wait, then refuse the table (19) rather than answer a version pylance would
    take for a new table and commit over; withdrawing the version makes the table readable."""
    import lance_ns.catalog.versions

    ns = managed_dir(tmp_path)
    lance.write_dataset(rows("a"), namespace_client=ns, table_id=["t"], mode="create")
    lance.write_dataset(rows("b"), namespace_client=ns, table_id=["t"], mode="append")
    manifest = ns.describe_table_version({"id": ["t"], "version": 2}).version.manifest_path
    location = ns.describe_table({"id": ["t"]}).location
    Path(location, "_versions", manifest.rstrip("/").rsplit("/", 1)[-1]).unlink()  # the copy never happened
    monkeypatch.setattr(lance_ns.catalog.versions, "_PUBLISH_WAIT", 0.2)
    with pytest.raises(LanceNamespaceError) as info:
        ns.describe_table({"id": ["t"]})
    assert int(info.value.code) == 19 and "BatchDeleteTableVersions" in str(info.value)
    ns.batch_delete_table_versions({"id": ["t"], "ranges": [{"start_version": 2, "end_version": 3}]})
    assert published(ns, ["t"]) == [1]
    assert lance.dataset(namespace_client=ns, table_id=["t"]).to_table()["v"].to_pylist() == ["a"]
