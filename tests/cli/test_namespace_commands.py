"""lance-ns namespace list|describe|create|drop|exists against the directory namespace."""

from lance_ns.cli.app import EXIT_CONFLICT, EXIT_INVALID, EXIT_NOT_FOUND


def test_create_describe_list(cli, lake):
    r = cli("namespace", "create", "db", "--property", "owner=ml", *lake)
    assert r.rc == 0, r.err
    assert "created namespace db" in r.out
    r = cli("namespace", "describe", "db", "--json", *lake)
    assert r.rc == 0 and r.json()["properties"]["owner"] == "ml"
    r = cli("namespace", "describe", "db", *lake)  # human: a table of properties
    assert "owner" in r.out and "ml" in r.out
    assert cli("namespace", "create", "db.team", *lake).rc == 0
    r = cli("namespace", "list", "--json", *lake)
    assert r.json() == {"namespaces": ["db"], "page_token": None}
    r = cli("namespace", "list", "db", *lake)
    assert "db.team" in r.out  # the full id column


def test_create_modes_and_exit_codes(cli, lake):
    assert cli("namespace", "create", "db", "--property", "v=1", *lake).rc == 0
    r = cli("namespace", "create", "db", "--json", *lake)
    assert r.rc == EXIT_CONFLICT
    assert r.json()["code"] == 2 and r.json()["type"] == "NAMESPACE_ALREADY_EXISTS"
    assert "code 2" in r.err
    assert cli("namespace", "create", "db", "--mode", "exist-ok", "--property", "v=2", *lake).rc == 0
    assert cli("namespace", "describe", "db", "--json", *lake).json()["properties"]["v"] == "1"
    assert cli("namespace", "create", "db", "--mode", "overwrite", "--property", "v=3", *lake).rc == 0
    assert cli("namespace", "describe", "db", "--json", *lake).json()["properties"]["v"] == "3"
    assert cli("namespace", "create", "db", "--mode", "bogus", *lake).rc == EXIT_INVALID  # argparse usage error


def test_exists_and_not_found(cli, lake):
    r = cli("namespace", "exists", "nope", "--json", *lake)
    assert r.rc == EXIT_NOT_FOUND and r.json() == {"exists": False}
    cli("namespace", "create", "db", *lake)
    r = cli("namespace", "exists", "db", "--json", *lake)
    assert r.rc == 0 and r.json() == {"exists": True}
    assert cli("namespace", "describe", "nope", *lake).rc == EXIT_NOT_FOUND


def test_invalid_names_are_invalid_input(cli, lake):
    r = cli("namespace", "create", "--part", "a/b", *lake)
    assert r.rc == EXIT_INVALID and "must not contain" in r.err
    assert cli("namespace", "create", "a..b", *lake).rc == EXIT_INVALID  # empty component
    assert cli("namespace", "create", "db", "--part", "db", *lake).rc == EXIT_INVALID  # both forms


def test_delimiter_and_parts(cli, lake):
    assert cli("namespace", "create", "db", *lake).rc == 0
    assert cli("namespace", "create", "db/x.y", "--delimiter", "/", *lake).rc == 0
    r = cli("namespace", "list", "--part", "db", "--json", *lake)
    assert r.json()["namespaces"] == ["x.y"]
    assert cli("namespace", "exists", "--part", "db", "--part", "x.y", *lake).rc == 0


def test_paging(cli, lake):
    for name in ("a", "b", "c"):
        cli("namespace", "create", name, *lake)
    first = cli("namespace", "list", "--limit", "2", "--json", *lake).json()
    assert len(first["namespaces"]) == 2 and first["page_token"]
    rest = cli("namespace", "list", "--limit", "2", "--page-token", first["page_token"], "--json", *lake).json()
    assert first["namespaces"] + rest["namespaces"] == ["a", "b", "c"] and rest["page_token"] is None
    human = cli("namespace", "list", "--limit", "2", *lake)
    assert f"--page-token {first['page_token']}" in human.out


def test_drop_modes(cli, lake):
    assert cli("namespace", "drop", "nope", *lake).rc == EXIT_NOT_FOUND
    assert cli("namespace", "drop", "nope", "--skip-missing", *lake).rc == 0
    cli("namespace", "create", "db", *lake)
    cli("namespace", "create", "db.child", *lake)
    cli("table", "declare", "db.t", *lake)
    r = cli("namespace", "drop", "db", *lake)
    assert r.rc == EXIT_CONFLICT  # Restrict on a non-empty namespace
    assert cli("namespace", "exists", "db.child", *lake).rc == 0  # nothing dropped
    # a cascade deletes tables: without a terminal to ask on it needs --yes
    refused = cli("namespace", "drop", "db", "--cascade", *lake)
    assert refused.rc == EXIT_INVALID and "--yes" in refused.err and len(refused.err.splitlines()) == 1
    assert cli("namespace", "exists", "db.child", *lake).rc == 0  # nothing dropped
    assert cli("namespace", "drop", "db", "--cascade", "--yes", *lake).rc == 0
    assert cli("namespace", "exists", "db", *lake).rc == EXIT_NOT_FOUND


def test_drop_walk_reports_what_it_dropped(cli, lake):
    cli("namespace", "create", "db", *lake)
    cli("namespace", "create", "db.child", *lake)
    cli("table", "declare", "db.t", *lake)
    cli("table", "declare", "db.child.u", *lake)
    assert cli("namespace", "drop", "db", "--walk", *lake).rc == EXIT_INVALID  # not confirmed
    r = cli("namespace", "drop", "db", "--walk", "--json", "-y", *lake)
    assert r.rc == 0, r.err
    assert sorted(r.json()["dropped_tables"]) == ["db.child.u", "db.t"]
    assert r.json()["dropped_namespaces"] == ["db.child", "db"]
    assert r.err == ""  # no progress output when stderr is not a terminal
    assert cli("namespace", "list", "--json", *lake).json()["namespaces"] == []
    assert cli("namespace", "drop", "db", "--walk", "--skip-missing", "--yes", *lake).rc == 0
    assert cli("namespace", "drop", "db", "--walk", "--yes", *lake).rc == EXIT_NOT_FOUND
