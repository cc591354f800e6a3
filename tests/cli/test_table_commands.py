"""lance-ns table list|describe|declare|register|register-many|deregister|drop|exists|versions."""

import lance
import pyarrow as pa
import pytest

from lance_ns.cli.app import EXIT_CONFLICT, EXIT_INVALID, EXIT_NOT_FOUND, EXIT_UNSUPPORTED
from lance_ns.impls.dir import DirectoryNamespace


@pytest.fixture
def db(cli, lake):
    assert cli("namespace", "create", "db", *lake).rc == 0
    return lake


def _write(path, rows=3):
    lance.write_dataset(pa.table({"id": list(range(rows))}), str(path))
    return path


def test_declare_describe_list_exists(cli, db):
    r = cli("table", "declare", "db.events", "--property", "team=ml", "--json", *db)
    assert r.rc == 0, r.err
    location = r.json()["location"]
    d = cli("table", "describe", "db.events", "--json", *db).json()
    assert d["location"] == location and d["table"] == "events" and d["namespace"] == ["db"]
    assert "events" in cli("table", "describe", "db.events", *db).out
    assert cli("table", "list", "db", "--json", *db).json() == {"tables": ["events"], "page_token": None}
    assert "db.events" in cli("table", "list", "db", *db).out
    assert cli("table", "exists", "db.events", *db).rc == 0
    r = cli("table", "exists", "db.other", "--json", *db)
    assert r.rc == EXIT_NOT_FOUND and r.json() == {"exists": False}
    assert cli("table", "declare", "db.events", *db).rc == EXIT_CONFLICT
    assert cli("table", "declare", "nope.events", *db).rc == EXIT_NOT_FOUND
    assert cli("table", "describe", *db).rc == EXIT_INVALID  # a table id is required


def test_register_deregister_drop(cli, db, tmp_path):
    declared = cli("table", "declare", "db.raw", "--json", *db).json()["location"]
    _write(declared)
    gone = cli("table", "deregister", "db.raw", "--json", *db)
    assert gone.rc == 0 and gone.json()["location"] == declared
    assert cli("table", "exists", "db.raw", *db).rc == EXIT_NOT_FOUND
    assert lance.dataset(declared).count_rows() == 3  # deregister keeps the data
    r = cli("table", "register", "db.events", "--location", declared, "--json", *db)
    assert r.rc == 0, r.err
    assert cli("table", "describe", "db.events", "--json", *db).json()["location"].rstrip("/").endswith(declared.rsplit("/", 1)[-1])
    assert cli("table", "register", "db.events", "--location", declared, *db).rc == EXIT_CONFLICT
    assert cli("table", "register", "db.events", "--location", declared, "--mode", "overwrite", *db).rc == 0
    assert cli("table", "register", "db.x", "--location", str(tmp_path / "lake" / "nothing"), *db).rc == EXIT_INVALID
    assert cli("table", "drop", "db.events", *db).rc == EXIT_INVALID  # deletes data: not without --yes
    assert cli("table", "exists", "db.events", *db).rc == 0
    assert cli("table", "drop", "db.events", "--yes", *db).rc == 0
    assert cli("table", "drop", "db.events", "--yes", *db).rc == EXIT_NOT_FOUND
    assert cli("table", "drop", "db.events", "--skip-missing", "--yes", *db).rc == 0


def test_register_many(cli, tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    for name in ("clicks", "events"):
        _write(raw / f"{name}.lance")
    (raw / "notes").mkdir()  # not a Lance table: ignored
    lake = ["--impl", "dir", "--prop", f"root={tmp_path / 'lake'}", "--prop", "allow_external_locations=true"]
    assert cli("namespace", "create", "db", *lake).rc == 0
    r = cli("table", "register-many", "db", "--directory", raw, "--json", *lake)
    assert r.rc == 0, r.out + r.err
    assert [x["table"] for x in r.json()["results"]] == ["clicks", "events"]
    assert r.err == ""  # quiet when not on a terminal
    assert cli("table", "list", "db", "--json", *lake).json()["tables"] == ["clicks", "events"]
    # again: every one conflicts; each is reported and the exit code says why
    again = cli("table", "register-many", "db", "--directory", raw, "--json", *lake)
    assert again.rc == EXIT_CONFLICT
    assert {x["status"] for x in again.json()["results"]} == {"failed"}
    assert {x["code"] for x in again.json()["results"]} == {5}
    # on a terminal: a progress bar on stderr
    monkeypatch.setenv("FORCE_COLOR", "1")
    shown = cli("table", "register-many", "db", "--directory", raw, "--mode", "overwrite", *lake)
    assert shown.rc == 0 and "registering 2 tables" in shown.err
    assert "2 of 2 tables registered" in shown.out
    assert cli("table", "register-many", "db", "--directory", tmp_path / "absent", *lake).rc == EXIT_INVALID


def test_versions_with_pylance_directory_namespace(cli, tmp_path):
    """versions through pylance's own DirectoryNamespace, loaded as module:Class."""
    from lance.namespace import DirectoryNamespace

    root = tmp_path / "plake"
    ns = DirectoryNamespace(root=str(root))
    lance.write_dataset(pa.table({"a": [1]}), namespace_client=ns, table_id=["ev"], mode="create")
    lance.write_dataset(pa.table({"a": [2]}), namespace_client=ns, table_id=["ev"], mode="append")
    conn = ["--impl", "lance.namespace:DirectoryNamespace", "--prop", f"root={root}"]
    r = cli("table", "versions", "ev", "--json", *conn)
    assert r.rc == 0, r.err
    assert sorted(v["version"] for v in r.json()["versions"]) == [1, 2]
    newest = cli("table", "versions", "ev", "--descending", "--limit", "1", "--json", *conn).json()
    assert [v["version"] for v in newest["versions"]] == [2]
    assert "manifest_path" in cli("table", "versions", "ev", *conn).out
    assert cli("table", "versions", "missing", *conn).rc == EXIT_NOT_FOUND


def test_rename_list_all_and_branches(cli, db):
    _write(cli("table", "declare", "db.events", "--json", *db).json()["location"])
    assert cli("namespace", "create", "archive", *db).rc == 0
    r = cli("table", "rename", "db.events", "events_2024", "--json", *db)
    assert r.rc == 0, r.err
    assert r.json()["id"] == ["db", "events_2024"]
    assert cli("table", "exists", "db.events", *db).rc == EXIT_NOT_FOUND
    r = cli("table", "rename", "db.events_2024", "old", "--to-namespace", "archive", *db)
    assert r.rc == 0 and "archive.old" in r.out, r.err
    assert cli("table", "head", "archive.old", *db).rc == 0  # the data came along
    assert cli("table", "rename", "db.events", "x", *db).rc == EXIT_NOT_FOUND
    cli("table", "declare", "archive.taken", *db)
    assert cli("table", "rename", "archive.old", "taken", *db).rc == EXIT_CONFLICT
    assert cli("table", "rename", "archive.old", "bad/name", *db).rc == EXIT_INVALID
    # list-all: full ids of every namespace, paged
    assert cli("table", "list-all", "--json", *db).json() == {"tables": ["archive$old", "archive$taken"], "page_token": None}
    page = cli("table", "list-all", "--limit", "1", "--json", *db).json()
    assert page == {"tables": ["archive$old"], "page_token": "archive$old"}
    assert cli("table", "list-all", "archive", "--page-token", "archive$old", "--json", *db).json()["tables"] == ["archive$taken"]
    assert "archive$taken" in cli("table", "list-all", *db).out
    # branches: the namespace operation ListTableBranches, by name
    r = cli("table", "branches", "archive.old", "--json", *db)
    if "ListTableBranches" in DirectoryNamespace.supported_operations():
        assert r.rc == 0 and isinstance(r.json()["branches"], dict), (r.out, r.err)
    else:  # until the backends implement branches: the backend's refusal, as an exit code
        assert r.rc == EXIT_UNSUPPORTED and "not supported" in r.err.lower(), (r.rc, r.err)
