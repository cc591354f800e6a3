"""A purge travels over REST: ``table drop --purge`` through ``lance-ns serve`` deletes a
registered table's data (the context entry ``purge`` as the ``x-lance-ns-purge`` header)."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

import lance_ns
from lance_namespace import DropTableRequest

from .conftest import lance_ns_serve


@pytest.mark.slow  # one cold `lance-ns serve` start
def test_cli_drop_purge_through_lance_ns_serve_deletes_registered_data(cli, tmp_path):
    root, outside = tmp_path / "lake", tmp_path / "raw"
    root.mkdir()
    for name in ("kept", "purged"):
        lance.write_dataset(pa.table({"x": [1, 2]}), str(outside / f"{name}.lance"))
    args = ["--impl", "dir", "--prop", f"root={root}", "--prop", "allow_external_locations=true", "--log-level", "info"]
    with lance_ns_serve(args) as served:
        rest = ["--impl", "rest", "--prop", f"uri={served.url}"]
        assert cli("namespace", "create", "db", *rest).rc == 0
        for name in ("kept", "purged"):
            assert cli("table", "register", f"db.{name}", "--location", outside / f"{name}.lance", *rest).rc == 0
        assert cli("table", "drop", "db.kept", "--yes", *rest).rc == 0
        assert cli("table", "drop", "db.purged", "--purge", "--yes", *rest).rc == 0
        assert cli("table", "list", "db", "--json", *rest).json()["tables"] == []
    # registered data is kept by a plain drop, deleted by a purge
    assert lance.dataset(str(outside / "kept.lance")).count_rows() == 2
    assert not (outside / "purged.lance").exists()


def test_the_client_sends_the_purge_context_as_a_header_the_server_reads_back(tmp_path):
    """In-process: the Python API's context={"purge": "true"} (and the raw header spelling
    pylance's client can send, header.x-lance-ns-purge) reach the backend's context."""
    from lance_ns.server import run_server_in_thread

    seen = []


    backend = lance_ns.connect("memory", {})
    original = backend.drop_table

    def drop_table(request):
        seen.append(dict(request.context or {}))
        return original(request)

    backend.drop_table = drop_table
    with run_server_in_thread(backend, log_requests=False) as server:
        client = lance_ns.connect("rest", {"uri": server.url})
        client.create_namespace({"id": ["db"]})
        for context in ({"purge": "true"}, {"header.x-lance-ns-purge": "true"}, None):
            client.declare_table({"id": ["db", "t"]})
            client.drop_table(DropTableRequest(id=["db", "t"], context=context))
        client.close()
    assert seen == [{"purge": "true"}, {"purge": "true"}, {}]
